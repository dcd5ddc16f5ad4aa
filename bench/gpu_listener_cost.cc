// The GPU listeners on `gpus` simulated GPUs (8 by default) whose NVML calls cost what NVIDIA's do: each call
// spends the CPU time a real H200's driver charged (sim/scenario.h: NvmlCpuCost, 3.85 ms
// for the energy counter, 2.2 ms for per-process utilization, 0.7 ms for PCIe throughput,
// microseconds for the rest) and waits `call_delay_us`, each PCIe throughput call blocks
// 20 ms (nvml.h: the counter is read over a 20 ms window), nvmlInit waits `nvml_init_ms`.
// Each GPU runs the run's two processes, one of them with `threads` threads as PyTorch's
// training process has (one run a GPU). Measured:
//   - the goal's figure, one line "nvml CPU per GPU per 1-s tick: N.NN ms": the `nvml`
//     listener ticking at 1 Hz for `slow_ticks` ticks (its slowest field, the energy
//     counter, is read at the ends and every 2 minutes), the process's CPU time (the PCIe
//     reader's too) over ticks and GPUs, alone on each GPU and then with another run's
//     process on every GPU; beside it the same GPUs read the way trainbench did before
//     (every field, the energy counter and per-process utilization included, every tick;
//     PCIe every second);
//   - the `nvml` listener ticking at 10 Hz on an absolute schedule, as the sampler does:
//     the process's CPU time per tick (every thread, the PCIe reader's too), each tick's
//     wall time, and the ticks that ran past the start of the next one;
//   - radT's way, `nvidia-smi --query-gpu=...` started once per tick: the simulated
//     nvidia-smi reads its values through the same simulated NVML (nvmlInit, a handle per
//     GPU, one call per field), so it pays the same latencies;
//   - all listeners together (top, iostat, net, nvml) at 1 Hz and at 10 Hz, as a share of
//     one core.
//
//   build/bench/gpu_listener_cost [ticks=100, 0: only the goal's figure] [call_delay_us=75] [pcie_call_ms=20]
//                                 [nvml_init_ms=0] [slow_ticks=120] [threads=64] [gpus=8]
//
// nvmlInit's cost on real GPUs is not documented (it is far longer without persistence
// mode); 0 keeps the nvidia-smi baseline as cheap as it can be.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/time.h"
#include "bench/bench_stats.h"
#include "collect/collector.h"
#include "collect/listeners.h"
#include "collect/nvml_collector.h"
#include "collect/process_tree.h"
#include "platform/nvml.h"
#include "platform/process.h"

namespace tb {
namespace {

struct Ticking {
  double cpu_ns = 0;   // per tick, the whole process
  double wall_ns = 0;  // per tick, mean
  double max_wall_ns = 0;
  int late = 0;        // ticks that ended after the next one was due
  size_t samples = 0;  // per tick
};

// Ticks `collectors` `ticks` times every `interval_ms` on an absolute schedule.
Ticking RunTicks(std::vector<std::unique_ptr<Collector>>& collectors, pid_t root, int ticks,
                 int interval_ms) {
  HostFiles files("/");
  ProcessTree tree(files, root);
  DiscardSink sink;
  Ticking t;
  int64_t interval_ns = interval_ms * 1000000LL;
  int64_t cpu0 = ProcessCpuNanos(), start = MonotonicNanos() + interval_ns;
  for (int i = 0; i < ticks; ++i) {
    int64_t due = start + i * interval_ns;
    int64_t now = MonotonicNanos();
    if (due > now) std::this_thread::sleep_for(std::chrono::nanoseconds(due - now));
    int64_t w0 = MonotonicNanos();
    tree.Invalidate();
    Tick tick{WallMillis(), w0, &tree, nullptr, /*final=*/i == ticks - 1};
    for (auto& c : collectors) (void)c->Collect(tick, sink);
    int64_t end = MonotonicNanos();
    t.wall_ns += static_cast<double>(end - w0);
    t.max_wall_ns = std::max(t.max_wall_ns, static_cast<double>(end - w0));
    if (end > due + interval_ns) ++t.late;
  }
  // Up to the next tick, so the PCIe reader's CPU time between ticks counts.
  std::this_thread::sleep_until(
      std::chrono::steady_clock::time_point(std::chrono::nanoseconds(start + ticks * interval_ns)));
  t.cpu_ns = static_cast<double>(ProcessCpuNanos() - cpu0) / ticks;
  t.wall_ns /= ticks;
  t.samples = sink.count / static_cast<size_t>(ticks);
  return t;
}

struct SmiCost {
  double cpu_ns = 0, wall_ns = 0;  // per call
  size_t lines = 0;                // GPU lines of the last call
};

// radT's way: nvidia-smi started once per tick (10 Hz).
SmiCost SmiPerTick(int calls) {
  SmiCost c;
  int64_t before = ChildrenCpuNanos();
  for (int i = 0; i < calls; ++i) {
    int64_t w0 = MonotonicNanos();
    Result<CapturedOutput> out = RunAndCapture(
        {"nvidia-smi",
         "--query-gpu=timestamp,power.draw,utilization.gpu,utilization.memory,memory.used,pstate",
         "--format=csv,noheader,nounits"},
        10000);
    c.wall_ns += static_cast<double>(MonotonicNanos() - w0);
    if (out.ok()) c.lines = static_cast<size_t>(std::count(out->out.begin(), out->out.end(), '\n'));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  c.cpu_ns = static_cast<double>(ChildrenCpuNanos() - before) / calls;
  c.wall_ns /= calls;
  return c;
}

// Every field of every GPU every tick, PCIe every second: the cadence trainbench had before
// (what the H200 measured at 6.0 ms of CPU per GPU per tick). Process CPU per tick.
double EveryFieldEveryTick(const Nvml& nvml, int ticks, int interval_ms) {
  const nvml::Functions& f = nvml.fn();
  Nvml::DeviceList devices = nvml.Devices().value();
  std::vector<nvml::ProcessInfoV2> procs(64);
  std::vector<nvml::ProcessUtilizationSample> samples(64);
  std::vector<unsigned long long> last_seen(devices.gpus.size(), 0);
  int64_t cpu0 = ProcessCpuNanos(), start = MonotonicNanos() + interval_ms * 1000000LL;
  for (int i = 0; i < ticks; ++i) {
    std::this_thread::sleep_until(
        std::chrono::steady_clock::time_point(std::chrono::nanoseconds(start + i * interval_ms * 1000000LL)));
    for (size_t g = 0; g < devices.gpus.size(); ++g) {
      nvml::Device d = devices.gpus[g].handle;
      nvml::Utilization u{};
      nvml::MemoryV2 m{};
      m.version = nvml::kMemoryV2Version;
      unsigned v = 0;
      unsigned long long big = 0;
      int p = 0;
      (void)f.DeviceGetUtilizationRates(d, &u);
      (void)f.DeviceGetMemoryInfoV2(d, &m);
      (void)f.DeviceGetPowerUsage(d, &v);
      (void)f.DeviceGetTotalEnergyConsumption(d, &big);
      (void)f.DeviceGetTemperature(d, nvml::kTemperatureGpu, &v);
      (void)f.DeviceGetClockInfo(d, nvml::kClockSm, &v);
      (void)f.DeviceGetClockInfo(d, nvml::kClockMem, &v);
      (void)f.DeviceGetPerformanceState(d, &p);
      (void)f.DeviceGetClocksEventReasons(d, &big);
      unsigned count = static_cast<unsigned>(procs.size());
      (void)f.DeviceGetComputeRunningProcessesV2(d, &count, procs.data());
      count = static_cast<unsigned>(samples.size());
      if (f.DeviceGetProcessUtilization(d, samples.data(), &count, last_seen[g]) == nvml::kSuccess) {
        for (unsigned k = 0; k < count; ++k) last_seen[g] = std::max(last_seen[g], samples[k].timeStamp);
      }
      if (i % std::max(1, 1000 / interval_ms) == 0) {
        (void)f.DeviceGetPcieThroughput(d, nvml::kPcieTxBytes, &v);
        (void)f.DeviceGetPcieThroughput(d, nvml::kPcieRxBytes, &v);
      }
    }
  }
  return static_cast<double>(ProcessCpuNanos() - cpu0) / ticks;
}

// The benchmark's settings, from its arguments.
struct Setup {
  int ticks, delay_us, pcie_ms, init_ms, slow_ticks, threads, gpu_count;
};

// The simulated GPUs: A100s whose NVML calls wait `delay_us`, with one run's process each.
nlohmann::json ScenarioGpus(const Setup& s) {
  int gpu_count = s.gpu_count, delay_us = s.delay_us, pcie_ms = s.pcie_ms;
  nlohmann::json gpus = nlohmann::json::array();
  for (int g = 0; g < gpu_count; ++g) {
    gpus.push_back(
        {{"name", "NVIDIA A100-SXM4-80GB"},
         {"uuid", "GPU-00000000-0000-0000-0000-00000000000" + std::to_string(g)},
         {"memory_total_mib", 81920},
         {"call_delay_us", delay_us},
         {"pcie_call_ms", pcie_ms},
         {"metrics",
          {{"util_gpu_pct", 93},
           {"util_mem_pct", 41},
           {"mem_used_mib", 61440},
           {"power_w", 312.5},
           {"energy_mj", 123456789},
           {"temp_c", 61},
           {"clock_sm_mhz", 1410},
           {"clock_mem_mhz", 1593},
           {"pstate", 0},
           {"pcie_tx_kbps", 40960},
           {"pcie_rx_kbps", 163840},
           {"throttle_reasons", 0}}},
         // The run's processes (the `python3`s below): one run on each GPU.
         {"processes", {{{"match", "python3"}, {"memory_used_mib", 30720}, {"sm_util_percent", 90}}}}});
  }
  return gpus;
}

// The listeners at 10 Hz against nvidia-smi started a tick, median of 3 rounds, then all of
// them at 1 Hz once: the PCIe reader's cost between ticks weighs ten times more a tick.
void CompareAtTenHz(const std::shared_ptr<Nvml>& nvml, pid_t pid, const Setup& setup) {
  int ticks = setup.ticks, gpu_count = setup.gpu_count, delay_us = setup.delay_us, pcie_ms = setup.pcie_ms,
      init_ms = setup.init_ms;
  HostFiles files("/");
  auto all_listeners = [&] {
    std::vector<std::unique_ptr<Collector>> all;
    for (const char* name : {"top", "iostat", "net"})
      all.push_back(MakeListener(name, ListenerContext{.files = files}).value());
    all.push_back(MakeNvmlCollector(nvml, DeviceSelection{}));
    return all;
  };
  std::vector<double> nvml_cpu, nvml_wall, nvml_max, smi_cpu, smi_wall, all_cpu;
  int nvml_late = 0, all_late = 0;
  size_t nvml_samples = 0, all_samples = 0, smi_lines = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::unique_ptr<Collector>> only_nvml;
    only_nvml.push_back(MakeNvmlCollector(nvml, DeviceSelection{}));
    Ticking a = RunTicks(only_nvml, pid, ticks, 100);
    only_nvml.clear();  // its PCIe reader stops
    nvml_cpu.push_back(a.cpu_ns);
    nvml_wall.push_back(a.wall_ns);
    nvml_max.push_back(a.max_wall_ns);
    nvml_late += a.late;
    nvml_samples = a.samples;
    SmiCost s = SmiPerTick(ticks / 2);
    smi_cpu.push_back(s.cpu_ns);
    smi_wall.push_back(s.wall_ns);
    smi_lines = s.lines;
    std::vector<std::unique_ptr<Collector>> all = all_listeners();
    Ticking b = RunTicks(all, pid, ticks, 100);
    all_cpu.push_back(b.cpu_ns);
    all_late += b.late;
    all_samples = b.samples;
  }
  // At 1 Hz, once: the PCIe reader's cost between ticks weighs ten times more per tick.
  std::vector<std::unique_ptr<Collector>> all = all_listeners();
  Ticking slow = RunTicks(all, pid, std::max(5, ticks / 5), 1000);
  all.clear();
  double n = Median(nvml_cpu), s = Median(smi_cpu), a = Median(all_cpu);
  std::printf(
      "%d simulated GPUs; each NVML call waits %d us, a PCIe throughput call %d ms, nvmlInit %d ms; "
      "median of 3 rounds of %d ticks at 10 Hz:\n",
      gpu_count, delay_us, pcie_ms, init_ms, ticks);
  std::printf(
      "  nvml listener         CPU %8.1f us a tick (%.2f%% of a core); wall a tick %.1f us, at most %.1f "
      "us; "
      "late ticks %d of %d (%zu samples a tick)\n",
      n / 1e3, n * 10 / 1e9 * 100, Median(nvml_wall) / 1e3, Median(nvml_max) / 1e3, nvml_late, 3 * ticks,
      nvml_samples);
  std::printf(
      "  nvidia-smi per tick   CPU %8.1f us a call, wall %.1f us a call, %zu GPU lines (through the same "
      "simulated NVML)\n",
      s / 1e3, Median(smi_wall) / 1e3, smi_lines);
  // nvidia-smi gives 5 values a GPU (the timestamp aside); the listener more.
  double smi_values = 5.0 * static_cast<double>(smi_lines);
  std::printf(
      "  per tick: nvml %.1fx cheaper; per value: nvml %.1f us (%zu values), nvidia-smi %.1f us (%.0f "
      "values): "
      "%.1fx\n",
      s / n, n / 1e3 / static_cast<double>(nvml_samples), nvml_samples, s / 1e3 / smi_values, smi_values,
      (s / smi_values) / (n / static_cast<double>(nvml_samples)));
  std::printf(
      "  top+iostat+net+nvml at 10 Hz: %.1f us a tick = %.2f%% of one core; late ticks %d of %d (%zu "
      "samples "
      "a tick)\n",
      a / 1e3, a * 10 / 1e9 * 100, all_late, 3 * ticks, all_samples);
  std::printf(
      "  top+iostat+net+nvml at 1 Hz: %.1f us a tick = %.3f%% of one core (goal: under 1%%); late ticks %d "
      "of %d\n",
      slow.cpu_ns / 1e3, slow.cpu_ns / 1e9 * 100, slow.late, std::max(5, ticks / 5));
}

}  // namespace
}  // namespace tb

int main(int argc, char** argv) {
  using namespace tb;
  Setup setup{argc > 1 ? std::atoi(argv[1]) : 100, argc > 2 ? std::atoi(argv[2]) : 75,
              argc > 3 ? std::atoi(argv[3]) : 20,  argc > 4 ? std::atoi(argv[4]) : 0,
              argc > 5 ? std::atoi(argv[5]) : 120, argc > 6 ? std::atoi(argv[6]) : 64,
              argc > 7 ? std::atoi(argv[7]) : 8};
  int init_ms = setup.init_ms, slow_ticks = setup.slow_ticks, threads = setup.threads,
      gpu_count = setup.gpu_count;
  std::string scenario = "/tmp/tb-gpu-bench-" + std::to_string(getpid()) + ".json";
  nlohmann::json gpus = ScenarioGpus(setup);
  std::ofstream(scenario) << nlohmann::json{{"gpus", gpus}, {"nvml_init_ms", init_ms}}.dump();
  setenv("TRAINBENCH_SIM_SCENARIO", scenario.c_str(), 1);
  setenv("TRAINBENCH_NVML_LIBRARY", TRAINBENCH_SIM_NVML, 1);
  setenv("PATH", (std::string(TRAINBENCH_SIM_BIN) + ":" + std::getenv("PATH")).c_str(), 1);

  // The run: a training process with as many threads as PyTorch starts (OpenMP's per core,
  // CUDA's, the autograd engine's: `threads` in the device check's gpu.txt), and a worker.
  std::string threaded =
      "python3 -c 'import threading, time\n"
      "for _ in range(" +
      std::to_string(threads) +
      "): threading.Thread(target=time.sleep, "
      "args=(600,), daemon=True).start()\n"
      "time.sleep(600)'";
  SpawnOptions o;
  o.argv = {"sh", "-c", threaded + " & python3 -c 'import time; time.sleep(600)' & wait"};
  o.new_process_group = true;
  ChildProcess tree = ChildProcess::Spawn(o).value();
  std::shared_ptr<Nvml> nvml = Nvml::Open().value();
  if (setup.ticks > 0) CompareAtTenHz(nvml, tree.pid(), setup);  // ticks 0: the goal's figure only
  // The goal's figure: the nvml listener alone at 1 Hz, against every field every tick, on
  // GPUs whose calls cost what the H200's did and nothing more (no call waits but PCIe's:
  // on the H200 a cheap call's wall time was its CPU time).
  nvml.reset();
  for (auto& g : gpus) g["call_delay_us"] = 0;
  std::ofstream(scenario) << nlohmann::json{{"gpus", gpus}, {"nvml_init_ms", init_ms}}.dump();
  nvml = Nvml::Open().value();
  std::vector<std::unique_ptr<Collector>> nvml_1hz;
  nvml_1hz.push_back(MakeNvmlCollector(nvml, DeviceSelection{}));
  Ticking goal = RunTicks(nvml_1hz, tree.pid(), slow_ticks, 1000);
  nvml_1hz.clear();
  // Collocated: another run's process (outside the tree) on every GPU beside this run's.
  SpawnOptions other_run;
  other_run.argv = {"python3", "-c", "import time; time.sleep(600)"};
  ChildProcess other = ChildProcess::Spawn(other_run).value();
  nvml_1hz.push_back(MakeNvmlCollector(nvml, DeviceSelection{}));
  Ticking shared = RunTicks(nvml_1hz, tree.pid(), slow_ticks, 1000);
  nvml_1hz.clear();
  (void)other.Signal(SIGTERM);
  (void)other.Wait();
  double before = EveryFieldEveryTick(*nvml, std::min(slow_ticks, 20), 1000);
  (void)tree.Signal(SIGTERM);
  (void)tree.Wait();
  std::remove(scenario.c_str());
  std::printf("nvml CPU per GPU per 1-s tick: %.2f ms (the run's process with %d threads)\n",
              goal.cpu_ns / gpu_count / 1e6, threads);
  std::printf("  with another run's process on every GPU (collocated): %.2f ms, late ticks %d\n",
              shared.cpu_ns / gpu_count / 1e6, shared.late);
  std::printf(
      "  (%d GPUs, one run each, H200 call costs, %d ticks at 1 Hz, late ticks %d; every field every tick, "
      "as before: %.2f ms)\n",
      gpu_count, slow_ticks, goal.late, before / gpu_count / 1e6);
  return 0;
}
