// Which GPUs a run uses: its devices option ("0", "1+2", GPU UUIDs, MIG UUIDs, joined
// with '+' as in radT's files), else the CUDA_VISIBLE_DEVICES trainbench was started with
// (comma-separated), else every GPU. Pure function of its inputs; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "platform/nvml.h"

namespace tb {

struct DeviceSelection {
  std::vector<unsigned> gpu_indices;  // physical GPUs to sample; empty: all
  std::string cuda_visible_devices;   // for the child; empty: leave the environment alone
};

// `devices` may be null when NVML is not available; then only indices can be resolved
// and UUIDs are passed to the child unchecked. InvalidArgument for an index or UUID that
// is not on this machine.
Result<DeviceSelection> SelectDevices(const std::string& devices_option,
                                      const std::string& cuda_visible_devices,
                                      const std::vector<Nvml::DeviceInfo>* devices);

}  // namespace tb
