// The simulated GPU's NVML: a shared library (libnvidia-ml.so.1) with the C interface of
// NVIDIA's NVML, answering from the scenario in TRAINBENCH_SIM_SCENARIO. It implements the
// calls trainbench makes, with NVIDIA's documented types, units and return codes:
// utilization in percent, memory in bytes, power in milliwatts, energy in millijoules,
// clocks in MHz, PCIe throughput in KB/s. A GPU that fell off the bus answers
// NVML_ERROR_GPU_IS_LOST; an unsupported metric NVML_ERROR_NOT_SUPPORTED.
#include "sim/fake_nvml_device.h"

using namespace tb::sim::fake;  // NOLINT: this file is the C side of those declarations

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
    return kDriverNotLoaded;
  }
  g_state.scenario = std::make_unique<Scenario>(std::move(*s));
  BurnCpu(g_state.scenario->cpu_cost.init_us);
  if (int ms = g_state.scenario->nvml_init_ms; ms > 0) {
    timespec wait{ms / 1000, static_cast<long>(ms % 1000) * 1000000};
    nanosleep(&wait, nullptr);
  }
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
  if (--g_state.init_count == 0) {
    g_state.scenario.reset();
    tb::sim::StopProcessScanner();
  }
  return kSuccess;
}

// The texts the real library returns.
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
    case kNoPermission:
      return "Insufficient Permissions";
    case 5:
      return "Already Initialized";
    case kNotFound:
      return "Not Found";
    case kInsufficientSize:
      return "Insufficient Size";
    case 8:
      return "Insufficient External Power";
    case kDriverNotLoaded:
      return "Driver Not Loaded";
    case 10:
      return "Timeout";
    case kGpuIsLost:
      return "GPU is lost";
    case 19:
      return "In use by another client";
    case kNoData:
      return "No data";
    case kArgumentVersionMismatch:
      return "Argument version mismatch";
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

int nvmlDeviceGetCount(unsigned int* count);
int nvmlDeviceGetCount_v2(unsigned int* count) {
  std::lock_guard lock(g_mu);
  if (!g_state.scenario) return kUninitialized;
  if (count == nullptr) return kInvalidArgument;
  *count = static_cast<unsigned>(g_state.scenario->gpus.size());
  return kSuccess;
}

int nvmlDeviceGetCount(unsigned int* count) { return nvmlDeviceGetCount_v2(count); }

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, Handle* device) {
  std::lock_guard lock(g_mu);
  if (!g_state.scenario) return kUninitialized;
  if (device == nullptr || index >= g_state.gpus.size()) return kInvalidArgument;
  // A GPU hidden by a cgroup is counted but cannot be opened.
  if (g_state.scenario->gpus[index].no_permission) return kNoPermission;
  *device = reinterpret_cast<Handle>(g_state.gpus[index].get());
  return kSuccess;
}
int nvmlDeviceGetHandleByIndex(unsigned int index, Handle* device) {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}

int nvmlDeviceGetHandleByUUID(const char* uuid, Handle* device) {
  std::lock_guard lock(g_mu);
  if (!g_state.scenario) return kUninitialized;
  if (uuid == nullptr || device == nullptr) return kInvalidArgument;
  for (size_t i = 0; i < g_state.scenario->gpus.size(); ++i) {
    const Gpu& gpu = g_state.scenario->gpus[i];
    if (gpu.uuid == uuid) {
      *device = reinterpret_cast<Handle>(g_state.gpus[i].get());
      return kSuccess;
    }
    for (size_t m = 0; m < gpu.mig.size(); ++m) {
      if (gpu.mig[m].uuid == uuid) {
        *device = reinterpret_cast<Handle>(g_state.migs[i][m].get());
        return kSuccess;
      }
    }
  }
  return kNotFound;
}

int nvmlDeviceGetName(Handle device, char* name, unsigned int length) {
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    return CopyString(mig != nullptr ? gpu->name + " MIG " + mig->profile : gpu->name, name, length);
  });
}

int nvmlDeviceGetUUID(Handle device, char* uuid, unsigned int length) {
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    return CopyString(mig != nullptr ? mig->uuid : gpu->uuid, uuid, length);
  });
}

int nvmlDeviceGetUtilizationRates(Handle device, Utilization* utilization) {
  if (utilization == nullptr) return kInvalidArgument;
  // NVML has no utilization for a GPU in MIG mode nor for a MIG device.
  int mig = OnDevice(device, [&](const Gpu* gpu, const MigInstance* m) -> int {
    return m != nullptr || gpu->mig_mode == "Enabled" ? kNotSupported : kSuccess;
  });
  if (mig != kSuccess) return mig;
  int a = ReadMetric(device, "util_gpu_pct", 1, &utilization->gpu);
  if (a != kSuccess) return a;
  return ReadMetric(device, "util_mem_pct", 1, &utilization->memory);
}

// v1's `used` includes what the driver reserves; v2 reports it apart (nvidia-smi's
// memory.used is v2's `used`, the scenario's mem_used_mib).
int nvmlDeviceGetMemoryInfo(Handle device, Memory* memory) {
  if (memory == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    if (mig != nullptr) {
      memory->total = mig->memory_total_bytes;
      memory->used = mig->memory_used_bytes;
    } else {
      std::optional<double> used = g_state.scenario->Value(*gpu, "mem_used_mib");
      if (!used) return kNotSupported;
      memory->total = gpu->memory_total_bytes;
      memory->used = static_cast<unsigned long long>(*used * 1048576) + gpu->memory_reserved_bytes;
    }
    memory->free = memory->total - std::min(memory->total, memory->used);
    return kSuccess;
  });
}

int nvmlDeviceGetMemoryInfo_v2(Handle device, MemoryV2* memory) {
  if (memory == nullptr) return kInvalidArgument;
  if (memory->version != kMemoryV2Version) return kArgumentVersionMismatch;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    if (mig != nullptr) {
      memory->total = mig->memory_total_bytes;
      memory->reserved = 0;
      memory->used = mig->memory_used_bytes;
    } else {
      std::optional<double> used = g_state.scenario->Value(*gpu, "mem_used_mib");
      if (!used) return kNotSupported;
      memory->total = gpu->memory_total_bytes;
      memory->reserved = gpu->memory_reserved_bytes;
      memory->used = static_cast<unsigned long long>(*used * 1048576);
    }
    memory->free = memory->total - std::min(memory->total, memory->used + memory->reserved);
    return kSuccess;
  });
}

int nvmlDeviceGetPowerUsage(Handle device, unsigned int* milliwatts) {
  return ReadMetric(device, "power_w", 1000, milliwatts);
}

int nvmlDeviceGetTotalEnergyConsumption(Handle device, unsigned long long* millijoules) {
  if (millijoules == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    BurnCpu(g_state.scenario->cpu_cost.energy_us);
    std::optional<double> mj = g_state.scenario->EnergyMillijoules(*gpu);
    if (!mj) return kNotSupported;
    *millijoules = static_cast<unsigned long long>(*mj);
    return kSuccess;
  });
}

int nvmlDeviceGetTemperature(Handle device, int sensor, unsigned int* celsius) {
  if (sensor != 0) return kInvalidArgument;  // NVML_TEMPERATURE_GPU
  return ReadMetric(device, "temp_c", 1, celsius);
}

int nvmlDeviceGetClockInfo(Handle device, int type, unsigned int* mhz) {
  // NVML_CLOCK_GRAPHICS 0, NVML_CLOCK_SM 1, NVML_CLOCK_MEM 2
  if (type == 1 || type == 0) return ReadMetric(device, "clock_sm_mhz", 1, mhz);
  if (type == 2) return ReadMetric(device, "clock_mem_mhz", 1, mhz);
  return kNotSupported;
}

int nvmlDeviceGetPerformanceState(Handle device, int* pstate) {
  return ReadMetric(device, "pstate", 1, pstate);
}

// NVML measures PCIe throughput over a 20 ms window per call: the call blocks that long
// (the scenario's pcie_call_ms), outside the library's lock as the real driver lets other
// calls through meanwhile.
int nvmlDeviceGetPcieThroughput(Handle device, int counter, unsigned int* kilobytes_per_second) {
  // NVML_PCIE_UTIL_TX_BYTES 0, NVML_PCIE_UTIL_RX_BYTES 1
  if (counter != 0 && counter != 1) return kInvalidArgument;
  if (kilobytes_per_second == nullptr) return kInvalidArgument;
  int wait_ms = 0;
  int usable = OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    BurnCpu(g_state.scenario->cpu_cost.pcie_us);
    wait_ms = gpu->pcie_call_ms;
    return kSuccess;
  });
  if (usable != kSuccess) return usable;
  SleepMs(wait_ms);
  return ReadMetric(device, counter == 0 ? "pcie_tx_kbps" : "pcie_rx_kbps", 1, kilobytes_per_second);
}

int nvmlDeviceGetCurrentClocksEventReasons(Handle device, unsigned long long* reasons) {
  return ReadMetric(device, "throttle_reasons", 1, reasons);
}
int nvmlDeviceGetCurrentClocksThrottleReasons(Handle device, unsigned long long* reasons) {
  return nvmlDeviceGetCurrentClocksEventReasons(device, reasons);
}

}  // extern "C"
