// Which GPUs a run uses: its devices option ("0", "1+2", GPU UUIDs, MIG UUIDs, joined
// with '+' as in radT's files), else the CUDA_VISIBLE_DEVICES trainbench was started with
// (comma-separated), else every GPU. Pure function of its inputs; thread-safe.
//
// Every GPU listener watches exactly these GPUs: a MIG UUID is its parent GPU (and that
// GPU's instance, which DCGM watches as a GPU-I entity). NVML's index is not CUDA's (CUDA
// orders the fastest GPU first by default), so the child is given the GPUs' UUIDs, which
// mean the same GPU to every API, and CUDA_DEVICE_ORDER=PCI_BUS_ID for the indices it may
// still see (nvidia-smi and NVML order by PCI bus).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "platform/nvml.h"

namespace tb {

struct MigSelection {
  unsigned gpu = 0;              // the parent GPU's NVML index
  unsigned gpu_instance_id = 0;  // NVML's GPU instance id on that GPU
  std::string uuid;              // MIG-...
};

struct DeviceSelection {
  std::vector<unsigned> gpu_indices;  // physical GPUs to sample; empty: all
  std::vector<MigSelection> mig;      // MIG devices among them
  std::string cuda_visible_devices;   // for the child; empty: leave the environment alone
  // Whether the devices were resolved against the machine's GPUs (NVML answered); when
  // not, GPU and MIG UUIDs could not be mapped to GPUs and the listeners watch every GPU.
  bool resolved = false;
  // Runs started together on these GPUs (a schedule's workload; TRAINBENCH_GPU_RUNS): while
  // none has a process on a GPU, each is an equal part of its (idle) energy.
  unsigned runs_sharing = 1;
};

// `devices` may be null when NVML is not available; then only indices can be resolved
// and UUIDs are passed to the child unchecked. InvalidArgument for an index or UUID that
// is not on this machine.
Result<DeviceSelection> SelectDevices(const std::string& devices_option,
                                      const std::string& cuda_visible_devices,
                                      const std::vector<Nvml::DeviceInfo>* devices);

}  // namespace tb
