// What a chart's bucket drawn from stored summaries may differ by from what every point
// gives: a bucket's edge falls within a stored group, so its value may take from either
// neighbour, never beyond.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace tb {

// The largest difference between bucket `b` of `exact` (what every point gives) and the
// buckets on either side of it.
inline double BucketSlack(const std::vector<double>& exact, size_t b) {
  return std::max(std::abs(exact[b > 0 ? b - 1 : b] - exact[b]),
                  std::abs(exact[std::min(b + 1, exact.size() - 1)] - exact[b]));
}

}  // namespace tb
