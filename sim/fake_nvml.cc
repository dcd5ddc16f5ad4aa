// The simulated GPU's NVML: a shared library (libnvidia-ml.so.1) with the C interface of
// NVIDIA's NVML, answering from the scenario in TRAINBENCH_SIM_SCENARIO. It implements the
// calls trainbench makes, with NVIDIA's documented types, units and return codes:
// utilization in percent, memory in bytes, power in milliwatts, energy in millijoules,
// clocks in MHz, PCIe throughput in KB/s. A GPU that fell off the bus answers
// NVML_ERROR_GPU_IS_LOST; an unsupported metric NVML_ERROR_NOT_SUPPORTED.
#include <time.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "sim/scenario.h"

namespace {

using tb::sim::Gpu;
using tb::sim::MigInstance;
using tb::sim::Scenario;

enum Return : int {
  kSuccess = 0,
  kUninitialized = 1,
  kInvalidArgument = 2,
  kNotSupported = 3,
  kNotFound = 6,
  kInsufficientSize = 7,
  kGpuIsLost = 15,
  kUnknown = 999,
};

// A device handle: a GPU, or one MIG instance of it.
struct Device {
  int gpu = 0;
  int mig = -1;
};

struct State {
  std::unique_ptr<Scenario> scenario;
  std::vector<std::unique_ptr<Device>> gpus;
  std::vector<std::vector<std::unique_ptr<Device>>> migs;
  int init_count = 0;
};

std::mutex g_mu;
State g_state;

// Waits out the GPU's configured call latency, as a call into the driver waits for the
// GPU (blocked, not spinning: the caller's CPU time is only what waking up costs).
void Delay(const Gpu& gpu) {
  if (gpu.call_delay_us <= 0) return;
  timespec ts{gpu.call_delay_us / 1000000, static_cast<long>(gpu.call_delay_us % 1000000) * 1000};
  nanosleep(&ts, nullptr);
}

// Resolves a handle; sets `code` to why not when it cannot be used.
const Gpu* Resolve(void* handle, const MigInstance** mig, int* code) {
  if (!g_state.scenario) {
    *code = kUninitialized;
    return nullptr;
  }
  auto* d = static_cast<Device*>(handle);
  if (d == nullptr || d->gpu < 0 || d->gpu >= static_cast<int>(g_state.scenario->gpus.size())) {
    *code = kInvalidArgument;
    return nullptr;
  }
  const Gpu& gpu = g_state.scenario->gpus[static_cast<size_t>(d->gpu)];
  Delay(gpu);
  if (g_state.scenario->Lost(gpu)) {
    *code = kGpuIsLost;
    return nullptr;
  }
  if (mig != nullptr) *mig = d->mig >= 0 ? &gpu.mig[static_cast<size_t>(d->mig)] : nullptr;
  *code = kSuccess;
  return &gpu;
}

// Runs `body(gpu, mig)` under the lock on a usable device (mig is null for a whole GPU),
// or answers why the device cannot be used.
template <typename Body>
int OnDevice(void* device, Body body) {
  std::lock_guard lock(g_mu);
  int code;
  const MigInstance* mig = nullptr;
  const Gpu* gpu = Resolve(device, &mig, &code);
  if (gpu == nullptr) return code;
  return body(gpu, mig);
}

int CopyString(const std::string& s, char* out, unsigned length) {
  if (out == nullptr) return kInvalidArgument;
  if (s.size() + 1 > length) return kInsufficientSize;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return kSuccess;
}

// Reads one metric into *out as an unsigned value scaled by `scale`.
template <typename T>
int ReadMetric(void* device, const char* key, double scale, T* out) {
  if (out == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    std::optional<double> v = g_state.scenario->Value(*gpu, key);
    if (!v) return kNotSupported;
    *out = static_cast<T>(std::llround(*v * scale));
    return kSuccess;
  });
}

}  // namespace

extern "C" {

// Not part of NVML: lets trainbench tell that this is the simulated GPU.
const char* trainbench_simulated_gpu(void) { return "trainbench simulated GPU"; }

int nvmlInit_v2(void) {
  std::lock_guard lock(g_mu);
  if (g_state.init_count++ > 0) return kSuccess;
  std::string error;
  std::optional<Scenario> s = Scenario::Load(&error);
  if (!s) {
    g_state.init_count = 0;
    return 9;  // NVML_ERROR_DRIVER_NOT_LOADED
  }
  g_state.scenario = std::make_unique<Scenario>(std::move(*s));
  g_state.gpus.clear();
  g_state.migs.clear();
  for (size_t i = 0; i < g_state.scenario->gpus.size(); ++i) {
    g_state.gpus.push_back(std::make_unique<Device>(Device{static_cast<int>(i), -1}));
    g_state.migs.emplace_back();
    for (size_t m = 0; m < g_state.scenario->gpus[i].mig.size(); ++m) {
      g_state.migs.back().push_back(
          std::make_unique<Device>(Device{static_cast<int>(i), static_cast<int>(m)}));
    }
  }
  return kSuccess;
}
int nvmlInit(void) { return nvmlInit_v2(); }
int nvmlInitWithFlags(unsigned int) { return nvmlInit_v2(); }

int nvmlShutdown(void) {
  std::lock_guard lock(g_mu);
  if (g_state.init_count == 0) return kUninitialized;
  if (--g_state.init_count == 0) g_state.scenario.reset();
  return kSuccess;
}

const char* nvmlErrorString(int result) {
  switch (result) {
    case kSuccess:
      return "Success";
    case kUninitialized:
      return "Uninitialized";
    case kInvalidArgument:
      return "Invalid Argument";
    case kNotSupported:
      return "Not Supported";
    case kNotFound:
      return "Not Found";
    case kInsufficientSize:
      return "Insufficient Size";
    case kGpuIsLost:
      return "GPU is lost";
    case 9:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}

int nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  std::lock_guard lock(g_mu);
  if (!g_state.scenario) return kUninitialized;
  return CopyString(g_state.scenario->driver_version, version, length);
}

int nvmlSystemGetCudaDriverVersion_v2(int* version) {
  std::lock_guard lock(g_mu);
  if (!g_state.scenario) return kUninitialized;
  if (version == nullptr) return kInvalidArgument;
  *version = g_state.scenario->cuda_driver_version;
  return kSuccess;
}
int nvmlSystemGetCudaDriverVersion(int* version) { return nvmlSystemGetCudaDriverVersion_v2(version); }

int nvmlDeviceGetCount_v2(unsigned int* count) {
  std::lock_guard lock(g_mu);
  if (!g_state.scenario) return kUninitialized;
  if (count == nullptr) return kInvalidArgument;
  *count = static_cast<unsigned>(g_state.scenario->gpus.size());
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  std::lock_guard lock(g_mu);
  if (!g_state.scenario) return kUninitialized;
  if (device == nullptr || index >= g_state.gpus.size()) return kInvalidArgument;
  *device = g_state.gpus[index].get();
  return kSuccess;
}

int nvmlDeviceGetHandleByUUID(const char* uuid, void** device) {
  std::lock_guard lock(g_mu);
  if (!g_state.scenario) return kUninitialized;
  if (uuid == nullptr || device == nullptr) return kInvalidArgument;
  for (size_t i = 0; i < g_state.scenario->gpus.size(); ++i) {
    const Gpu& gpu = g_state.scenario->gpus[i];
    if (gpu.uuid == uuid) {
      *device = g_state.gpus[i].get();
      return kSuccess;
    }
    for (size_t m = 0; m < gpu.mig.size(); ++m) {
      if (gpu.mig[m].uuid == uuid) {
        *device = g_state.migs[i][m].get();
        return kSuccess;
      }
    }
  }
  return kNotFound;
}

int nvmlDeviceGetName(void* device, char* name, unsigned int length) {
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    return CopyString(mig != nullptr ? gpu->name + " MIG " + mig->profile : gpu->name, name, length);
  });
}

int nvmlDeviceGetUUID(void* device, char* uuid, unsigned int length) {
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    return CopyString(mig != nullptr ? mig->uuid : gpu->uuid, uuid, length);
  });
}

struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};
int nvmlDeviceGetUtilizationRates(void* device, Utilization* utilization) {
  if (utilization == nullptr) return kInvalidArgument;
  int a = ReadMetric(device, "util_gpu_pct", 1, &utilization->gpu);
  if (a != kSuccess) return a;
  return ReadMetric(device, "util_mem_pct", 1, &utilization->memory);
}

struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
int nvmlDeviceGetMemoryInfo(void* device, Memory* memory) {
  if (memory == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    if (mig != nullptr) {
      memory->total = mig->memory_total_bytes;
      memory->used = mig->memory_used_bytes;
    } else {
      std::optional<double> used = g_state.scenario->Value(*gpu, "mem_used_mib");
      if (!used) return kNotSupported;
      memory->total = gpu->memory_total_bytes;
      memory->used = static_cast<unsigned long long>(*used * 1048576);
    }
    memory->free = memory->total - std::min(memory->total, memory->used);
    return kSuccess;
  });
}

int nvmlDeviceGetPowerUsage(void* device, unsigned int* milliwatts) {
  return ReadMetric(device, "power_w", 1000, milliwatts);
}

int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* millijoules) {
  if (millijoules == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    std::optional<double> mj = g_state.scenario->EnergyMillijoules(*gpu);
    if (!mj) return kNotSupported;
    *millijoules = static_cast<unsigned long long>(*mj);
    return kSuccess;
  });
}

int nvmlDeviceGetTemperature(void* device, int sensor, unsigned int* celsius) {
  if (sensor != 0) return kInvalidArgument;  // NVML_TEMPERATURE_GPU
  return ReadMetric(device, "temp_c", 1, celsius);
}

int nvmlDeviceGetClockInfo(void* device, int type, unsigned int* mhz) {
  // NVML_CLOCK_GRAPHICS 0, NVML_CLOCK_SM 1, NVML_CLOCK_MEM 2
  if (type == 1 || type == 0) return ReadMetric(device, "clock_sm_mhz", 1, mhz);
  if (type == 2) return ReadMetric(device, "clock_mem_mhz", 1, mhz);
  return kNotSupported;
}

int nvmlDeviceGetPerformanceState(void* device, int* pstate) {
  return ReadMetric(device, "pstate", 1, pstate);
}

int nvmlDeviceGetPcieThroughput(void* device, int counter, unsigned int* kilobytes_per_second) {
  // NVML_PCIE_UTIL_TX_BYTES 0, NVML_PCIE_UTIL_RX_BYTES 1
  return ReadMetric(device, counter == 0 ? "pcie_tx_kbps" : "pcie_rx_kbps", 1, kilobytes_per_second);
}

int nvmlDeviceGetCurrentClocksEventReasons(void* device, unsigned long long* reasons) {
  return ReadMetric(device, "throttle_reasons", 1, reasons);
}
int nvmlDeviceGetCurrentClocksThrottleReasons(void* device, unsigned long long* reasons) {
  return nvmlDeviceGetCurrentClocksEventReasons(device, reasons);
}

struct ProcessInfoV2 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
int nvmlDeviceGetComputeRunningProcesses_v2(void* device, unsigned int* count, ProcessInfoV2* infos) {
  if (count == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    auto procs = g_state.scenario->Processes(*gpu);
    if (infos == nullptr || *count < procs.size()) {
      *count = static_cast<unsigned>(procs.size());
      return procs.empty() ? kSuccess : kInsufficientSize;
    }
    *count = static_cast<unsigned>(procs.size());
    for (size_t i = 0; i < procs.size(); ++i) {
      infos[i] = ProcessInfoV2{static_cast<unsigned>(procs[i].first), procs[i].second->memory_used_bytes,
                               0xFFFFFFFF, 0xFFFFFFFF};
    }
    return kSuccess;
  });
}

struct ProcessUtilizationSample {
  unsigned int pid;
  unsigned long long timeStamp;  // microseconds
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};
int nvmlDeviceGetProcessUtilization(void* device, ProcessUtilizationSample* samples, unsigned int* count,
                                    unsigned long long last_seen) {
  if (count == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    auto procs = g_state.scenario->Processes(*gpu);
    if (procs.empty()) return 21;  // NVML_ERROR_NO_DATA: no samples since last_seen
    if (samples == nullptr || *count < procs.size()) {
      *count = static_cast<unsigned>(procs.size());
      return kInsufficientSize;
    }
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long now_us = static_cast<unsigned long long>(ts.tv_sec) * 1000000ULL +
                                static_cast<unsigned long long>(ts.tv_nsec) / 1000;
    (void)last_seen;
    *count = static_cast<unsigned>(procs.size());
    for (size_t i = 0; i < procs.size(); ++i) {
      samples[i] = ProcessUtilizationSample{
          static_cast<unsigned>(procs[i].first), now_us, procs[i].second->sm_util_percent, 0, 0, 0};
    }
    return kSuccess;
  });
}

int nvmlDeviceGetMigMode(void* device, unsigned int* current, unsigned int* pending) {
  if (current == nullptr || pending == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    if (mig != nullptr || gpu->mig_mode == "[N/A]") return kNotSupported;
    *current = *pending = gpu->mig_mode == "Enabled" ? 1 : 0;  // NVML_DEVICE_MIG_ENABLE / DISABLE
    return kSuccess;
  });
}

int nvmlDeviceGetMaxMigDeviceCount(void* device, unsigned int* count) {
  if (count == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    *count = gpu->mig_mode == "Enabled" ? 7 : 0;  // an A100 can hold up to 7 MIG devices
    return kSuccess;
  });
}

int nvmlDeviceGetMigDeviceHandleByIndex(void* device, unsigned int index, void** mig_device) {
  if (mig_device == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    auto* d = static_cast<Device*>(device);
    if (index >= gpu->mig.size()) return kNotFound;  // an empty slot
    *mig_device = g_state.migs[static_cast<size_t>(d->gpu)][index].get();
    return kSuccess;
  });
}

int nvmlDeviceGetGpuInstanceId(void* device, unsigned int* id) {
  if (id == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu*, const MigInstance* mig) -> int {
    if (mig == nullptr) return kNotSupported;
    *id = mig->gpu_instance_id;
    return kSuccess;
  });
}

}  // extern "C"
