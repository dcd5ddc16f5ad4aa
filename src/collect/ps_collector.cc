// `ps`: per-thread CPU of the run's process tree, with the core each thread last ran on.
#include <unistd.h>

#include <string>

#include "base/strings.h"
#include "collect/counter_rates.h"
#include "collect/host_collectors.h"
#include "collect/process_tree.h"
#include "metrics/names.h"

namespace tb {
namespace {

class PsCollector : public Collector {
 public:
  explicit PsCollector(HostFiles files)
      : files_(std::move(files)), ticks_per_second_(static_cast<double>(sysconf(_SC_CLK_TCK))) {}

  std::string_view name() const override { return "ps"; }

  Status Collect(const Tick& tick, SampleSink& sink) override {
    if (tick.tree == nullptr) return Status::Ok();
    for (const PidStat& proc : tick.tree->Processes()) {
      if (proc.state == 'Z') continue;
      std::string task_dir = Concat({"/proc/", std::to_string(proc.pid), "/task/"});
      if (!ListThreads(files_, proc, tids_).ok()) continue;
      for (const std::string& tid : tids_) {
        // A single-threaded process is its own only thread: the tree already read it.
        PidStat thread = proc;
        if (proc.num_threads > 1 && (!files_.ReadKeepOpen(Concat({task_dir, tid, "/stat"}), buffer_).ok() ||
                                     !ParsePidStat(buffer_, thread).ok())) {
          continue;
        }
        // The start time keeps a reused tid from inheriting another thread's counter.
        Labels labels = Labels().Add("pid", proc.pid).Add("tid", tid).Add("name", thread.comm);
        std::string key = labels.text() + "@" + std::to_string(thread.start_time);
        if (auto r =
                rates_.Update(key, static_cast<double>(thread.utime + thread.stime), tick.monotonic_ns)) {
          sink.Add({metric::kProcThreadCpuUtilizationRatio, labels, tick.time_ms,
                    RoundForStorage(*r / ticks_per_second_)});
        }
        if (thread.processor >= 0) {
          sink.Add(
              {metric::kProcThreadCoreIndex, labels, tick.time_ms, static_cast<double>(thread.processor)});
        }
      }
    }
    rates_.ForgetOlderThan(tick.monotonic_ns);
    files_.CloseUnused();
    return Status::Ok();
  }

 private:
  HostFiles files_;
  double ticks_per_second_;
  std::string buffer_;
  std::vector<std::string> tids_;
  CounterRates rates_;
};

}  // namespace

std::unique_ptr<Collector> MakePsCollector(const HostFiles& files) {
  return std::make_unique<PsCollector>(files);
}

}  // namespace tb
