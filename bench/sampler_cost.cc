// Sampler cost per tick, in CPU time, against radT's approach to the same numbers:
// a long-running `top -i -b -d 1` (its per-refresh cost) plus `ps -p PID -L -o
// pid,tid,psr,pcpu,%mem` started every period, both read as text and parsed in Python
// (bench/radt_parse.py does that parsing on the captured output). Sending the numbers
// to MLflow, which radT does next, is left out: that only flatters the baseline.
// Both sides sleep between ticks, as a sampler at 1 s does, and pay for waking up.
//
//   build/bench/sampler_cost [ticks=100] [interval_ms=100] [extra_processes=0]
//
// extra_processes starts that many idle processes outside the run's tree, to show how
// both sides scale with the number of processes on the machine (a GPU server runs a few
// hundred, counting kernel threads; top reads them all on every refresh).
//
// Both sides watch the same process tree (a shell with three children) on this machine.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/time.h"
#include "bench/bench_stats.h"
#include "collect/collector.h"
#include "collect/listeners.h"
#include "collect/process_tree.h"
#include "platform/process.h"

namespace tb {
namespace {

int64_t g_interval_ms = 100;  // pause between ticks on both sides

// CPU nanoseconds per tick of trainbench's listeners.
double TrainbenchPerTick(const std::vector<std::string>& names, pid_t root, int ticks, size_t* samples) {
  HostFiles files("/");
  std::vector<std::unique_ptr<Collector>> collectors;
  for (const auto& n : names) collectors.push_back(MakeListener(n, ListenerContext{.files = files}).value());
  ProcessTree tree(files, root);
  DiscardSink sink;
  int64_t start = ProcessCpuNanos();
  for (int i = 0; i < ticks; ++i) {
    tree.Invalidate();
    Tick tick{WallMillis(), MonotonicNanos(), &tree};
    for (auto& c : collectors) (void)c->Collect(tick, sink);
    std::this_thread::sleep_for(std::chrono::milliseconds(g_interval_ms));
  }
  *samples = sink.count / static_cast<size_t>(ticks);
  return static_cast<double>(ProcessCpuNanos() - start) / ticks;
}

std::string g_top_output, g_ps_output;  // the last captured text, for the parsing cost

// CPU nanoseconds of one refresh of a long-running `top -i -b`: the difference between
// runs of 1 and 1 + `refreshes` refreshes, so top's start-up is not charged to radT.
double TopPerRefresh(int refreshes, int64_t interval_ms) {
  std::string delay = std::to_string(static_cast<double>(interval_ms) / 1000);
  int64_t before = ChildrenCpuNanos();
  Result<CapturedOutput> one = RunAndCapture({"top", "-i", "-b", "-n", "1", "-d", delay}, 120000);
  int64_t middle = ChildrenCpuNanos();
  Result<CapturedOutput> r =
      RunAndCapture({"top", "-i", "-b", "-n", std::to_string(refreshes + 1), "-d", delay}, 120000);
  if (!one.ok() || !r.ok()) return -1;
  g_top_output = r->out;
  return static_cast<double>((ChildrenCpuNanos() - middle) - (middle - before)) / refreshes;
}

// CPU nanoseconds of one `ps -p PID -L -o pid,tid,psr,pcpu,%mem`, including its start.
double PsPerCall(pid_t pid, int calls) {
  int64_t before = ChildrenCpuNanos();
  for (int i = 0; i < calls; ++i) {
    Result<CapturedOutput> r =
        RunAndCapture({"ps", "-p", std::to_string(pid), "-L", "-o", "pid,tid,psr,pcpu,%mem"}, 10000);
    if (!r.ok()) return -1;
    g_ps_output = r->out;
    std::this_thread::sleep_for(std::chrono::milliseconds(g_interval_ms));
  }
  return static_cast<double>(ChildrenCpuNanos() - before) / calls;
}

// CPU nanoseconds radT's Python spends parsing one top refresh and one ps output.
std::pair<double, double> PythonParsing() {
  std::string dir = "/tmp/tb-sampler-cost-" + std::to_string(getpid());
  std::string top_file = dir + ".top", ps_file = dir + ".ps";
  std::FILE* f = std::fopen(top_file.c_str(), "w");
  std::fwrite(g_top_output.data(), 1, g_top_output.size(), f);
  std::fclose(f);
  f = std::fopen(ps_file.c_str(), "w");
  std::fwrite(g_ps_output.data(), 1, g_ps_output.size(), f);
  std::fclose(f);
  Result<CapturedOutput> r =
      RunAndCapture({"python3", TRAINBENCH_BENCH_DIR "/radt_parse.py", top_file, ps_file, "200"}, 60000);
  std::remove(top_file.c_str());
  std::remove(ps_file.c_str());
  double top_us = -1, ps_us = -1;
  if (r.ok()) std::sscanf(r->out.c_str(), "%lf %lf", &top_us, &ps_us);
  return {top_us * 1e3, ps_us * 1e3};
}

}  // namespace
}  // namespace tb

int main(int argc, char** argv) {
  using namespace tb;
  int ticks = argc > 1 ? std::atoi(argv[1]) : 100;
  if (argc > 2) g_interval_ms = std::atoi(argv[2]);
  int extra = argc > 3 ? std::atoi(argv[3]) : 0;
  std::optional<ChildProcess> crowd;
  if (extra > 0) {
    SpawnOptions c;
    c.argv = {"sh", "-c",
              "i=0; while [ $i -lt " + std::to_string(extra) + " ]; do sleep 600 & i=$((i+1)); done; wait"};
    c.new_process_group = true;
    crowd.emplace(ChildProcess::Spawn(c).value());
  }
  SpawnOptions o;
  o.argv = {"sh", "-c", "sleep 600 & sleep 600 & sleep 600 & wait"};
  o.new_process_group = true;
  ChildProcess tree = ChildProcess::Spawn(o).value();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  // Alternate the two sides three times and keep medians: the machine is shared and noisy.
  std::vector<double> ours_top_ps, ours_all, top, ps, parse_top, parse_ps;
  size_t samples_top_ps = 0, samples_all = 0;
  for (int round = 0; round < 3; ++round) {
    ours_top_ps.push_back(TrainbenchPerTick({"top", "ps"}, tree.pid(), ticks, &samples_top_ps));
    top.push_back(TopPerRefresh(ticks / 4, g_interval_ms));
    ours_all.push_back(TrainbenchPerTick({"top", "ps", "iostat", "net"}, tree.pid(), ticks, &samples_all));
    ps.push_back(PsPerCall(tree.pid(), ticks / 4));
    auto [pt, pp] = PythonParsing();
    parse_top.push_back(pt);
    parse_ps.push_back(pp);
  }
  (void)tree.Signal(SIGTERM);
  (void)tree.Wait();
  if (crowd) {
    (void)crowd->Signal(SIGTERM);
    (void)crowd->Wait();
  }

  double a = Median(ours_top_ps), b = Median(ours_all), t = Median(top), p = Median(ps);
  double pt = Median(parse_top), pp = Median(parse_ps);
  double radt = t + p + pt + pp;
  std::vector<std::string> entries;
  (void)HostFiles("/").List("/proc", entries);
  size_t processes =
      static_cast<size_t>(std::count_if(entries.begin(), entries.end(), [](const std::string& e) {
        return !e.empty() && e[0] >= '0' && e[0] <= '9';
      }));
  std::printf(
      "CPU time per tick, median of 3 rounds (%d ticks each, %lld ms apart), run tree of 4 processes,\n"
      "%zu processes on the machine:\n",
      ticks, static_cast<long long>(g_interval_ms), processes);
  std::printf("  trainbench top+ps                 %9.1f us  (%zu samples/tick)\n", a / 1e3, samples_top_ps);
  std::printf("  trainbench top+ps+iostat+net      %9.1f us  (%zu samples/tick)\n", b / 1e3, samples_all);
  std::printf("  radT: one `top -b` refresh        %9.1f us\n", t / 1e3);
  std::printf("  radT: one `ps -p PID -L` call     %9.1f us\n", p / 1e3);
  std::printf("  radT: Python parsing of the top refresh %5.1f us\n", pt / 1e3);
  std::printf("  radT: Python parsing of the ps output  %5.1f us\n", pp / 1e3);
  std::printf("  radT top+ps per tick              %9.1f us\n", radt / 1e3);
  std::printf("ratio radT / trainbench (top+ps):   %9.1f x  (%.1f x without radT's parsing)\n", radt / a,
              (t + p) / a);
  std::printf("trainbench top+ps+iostat+net at 1 s: %.3f%% of one core\n", b / 1e9 * 100);
  return 0;
}
