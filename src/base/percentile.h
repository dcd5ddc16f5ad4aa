// Percentiles by selection: linear interpolation between the closest ranks (numpy's
// default), found in linear time without sorting every value. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <span>

namespace tb {

// The q-quantile (0 to 1) of `values` (NaN for none), reordering them.
double SelectPercentile(std::span<double> values, double q);

// The same when `values` before `from` are no greater than those from it on and the
// quantile's lower rank is `from` or more (what a selection of a lower quantile leaves):
// only the part from `from` on is reordered.
double SelectPercentileFrom(std::span<double> values, size_t from, double q);

// The lower rank of the q-quantile among n values (n > 0).
size_t PercentileRank(size_t n, double q);

}  // namespace tb
