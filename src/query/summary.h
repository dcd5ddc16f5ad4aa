// Summary statistics of a series, as `trainbench show` prints them. NaN values are
// counted apart and left out of the statistics; infinities take part (a mean may be inf).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/percentile.h"
#include "base/status.h"
#include "store/format/chunk_codec.h"

namespace tb {

class Store;

struct SeriesSummary {
  int64_t count = 0;  // all points, NaN included
  int64_t nan_count = 0;
  double min = 0, mean = 0, max = 0, p50 = 0, p95 = 0;  // over non-NaN points
  int64_t first_ms = 0, last_ms = 0;

  bool operator==(const SeriesSummary&) const = default;
};

// A summary made from a series' points given in parts, in time order: what a stored
// series is summarized from chunk by chunk, so that only its values (8 bytes a point) are
// held, never all its decoded points. Percentiles interpolate linearly between the closest
// ranks (numpy's default) and are found by selection, not by sorting every value.
class SummaryBuilder {
 public:
  void Add(std::span<const Point> points);
  // The summary of every point added; the builder is left empty, its room kept for the
  // next series (a large block's pages faulted in again for each would cost more).
  SeriesSummary Finish();

 private:
  SeriesSummary summary_;
  double sum_ = 0;
  std::vector<double> values_;  // the non-NaN ones
};

// Pure; thread-safe.
SeriesSummary Summarize(std::span<const Point> points);

// The summaries of stored series, in the order of `series_ids`: each read and decoded
// chunk by chunk, then its journal, on this thread and the process's spare one.
Result<std::vector<SeriesSummary>> SummarizeStoredSeries(Store& store, std::span<const int64_t> series_ids);

}  // namespace tb
