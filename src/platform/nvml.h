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

namespace tb {

namespace nvml {
using Return = int;
inline constexpr Return kSuccess = 0;
inline constexpr Return kInvalidArgument = 2;
inline constexpr Return kNotSupported = 3;
inline constexpr Return kNoPermission = 4;
inline constexpr Return kNotFound = 6;
inline constexpr Return kInsufficientSize = 7;
inline constexpr Return kGpuIsLost = 15;
inline constexpr Return kNoData = 21;
inline constexpr Return kArgumentVersionMismatch = 25;

// usedGpuMemory when the driver cannot tell (NVML_VALUE_NOT_AVAILABLE, -1 as unsigned).
inline constexpr unsigned long long kValueNotAvailable = ~0ULL;

using Device = struct DeviceOpaque*;  // nvmlDevice_t

struct Utilization {  // nvmlUtilization_t
  unsigned int gpu;
  unsigned int memory;
};
struct Memory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct MemoryV2 {  // nvmlMemory_v2_t: `used` leaves out what the driver reserves
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
// nvmlMemory_v2: NVML_STRUCT_VERSION(Memory, 2), the structure's size with 2 in the top byte.
inline constexpr unsigned int kMemoryV2Version = static_cast<unsigned int>(sizeof(MemoryV2)) | (2U << 24);
struct ProcessInfoV1 {  // nvmlProcessInfo_v1_t
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
struct ProcessInfoV2 {  // nvmlProcessInfo_v2_t
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
struct ProcessUtilizationSample {  // nvmlProcessUtilizationSample_t
  unsigned int pid;
  unsigned long long timeStamp;  // microseconds
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};
inline constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
inline constexpr int kClockSm = 1;         // NVML_CLOCK_SM
inline constexpr int kClockMem = 2;        // NVML_CLOCK_MEM
inline constexpr int kPcieTxBytes = 0;     // NVML_PCIE_UTIL_TX_BYTES
inline constexpr int kPcieRxBytes = 1;     // NVML_PCIE_UTIL_RX_BYTES

// The calls trainbench uses; null when the library lacks them.
struct Functions {
  Return (*Init)() = nullptr;
  Return (*Shutdown)() = nullptr;
  const char* (*ErrorString)(Return) = nullptr;
  Return (*SystemGetDriverVersion)(char*, unsigned int) = nullptr;
  Return (*SystemGetCudaDriverVersion)(int*) = nullptr;
  Return (*DeviceGetCount)(unsigned int*) = nullptr;
  Return (*DeviceGetHandleByIndex)(unsigned int, Device*) = nullptr;
  Return (*DeviceGetHandleByUUID)(const char*, Device*) = nullptr;
  Return (*DeviceGetName)(Device, char*, unsigned int) = nullptr;
  Return (*DeviceGetUUID)(Device, char*, unsigned int) = nullptr;
  Return (*DeviceGetUtilizationRates)(Device, Utilization*) = nullptr;
  Return (*DeviceGetMemoryInfo)(Device, Memory*) = nullptr;
  Return (*DeviceGetMemoryInfoV2)(Device, MemoryV2*) = nullptr;                      // drivers from R510 on
  Return (*DeviceGetPowerUsage)(Device, unsigned int*) = nullptr;                    // mW
  Return (*DeviceGetTotalEnergyConsumption)(Device, unsigned long long*) = nullptr;  // mJ
  Return (*DeviceGetTemperature)(Device, int, unsigned int*) = nullptr;
  Return (*DeviceGetClockInfo)(Device, int, unsigned int*) = nullptr;  // MHz
  Return (*DeviceGetPerformanceState)(Device, int*) = nullptr;
  Return (*DeviceGetPcieThroughput)(Device, int, unsigned int*) = nullptr;  // KB/s
  Return (*DeviceGetClocksEventReasons)(Device, unsigned long long*) = nullptr;
  Return (*DeviceGetComputeRunningProcessesV2)(Device, unsigned int*, ProcessInfoV2*) = nullptr;
  Return (*DeviceGetComputeRunningProcessesV1)(Device, unsigned int*, ProcessInfoV1*) = nullptr;
  // The clients of MPS only (the running list also holds the MPS server).
  Return (*DeviceGetMPSComputeRunningProcessesV2)(Device, unsigned int*, ProcessInfoV2*) = nullptr;
  Return (*DeviceGetProcessUtilization)(Device, ProcessUtilizationSample*, unsigned int*,
                                        unsigned long long) = nullptr;
  Return (*DeviceGetMigMode)(Device, unsigned int*, unsigned int*) = nullptr;
  Return (*DeviceGetMaxMigDeviceCount)(Device, unsigned int*) = nullptr;
  Return (*DeviceGetMigDeviceHandleByIndex)(Device, unsigned int, Device*) = nullptr;
  Return (*DeviceGetGpuInstanceId)(Device, unsigned int*) = nullptr;
  Return (*DeviceGetPciBusId)(Device, char*, unsigned int) = nullptr;
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
