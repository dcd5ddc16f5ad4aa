#include "collect/amdsmi_collector.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "collect/amd_partition_activity.h"
#include "collect/energy_counter.h"
#include "collect/gpu_share.h"
#include "collect/process_tree.h"
#include "metrics/names.h"

namespace tb {
namespace {

using amdsmi::kNoPerm;
using amdsmi::kNotAvailable16;
using amdsmi::kNotSupported;
using amdsmi::kSuccess;

class AmdSmiCollector : public Collector {
 public:
  AmdSmiCollector(std::shared_ptr<AmdSmi> amdsmi, std::vector<unsigned> indices, unsigned runs_sharing)
      : amdsmi_(std::move(amdsmi)), indices_(std::move(indices)), runs_sharing_(runs_sharing) {}

  std::string_view name() const override { return "amdsmi"; }
  bool may_block() const override { return true; }

  Status Collect(const Tick& tick, SampleSink& sink) override {
    if (!opened_) TB_RETURN_IF_ERROR(Open());
    for (Processor& p : processors_) {
      if (p.selected) SampleDevice(p, tick, sink);
      if (tick.tree != nullptr) SampleProcesses(p, tick, sink);
    }
    for (Domain& d : domains_) SampleDomain(d, tick, sink);
    last_tick_ns_ = tick.monotonic_ns;
    return Status::Ok();
  }

 private:
  struct Processor {
    AmdSmi::Processor info;
    Labels labels;  // gpu=3
    bool selected = false;
    size_t domain = 0;
    std::set<std::string> unsupported;       // calls that answered NOT_SUPPORTED or NO_PERM
    PartitionActivity xcp;                   // its own activity, where it is a compute partition
    std::map<unsigned, uint64_t> engine_ns;  // per process, at the last tick
    // This tick: per process on it, the engine nanoseconds gained since the last tick.
    std::map<unsigned, uint64_t> gained;
  };
  struct Domain {
    size_t head = 0;  // the processor whose power and counter it reads
    std::vector<size_t> members;
    bool watched = false;  // some member is the run's
    bool counter = false;  // the head has an energy counter
    WrappingEnergyCounter wrapping;
    std::optional<double> first_joules;  // the counter's first reading, since the driver loaded
    EnergyCounterCheck check;
    bool told = false;
    std::vector<Sample> held;  // the counter's points while the check is pending
    RunEnergyAccount energy;
    bool energy_started = false;
    double share = 1;
  };

  Status Open() {
    Result<std::vector<AmdSmi::Processor>> found = amdsmi_->Processors();
    if (!found.ok()) return found.status();
    for (AmdSmi::Processor& info : *found) {
      Processor p;
      p.selected = indices_.empty() || std::count(indices_.begin(), indices_.end(), info.index) > 0;
      p.labels = Labels().Add("gpu", info.index);
      uint64_t counts = 0;
      float resolution = 0;
      uint64_t stamp = 0;
      bool counter =
          amdsmi_->fn().amdsmi_get_energy_count(info.handle, &counts, &resolution, &stamp) == kSuccess;
      if (counter || domains_.empty()) {
        domains_.push_back(Domain{});
        domains_.back().head = processors_.size();
        domains_.back().counter = counter;
      }
      p.domain = domains_.size() - 1;
      domains_.back().members.push_back(processors_.size());
      domains_.back().watched |= p.selected;
      p.info = std::move(info);
      processors_.push_back(std::move(p));
    }
    // Only the domains of the run's processors are read.
    std::vector<size_t> kept_domain(domains_.size(), SIZE_MAX);
    std::vector<Domain> kept;
    for (size_t i = 0; i < domains_.size(); ++i) {
      if (!domains_[i].watched) continue;
      kept_domain[i] = kept.size();
      kept.push_back(std::move(domains_[i]));
    }
    domains_ = std::move(kept);
    std::erase_if(processors_, [&](const Processor& p) { return kept_domain[p.domain] == SIZE_MAX; });
    for (Domain& d : domains_) d.members.clear();
    for (size_t i = 0; i < processors_.size(); ++i) {
      processors_[i].domain = kept_domain[processors_[i].domain];
      Domain& d = domains_[processors_[i].domain];
      if (d.members.empty()) d.head = i;
      d.members.push_back(i);
    }
    opened_ = true;
    return Status::Ok();
  }

  static void Tell(const Tick& tick, const std::string& kind, const std::string& what) {
    if (tick.event != nullptr && *tick.event) (*tick.event)(kind, what);
  }

  // Whether a call answered with a usable value; NOT_SUPPORTED and NO_PERM are learnt.
  static bool Check(Processor& p, const char* key, amdsmi::Status s) {
    if (s == kSuccess) return true;
    if (s == kNotSupported || s == kNoPerm) p.unsupported.insert(key);
    return false;
  }
  static bool Wanted(const Processor& p, const char* key) { return p.unsupported.count(key) == 0; }

  void SampleDevice(Processor& p, const Tick& tick, SampleSink& sink) {
    const amdsmi::Functions& f = amdsmi_->fn();
    const Labels& l = p.labels;
    amdsmi::EngineUsage use{};
    std::optional<double> partition = PartitionGfx(p, tick);
    if (partition) sink.Add({metric::kGpuUtilizationGpuRatio, l, tick.time_ms, *partition});
    if (Wanted(p, "activity") && Check(p, "activity", f.amdsmi_get_gpu_activity(p.info.handle, &use))) {
      for (auto [value, metric] : {std::pair{use.gfx_activity, metric::kGpuUtilizationGpuRatio},
                                   std::pair{use.umc_activity, metric::kGpuUtilizationMemoryRatio},
                                   std::pair{use.mm_activity, metric::kGpuUtilizationMultimediaRatio}}) {
        if (partition && metric == metric::kGpuUtilizationGpuRatio) continue;  // the partition's own
        if (value <= 100) sink.Add({metric, l, tick.time_ms, value / 100.0});  // beyond: not reported
      }
    }
    amdsmi::VramUsage vram{};
    if (Wanted(p, "vram") && Check(p, "vram", f.amdsmi_get_gpu_vram_usage(p.info.handle, &vram))) {
      sink.Add({metric::kGpuMemoryUsedBytes, l, tick.time_ms, vram.vram_used * 1048576.0});
      sink.Add({metric::kGpuMemoryTotalBytes, l, tick.time_ms, vram.vram_total * 1048576.0});
    }
    for (auto [key, type, metric] :
         {std::tuple{"clock_gfx", amdsmi::kClockGfx, metric::kGpuClockSmHertz},
          std::tuple{"clock_mem", amdsmi::kClockMem, metric::kGpuClockMemoryHertz}}) {
      amdsmi::ClockInfo clock{};
      if (Wanted(p, key) && Check(p, key, f.amdsmi_get_clock_info(p.info.handle, type, &clock)))
        sink.Add({metric, l, tick.time_ms, clock.clk * 1e6});
    }
    for (auto [key, type, metric] :
         {std::tuple{"temp_edge", amdsmi::kTemperatureEdge, metric::kGpuTemperatureGpuCelsius},
          std::tuple{"temp_hotspot", amdsmi::kTemperatureHotspot, metric::kGpuTemperatureHotspotCelsius},
          std::tuple{"temp_vram", amdsmi::kTemperatureVram, metric::kGpuTemperatureMemoryCelsius}}) {
      int64_t celsius = 0;
      if (Wanted(p, key) &&
          Check(p, key, f.amdsmi_get_temp_metric(p.info.handle, type, amdsmi::kTemperatureCurrent, &celsius)))
        sink.Add({metric, l, tick.time_ms, static_cast<double>(celsius)});
    }
  }

  // A compute partition's own GFX activity from the metrics table; nullopt for a whole GPU,
  // or where the library does not give it (then the run is told once that its partition's
  // activity is the whole GPU's).
  std::optional<double> PartitionGfx(Processor& p, const Tick& tick) {
    if (p.info.partitions <= 1 || !Wanted(p, "metrics")) return std::nullopt;
    std::string why;
    std::optional<double> busy;
    amdsmi::GpuMetrics table{};
    if (!amdsmi_->metrics_layout_known()) {
      why = "AMD SMI " + amdsmi_->version() + " lays out its metrics table otherwise than the " +
            std::to_string(amdsmi::kLayoutYear) + "." + std::to_string(amdsmi::kLayoutMajor) +
            " (ROCm 6.3) trainbench reads";
    } else if (amdsmi::Status s = amdsmi_->fn().amdsmi_get_gpu_metrics_info(p.info.handle, &table);
               s != kSuccess) {
      if (s != kNotSupported && s != kNoPerm) return std::nullopt;  // this tick only
      why = "AMD SMI gives no metrics table (" + amdsmi_->Error(s) + ")";
    } else if (busy = p.xcp.Read(table, p.info.partition); !busy) {
      why = "its metrics table has no per-partition activity (GPU metrics before v1.6)";
    }
    if (!why.empty()) {
      p.unsupported.insert("metrics");
      Tell(tick, "gpu",
           "GPU " + std::to_string(p.info.index) + ": " + why +
               ", so this compute partition's GFX activity is the whole GPU's");
    }
    return busy;
  }

  // The processes on the processor: the run's VRAM, and every process's engine time gained
  // since the last tick.
  void SampleProcesses(Processor& p, const Tick& tick, SampleSink& sink) {
    p.gained.clear();
    if (!Wanted(p, "processes")) return;
    const amdsmi::Functions& f = amdsmi_->fn();
    uint32_t count = static_cast<uint32_t>(list_.size());
    amdsmi::Status s = f.amdsmi_get_gpu_process_list(p.info.handle, &count, list_.data());
    if (s == amdsmi::kOutOfResources) {  // the buffer was short: `count` says how many there are
      list_.resize(count + 8);
      count = static_cast<uint32_t>(list_.size());
      s = f.amdsmi_get_gpu_process_list(p.info.handle, &count, list_.data());
    }
    if (!Check(p, "processes", s)) {
      if (s == kNoPerm)
        Tell(tick, "gpu",
             "AMD SMI does not list the processes on GPU " + std::to_string(p.info.index) +
                 " to this user: the run's share and energy are not recorded");
      return;
    }
    std::map<unsigned, uint64_t> now;
    double tree_memory = 0;
    bool tree_has = false;
    for (uint32_t i = 0; i < count && i < list_.size(); ++i) {
      const amdsmi::ProcessInfo& info = list_[i];
      now[info.pid] = info.engine_usage.gfx;
      auto last = p.engine_ns.find(info.pid);
      // A process not listed at the last tick opened the device since: all its time is new.
      // On the first tick nobody's history is known.
      uint64_t gfx = info.engine_usage.gfx;
      p.gained[info.pid] = last == p.engine_ns.end() ? (last_tick_ns_ != 0 ? gfx : 0)
                           : gfx < last->second      ? 0
                                                     : gfx - last->second;
      if (!p.selected || !tick.tree->Contains(static_cast<pid_t>(info.pid))) continue;
      double vram = static_cast<double>(info.memory_usage.vram_mem);
      sink.Add({metric::kProcGpuMemoryUsedBytes, Labels(p.labels).Add("pid", info.pid), tick.time_ms, vram});
      tree_memory += vram;
      tree_has = true;
    }
    p.engine_ns = std::move(now);
    if (tree_has) sink.Add({metric::kProcGpuTreeMemoryUsedBytes, p.labels, tick.time_ms, tree_memory});
    if (p.selected && last_tick_ns_ != 0 && tick.monotonic_ns > last_tick_ns_) {
      double mine = 0;
      for (const auto& [pid, ns] : p.gained)
        if (tick.tree->Contains(static_cast<pid_t>(pid))) mine += static_cast<double>(ns);
      sink.Add({metric::kProcGpuTreeSmUtilizationRatio, p.labels, tick.time_ms,
                RoundForStorage(mine / static_cast<double>(tick.monotonic_ns - last_tick_ns_))});
    }
  }

  // The run's share of the domain: its processes' engine time gained over everyone's.
  double RunShare(const Domain& d, const Tick& tick) const {
    std::map<unsigned, double> by_pid;
    for (size_t m : d.members)
      for (const auto& [pid, ns] : processors_[m].gained) by_pid[pid] += static_cast<double>(ns);
    std::vector<GpuParty> parties;
    for (const auto& [pid, ns] : by_pid) {
      GpuParty& party = parties.emplace_back();
      party.mine = tick.tree->Contains(static_cast<pid_t>(pid));
      party.sm_percent = ns;  // any unit: the rule divides the run's by the sum
    }
    return RunShareOfGpu(parties, std::nullopt, last_tick_ns_ != 0, runs_sharing_).share;
  }

  std::optional<double> Power(Processor& head) {
    amdsmi::PowerInfo power{};
    if (!Wanted(head, "power") ||
        !Check(head, "power", amdsmi_->fn().amdsmi_get_power_info(head.info.handle, &power)))
      return std::nullopt;
    // MI300 reports the current socket power, MI200 the average; the other is 0xFFFF.
    if (power.current_socket_power != kNotAvailable16 && power.current_socket_power != 0)
      return power.current_socket_power;
    if (power.average_socket_power != kNotAvailable16) return power.average_socket_power;
    return std::nullopt;
  }

  std::optional<double> CounterJoules(Domain& d, Processor& head) {
    if (!d.counter) return std::nullopt;
    uint64_t counts = 0, stamp = 0;
    float resolution = 0;
    if (!Check(head, "energy",
               amdsmi_->fn().amdsmi_get_energy_count(head.info.handle, &counts, &resolution, &stamp)))
      return std::nullopt;
    double since_first = d.wrapping.Read(counts, resolution);
    if (!d.first_joules) d.first_joules = static_cast<double>(counts) * resolution / 1e6;
    return *d.first_joules + since_first;
  }

  void SampleDomain(Domain& d, const Tick& tick, SampleSink& sink) {
    Processor& head = processors_[d.head];
    std::optional<double> power = Power(head);
    if (power) sink.Add({metric::kGpuPowerDrawWatts, head.labels, tick.time_ms, *power});
    std::optional<double> joules = CounterJoules(d, head);
    d.check.Add(tick.monotonic_ns, joules, power);
    using Verdict = EnergyCounterCheck::Verdict;
    // A run too short for the check: the counter as it is, unchecked.
    bool use_counter = d.check.verdict() == Verdict::kCounter ||
                       (d.check.verdict() == Verdict::kPending && tick.final && joules.has_value());
    if (joules) {
      Sample point{metric::kGpuEnergyConsumedJoules, head.labels, tick.time_ms, *joules};
      if (use_counter) {
        for (const Sample& held : d.held) sink.Add(held);
        d.held.clear();
        sink.Add(point);
      } else if (d.check.verdict() == Verdict::kPending) {
        d.held.push_back(point);
      }
    }
    if (d.check.verdict() != Verdict::kPending && !d.told) {
      d.told = true;
      d.held.clear();
      Tell(tick, "gpu", "GPU " + std::to_string(head.info.index) + ": " + d.check.Explanation());
    }
    if (tick.tree == nullptr) return;
    d.share = RoundForStorage(RunShare(d, tick));
    sink.Add({metric::kProcGpuShareRatio, head.labels, tick.time_ms, d.share});
    d.energy.Tick(power, tick.monotonic_ns, d.share);
    if (!d.energy_started) {
      d.energy_started = true;
      if (joules) d.energy.Counter(*joules);  // the baseline
      sink.Add({metric::kProcGpuEnergyJoules, head.labels, tick.time_ms, 0.0});
      return;
    }
    if (d.check.verdict() == Verdict::kPending && !use_counter) return;
    if (use_counter && !joules) return;  // a passing failure: the next reading splits the increase
    double run = use_counter ? d.energy.Counter(*joules) : d.energy.Integrated();
    sink.Add({metric::kProcGpuEnergyJoules, head.labels, tick.time_ms, RoundForStorage(run)});
  }

  std::shared_ptr<AmdSmi> amdsmi_;
  std::vector<unsigned> indices_;
  unsigned runs_sharing_ = 1;
  bool opened_ = false;
  std::vector<Processor> processors_;
  std::vector<Domain> domains_;
  int64_t last_tick_ns_ = 0;
  std::vector<amdsmi::ProcessInfo> list_ = std::vector<amdsmi::ProcessInfo>(64);
};

}  // namespace

std::unique_ptr<Collector> MakeAmdSmiCollector(std::shared_ptr<AmdSmi> amdsmi,
                                               const DeviceSelection& devices) {
  return std::make_unique<AmdSmiCollector>(std::move(amdsmi), devices.gpu_indices, devices.runs_sharing);
}

}  // namespace tb
