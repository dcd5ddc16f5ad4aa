// A figure measured over repeats: its mean, standard deviation, n and 95 % confidence
// interval (Student's t with n - 1 degrees of freedom), and a ratio of two such figures
// (a speed-up: combined throughput over the same runs' alone) with its interval by the
// delta method. Where one attempt is all there is, the interval is the value itself and
// n = 1 says so. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tb {

struct Estimate {
  double mean = 0, sd = 0;  // sd: the sample standard deviation (n - 1), 0 for n = 1
  int n = 0;
  double low = 0, high = 0;  // the 95 % confidence interval of the mean
  bool HasInterval() const { return n >= 2; }
};

// Student's t quantile 0.975 for `df` degrees of freedom (the normal's 1.96 past 1,000).
double StudentT975(int df);

// The estimate of `values` (NaNs left out); nullopt when none is left.
std::optional<Estimate> EstimateOf(const std::vector<double>& values);
// The same of values each of which may be missing: nullopt when any is (a figure some
// attempt lacks is not averaged over the others without a word), or when there are none.
std::optional<Estimate> EstimateOfAll(const std::vector<std::optional<double>>& values);

// num / den, each an estimate over its own repeats: the mean's ratio, and an interval from
// the delta method, relative variance (sd_n/mean_n)^2/n_n + (sd_d/mean_d)^2/n_d, with the
// degrees of freedom of the side with fewer repeats (only sides with n >= 2 count; n = 1
// on both: no interval). nullopt when den's mean is 0.
std::optional<Estimate> RatioEstimate(const Estimate& num, const Estimate& den);

// `e` scaled by `factor` (a ratio as a percentage).
Estimate Scaled(Estimate e, double factor);

// "1.63x (95 % CI 1.51–1.75, n = 3)" with `format` for each number ("%.2fx" gives the
// x after the mean only); "1.63x (one attempt)" for n = 1.
std::string EstimateText(const Estimate& e, const char* format);

}  // namespace tb
