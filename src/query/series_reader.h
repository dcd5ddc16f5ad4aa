// Reads series for many requests at once (trainbench serve): the sealed chunks of a
// series are decoded once and kept (LRU, bounded by a number of points across series; a
// finished run's series never change, so its cached copy is answered without a query);
// the provisional chunk and journal of a running run are read fresh on every call.
// Thread-safe. For a single read without a cache, ReadSeriesPoints (store/store.h).
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/store.h"

namespace tb {

class SeriesReader {
 public:
  // `cache_points`: decoded points kept in memory, across series.
  explicit SeriesReader(Store& store, size_t cache_points = 32u << 20);

  // The series of a run; a finished run's are kept (they no longer change).
  Result<std::shared_ptr<const std::vector<SeriesInfo>>> SeriesOf(const RunRecord& run);
  // Every point of a series in time order (cached sealed chunks, then the newer points).
  // `finished`: the series' run has ended, so a cached copy is complete.
  Result<std::shared_ptr<const std::vector<Point>>> Points(int64_t series_id, bool finished = false,
                                                           bool retried = false);

 private:
  struct Cached {
    std::vector<int64_t> chunk_ids;  // sealed chunks, in order
    std::shared_ptr<const std::vector<Point>> points;
    std::list<int64_t>::iterator lru;
  };

  Store& store_;
  size_t cache_points_;
  std::mutex mu_;
  std::unordered_map<int64_t, Cached> cache_;  // by series id
  std::unordered_map<std::string, std::shared_ptr<const std::vector<SeriesInfo>>>
      series_of_;           // finished runs
  std::list<int64_t> lru_;  // most recently used first
  size_t cached_points_ = 0;
};

// A run that has ended: its series are complete.
bool Finished(const RunRecord& run);

}  // namespace tb
