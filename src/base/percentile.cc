#include "base/percentile.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace tb {
namespace {

// The rank of the q-quantile among n values, as a whole index and a fraction towards the next.
std::pair<size_t, double> Rank(size_t n, double q) {
  double rank = q * static_cast<double>(n - 1);
  double whole = std::floor(rank);
  return {std::min(static_cast<size_t>(whole), n - 1), rank - whole};
}

}  // namespace

size_t PercentileRank(size_t n, double q) { return Rank(n, q).first; }

double SelectPercentileFrom(std::span<double> v, size_t from, double q) {
  if (v.empty()) return std::nan("");
  auto [lo, frac] = Rank(v.size(), q);
  auto nth = v.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(from), nth, v.end());
  if (frac == 0 || lo + 1 == v.size()) return *nth;
  double next = *std::min_element(nth + 1, v.end());  // every value after nth is no less
  return *nth + (next - *nth) * frac;
}

double SelectPercentile(std::span<double> values, double q) { return SelectPercentileFrom(values, 0, q); }

}  // namespace tb
