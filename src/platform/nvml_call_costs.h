// What each NVML call trainbench makes costs on this driver: CPU time of the calling thread
// and wall time per call, the median of a few calls on one GPU. `trainbench devices
// --call-costs` prints them, and scripts/gpu-acceptance.sh keeps the table: the nvml
// listener's cadence per field (collect/nvml_collector.h) rests on such figures (docs/GPU.md).
// Not thread-safe with other users of the same Nvml.
#pragma once

#include <string>
#include <vector>

#include "platform/nvml.h"

namespace tb {

struct NvmlCallCost {
  std::string call;    // "nvmlDeviceGetTotalEnergyConsumption"
  double cpu_us = 0;   // median CPU time of the calling thread per call
  double wall_us = 0;  // median wall time per call
  std::string answer;  // "Success", or NVML's error text
};

// Each call `repeats` times on `device`; calls the library lacks are left out.
std::vector<NvmlCallCost> TimeNvmlCalls(const Nvml& nvml, nvml::Device device, int repeats);

}  // namespace tb
