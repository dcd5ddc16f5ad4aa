// NVML's C interface as NVIDIA's nvml.h declares it: the types, codes and calls trainbench
// uses, said once. trainbench never links these symbols (platform/nvml.h loads them with
// dlsym into pointers of these types); the simulated GPU (sim/fake_nvml*.cc) defines them,
// so a definition that differs from NVIDIA's signature does not compile.
#pragma once

namespace tb {

namespace nvml {
using Return = int;
inline constexpr Return kSuccess = 0;
inline constexpr Return kUninitialized = 1;
inline constexpr Return kInvalidArgument = 2;
inline constexpr Return kNotSupported = 3;
inline constexpr Return kNoPermission = 4;
inline constexpr Return kNotFound = 6;
inline constexpr Return kInsufficientSize = 7;
inline constexpr Return kDriverNotLoaded = 9;
inline constexpr Return kGpuIsLost = 15;
inline constexpr Return kNoData = 21;
inline constexpr Return kArgumentVersionMismatch = 25;
inline constexpr Return kUnknown = 999;

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
}  // namespace nvml

}  // namespace tb

// The newest versioned symbol of each call trainbench uses (nvml.h's names).
extern "C" {
tb::nvml::Return nvmlInit_v2();
tb::nvml::Return nvmlShutdown();
const char* nvmlErrorString(tb::nvml::Return result);
tb::nvml::Return nvmlSystemGetDriverVersion(char* version, unsigned int length);
tb::nvml::Return nvmlSystemGetCudaDriverVersion_v2(int* version);
tb::nvml::Return nvmlDeviceGetCount_v2(unsigned int* count);
tb::nvml::Return nvmlDeviceGetHandleByIndex_v2(unsigned int index, tb::nvml::Device* device);
tb::nvml::Return nvmlDeviceGetHandleByUUID(const char* uuid, tb::nvml::Device* device);
tb::nvml::Return nvmlDeviceGetName(tb::nvml::Device device, char* name, unsigned int length);
tb::nvml::Return nvmlDeviceGetUUID(tb::nvml::Device device, char* uuid, unsigned int length);
tb::nvml::Return nvmlDeviceGetUtilizationRates(tb::nvml::Device device, tb::nvml::Utilization* utilization);
tb::nvml::Return nvmlDeviceGetMemoryInfo(tb::nvml::Device device, tb::nvml::Memory* memory);
tb::nvml::Return nvmlDeviceGetMemoryInfo_v2(tb::nvml::Device device,
                                            tb::nvml::MemoryV2* memory);  // drivers from R510 on
tb::nvml::Return nvmlDeviceGetPowerUsage(tb::nvml::Device device, unsigned int* milliwatts);
tb::nvml::Return nvmlDeviceGetTotalEnergyConsumption(tb::nvml::Device device,
                                                     unsigned long long* millijoules);
tb::nvml::Return nvmlDeviceGetTemperature(tb::nvml::Device device, int sensor, unsigned int* celsius);
tb::nvml::Return nvmlDeviceGetClockInfo(tb::nvml::Device device, int type, unsigned int* mhz);
tb::nvml::Return nvmlDeviceGetPerformanceState(tb::nvml::Device device, int* pstate);
tb::nvml::Return nvmlDeviceGetPcieThroughput(tb::nvml::Device device, int counter,
                                             unsigned int* kilobytes_per_second);
tb::nvml::Return nvmlDeviceGetCurrentClocksEventReasons(tb::nvml::Device device, unsigned long long* reasons);
tb::nvml::Return nvmlDeviceGetComputeRunningProcesses_v2(tb::nvml::Device device, unsigned int* count,
                                                         tb::nvml::ProcessInfoV2* infos);
tb::nvml::Return nvmlDeviceGetComputeRunningProcesses(tb::nvml::Device device, unsigned int* count,
                                                      tb::nvml::ProcessInfoV1* infos);
// The clients of MPS only (the running list also holds the MPS server).
tb::nvml::Return nvmlDeviceGetMPSComputeRunningProcesses_v2(tb::nvml::Device device, unsigned int* count,
                                                            tb::nvml::ProcessInfoV2* infos);
tb::nvml::Return nvmlDeviceGetProcessUtilization(tb::nvml::Device device,
                                                 tb::nvml::ProcessUtilizationSample* samples,
                                                 unsigned int* count, unsigned long long last_seen_us);
tb::nvml::Return nvmlDeviceGetMigMode(tb::nvml::Device device, unsigned int* current, unsigned int* pending);
tb::nvml::Return nvmlDeviceGetMaxMigDeviceCount(tb::nvml::Device device, unsigned int* count);
tb::nvml::Return nvmlDeviceGetMigDeviceHandleByIndex(tb::nvml::Device device, unsigned int index,
                                                     tb::nvml::Device* mig_device);
tb::nvml::Return nvmlDeviceGetGpuInstanceId(tb::nvml::Device device, unsigned int* id);
tb::nvml::Return nvmlDeviceGetPciBusId_v2(tb::nvml::Device device, char* bus_id, unsigned int length);
}
