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
  Result<std::vector<SeriesInfo>> ListSeriesOfRuns(const std::vector<std::string>& r) override {
    ++series_lists;
    return inner_.ListSeriesOfRuns(r);
  }
  Result<std::vector<SeriesOverview>> ReadSeriesOverviews(const std::vector<int64_t>& s, int64_t min_points,
                                                          int64_t max_points) override {
    ++overview_reads;
    return inner_.ReadSeriesOverviews(s, min_points, max_points);
  }
  // Each chunk read counted by its shape: one chunk's points by id, a range of a series'
  // chunks with their points, the chunks a live refresh reaches, a series' chunk list, its
  // summaries, or whole series with their points.
  Result<std::vector<ChunkRecord>> ReadChunks(const ChunkQuery& q) override {
    Result<std::vector<ChunkRecord>> chunks = inner_.ReadChunks(q);
    if (q.chunk || q.first_ms) {
      chunk_data_reads += q.chunk ? 1 : chunks.ok() ? static_cast<int>(chunks->size()) : 0;
      ++data_queries;
    } else if (q.reaching_ms) {
      ++reaching_reads;
    } else if (q.part == ChunkPart::kInfo) {
      ++chunk_lists;
    } else if (q.part == ChunkPart::kSummaries) {
      ++summary_reads;
    } else {
      whole_series_reads += static_cast<int>(q.series.size());
      ++whole_reads_queries;
    }
    return chunks;
  }
};

}  // namespace tb
