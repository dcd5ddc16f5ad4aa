// The quantile as numpy computes it by default, the slow obvious way: every value sorted,
// linear between the closest ranks. What tests hold trainbench's percentiles (found by
// selection) against.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace tb {

inline double SortedQuantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double rank = q * static_cast<double>(v.size() - 1);
  auto lo = static_cast<size_t>(rank);
  if (lo + 1 >= v.size()) return v[lo];
  return v[lo] + (v[lo + 1] - v[lo]) * (rank - static_cast<double>(lo));
}

}  // namespace tb
