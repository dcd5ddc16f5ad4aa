#include "collect/nvml_collector.h"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "collect/process_tree.h"

namespace tb {
namespace {

using nvml::kGpuIsLost;
using nvml::kNotSupported;
using nvml::kSuccess;

class NvmlCollector : public Collector {
 public:
  NvmlCollector(std::shared_ptr<Nvml> nvml, std::vector<unsigned> indices)
      : nvml_(std::move(nvml)), indices_(std::move(indices)) {}

  std::string_view name() const override { return "nvml"; }

  Status Collect(const Tick& tick, SampleSink& sink) override {
    if (!opened_) TB_RETURN_IF_ERROR(OpenDevices());
    std::unordered_set<pid_t> tree;
    if (tick.tree != nullptr) {
      for (const PidStat& p : tick.tree->Processes()) tree.insert(p.pid);
    }
    for (GpuState& g : gpus_) {
      if (!g.lost) SampleGpu(g, tree, tick, sink);
    }
    return Status::Ok();
  }

 private:
  struct GpuState {
    Nvml::DeviceInfo info;
    std::string labels;                 // "gpu=0"
    std::set<std::string> unsupported;  // metric keys NVML said NOT_SUPPORTED for
    bool lost = false;
    unsigned long long last_process_sample_us = 0;
  };

  Status OpenDevices() {
    Result<std::vector<Nvml::DeviceInfo>> devices = nvml_->Devices();
    if (!devices.ok()) return devices.status();
    for (Nvml::DeviceInfo& d : *devices) {
      if (!indices_.empty() && std::find(indices_.begin(), indices_.end(), d.index) == indices_.end())
        continue;
      GpuState g;
      g.labels = "gpu=" + std::to_string(d.index);
      g.info = std::move(d);
      gpus_.push_back(std::move(g));
    }
    opened_ = true;
    return Status::Ok();
  }

  // Handles one NVML answer: true when the value can be used. NOT_SUPPORTED is learnt;
  // GPU_IS_LOST ends sampling of this GPU with one event.
  bool Check(GpuState& g, const char* key, nvml::Return r, const Tick& tick) {
    if (r == kSuccess) return true;
    if (r == kNotSupported) g.unsupported.insert(key);
    if (r == kGpuIsLost && !g.lost) {
      g.lost = true;
      if (tick.event != nullptr && *tick.event) {
        (*tick.event)("gpu", "GPU " + std::to_string(g.info.index) + " (" + g.info.uuid +
                                 ") is lost: " + nvml_->Error(r) + "; its sampling stopped, the run goes on");
      }
    }
    return false;
  }

  // Whether to ask for `key` at all on this GPU.
  static bool Wanted(const GpuState& g, const char* key, const void* fn) {
    return fn != nullptr && g.unsupported.count(key) == 0;
  }

  void SampleGpu(GpuState& g, const std::unordered_set<pid_t>& tree, const Tick& tick, SampleSink& sink) {
    const nvml::Functions& f = nvml_->fn();
    nvml::Device d = g.info.handle;
    const std::string& l = g.labels;
    if (Wanted(g, "utilization", reinterpret_cast<const void*>(f.DeviceGetUtilizationRates))) {
      nvml::Utilization u{};
      if (Check(g, "utilization", f.DeviceGetUtilizationRates(d, &u), tick)) {
        sink.Add("gpu.utilization.gpu_ratio", l, u.gpu / 100.0);
        sink.Add("gpu.utilization.memory_ratio", l, u.memory / 100.0);
      }
    }
    if (!g.lost && Wanted(g, "memory", reinterpret_cast<const void*>(f.DeviceGetMemoryInfo))) {
      nvml::Memory m{};
      if (Check(g, "memory", f.DeviceGetMemoryInfo(d, &m), tick)) {
        sink.Add("gpu.memory.used_bytes", l, static_cast<double>(m.used));
        sink.Add("gpu.memory.total_bytes", l, static_cast<double>(m.total));
      }
    }
    if (!g.lost && Wanted(g, "power", reinterpret_cast<const void*>(f.DeviceGetPowerUsage))) {
      unsigned int mw = 0;
      if (Check(g, "power", f.DeviceGetPowerUsage(d, &mw), tick))
        sink.Add("gpu.power.draw_watts", l, mw / 1000.0);
    }
    if (!g.lost && Wanted(g, "energy", reinterpret_cast<const void*>(f.DeviceGetTotalEnergyConsumption))) {
      unsigned long long mj = 0;
      if (Check(g, "energy", f.DeviceGetTotalEnergyConsumption(d, &mj), tick)) {
        sink.Add("gpu.energy.consumed_joules", l, static_cast<double>(mj) / 1000.0);
      }
    }
    if (!g.lost && Wanted(g, "temperature", reinterpret_cast<const void*>(f.DeviceGetTemperature))) {
      unsigned int c = 0;
      if (Check(g, "temperature", f.DeviceGetTemperature(d, nvml::kTemperatureGpu, &c), tick)) {
        sink.Add("gpu.temperature.gpu_celsius", l, c);
      }
    }
    for (auto [key, type, metric] : {std::tuple{"clock_sm", nvml::kClockSm, "gpu.clock.sm_hertz"},
                                     std::tuple{"clock_mem", nvml::kClockMem, "gpu.clock.memory_hertz"}}) {
      if (g.lost || !Wanted(g, key, reinterpret_cast<const void*>(f.DeviceGetClockInfo))) continue;
      unsigned int mhz = 0;
      if (Check(g, key, f.DeviceGetClockInfo(d, type, &mhz), tick)) sink.Add(metric, l, mhz * 1e6);
    }
    if (!g.lost && Wanted(g, "pstate", reinterpret_cast<const void*>(f.DeviceGetPerformanceState))) {
      int p = 0;
      if (Check(g, "pstate", f.DeviceGetPerformanceState(d, &p), tick) && p >= 0 && p <= 15) {
        sink.Add("gpu.performance.state_index", l, p);
      }
    }
    for (auto [key, counter, metric] :
         {std::tuple{"pcie_tx", nvml::kPcieTxBytes, "gpu.pcie.transmit_bytes_per_second"},
          std::tuple{"pcie_rx", nvml::kPcieRxBytes, "gpu.pcie.receive_bytes_per_second"}}) {
      if (g.lost || !Wanted(g, key, reinterpret_cast<const void*>(f.DeviceGetPcieThroughput))) continue;
      unsigned int kbps = 0;
      if (Check(g, key, f.DeviceGetPcieThroughput(d, counter, &kbps), tick))
        sink.Add(metric, l, kbps * 1024.0);
    }
    if (!g.lost && Wanted(g, "throttle", reinterpret_cast<const void*>(f.DeviceGetClocksEventReasons))) {
      unsigned long long reasons = 0;
      if (Check(g, "throttle", f.DeviceGetClocksEventReasons(d, &reasons), tick)) {
        sink.Add("gpu.clock.event_reasons_bitmask", l, static_cast<double>(reasons));
      }
    }
    if (!g.lost && !tree.empty()) SampleProcesses(g, tree, tick, sink);
    if (!g.lost) SampleMig(g, tick, sink);
  }

  void SampleProcesses(GpuState& g, const std::unordered_set<pid_t>& tree, const Tick& tick,
                       SampleSink& sink) {
    const nvml::Functions& f = nvml_->fn();
    nvml::Device d = g.info.handle;
    auto labels = [&](unsigned pid) { return g.labels + ",pid=" + std::to_string(pid); };
    if (Wanted(g, "processes", reinterpret_cast<const void*>(f.DeviceGetComputeRunningProcessesV2))) {
      unsigned count = static_cast<unsigned>(processes_.size());
      nvml::Return r = f.DeviceGetComputeRunningProcessesV2(d, &count, processes_.data());
      if (r == nvml::kInsufficientSize) {
        processes_.resize(count + 8);
        count = static_cast<unsigned>(processes_.size());
        r = f.DeviceGetComputeRunningProcessesV2(d, &count, processes_.data());
      }
      if (Check(g, "processes", r, tick)) {
        for (unsigned i = 0; i < count; ++i) {
          const nvml::ProcessInfoV2& p = processes_[i];
          if (tree.count(static_cast<pid_t>(p.pid)) == 0) continue;
          sink.Add("proc.gpu.memory_used_bytes", labels(p.pid), static_cast<double>(p.usedGpuMemory));
        }
      }
    }
    if (!g.lost &&
        Wanted(g, "process_utilization", reinterpret_cast<const void*>(f.DeviceGetProcessUtilization))) {
      unsigned count = static_cast<unsigned>(samples_.size());
      nvml::Return r = f.DeviceGetProcessUtilization(d, samples_.data(), &count, g.last_process_sample_us);
      if (r == nvml::kInsufficientSize) {
        samples_.resize(count + 8);
        count = static_cast<unsigned>(samples_.size());
        r = f.DeviceGetProcessUtilization(d, samples_.data(), &count, g.last_process_sample_us);
      }
      if (r == nvml::kNoData) return;  // nothing ran since the last sample
      if (Check(g, "process_utilization", r, tick)) {
        for (unsigned i = 0; i < count; ++i) {
          const nvml::ProcessUtilizationSample& s = samples_[i];
          g.last_process_sample_us = std::max(g.last_process_sample_us, s.timeStamp);
          if (tree.count(static_cast<pid_t>(s.pid)) == 0) continue;
          sink.Add("proc.gpu.sm_utilization_ratio", labels(s.pid), s.smUtil / 100.0);
        }
      }
    }
  }

  void SampleMig(GpuState& g, const Tick& tick, SampleSink& sink) {
    const nvml::Functions& f = nvml_->fn();
    if (g.info.mig.empty() || f.DeviceGetMemoryInfo == nullptr) return;
    for (const Nvml::DeviceInfo::Mig& m : g.info.mig) {
      nvml::Memory mem{};
      if (!Check(g, "mig_memory", f.DeviceGetMemoryInfo(m.handle, &mem), tick)) continue;
      std::string labels = g.labels + ",mig=" + m.uuid;
      sink.Add("gpu.mig.memory_used_bytes", labels, static_cast<double>(mem.used));
      sink.Add("gpu.mig.memory_total_bytes", labels, static_cast<double>(mem.total));
    }
  }

  std::shared_ptr<Nvml> nvml_;
  std::vector<unsigned> indices_;
  bool opened_ = false;
  std::vector<GpuState> gpus_;
  std::vector<nvml::ProcessInfoV2> processes_ = std::vector<nvml::ProcessInfoV2>(64);
  std::vector<nvml::ProcessUtilizationSample> samples_ = std::vector<nvml::ProcessUtilizationSample>(64);
};

}  // namespace

std::unique_ptr<Collector> MakeNvmlCollector(std::shared_ptr<Nvml> nvml, std::vector<unsigned> gpu_indices) {
  return std::make_unique<NvmlCollector>(std::move(nvml), std::move(gpu_indices));
}

}  // namespace tb
