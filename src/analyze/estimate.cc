#include "analyze/estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tb {

double StudentT975(int df) {
  // The two-sided 95 % quantiles of Student's t (any statistics table), df 1..30, then
  // fewer points as the curve flattens towards the normal's 1.960.
  static const double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                  2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                  2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return NAN;
  if (df <= 30) return kTable[df - 1];
  if (df <= 40) return 2.021;
  if (df <= 60) return 2.000;
  if (df <= 120) return 1.980;
  if (df <= 1000) return 1.962;
  return 1.960;
}

std::optional<Estimate> EstimateOf(const std::vector<double>& values) {
  Estimate e;
  double sum = 0;
  for (double v : values) {
    if (std::isnan(v)) continue;
    sum += v;
    ++e.n;
  }
  if (e.n == 0) return std::nullopt;
  e.mean = sum / e.n;
  if (e.n >= 2) {
    double squares = 0;
    for (double v : values) {
      if (!std::isnan(v)) squares += (v - e.mean) * (v - e.mean);
    }
    e.sd = std::sqrt(squares / (e.n - 1));
  }
  double half = e.n >= 2 ? StudentT975(e.n - 1) * e.sd / std::sqrt(static_cast<double>(e.n)) : 0;
  e.low = e.mean - half;
  e.high = e.mean + half;
  return e;
}

std::optional<Estimate> EstimateOfAll(const std::vector<std::optional<double>>& values) {
  std::vector<double> present;
  for (const std::optional<double>& v : values) {
    if (!v) return std::nullopt;
    present.push_back(*v);
  }
  return EstimateOf(present);
}

std::optional<Estimate> RatioEstimate(const Estimate& num, const Estimate& den) {
  if (den.mean == 0) return std::nullopt;
  Estimate r;
  r.mean = num.mean / den.mean;
  double rel = 0;
  int df = 0;
  for (const Estimate* side : {&num, &den}) {
    if (side->n < 2 || side->mean == 0) continue;
    double cv = side->sd / side->mean;
    rel += cv * cv / side->n;
    df = df == 0 ? side->n - 1 : std::min(df, side->n - 1);
  }
  r.n = df == 0 ? 1 : df + 1;  // the repeats of the side with fewer
  r.sd = std::fabs(r.mean) * std::sqrt(rel);
  double half = df == 0 ? 0 : StudentT975(df) * r.sd;
  r.low = r.mean - half;
  r.high = r.mean + half;
  return r;
}

Estimate Scaled(Estimate e, double factor) {
  e.mean *= factor;
  e.sd *= std::fabs(factor);
  e.low *= factor;
  e.high *= factor;
  if (e.low > e.high) std::swap(e.low, e.high);
  return e;
}

std::string EstimateText(const Estimate& e, const char* format) {
  char mean[40], low[40], high[40];
  std::snprintf(mean, sizeof mean, format, e.mean);
  if (!e.HasInterval()) return std::string(mean) + " (one attempt)";
  // The interval's ends without the unit the format may append ("%.2fx").
  std::string bare = format;
  while (!bare.empty() && bare.back() != 'f' && bare.back() != 'g' && bare.back() != 'e') bare.pop_back();
  std::snprintf(low, sizeof low, bare.c_str(), e.low);
  std::snprintf(high, sizeof high, bare.c_str(), e.high);
  return std::string(mean) + " (95 % CI " + low + "\u2013" + high + ", n = " + std::to_string(e.n) + ")";
}

}  // namespace tb
