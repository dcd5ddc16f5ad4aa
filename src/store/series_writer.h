// Buffers samples per series and writes them to the store in batches.
//  - Flush (the sampler calls it about once a second) writes every point that arrived
//    since the last flush, of all series, as one journal entry: one insert per flush, so
//    a crash loses at most one flush interval.
//  - Every `checkpoint_flushes` flushes (about four minutes at 1 s), each series that gained points gets one
//  chunk
//    holding all of its points since its last sealed chunk (replacing its previous
//    provisional chunk), and the journal entries are dropped, in one transaction.
//  - Once a series holds `seal_points` points its chunk is sealed and a new one starts,
//    so chunks are large enough to compress well; a checkpoint holding many more (a bulk
//    import, a fast sampler) writes sealed chunks of `seal_points` each, so a reader of a
//    time range never decodes more than that per chunk.
// Points stay in memory until the store accepted them, so a failed flush is retried by
// the next one and nothing sampled is lost while the store recovers.
// Thread-safe: Add/Append/Flush may be called from different threads.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "metrics/sample.h"
#include "store/store.h"

namespace tb {

class SeriesWriter : public SampleSink {
 public:
  static constexpr size_t kDefaultSealPoints = 4096;
  static constexpr int kDefaultCheckpointFlushes = 256;

  SeriesWriter(Store& store, std::string run_id, size_t seal_points = kDefaultSealPoints,
               int checkpoint_flushes = kDefaultCheckpointFlushes);

  // A listener's sample (the SampleSink of a run), with the sample labels added.
  void Add(const Sample& sample) override;
  // Labels added to every listener sample after its own (a distributed run's part adds
  // node=NAME, so each node's host and GPU series are its own). Call before any Add.
  void AddSampleLabels(const Labels& labels) { sample_labels_ = labels; }
  // A point with its step; `labels` in their text form (Labels::text()).
  void Append(std::string_view metric, std::string_view labels, const Point& point);
  // For callers appending to the same series many times: look the series up once.
  using SeriesHandle = size_t;
  SeriesHandle Handle(std::string_view metric, std::string_view labels);
  void Append(SeriesHandle series, const Point& point);

  // Writes what arrived since the last flush. On failure everything stays buffered.
  Status Flush();
  // Writes everything as sealed chunks (end of a run).
  Status Close();

  // Points not yet in the store.
  size_t pending_points() const;

 private:
  struct SeriesState {
    std::string key;  // metric '\n' labels
    int64_t id = 0;
    std::vector<Point> open;  // points not yet in a sealed chunk
    size_t journaled = 0;     // of `open`, how many are in the store (journal or chunk)
    size_t in_chunk = 0;      // of `open`, how many the provisional chunk holds
    int64_t provisional_id = 0;
  };
  SeriesHandle HandleLocked(std::string_view metric, std::string_view labels);
  Status ResolveIds();
  Status WriteJournalLocked();
  Status CheckpointLocked(bool seal_all);

  Store& store_;
  std::string run_id_;
  Labels sample_labels_;
  size_t seal_points_;
  int checkpoint_flushes_;
  mutable std::mutex mu_;
  int flushes_since_checkpoint_ = 0;
  std::vector<int64_t> journal_ids_;                     // entries a checkpoint will supersede
  std::deque<SeriesState> series_;                       // SeriesHandle indexes it
  std::unordered_map<std::string, SeriesHandle> index_;  // by SeriesState::key
};

}  // namespace tb
