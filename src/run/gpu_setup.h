// The GPU side of a run, set up before it starts: NVML opened when a GPU listener is wanted
// or devices are named, the run's devices resolved (indices, GPU and MIG UUIDs), and the
// default listeners chosen when none were given. A machine without NVML is no error: the
// GPU listeners are skipped with one notice. On a machine whose GPUs are AMD's (AMD SMI
// finds them, NVML finds none) the devices are AMD SMI's indices and the default set reads
// them with amdsmi.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "collect/gpu_devices.h"
#include "platform/amdsmi.h"
#include "platform/nvml.h"
#include "run/launcher.h"

namespace tb {

struct GpuSetup {
  Status status;
  std::shared_ptr<Nvml> nvml;      // null when no GPU listener runs
  std::shared_ptr<AmdSmi> amdsmi;  // null unless the amdsmi listener runs
  DeviceSelection selection;
  bool simulated = false;              // some GPU listener reads the simulated GPU of sim/
  std::vector<std::string> listeners;  // what the run uses (the default set when none given)
  // Tags for the run's record: the sockets and partition mode of AMD GPUs it runs on that
  // are partitions of a larger GPU (store/run_tags.h kGpuSocketsTag).
  std::vector<std::pair<std::string, std::string>> tags;
};

GpuSetup SetUpGpuListeners(const RunOptions& options, std::vector<std::string>& notices);
// Whether `tool` on PATH is the simulated GPU's (sim/).
bool IsSimulatedTool(const std::string& tool);

}  // namespace tb
