// The simulated NVML's processes: the compute and MPS process lists, per-process
// utilization samples, and MIG mode and devices.
#include "sim/fake_nvml_device.h"

using namespace tb::sim::fake;  // NOLINT: this file is the C side of those declarations

namespace {

// Lists the processes into `infos` through `put(i, pid, memory)`; on a MIG-enabled GPU
// only root may list them. The compute list holds every process on the GPU, the MPS
// server among them; the MPS list (`mps_only`) only the clients of MPS, as on a real H200.
template <typename Put>
int ListProcesses(Handle device, unsigned int* count, bool have_buffer, bool mps_only, Put put) {
  if (count == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    if (gpu->mig_mode == "Enabled" && !IsRoot()) return kNoPermission;
    std::vector<tb::sim::GpuProcess> procs = g_state.scenario->Processes(*gpu);
    if (mps_only) std::erase_if(procs, [](const tb::sim::GpuProcess& p) { return !p.mps_client; });
    if (!have_buffer || *count < procs.size()) {
      *count = static_cast<unsigned>(procs.size());
      return procs.empty() ? kSuccess : kInsufficientSize;
    }
    *count = static_cast<unsigned>(procs.size());
    for (size_t i = 0; i < procs.size(); ++i) {
      bool unknown = procs[i].rule != nullptr && procs[i].rule->memory_not_available;
      put(i, static_cast<unsigned>(procs[i].pid), unknown ? kValueNotAvailable : procs[i].memory_bytes);
    }
    return kSuccess;
  });
}

}  // namespace

extern "C" {

int nvmlDeviceGetComputeRunningProcesses_v2(Handle device, unsigned int* count, ProcessInfoV2* infos) {
  return ListProcesses(device, count, infos != nullptr, false,
                       [&](size_t i, unsigned pid, unsigned long long memory) {
                         infos[i] = ProcessInfoV2{pid, memory, 0xFFFFFFFF, 0xFFFFFFFF};
                       });
}

int nvmlDeviceGetComputeRunningProcesses(Handle device, unsigned int* count, ProcessInfoV1* infos) {
  return ListProcesses(device, count, infos != nullptr, false,
                       [&](size_t i, unsigned pid, unsigned long long memory) {
                         infos[i] = ProcessInfoV1{pid, memory};
                       });
}

int nvmlDeviceGetMPSComputeRunningProcesses_v2(Handle device, unsigned int* count, ProcessInfoV2* infos) {
  return ListProcesses(device, count, infos != nullptr, true,
                       [&](size_t i, unsigned pid, unsigned long long memory) {
                         infos[i] = ProcessInfoV2{pid, memory, 0xFFFFFFFF, 0xFFFFFFFF};
                       });
}

int nvmlDeviceGetMPSComputeRunningProcesses(Handle device, unsigned int* count, ProcessInfoV1* infos) {
  return ListProcesses(device, count, infos != nullptr, true,
                       [&](size_t i, unsigned pid, unsigned long long memory) {
                         infos[i] = ProcessInfoV1{pid, memory};
                       });
}

// The driver keeps one utilization sample per process per second; only samples newer
// than `last_seen` (microseconds) are returned, and NOT_FOUND when there are none, as real
// drivers answer. Under MPS the only sample is the server's (the H200 showed so): its
// clients have none of their own.
int nvmlDeviceGetProcessUtilization(Handle device, ProcessUtilizationSample* samples, unsigned int* count,
                                    unsigned long long last_seen) {
  if (count == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, const MigInstance* mig) -> int {
    if (mig != nullptr || gpu->mig_mode == "Enabled") return kNotSupported;
    BurnCpu(g_state.scenario->cpu_cost.process_utilization_us);
    std::vector<tb::sim::GpuProcess> procs = g_state.scenario->Processes(*gpu);
    std::erase_if(procs, [](const tb::sim::GpuProcess& p) { return p.mps_client; });
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long sample_us = static_cast<unsigned long long>(ts.tv_sec) * 1000000ULL;  // this second's
    if (procs.empty() || sample_us <= last_seen) return kNotFound;
    if (samples == nullptr || *count < procs.size()) {
      *count = static_cast<unsigned>(procs.size());
      return kInsufficientSize;
    }
    *count = static_cast<unsigned>(procs.size());
    for (size_t i = 0; i < procs.size(); ++i) {
      samples[i] = ProcessUtilizationSample{
          static_cast<unsigned>(procs[i].pid), sample_us, procs[i].sm_util_percent, 0, 0, 0};
    }
    return kSuccess;
  });
}

int nvmlDeviceGetMigMode(Handle device, unsigned int* current, unsigned int* pending) {
  if (current == nullptr || pending == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    if (mig != nullptr || gpu->mig_mode == "[N/A]") return kNotSupported;
    *current = *pending = gpu->mig_mode == "Enabled" ? 1 : 0;  // NVML_DEVICE_MIG_ENABLE / DISABLE
    return kSuccess;
  });
}

int nvmlDeviceGetMaxMigDeviceCount(Handle device, unsigned int* count) {
  if (count == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    *count = gpu->mig_mode == "Enabled" ? 7 : 0;  // an A100 can hold up to 7 MIG devices
    return kSuccess;
  });
}

int nvmlDeviceGetMigDeviceHandleByIndex(Handle device, unsigned int index, Handle* mig_device) {
  if (mig_device == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    auto* d = reinterpret_cast<Device*>(device);
    if (index >= gpu->mig.size()) return kNotFound;  // an empty slot
    // A GPU instance without a compute instance is no device CUDA or NVML can use.
    if (gpu->mig[index].compute_instance_id < 0) return kNotFound;
    *mig_device = reinterpret_cast<Handle>(g_state.migs[static_cast<size_t>(d->gpu)][index].get());
    return kSuccess;
  });
}

int nvmlDeviceGetGpuInstanceId(Handle device, unsigned int* id) {
  if (id == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu*, const MigInstance* mig) -> int {
    if (mig == nullptr) return kNotSupported;
    *id = mig->gpu_instance_id;
    return kSuccess;
  });
}

}  // extern "C"
