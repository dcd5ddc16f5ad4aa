// Statistics shared by the benchmarks.
#pragma once

#include <algorithm>
#include <vector>

namespace tb {

// The middle value (the upper one of the two middles for an even count).
inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace tb
