// NVML, NVIDIA's management library, loaded at run time with dlopen so that trainbench
// builds and runs on machines without a GPU. Only the types and calls trainbench uses are
// declared here, following NVIDIA's nvml.h: the newest versioned symbol of a call is tried
// first and older ones after it; calls a driver may lack are null and checked where used.
// Process listings use the _v2 call and its four-field structure: the structure behind
// _v3 changed between drivers (a fifth field came and went), _v2's did not.
// The library is chosen by TRAINBENCH_NVML_LIBRARY (the simulated GPU in sim/ sets it),
// else libnvidia-ml.so.1. Calls on one Nvml are serialized by the caller (the sampler).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "platform/nvml_abi.h"

namespace tb {

namespace nvml {
// The calls trainbench uses; null when the library lacks them.
struct Functions {
  decltype(&nvmlInit_v2) Init = nullptr;
  decltype(&nvmlShutdown) Shutdown = nullptr;
  decltype(&nvmlErrorString) ErrorString = nullptr;
  decltype(&nvmlSystemGetDriverVersion) SystemGetDriverVersion = nullptr;
  decltype(&nvmlSystemGetCudaDriverVersion_v2) SystemGetCudaDriverVersion = nullptr;
  decltype(&nvmlDeviceGetCount_v2) DeviceGetCount = nullptr;
  decltype(&nvmlDeviceGetHandleByIndex_v2) DeviceGetHandleByIndex = nullptr;
  decltype(&nvmlDeviceGetHandleByUUID) DeviceGetHandleByUUID = nullptr;
  decltype(&nvmlDeviceGetName) DeviceGetName = nullptr;
  decltype(&nvmlDeviceGetUUID) DeviceGetUUID = nullptr;
  decltype(&nvmlDeviceGetUtilizationRates) DeviceGetUtilizationRates = nullptr;
  decltype(&nvmlDeviceGetMemoryInfo) DeviceGetMemoryInfo = nullptr;
  decltype(&nvmlDeviceGetMemoryInfo_v2) DeviceGetMemoryInfoV2 = nullptr;
  decltype(&nvmlDeviceGetPowerUsage) DeviceGetPowerUsage = nullptr;
  decltype(&nvmlDeviceGetTotalEnergyConsumption) DeviceGetTotalEnergyConsumption = nullptr;
  decltype(&nvmlDeviceGetTemperature) DeviceGetTemperature = nullptr;
  decltype(&nvmlDeviceGetClockInfo) DeviceGetClockInfo = nullptr;
  decltype(&nvmlDeviceGetPerformanceState) DeviceGetPerformanceState = nullptr;
  decltype(&nvmlDeviceGetPcieThroughput) DeviceGetPcieThroughput = nullptr;
  decltype(&nvmlDeviceGetCurrentClocksEventReasons) DeviceGetClocksEventReasons = nullptr;
  decltype(&nvmlDeviceGetComputeRunningProcesses_v2) DeviceGetComputeRunningProcessesV2 = nullptr;
  decltype(&nvmlDeviceGetComputeRunningProcesses) DeviceGetComputeRunningProcessesV1 = nullptr;
  decltype(&nvmlDeviceGetMPSComputeRunningProcesses_v2) DeviceGetMPSComputeRunningProcessesV2 = nullptr;
  decltype(&nvmlDeviceGetProcessUtilization) DeviceGetProcessUtilization = nullptr;
  decltype(&nvmlDeviceGetMigMode) DeviceGetMigMode = nullptr;
  decltype(&nvmlDeviceGetMaxMigDeviceCount) DeviceGetMaxMigDeviceCount = nullptr;
  decltype(&nvmlDeviceGetMigDeviceHandleByIndex) DeviceGetMigDeviceHandleByIndex = nullptr;
  decltype(&nvmlDeviceGetGpuInstanceId) DeviceGetGpuInstanceId = nullptr;
  decltype(&nvmlDeviceGetPciBusId_v2) DeviceGetPciBusId = nullptr;
};
}  // namespace nvml

class Nvml {
 public:
  // Loads and initializes NVML. Fails with a message naming the library and what to do.
  static Result<std::unique_ptr<Nvml>> Open();
  // The library Open() loads: TRAINBENCH_NVML_LIBRARY, else libnvidia-ml.so.1.
  static std::string LibraryPath();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  const nvml::Functions& fn() const { return fn_; }
  std::string Error(nvml::Return code) const;
  // True for the simulated GPU of sim/ (it exports trainbench_simulated_gpu).
  bool simulated() const { return simulated_; }
  std::string DriverVersion() const;
  // "12.2"; "" when unknown.
  std::string CudaVersion() const;

  struct DeviceInfo {
    nvml::Device handle = nullptr;
    unsigned index = 0;
    std::string name, uuid;
    uint64_t memory_total_bytes = 0;
    bool mig_enabled = false;
    struct Mig {
      nvml::Device handle = nullptr;
      std::string uuid;
      unsigned gpu_instance_id = 0;  // NVML's GPU instance id on its GPU
      uint64_t memory_total_bytes = 0;
    };
    std::vector<Mig> mig;  // empty unless MIG is enabled
  };
  struct DeviceList {
    std::vector<DeviceInfo> gpus;  // the GPUs that could be opened, by NVML index
    // One sentence per GPU that could not be opened (hidden by a cgroup: NO_PERMISSION;
    // fallen off the bus: GPU_IS_LOST); the others are listed and sampled.
    std::vector<std::string> skipped;
  };
  // Every GPU with its MIG devices. Fails only when NVML cannot count the GPUs.
  Result<DeviceList> Devices() const;

 private:
  Nvml() = default;
  void* library_ = nullptr;
  bool simulated_ = false;
  nvml::Functions fn_;
};

}  // namespace tb
