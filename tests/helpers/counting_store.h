// A store that counts what its readers ask of it: the reads of every point of a chunk
// (chunks, and the queries that brought them), overviews, journals, series lists. Tests
// assert with it that a chart, a mean or a figure reads what its pixels need.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tests/helpers/forwarding_store.h"

namespace tb {

// Counts the reads of every point of a chunk (chunks, and the queries that brought them).
class CountingStore : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  int chunk_data_reads = 0, whole_series_reads = 0, data_queries = 0, summary_reads = 0, overview_reads = 0,
      series_lists = 0, whole_reads_queries = 0, chunk_lists = 0, journal_reads = 0, reaching_reads = 0,
      journals_of_runs = 0;
  Result<std::vector<JournalEntry>> ReadJournal(int64_t s) override {
    ++journal_reads;
    return inner_.ReadJournal(s);
  }
  Result<std::vector<std::pair<std::string, JournalEntry>>> ReadJournalsOfRuns(
      const std::vector<std::string>& r) override {
    ++journals_of_runs;
    return inner_.ReadJournalsOfRuns(r);
  }
  Result<std::vector<ChunkRecord>> ReadChunksReaching(const std::vector<int64_t>& s,
                                                      int64_t since_ms) override {
    ++reaching_reads;
    return inner_.ReadChunksReaching(s, since_ms);
  }
  Result<std::vector<ChunkRecord>> ListChunkInfo(int64_t s) override {
    ++chunk_lists;
    return inner_.ListChunkInfo(s);
  }
  Result<std::vector<SeriesInfo>> ListSeriesOfRuns(const std::vector<std::string>& r) override {
    ++series_lists;
    return inner_.ListSeriesOfRuns(r);
  }
  Result<std::vector<SeriesOverview>> ReadSeriesOverviews(const std::vector<int64_t>& s, int64_t min_points,
                                                          int64_t max_points) override {
    ++overview_reads;
    return inner_.ReadSeriesOverviews(s, min_points, max_points);
  }
  Result<std::vector<ChunkRecord>> ReadChunkSummaries(int64_t s) override {
    ++summary_reads;
    return inner_.ReadChunkSummaries(s);
  }
  Result<ChunkRecord> ReadChunkData(int64_t c) override {
    ++chunk_data_reads;
    ++data_queries;
    return inner_.ReadChunkData(c);
  }
  Result<std::vector<ChunkRecord>> ReadChunkRange(int64_t s, int64_t from, int64_t to) override {
    Result<std::vector<ChunkRecord>> chunks = inner_.ReadChunkRange(s, from, to);
    if (chunks.ok()) chunk_data_reads += static_cast<int>(chunks->size());
    ++data_queries;
    return chunks;
  }
  Result<std::vector<ChunkRecord>> ReadChunksOfSeries(const std::vector<int64_t>& s) override {
    whole_series_reads += static_cast<int>(s.size());
    ++whole_reads_queries;
    return inner_.ReadChunksOfSeries(s);
  }
};

}  // namespace tb
