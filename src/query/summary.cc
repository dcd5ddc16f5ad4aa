#include "query/summary.h"

#include <algorithm>
#include <cmath>

namespace tb {

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::nan("");
  double rank = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(rank));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = rank - static_cast<double>(lo);
  if (frac == 0) return sorted[lo];
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

SeriesSummary Summarize(const std::vector<Point>& points) {
  SeriesSummary s;
  s.count = static_cast<int64_t>(points.size());
  if (points.empty()) return s;
  s.first_ms = points.front().time_ms;
  s.last_ms = points.back().time_ms;
  std::vector<double> values;
  values.reserve(points.size());
  double sum = 0;
  for (const Point& p : points) {
    if (std::isnan(p.value)) {
      ++s.nan_count;
      continue;
    }
    values.push_back(p.value);
    sum += p.value;
  }
  if (values.empty()) {
    s.min = s.mean = s.max = s.p50 = s.p95 = std::nan("");
    return s;
  }
  std::sort(values.begin(), values.end());
  s.min = values.front();
  s.max = values.back();
  s.mean = sum / static_cast<double>(values.size());
  s.p50 = Percentile(values, 0.5);
  s.p95 = Percentile(values, 0.95);
  return s;
}

}  // namespace tb
