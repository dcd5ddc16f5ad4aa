// Sampler cost per tick, in CPU time, against radT's approach to the same numbers:
// a long-running `top -i -b -d 1` (its per-refresh cost) plus `ps -p PID -L -o
// pid,tid,psr,pcpu,%mem` started every period. radT then parses that text in Python and
// sends it to MLflow; that part is left out here, which only flatters the baseline.
//
//   build/bench/sampler_cost [ticks]
//
// Both sides watch the same process tree (a shell with three children) on this machine.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "base/time.h"
#include "collect/collector.h"
#include "collect/process_tree.h"
#include "platform/process.h"

namespace tb {
namespace {

class DiscardSink : public SampleSink {
 public:
  void Add(std::string_view, std::string_view, double) override { ++count; }
  size_t count = 0;
};

int64_t ChildrenCpuNanos() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000LL +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000LL;
}

// CPU nanoseconds per tick of trainbench's listeners.
double TrainbenchPerTick(const std::vector<std::string>& names, pid_t root, int ticks, size_t* samples) {
  HostFiles files("/");
  std::vector<std::unique_ptr<Collector>> collectors;
  for (const auto& n : names) collectors.push_back(std::move(MakeHostCollector(n, files).value()));
  ProcessTree tree(files, root);
  DiscardSink sink;
  int64_t start = ProcessCpuNanos();
  for (int i = 0; i < ticks; ++i) {
    tree.Invalidate();
    Tick tick{WallMillis(), MonotonicNanos(), &tree};
    for (auto& c : collectors) (void)c->Collect(tick, sink);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  *samples = sink.count / static_cast<size_t>(ticks);
  return static_cast<double>(ProcessCpuNanos() - start) / ticks;
}

// CPU nanoseconds of one refresh of a long-running `top -i -b -d 0.1`.
double TopPerRefresh(int refreshes) {
  int64_t before = ChildrenCpuNanos();
  Result<CapturedOutput> r =
      RunAndCapture({"top", "-i", "-b", "-n", std::to_string(refreshes), "-d", "0.1"}, 120000);
  if (!r.ok()) return -1;
  return static_cast<double>(ChildrenCpuNanos() - before) / refreshes;
}

// CPU nanoseconds of one `ps -p PID -L -o pid,tid,psr,pcpu,%mem`, including its start.
double PsPerCall(pid_t pid, int calls) {
  int64_t before = ChildrenCpuNanos();
  for (int i = 0; i < calls; ++i) {
    Result<CapturedOutput> r =
        RunAndCapture({"ps", "-p", std::to_string(pid), "-L", "-o", "pid,tid,psr,pcpu,%mem"}, 10000);
    if (!r.ok()) return -1;
  }
  return static_cast<double>(ChildrenCpuNanos() - before) / calls;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace
}  // namespace tb

int main(int argc, char** argv) {
  using namespace tb;
  int ticks = argc > 1 ? std::atoi(argv[1]) : 200;
  SpawnOptions o;
  o.argv = {"sh", "-c", "sleep 600 & sleep 600 & sleep 600 & wait"};
  o.new_process_group = true;
  ChildProcess tree = std::move(ChildProcess::Spawn(o).value());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  // Alternate the two sides three times and keep medians: the machine is shared and noisy.
  std::vector<double> ours_top_ps, ours_all, top, ps;
  size_t samples_top_ps = 0, samples_all = 0;
  for (int round = 0; round < 3; ++round) {
    ours_top_ps.push_back(TrainbenchPerTick({"top", "ps"}, tree.pid(), ticks, &samples_top_ps));
    top.push_back(TopPerRefresh(20));
    ours_all.push_back(TrainbenchPerTick({"top", "ps", "iostat", "net"}, tree.pid(), ticks, &samples_all));
    ps.push_back(PsPerCall(tree.pid(), 20));
  }
  tree.Signal(SIGTERM);
  (void)tree.Wait();

  double a = Median(ours_top_ps), b = Median(ours_all), t = Median(top), p = Median(ps);
  std::printf("CPU time per tick, median of 3 rounds (%d ticks each), process tree of 4:\n", ticks);
  std::printf("  trainbench top+ps                 %9.1f us  (%zu samples/tick)\n", a / 1e3, samples_top_ps);
  std::printf("  trainbench top+ps+iostat+net      %9.1f us  (%zu samples/tick)\n", b / 1e3, samples_all);
  std::printf("  radT: one `top -b` refresh        %9.1f us\n", t / 1e3);
  std::printf("  radT: one `ps -p PID -L` call     %9.1f us\n", p / 1e3);
  std::printf("  radT top+ps per tick              %9.1f us\n", (t + p) / 1e3);
  std::printf("ratio radT / trainbench (top+ps):   %9.1f x\n", (t + p) / a);
  std::printf("trainbench top+ps+iostat+net at 1 s: %.3f%% of one core\n", b / 1e9 * 100);
  return 0;
}
