// The energy a run's GPUs used: per GPU the difference of NVML's total-energy counter
// over the run, or, where the GPU has no such counter, its power draw integrated over
// time (trapezoids between samples).
#pragma once

#include <optional>
#include <string>

#include "store/store.h"

namespace tb {

struct GpuEnergy {
  double joules = 0;
  int gpus = 0;             // GPUs that contributed
  bool integrated = false;  // some GPU had no counter and its power was integrated
};

// nullopt when the run has no GPU energy or power samples.
Result<std::optional<GpuEnergy>> RunGpuEnergy(Store& store, const std::string& run_id);

// Trapezoidal integral of `points` (values per second) over time, in value-seconds.
double IntegrateOverTime(const std::vector<Point>& points);

}  // namespace tb
