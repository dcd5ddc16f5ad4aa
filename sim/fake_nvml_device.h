// The simulated NVML's devices and state, shared by the files of libnvidia-ml.so.1
// (fake_nvml.cc: initialisation, devices and their metrics; fake_nvml_processes.cc: the
// processes on a GPU, their utilization, MIG). Internal to the library: every call takes
// g_mu, and a device is resolved through OnDevice.
#pragma once

#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "platform/nvml_abi.h"
#include "sim/scenario.h"

namespace tb::sim::fake {

using tb::sim::Gpu;
using tb::sim::MigInstance;
using tb::sim::Scenario;

// NVML's return codes and structures, as platform/nvml_abi.h declares them with the calls.
using tb::nvml::kArgumentVersionMismatch;
using tb::nvml::kDriverNotLoaded;
using tb::nvml::kGpuIsLost;
using tb::nvml::kInsufficientSize;
using tb::nvml::kInvalidArgument;
using tb::nvml::kMemoryV2Version;
using tb::nvml::kNoData;
using tb::nvml::kNoPermission;
using tb::nvml::kNotFound;
using tb::nvml::kNotSupported;
using tb::nvml::kSuccess;
using tb::nvml::kUninitialized;
using tb::nvml::Memory;
using tb::nvml::MemoryV2;
using tb::nvml::ProcessInfoV1;
using tb::nvml::ProcessInfoV2;
using tb::nvml::ProcessUtilizationSample;
using tb::nvml::Utilization;
using Handle = tb::nvml::Device;  // what callers hold: a Device below

inline bool IsRoot() { return geteuid() == 0; }

inline void SleepMs(int ms) {
  if (ms <= 0) return;
  timespec ts{ms / 1000, static_cast<long>(ms % 1000) * 1000000};
  nanosleep(&ts, nullptr);
}

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

inline std::mutex g_mu;
inline State g_state;

// Spends `us` microseconds of the calling thread's CPU time, as the real driver's calls do
// (scenario.h: NvmlCpuCost).
inline void BurnCpu(int us) {
  if (us <= 0) return;
  timespec start{}, now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000 < us);
}

// Waits out the GPU's configured call latency, as a call into the driver waits for the
// GPU (blocked, not spinning: the caller's CPU time is only what waking up costs).
inline void Delay(const Gpu& gpu) {
  if (gpu.call_delay_us <= 0) return;
  timespec ts{gpu.call_delay_us / 1000000, static_cast<long>(gpu.call_delay_us % 1000000) * 1000};
  nanosleep(&ts, nullptr);
}

// Resolves a handle; sets `code` to why not when it cannot be used.
inline const Gpu* Resolve(Handle handle, const MigInstance** mig, int* code) {
  if (!g_state.scenario) {
    *code = kUninitialized;
    return nullptr;
  }
  auto* d = reinterpret_cast<Device*>(handle);
  if (d == nullptr || d->gpu < 0 || d->gpu >= static_cast<int>(g_state.scenario->gpus.size())) {
    *code = kInvalidArgument;
    return nullptr;
  }
  const Gpu& gpu = g_state.scenario->gpus[static_cast<size_t>(d->gpu)];
  BurnCpu(g_state.scenario->cpu_cost.other_us);
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
inline int OnDevice(Handle device, Body body) {
  std::lock_guard lock(g_mu);
  int code;
  const MigInstance* mig = nullptr;
  const Gpu* gpu = Resolve(device, &mig, &code);
  if (gpu == nullptr) return code;
  return body(gpu, mig);
}

inline int CopyString(const std::string& s, char* out, unsigned length) {
  if (out == nullptr) return kInvalidArgument;
  if (s.size() + 1 > length) return kInsufficientSize;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return kSuccess;
}

// Reads one metric into *out as an unsigned value scaled by `scale`.
template <typename T>
inline int ReadMetric(Handle device, const char* key, double scale, T* out) {
  if (out == nullptr) return kInvalidArgument;
  return OnDevice(device, [&](const Gpu* gpu, [[maybe_unused]] const MigInstance* mig) -> int {
    std::optional<double> v = g_state.scenario->Value(*gpu, key);
    if (!v) return kNotSupported;
    *out = static_cast<T>(std::llround(*v * scale));
    return kSuccess;
  });
}

inline constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE

}  // namespace tb::sim::fake
