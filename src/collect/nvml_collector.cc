#include "collect/nvml_collector.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

#include "base/time.h"
#include "collect/gpu_share.h"
#include "collect/pcie_reader.h"
#include "collect/process_tree.h"
#include "collect/unified_memory.h"
#include "metrics/names.h"

namespace tb {
namespace {

using nvml::kGpuIsLost;
using nvml::kNoPermission;
using nvml::kNotSupported;
using nvml::kSuccess;

// The cadence of the costly readings (CPU per call on a real H200: the energy counter
// 3.85 ms, per-process utilization 2.2 ms, PCIe throughput 0.7 ms and 20 ms of waiting per
// counter); every other field costs microseconds and is read every tick.
constexpr int64_t kEnergyEveryMs = 120000;             // a cumulative counter: its ends lose nothing
constexpr int64_t kProcessUtilizationEveryMs = 10000;  // the driver buffers samples meanwhile
constexpr int64_t kFirstRefetchMs = 1000;              // after a process came, doubling up to the above
constexpr int64_t kPcieEveryMs = 30000;                // on its own thread

class NvmlCollector : public Collector {
 public:
  NvmlCollector(std::shared_ptr<Nvml> nvml, std::vector<unsigned> indices, unsigned runs_sharing)
      : nvml_(std::move(nvml)), indices_(std::move(indices)), runs_sharing_(runs_sharing) {}

  std::string_view name() const override { return "nvml"; }
  bool may_block() const override { return true; }

  Status Collect(const Tick& tick, SampleSink& sink) override {
    if (!opened_) TB_RETURN_IF_ERROR(OpenDevices());
    mine_.clear();
    for (GpuState& g : gpus_) {
      if (!g.lost) SampleGpu(g, tick, sink);
      if (!g.lost) SampleEnergy(g, tick, sink);
    }
    if (pcie_) pcie_->Emit(sink);
    return Status::Ok();
  }

 private:
  struct GpuState {
    Nvml::DeviceInfo info;
    Labels labels;                      // gpu=0
    std::set<std::string> unsupported;  // metric keys NVML said NOT_SUPPORTED / NO_PERMISSION for
    bool lost = false;
    unsigned long long last_process_sample_us = 0;
    int64_t last_process_fetch_ms = 0;
    int64_t next_process_fetch_ms = 0;
    int64_t fetch_step_ms = kProcessUtilizationEveryMs;
    std::set<unsigned> fetched_for;        // the processes on the GPU at the last fetch
    std::optional<double> power_watts;     // this tick's reading, for the run's energy share
    std::optional<double> share;           // this tick's share of the GPU, when the run is on it
    int foreign_pid_ticks = 0;             // ticks in a row on which no listed PID existed here
    std::map<unsigned, double> sm_by_pid;  // SM utilization (percent) per process, mean of the last fetch
    bool told_mps = false;
    std::map<unsigned, bool> mps_server_by_pid;  // whether a listed process is the MPS server
    // The run's energy (gpu_share.h), from the GPU's energy counter read now and then.
    RunEnergyAccount energy;
    int64_t last_energy_read_ms = 0;
    double last_share = 1;
    bool run_energy_started = false;
    bool unified = false;  // no memory of its own (GB10): NVML answers NOT_SUPPORTED for it
  };

  Status OpenDevices() {
    Result<Nvml::DeviceList> devices = nvml_->Devices();
    if (!devices.ok()) return devices.status();
    // GPUs that cannot be opened were told by whoever resolved the run's devices.
    for (Nvml::DeviceInfo& d : devices->gpus) {
      if (!indices_.empty() && std::find(indices_.begin(), indices_.end(), d.index) == indices_.end())
        continue;
      GpuState g;
      g.labels = Labels().Add("gpu", d.index);
      g.info = std::move(d);
      gpus_.push_back(std::move(g));
    }
    opened_ = true;
    if (nvml_->fn().DeviceGetPcieThroughput != nullptr && !gpus_.empty()) {
      std::vector<std::pair<nvml::Device, Labels>> read;
      for (const GpuState& g : gpus_) read.emplace_back(g.info.handle, g.labels);
      pcie_ = std::make_unique<PcieReader>(nvml_, std::move(read), kPcieEveryMs);
    }
    return Status::Ok();
  }

  static void Tell(const Tick& tick, const std::string& kind, const std::string& what) {
    if (tick.event != nullptr && *tick.event) (*tick.event)(kind, what);
  }

  // Handles one NVML answer: true when the value can be used. NOT_SUPPORTED and
  // NO_PERMISSION are learnt; GPU_IS_LOST ends sampling of this GPU with one event.
  bool Check(GpuState& g, const char* key, nvml::Return r, const Tick& tick) {
    if (r == kSuccess) return true;
    if (r == kNotSupported || r == kNoPermission) g.unsupported.insert(key);
    if (r == kGpuIsLost && !g.lost) {
      g.lost = true;
      Tell(tick, "gpu",
           "GPU " + std::to_string(g.info.index) + " (" + g.info.uuid + ") is lost: " + nvml_->Error(r) +
               "; its sampling stopped, the run goes on");
    }
    return false;
  }

  // Whether to ask for `key` at all on this GPU.
  static bool Wanted(const GpuState& g, const char* key, const void* fn) {
    return fn != nullptr && g.unsupported.count(key) == 0;
  }

  // Whether a process NVML lists belongs to the run, asked once a tick per process: its
  // parents are walked rather than the whole tree listed (a PyTorch process's dozens of
  // threads made that walk most of this listener's cost on a real H200).
  bool Mine(unsigned pid, const Tick& tick) {
    auto [it, added] = mine_.try_emplace(pid, false);
    if (added) it->second = tick.tree->Contains(static_cast<pid_t>(pid));
    return it->second;
  }

  void SampleGpu(GpuState& g, const Tick& tick, SampleSink& sink) {
    const nvml::Functions& f = nvml_->fn();
    nvml::Device d = g.info.handle;
    const Labels& l = g.labels;
    g.power_watts.reset();
    if (Wanted(g, "utilization", reinterpret_cast<const void*>(f.DeviceGetUtilizationRates))) {
      nvml::Utilization u{};
      nvml::Return r = f.DeviceGetUtilizationRates(d, &u);
      if (Check(g, "utilization", r, tick)) {
        sink.Add({metric::kGpuUtilizationGpuRatio, l, tick.time_ms, u.gpu / 100.0});
        sink.Add({metric::kGpuUtilizationMemoryRatio, l, tick.time_ms, u.memory / 100.0});
      } else if (r == kNotSupported && g.info.mig_enabled) {
        Tell(tick, "gpu",
             "GPU " + std::to_string(g.info.index) +
                 " is in MIG mode, where NVML reports no utilization; the dcgmi listener measures "
                 "activity per GPU instance");
      }
    }
    if (!g.lost) SampleMemory(g, tick, sink);
    if (!g.lost && Wanted(g, "power", reinterpret_cast<const void*>(f.DeviceGetPowerUsage))) {
      unsigned int mw = 0;
      if (Check(g, "power", f.DeviceGetPowerUsage(d, &mw), tick)) {
        g.power_watts = mw / 1000.0;
        sink.Add({metric::kGpuPowerDrawWatts, l, tick.time_ms, *g.power_watts});
      }
    }
    if (!g.lost && Wanted(g, "temperature", reinterpret_cast<const void*>(f.DeviceGetTemperature))) {
      unsigned int c = 0;
      if (Check(g, "temperature", f.DeviceGetTemperature(d, nvml::kTemperatureGpu, &c), tick)) {
        sink.Add({metric::kGpuTemperatureGpuCelsius, l, tick.time_ms, static_cast<double>(c)});
      }
    }
    for (auto [key, type, metric] :
         {std::tuple{"clock_sm", nvml::kClockSm, metric::kGpuClockSmHertz},
          std::tuple{"clock_mem", nvml::kClockMem, metric::kGpuClockMemoryHertz}}) {
      if (g.lost || !Wanted(g, key, reinterpret_cast<const void*>(f.DeviceGetClockInfo))) continue;
      unsigned int mhz = 0;
      if (Check(g, key, f.DeviceGetClockInfo(d, type, &mhz), tick))
        sink.Add({metric, l, tick.time_ms, mhz * 1e6});
    }
    if (!g.lost && Wanted(g, "pstate", reinterpret_cast<const void*>(f.DeviceGetPerformanceState))) {
      int p = 0;
      if (Check(g, "pstate", f.DeviceGetPerformanceState(d, &p), tick) && p >= 0 && p <= 15) {
        sink.Add({metric::kGpuPerformanceStateIndex, l, tick.time_ms, static_cast<double>(p)});
      }
    }
    if (!g.lost && Wanted(g, "throttle", reinterpret_cast<const void*>(f.DeviceGetClocksEventReasons))) {
      unsigned long long reasons = 0;
      if (Check(g, "throttle", f.DeviceGetClocksEventReasons(d, &reasons), tick)) {
        sink.Add({metric::kGpuClockEventReasonsBitmask, l, tick.time_ms, static_cast<double>(reasons)});
      }
    }
    g.share.reset();
    if (!g.lost && tick.tree != nullptr) SampleProcesses(g, tick, sink);
    if (!g.lost) SampleMig(g, tick, sink);
  }

  // nvmlMemory_v2's `used` leaves out the driver's reservation (as nvidia-smi does), which
  // is recorded apart; v1's `used` includes it, so v1 is only the fallback for old drivers.
  void SampleMemory(GpuState& g, const Tick& tick, SampleSink& sink) {
    const nvml::Functions& f = nvml_->fn();
    if (Wanted(g, "memory_v2", reinterpret_cast<const void*>(f.DeviceGetMemoryInfoV2))) {
      nvml::MemoryV2 m{};
      m.version = nvml::kMemoryV2Version;
      nvml::Return r = f.DeviceGetMemoryInfoV2(g.info.handle, &m);
      if (r == kSuccess) {
        sink.Add({metric::kGpuMemoryUsedBytes, g.labels, tick.time_ms, static_cast<double>(m.used)});
        sink.Add({metric::kGpuMemoryReservedBytes, g.labels, tick.time_ms, static_cast<double>(m.reserved)});
        sink.Add({metric::kGpuMemoryTotalBytes, g.labels, tick.time_ms, static_cast<double>(m.total)});
        return;
      }
      if (r == kGpuIsLost) {
        Check(g, "memory_v2", r, tick);
        return;
      }
      g.unsupported.insert("memory_v2");  // an older driver: v1 from now on
    }
    if (!Wanted(g, "memory", reinterpret_cast<const void*>(f.DeviceGetMemoryInfo))) return;
    nvml::Memory m{};
    nvml::Return r = f.DeviceGetMemoryInfo(g.info.handle, &m);
    if (r == kNotSupported && g.unsupported.count("memory_v2") > 0 && !g.unified) {
      g.unified = true;
      Tell(tick, "gpu",
           "GPU " + std::to_string(g.info.index) + " (" + g.info.name +
               ") shares the system's memory: NVML reports none of its own, so its memory used is its "
               "processes' and its total the system's (/proc/meminfo)");
    }
    if (Check(g, "memory", r, tick)) {
      sink.Add({metric::kGpuMemoryUsedBytes, g.labels, tick.time_ms, static_cast<double>(m.used)});
      sink.Add({metric::kGpuMemoryTotalBytes, g.labels, tick.time_ms, static_cast<double>(m.total)});
    }
  }

  // Every compute process on the GPU (v2 listing, else v1 on drivers before 455): host PIDs,
  // also inside containers; `usedGpuMemory` may be NVML_VALUE_NOT_AVAILABLE.
  bool ListProcesses(GpuState& g, const Tick& tick,
                     std::vector<std::pair<unsigned, unsigned long long>>& out) {
    const nvml::Functions& f = nvml_->fn();
    nvml::Device d = g.info.handle;
    out.clear();
    if (Wanted(g, "processes", reinterpret_cast<const void*>(f.DeviceGetComputeRunningProcessesV2))) {
      unsigned count = static_cast<unsigned>(processes_.size());
      nvml::Return r = f.DeviceGetComputeRunningProcessesV2(d, &count, processes_.data());
      if (r == nvml::kInsufficientSize) {
        processes_.resize(count + 8);
        count = static_cast<unsigned>(processes_.size());
        r = f.DeviceGetComputeRunningProcessesV2(d, &count, processes_.data());
      }
      if (r == kNoPermission) TellProcessesNeedPrivileges(g, tick);
      if (!Check(g, "processes", r, tick)) return false;
      for (unsigned i = 0; i < count; ++i) out.emplace_back(processes_[i].pid, processes_[i].usedGpuMemory);
      return true;
    }
    if (!Wanted(g, "processes_v1", reinterpret_cast<const void*>(f.DeviceGetComputeRunningProcessesV1))) {
      return false;
    }
    unsigned count = static_cast<unsigned>(processes_v1_.size());
    nvml::Return r = f.DeviceGetComputeRunningProcessesV1(d, &count, processes_v1_.data());
    if (r == nvml::kInsufficientSize) {
      processes_v1_.resize(count + 8);
      count = static_cast<unsigned>(processes_v1_.size());
      r = f.DeviceGetComputeRunningProcessesV1(d, &count, processes_v1_.data());
    }
    if (r == kNoPermission) TellProcessesNeedPrivileges(g, tick);
    if (!Check(g, "processes_v1", r, tick)) return false;
    for (unsigned i = 0; i < count; ++i)
      out.emplace_back(processes_v1_[i].pid, processes_v1_[i].usedGpuMemory);
    return true;
  }

  // NVML gives host PIDs, also to a process in a container's own PID namespace, where they
  // name other processes or none. When none of the listed PIDs exists here, the run's
  // processes cannot be told apart: its share is not recorded (rather than recorded as 0),
  // and after a few such ticks the user is told why, once.
  bool PidsAreForeign(GpuState& g, const std::set<unsigned>& present, const Tick& tick) {
    if (present.empty()) return false;
    for (unsigned pid : present) {
      if (tick.tree->files().Exists("/proc/" + std::to_string(pid))) {
        g.foreign_pid_ticks = 0;
        return false;
      }
    }
    if (++g.foreign_pid_ticks == 3) {
      Tell(tick, "gpu",
           "NVML lists the processes on GPU " + std::to_string(g.info.index) +
               " by PIDs this process cannot see (trainbench runs in a container with its own PID "
               "namespace, and NVML gives host PIDs): the run's own GPU memory, SM share and energy share "
               "are not recorded; run the container with --pid=host to record them");
    }
    return true;
  }

  void TellProcessesNeedPrivileges(const GpuState& g, const Tick& tick) {
    Tell(tick, "gpu",
         "NVML does not list the processes on GPU " + std::to_string(g.info.index) +
             " to this user (Insufficient Permissions; MIG instances need root): the run's own GPU memory, "
             "SM share and energy share are not recorded");
  }

  // The clients of MPS on the GPU (nvmlDeviceGetMPSComputeRunningProcesses): empty
  // without MPS, or where the driver lacks the call.
  std::set<unsigned> MpsClients(GpuState& g, const Tick& tick) {
    const nvml::Functions& f = nvml_->fn();
    std::set<unsigned> out;
    if (!Wanted(g, "mps_processes", reinterpret_cast<const void*>(f.DeviceGetMPSComputeRunningProcessesV2)))
      return out;
    unsigned count = static_cast<unsigned>(processes_.size());
    nvml::Return r = f.DeviceGetMPSComputeRunningProcessesV2(g.info.handle, &count, processes_.data());
    if (r == nvml::kInsufficientSize) {
      processes_.resize(count + 8);
      count = static_cast<unsigned>(processes_.size());
      r = f.DeviceGetMPSComputeRunningProcessesV2(g.info.handle, &count, processes_.data());
    }
    if (!Check(g, "mps_processes", r, tick)) return out;
    for (unsigned i = 0; i < count; ++i) out.insert(processes_[i].pid);
    return out;
  }

  // Per-process SM utilization since the last fetch (the driver buffers one sample a
  // second per process), as each process's mean; the processes without a sample keep
  // their last figure. Under MPS the only sample is the server's.
  void FetchProcessUtilization(GpuState& g, const Tick& tick) {
    const nvml::Functions& f = nvml_->fn();
    if (!Wanted(g, "process_utilization", reinterpret_cast<const void*>(f.DeviceGetProcessUtilization)))
      return;
    g.last_process_fetch_ms = tick.time_ms;
    unsigned count = static_cast<unsigned>(samples_.size());
    nvml::Return r =
        f.DeviceGetProcessUtilization(g.info.handle, samples_.data(), &count, g.last_process_sample_us);
    if (r == nvml::kInsufficientSize) {
      samples_.resize(count + 8);
      count = static_cast<unsigned>(samples_.size());
      r = f.DeviceGetProcessUtilization(g.info.handle, samples_.data(), &count, g.last_process_sample_us);
    }
    // NOT_FOUND (real drivers) or NO_DATA: no samples since the last: the last stand.
    if (r == nvml::kNotFound || r == nvml::kNoData || !Check(g, "process_utilization", r, tick)) return;
    std::map<unsigned, std::pair<double, int>> sums;
    unsigned long long newest = g.last_process_sample_us;
    for (unsigned i = 0; i < count; ++i) {
      const nvml::ProcessUtilizationSample& s = samples_[i];
      if (s.timeStamp <= g.last_process_sample_us) continue;
      sums[s.pid].first += s.smUtil;
      ++sums[s.pid].second;
      newest = std::max(newest, s.timeStamp);
    }
    g.last_process_sample_us = newest;
    for (const auto& [pid, sum] : sums) g.sm_by_pid[pid] = sum.first / sum.second;
  }

  // The run's share of the GPU. Parties are the processes on it, the MPS server aside: its
  // work is its clients'. A party's activity is its SM utilization; NVML gives MPS clients
  // none of their own (only the server's, for all of them), so each client is an equal
  // part of the server's. The run's share is its tree's activity over every party's; with
  // nothing computing (or while no utilization was needed), an equal part per party; with
  // no party on the GPU, an equal part per run started on it (DeviceSelection).
  void SampleProcesses(GpuState& g, const Tick& tick, SampleSink& sink) {
    auto labels = [&](unsigned pid) { return Labels(g.labels).Add("pid", pid); };
    std::vector<std::pair<unsigned, unsigned long long>> procs;
    if (!ListProcesses(g, tick, procs)) return;
    std::set<unsigned> clients = MpsClients(g, tick);
    std::optional<unsigned> server;
    std::set<unsigned> present;  // the parties
    double tree_memory = 0;
    bool tree_has_memory = false;
    size_t tree_parties = 0, plain_parties = 0;
    bool others = false;
    std::erase_if(g.mps_server_by_pid, [&](const auto& e) {
      return std::none_of(procs.begin(), procs.end(), [&](const auto& p) { return p.first == e.first; });
    });
    for (const auto& [pid, memory] : procs) {
      auto known = g.mps_server_by_pid.try_emplace(pid, false);
      if (known.second) known.first->second = IsMpsServer(tick.tree->files(), pid);
      if (clients.count(pid) == 0 && known.first->second) {
        server = pid;
        continue;
      }
      present.insert(pid);
      bool mine = Mine(pid, tick);
      tree_parties += mine;
      others |= !mine;
      if (clients.count(pid) == 0) ++plain_parties;
      if (!mine || memory == nvml::kValueNotAvailable) continue;
      sink.Add({metric::kProcGpuMemoryUsedBytes, labels(pid), tick.time_ms, static_cast<double>(memory)});
      tree_memory += static_cast<double>(memory);
      tree_has_memory = true;
    }
    // A server listed without the MPS list (an older driver): every party is its client.
    if (server && clients.empty()) clients = present;
    std::erase_if(g.sm_by_pid,
                  [&](const auto& e) { return present.count(e.first) == 0 && e.first != server; });
    // Once the PIDs were foreign, an empty list (the run's processes have left) says no
    // more about the run's share than a foreign one.
    if (tree_parties == 0 &&
        (PidsAreForeign(g, present, tick) || (present.empty() && g.foreign_pid_ticks > 0)))
      return;
    size_t served = 0;
    for (unsigned pid : present) served += clients.count(pid);
    if (served > 0 && tree_parties > 0 && !g.told_mps) {
      g.told_mps = true;
      Tell(tick, "gpu",
           "GPU " + std::to_string(g.info.index) +
               " runs this run through MPS: NVML reports the MPS server's activity only, not each client's, "
               "so "
               "the server's activity and energy are split equally among its clients (" +
               std::to_string(served) + " now)");
    }
    // Per-process utilization costs milliseconds a call: only asked for when the run
    // shares the GPU with a process that NVML measures on its own.
    bool utilization_needed = others && plain_parties > 0 && tree_parties > 0;
    // At once when a process came onto the GPU since the last fetch, then after 1, 2, 4 and 8 s
    // (a newcomer is listed with its CUDA context seconds before its first kernel: on the
    // H200 its first samples read 0 %), then every 10 s.
    bool newcomer = std::any_of(present.begin(), present.end(),
                                [&](unsigned pid) { return g.fetched_for.count(pid) == 0; });
    if (utilization_needed &&
        (newcomer || g.last_process_fetch_ms == 0 || tick.time_ms >= g.next_process_fetch_ms)) {
      FetchProcessUtilization(g, tick);
      g.fetch_step_ms =
          newcomer ? kFirstRefetchMs : std::min(2 * g.fetch_step_ms, kProcessUtilizationEveryMs);
      g.next_process_fetch_ms = tick.time_ms + g.fetch_step_ms;
      g.fetched_for = present;
    }
    std::vector<GpuParty> parties;
    for (unsigned pid : present) {
      GpuParty& p = parties.emplace_back();
      p.mine = Mine(pid, tick);
      p.mps_client = clients.count(pid) != 0;
      if (auto it = g.sm_by_pid.find(pid); it != g.sm_by_pid.end() && !p.mps_client) {
        p.sm_percent = it->second;
        if (p.mine)
          sink.Add({metric::kProcGpuSmUtilizationRatio, labels(pid), tick.time_ms,
                    RoundForStorage(it->second / 100.0)});
      }
    }
    std::optional<double> server_sm;
    if (auto it = server ? g.sm_by_pid.find(*server) : g.sm_by_pid.end(); it != g.sm_by_pid.end())
      server_sm = it->second;
    GpuShare share = RunShareOfGpu(parties, server_sm, utilization_needed, runs_sharing_);
    if (tree_has_memory) sink.Add({metric::kProcGpuTreeMemoryUsedBytes, g.labels, tick.time_ms, tree_memory});
    if (g.unified) RecordUnifiedMemory(g.labels, procs, tick, sink);
    if (share.tree_percent)
      sink.Add({metric::kProcGpuTreeSmUtilizationRatio, g.labels, tick.time_ms,
                RoundForStorage(*share.tree_percent / 100.0)});
    g.share = RoundForStorage(share.share);
    sink.Add({metric::kProcGpuShareRatio, g.labels, tick.time_ms, *g.share});
  }

  // The GPU's energy counter, read on the first tick, every kEnergyEveryMs and on the last
  // (a cumulative counter loses nothing between); the run's part of each increase is its
  // share over the ticks between, weighted by their power. Without the counter (an older
  // GPU), the run's energy is its share of the power integrated tick by tick.
  void SampleEnergy(GpuState& g, const Tick& tick, SampleSink& sink) {
    const nvml::Functions& f = nvml_->fn();
    g.last_share = g.share.value_or(g.last_share);
    g.energy.Tick(g.power_watts, tick.monotonic_ns, g.last_share);
    bool watched = tick.tree != nullptr && g.share.has_value();
    if (Wanted(g, "energy", reinterpret_cast<const void*>(f.DeviceGetTotalEnergyConsumption))) {
      bool due =
          g.last_energy_read_ms == 0 || tick.final || tick.time_ms - g.last_energy_read_ms >= kEnergyEveryMs;
      if (!due) return;
      unsigned long long mj = 0;
      if (Check(g, "energy", f.DeviceGetTotalEnergyConsumption(g.info.handle, &mj), tick)) {
        double joules = static_cast<double>(mj) / 1000.0;
        sink.Add({metric::kGpuEnergyConsumedJoules, g.labels, tick.time_ms, joules});
        double run = g.energy.Counter(joules);
        g.last_energy_read_ms = tick.time_ms;
        if (watched || (tick.tree != nullptr && g.run_energy_started))
          sink.Add({metric::kProcGpuEnergyJoules, g.labels, tick.time_ms, RoundForStorage(run)});
        g.run_energy_started |= watched;
        return;
      }
      if (g.lost || g.unsupported.count("energy") == 0) return;  // a passing error: the next tick retries
    }
    // No counter: power integrated, tick by tick.
    if (!watched || !g.power_watts) return;
    sink.Add({metric::kProcGpuEnergyJoules, g.labels, tick.time_ms, RoundForStorage(g.energy.Integrated())});
  }

  void SampleMig(GpuState& g, const Tick& tick, SampleSink& sink) {
    const nvml::Functions& f = nvml_->fn();
    if (g.info.mig.empty() || f.DeviceGetMemoryInfo == nullptr) return;
    for (const Nvml::DeviceInfo::Mig& m : g.info.mig) {
      nvml::Memory mem{};
      if (!Check(g, "mig_memory", f.DeviceGetMemoryInfo(m.handle, &mem), tick)) continue;
      Labels labels = Labels(g.labels).Add("mig", m.uuid);
      sink.Add({metric::kGpuMigMemoryUsedBytes, labels, tick.time_ms, static_cast<double>(mem.used)});
      sink.Add({metric::kGpuMigMemoryTotalBytes, labels, tick.time_ms, static_cast<double>(mem.total)});
    }
  }

  std::shared_ptr<Nvml> nvml_;
  std::vector<unsigned> indices_;
  unsigned runs_sharing_ = 1;
  bool opened_ = false;
  std::vector<GpuState> gpus_;
  std::vector<nvml::ProcessInfoV2> processes_ = std::vector<nvml::ProcessInfoV2>(64);
  std::unordered_map<unsigned, bool> mine_;  // this tick: whether a listed process is the run's
  std::vector<nvml::ProcessInfoV1> processes_v1_ = std::vector<nvml::ProcessInfoV1>(64);
  std::vector<nvml::ProcessUtilizationSample> samples_ = std::vector<nvml::ProcessUtilizationSample>(64);

  std::unique_ptr<PcieReader> pcie_;  // last: stopped before the GPUs it reads go
};

}  // namespace

std::unique_ptr<Collector> MakeNvmlCollector(std::shared_ptr<Nvml> nvml, const DeviceSelection& devices) {
  return std::make_unique<NvmlCollector>(std::move(nvml), devices.gpu_indices, devices.runs_sharing);
}

}  // namespace tb
