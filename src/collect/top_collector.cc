// `top`: host CPU (total and per core), memory, swap and load, and the run's process
// tree: CPU in cores, RSS, threads, processes and context switches.
#include <unistd.h>

#include <string>
#include <unordered_map>

#include "base/strings.h"
#include "collect/counter_rates.h"
#include "collect/host_collectors.h"
#include "collect/proc_parsers.h"
#include "collect/process_tree.h"
#include "metrics/names.h"

namespace tb {
namespace {

class TopCollector : public Collector {
 public:
  explicit TopCollector(HostFiles files)
      : files_(std::move(files)),
        ticks_per_second_(static_cast<double>(sysconf(_SC_CLK_TCK))),
        page_bytes_(static_cast<double>(sysconf(_SC_PAGESIZE))) {}

  std::string_view name() const override { return "top"; }

  Status Collect(const Tick& tick, SampleSink& sink) override {
    Status s = CollectHost(tick, sink);
    if (tick.tree != nullptr) CollectTree(tick, sink);
    files_.CloseUnused();
    return s;
  }

 private:
  Status CollectHost(const Tick& tick, SampleSink& sink) {
    // Too short a window after the previous reading: keep that one as the baseline.
    if (have_cpus_ && tick.monotonic_ns - cpus_ns_ < kMinRateWindowNs) return ReadMemoryAndLoad(tick, sink);
    TB_RETURN_IF_ERROR(files_.ReadKeepOpen("/proc/stat", buffer_));
    TB_RETURN_IF_ERROR(ParseProcStat(buffer_, cpus_));
    if (previous_cpus_.size() == cpus_.size()) {
      for (size_t i = 0; i < cpus_.size(); ++i) {
        uint64_t total = cpus_[i].Total() - previous_cpus_[i].Total();
        if (total == 0 || cpus_[i].Total() < previous_cpus_[i].Total()) continue;
        double busy = static_cast<double>(cpus_[i].busy - previous_cpus_[i].busy);
        Labels labels = cpus_[i].core < 0 ? Labels() : Labels().Add("cpu", cpus_[i].core);
        sink.Add({metric::kHostCpuUtilizationRatio, labels, tick.time_ms,
                  RoundForStorage(busy / static_cast<double>(total))});
      }
    }
    previous_cpus_.swap(cpus_);
    cpus_ns_ = tick.monotonic_ns;
    have_cpus_ = true;
    return ReadMemoryAndLoad(tick, sink);
  }

  Status ReadMemoryAndLoad(const Tick& tick, SampleSink& sink) {
    TB_RETURN_IF_ERROR(files_.ReadKeepOpen("/proc/meminfo", buffer_));
    MemInfo mem;
    TB_RETURN_IF_ERROR(ParseMemInfo(buffer_, mem));
    host_memory_bytes_ = static_cast<double>(mem.total_bytes);
    sink.Add({metric::kHostMemoryUsedBytes, kNoLabels, tick.time_ms,
              static_cast<double>(mem.total_bytes - mem.available_bytes)});
    sink.Add({metric::kHostMemoryAvailableBytes, kNoLabels, tick.time_ms,
              static_cast<double>(mem.available_bytes)});
    sink.Add({metric::kHostSwapUsedBytes, kNoLabels, tick.time_ms,
              static_cast<double>(mem.swap_total_bytes - mem.swap_free_bytes)});

    // The kernel recomputes load averages every 5 seconds; reading them more often
    // would only repeat the same value.
    if (!load_seen_ || tick.monotonic_ns - last_load_ns_ >= kLoadPeriodNs) {
      TB_RETURN_IF_ERROR(files_.ReadKeepOpen("/proc/loadavg", buffer_));
      Result<double> load = ParseLoadAverage(buffer_);
      if (!load.ok()) return load.status();
      sink.Add({metric::kHostLoadAverage1m, kNoLabels, tick.time_ms, *load});
      last_load_ns_ = tick.monotonic_ns;
      load_seen_ = true;
    }
    return Status::Ok();
  }

  void CollectTree(const Tick& tick, SampleSink& sink) {
    const std::vector<PidStat>& procs = tick.tree->Processes();
    if (procs.empty()) return;
    // CPU of live members plus what they reaped from exited children (cutime/cstime), so
    // a worker that exits between ticks still counts once its parent waits for it.
    // A zombie still holds its CPU time until its parent reaps it, so it counts here.
    uint64_t cpu_ticks = 0;
    double rss = 0;
    int64_t threads = 0;
    size_t live = 0;
    ContextSwitches switches;  // increase since the previous tick
    current_switches_.clear();
    for (const PidStat& p : procs) {
      cpu_ticks += p.utime + p.stime + p.cutime + p.cstime;
      if (p.state == 'Z') continue;
      ++live;
      rss += static_cast<double>(p.rss_pages) * page_bytes_;
      threads += p.num_threads;
      AddThreadSwitches(p, switches);
    }
    if (live > 0) {  // after the run exited only its final CPU time is left to report
      sink.Add({metric::kProcMemoryRssBytes, kNoLabels, tick.time_ms, rss});
      if (host_memory_bytes_ > 0)  // top's %MEM of the run's processes, summed, as a ratio
        sink.Add({metric::kProcMemoryShareRatio, kNoLabels, tick.time_ms,
                  RoundForStorage(rss / host_memory_bytes_)});
      sink.Add({metric::kProcThreadsCount, kNoLabels, tick.time_ms, static_cast<double>(threads)});
      sink.Add({metric::kProcProcessesCount, kNoLabels, tick.time_ms, static_cast<double>(live)});
    }
    int64_t now = tick.monotonic_ns;
    if (auto r = rates_.Update("cpu", static_cast<double>(cpu_ticks), now)) {
      sink.Add({metric::kProcCpuUtilizationRatio, kNoLabels, tick.time_ms,
                RoundForStorage(*r / ticks_per_second_)});
    }
    if (have_previous_switches_ && now - previous_switches_ns_ < kMinRateWindowNs) return;
    if (have_previous_switches_ && now > previous_switches_ns_) {
      double seconds = static_cast<double>(now - previous_switches_ns_) / 1e9;
      sink.Add({metric::kProcSchedVoluntarySwitchesPerSecond, kNoLabels, tick.time_ms,
                RoundForStorage(static_cast<double>(switches.voluntary) / seconds)});
      sink.Add({metric::kProcSchedInvoluntarySwitchesPerSecond, kNoLabels, tick.time_ms,
                RoundForStorage(static_cast<double>(switches.involuntary) / seconds)});
    }
    previous_switches_.swap(current_switches_);
    previous_switches_ns_ = now;
    have_previous_switches_ = true;
  }

  // The kernel counts context switches per thread, and a thread's counts vanish when it
  // exits, so the increase is summed thread by thread: threads seen last tick contribute
  // their difference, threads born since then all of theirs.
  void AddThreadSwitches(const PidStat& process, ContextSwitches& increase) {
    std::string task_dir = Concat({"/proc/", std::to_string(process.pid), "/task/"});
    if (!ListThreads(files_, process, tids_).ok()) return;
    for (const std::string& tid : tids_) {
      ContextSwitches now;
      if (!files_.ReadKeepOpen(Concat({task_dir, tid, "/status"}), buffer_).ok() ||
          !ParseContextSwitches(buffer_, now).ok()) {
        continue;
      }
      ContextSwitches before;
      auto it = previous_switches_.find(tid);
      if (it != previous_switches_.end()) before = it->second;
      if (now.voluntary >= before.voluntary && now.involuntary >= before.involuntary) {
        increase.voluntary += now.voluntary - before.voluntary;
        increase.involuntary += now.involuntary - before.involuntary;
      }
      current_switches_[tid] = now;
    }
  }

  HostFiles files_;
  double ticks_per_second_;
  double page_bytes_;
  double host_memory_bytes_ = 0;  // MemTotal, as the last host read found it
  std::string buffer_;
  std::vector<CpuTimes> cpus_, previous_cpus_;
  std::vector<std::string> tids_;
  CounterRates rates_;
  static constexpr int64_t kLoadPeriodNs = 5000000000;
  int64_t last_load_ns_ = 0;
  bool load_seen_ = false;
  std::unordered_map<std::string, ContextSwitches> previous_switches_, current_switches_;
  int64_t previous_switches_ns_ = 0;
  int64_t cpus_ns_ = 0;
  bool have_cpus_ = false;
  bool have_previous_switches_ = false;
};

}  // namespace

std::unique_ptr<Collector> MakeTopCollector(const HostFiles& files) {
  return std::make_unique<TopCollector>(files);
}

}  // namespace tb
