#include "platform/nvml_call_costs.h"

#include <algorithm>
#include <functional>

#include "base/time.h"

namespace tb {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

std::vector<NvmlCallCost> TimeNvmlCalls(const Nvml& nvml, nvml::Device d, int repeats) {
  const nvml::Functions& f = nvml.fn();
  nvml::Utilization u{};
  nvml::MemoryV2 m{};
  unsigned v = 0;
  unsigned long long big = 0;
  int p = 0;
  std::vector<nvml::ProcessInfoV2> procs(64);
  std::vector<nvml::ProcessUtilizationSample> samples(64);
  auto list = [&](auto fn) {
    unsigned count = static_cast<unsigned>(procs.size());
    return fn(d, &count, procs.data());
  };
  struct Call {
    const char* name;
    const void* fn;
    std::function<nvml::Return()> run;
  };
  auto ptr = [](auto fn) { return reinterpret_cast<const void*>(fn); };
  const std::vector<Call> calls = {
      {"nvmlDeviceGetUtilizationRates", ptr(f.DeviceGetUtilizationRates),
       [&] { return f.DeviceGetUtilizationRates(d, &u); }},
      {"nvmlDeviceGetMemoryInfo_v2", ptr(f.DeviceGetMemoryInfoV2),
       [&] {
         m.version = nvml::kMemoryV2Version;
         return f.DeviceGetMemoryInfoV2(d, &m);
       }},
      {"nvmlDeviceGetPowerUsage", ptr(f.DeviceGetPowerUsage), [&] { return f.DeviceGetPowerUsage(d, &v); }},
      {"nvmlDeviceGetTotalEnergyConsumption", ptr(f.DeviceGetTotalEnergyConsumption),
       [&] { return f.DeviceGetTotalEnergyConsumption(d, &big); }},
      {"nvmlDeviceGetTemperature", ptr(f.DeviceGetTemperature),
       [&] { return f.DeviceGetTemperature(d, nvml::kTemperatureGpu, &v); }},
      {"nvmlDeviceGetClockInfo (SM)", ptr(f.DeviceGetClockInfo),
       [&] { return f.DeviceGetClockInfo(d, nvml::kClockSm, &v); }},
      {"nvmlDeviceGetPerformanceState", ptr(f.DeviceGetPerformanceState),
       [&] { return f.DeviceGetPerformanceState(d, &p); }},
      {"nvmlDeviceGetCurrentClocksEventReasons", ptr(f.DeviceGetClocksEventReasons),
       [&] { return f.DeviceGetClocksEventReasons(d, &big); }},
      {"nvmlDeviceGetComputeRunningProcesses_v2", ptr(f.DeviceGetComputeRunningProcessesV2),
       [&] { return list(f.DeviceGetComputeRunningProcessesV2); }},
      {"nvmlDeviceGetMPSComputeRunningProcesses_v2", ptr(f.DeviceGetMPSComputeRunningProcessesV2),
       [&] { return list(f.DeviceGetMPSComputeRunningProcessesV2); }},
      {"nvmlDeviceGetProcessUtilization", ptr(f.DeviceGetProcessUtilization),
       [&] {
         unsigned count = static_cast<unsigned>(samples.size());
         return f.DeviceGetProcessUtilization(d, samples.data(), &count, 0);
       }},
      {"nvmlDeviceGetPcieThroughput (TX)", ptr(f.DeviceGetPcieThroughput),
       [&] { return f.DeviceGetPcieThroughput(d, nvml::kPcieTxBytes, &v); }},
  };
  std::vector<NvmlCallCost> out;
  for (const Call& c : calls) {
    if (c.fn == nullptr) continue;
    std::vector<double> cpu, wall;
    nvml::Return last = nvml::kSuccess;
    for (int i = 0; i < repeats; ++i) {
      int64_t c0 = ThreadCpuNanos(), w0 = MonotonicNanos();
      last = c.run();
      cpu.push_back(static_cast<double>(ThreadCpuNanos() - c0) / 1e3);
      wall.push_back(static_cast<double>(MonotonicNanos() - w0) / 1e3);
    }
    out.push_back({c.name, Median(cpu), Median(wall), last == nvml::kSuccess ? "Success" : nvml.Error(last)});
  }
  return out;
}

}  // namespace tb
