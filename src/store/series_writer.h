// Buffers samples per series and writes them to the store in batches. Each Flush (the
// sampler calls it about once a second) writes the points that arrived since the last
// one as a small provisional chunk, so a crash loses at most one flush interval; once a
// series has `seal_points` points pending, one sealed chunk holding all of them replaces
// its provisional chunks in the same transaction. Points stay in memory until the store
// accepted them, so a failed flush is retried by the next one.
// Thread-safe: Add/Append/Flush may be called from different threads.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "collect/collector.h"
#include "store/store.h"

namespace tb {

class SeriesWriter : public SampleSink {
 public:
  static constexpr size_t kDefaultSealPoints = 4096;

  SeriesWriter(Store& store, std::string run_id, size_t seal_points = kDefaultSealPoints);

  // Time given to samples added through the SampleSink interface.
  void SetTime(int64_t time_ms);
  void Add(std::string_view metric, std::string_view labels, double value) override;
  void Append(std::string_view metric, std::string_view labels, const Point& point);

  // Writes what arrived since the last flush. On failure everything stays buffered.
  Status Flush();
  // Writes everything as sealed chunks (end of a run).
  Status Close();

  size_t pending_points() const;

 private:
  struct SeriesState {
    int64_t id = 0;
    std::vector<Point> open;  // points not yet in a sealed chunk
    size_t written = 0;       // of `open`, how many are in provisional chunks
    std::vector<int64_t> provisional_ids;
  };
  Status FlushLocked(bool seal_all);

  Store& store_;
  std::string run_id_;
  size_t seal_points_;
  mutable std::mutex mu_;
  int64_t time_ms_ = 0;
  std::unordered_map<std::string, SeriesState> series_;  // key: metric '\n' labels
};

}  // namespace tb
