// Summary statistics of a series, as `trainbench show` prints them. NaN values are
// counted apart and left out of the statistics; infinities take part (a mean may be inf).
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "store/chunk_codec.h"

namespace tb {

struct SeriesSummary {
  int64_t count = 0;  // all points, NaN included
  int64_t nan_count = 0;
  double min = 0, mean = 0, max = 0, p50 = 0, p95 = 0;  // over non-NaN points
  int64_t first_ms = 0, last_ms = 0;
};

// Percentiles use linear interpolation between closest ranks (numpy's default).
SeriesSummary Summarize(const std::vector<Point>& points);
double Percentile(const std::vector<double>& sorted_values, double q);

}  // namespace tb
