// The energy a run's GPUs used: per GPU the difference of NVML's total-energy counter
// over the run, or, where the GPU has no such counter, its power draw integrated over
// time (trapezoids between samples). Beside it the run's own share (proc.gpu.energy_joules:
// the GPUs' power apportioned by the run's share of their activity), which is the figure to
// compare when runs share a GPU: the device total counts what the others used too.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "store/store.h"

namespace tb {

struct GpuEnergy {
  double joules = 0;
  int gpus = 0;                            // GPUs that contributed
  bool integrated = false;                 // some GPU had no counter and its power was integrated
  std::optional<double> run_share_joules;  // the run's attributed share, where NVML recorded it
};

// nullopt when the run has no GPU energy or power samples.
Result<std::optional<GpuEnergy>> RunGpuEnergy(Store& store, const std::string& run_id);

// The run's CPU energy: its share of each RAPL domain's (proc.cpu.energy_joules, the rapl
// listener's), summed over the domains; nullopt when the run has none.
Result<std::optional<double>> RunCpuEnergy(Store& store, const std::string& run_id);

// Trapezoidal integral of points (values per second) over time, in value-seconds, given in
// parts in time order; a pair with a NaN adds nothing.
class TimeIntegral {
 public:
  void Add(std::span<const Point> points);
  double value() const { return total_; }
  int64_t points() const { return points_; }

 private:
  double total_ = 0;
  int64_t points_ = 0;
  Point last_;  // the last point added, when points_ > 0
};

}  // namespace tb
