// A run's key metrics on a grid of one-second buckets, what phases.cc reads its samples
// into and phase_finding.cc finds phases in. Internal to analyze/. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/phases.h"
#include "analyze/training_window.h"
#include "metrics/sample.h"
#include "store/store.h"

namespace tb {

inline constexpr int64_t kStepMs = 1000;
inline const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The median of the values that are not NaN; NaN when none is.
double Median(std::vector<double> v);
// Buckets from `start_ms` to `end_ms`, the last one partial.
size_t BucketCount(int64_t start_ms, int64_t end_ms);

// Metrics summed over GPUs (absolute amounts) rather than averaged (ratios).
bool Summed(std::string_view metric);
// Counters whose increase over the run is what counts (their first and last points only).
bool Counter(std::string_view metric);
// How many buckets a gap on a metric's grid may fill with the last value.
int Fill(std::string_view metric);
// Of a metric's series (their label sets), the indices of one listener's only (nvml and
// smi both report power; counting both doubles it).
std::vector<size_t> OneListener(const std::vector<std::string_view>& labels);

// One series' points summed per one-second bucket from `start_ms`, fed a span at a time
// (a chunk's worth), up to `limit` buckets (a finished run's length).
class SeriesBuckets {
 public:
  SeriesBuckets(int64_t start_ms, size_t limit) : start_ms_(start_ms), limit_(limit) {}
  void Add(std::span<const Point> points);
  const std::vector<double>& sum() const { return sum_; }
  const std::vector<uint32_t>& count() const { return count_; }

 private:
  int64_t start_ms_;
  size_t limit_;
  std::vector<double> sum_;
  std::vector<uint32_t> count_;
};

// A metric on the one-second grid: the mean of each of its series per bucket, then the
// mean (or sum) across series; gaps up to `fill` buckets take the last value. Series are
// folded in one at a time, so only one series' buckets are held beside the grid.
class MetricGrid {
 public:
  void Fold(const SeriesBuckets& series);
  // The grid of `n` buckets; empty when no bucket has a value.
  std::vector<double> Finish(size_t n, bool summed, int fill) const;

 private:
  std::vector<double> total_;
  std::vector<uint32_t> have_;
};

// What the analysis works on: the key metrics on the grid, the counters' increases, the
// script's events.
struct RunGrids {
  int64_t start_ms = 0, end_ms = 0;
  size_t n = 0;
  std::map<std::string, std::vector<double>, std::less<>> grid;
  std::map<std::string, double, std::less<>> counters;  // increase over the run, one listener
  std::vector<EventRecord> events;
  bool simulated_gpu = false;
  std::optional<TrainingWindow> script_window;  // from the script's series and events
  std::optional<double> step_samples;           // counted from its steps
};

// The phases and steady-state figures of a run on its grid (phases.h says the method).
RunAnalysis AnalyzeGrids(const RunGrids& run);

}  // namespace tb
