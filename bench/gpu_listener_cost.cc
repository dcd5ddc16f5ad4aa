// Cost of the `nvml` listener per tick on 8 simulated GPUs whose NVML calls each take a
// realistic 50-100 us (75 us by default), against radT's way: starting `nvidia-smi
// --query-gpu=...` once per tick. Also all host and GPU listeners together at 10 Hz.
//
//   build/bench/gpu_listener_cost [ticks=100] [call_delay_us=75]
//
// The simulated nvidia-smi is far cheaper than the real one (it loads no driver; NVIDIA's
// tool is measured at about 13.6 ms a sample), so the baseline here is, if anything, too
// cheap.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

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

struct Cost {
  double cpu_ns = 0, wall_ns = 0;
  size_t samples = 0;
};

// CPU and wall time per tick of `collectors`, ticking at 10 Hz.
Cost PerTick(std::vector<std::unique_ptr<Collector>>& collectors, pid_t root, int ticks) {
  HostFiles files("/");
  ProcessTree tree(files, root);
  DiscardSink sink;
  int64_t cpu = 0, wall = 0;
  for (int i = 0; i < ticks; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    int64_t c0 = ProcessCpuNanos(), w0 = MonotonicNanos();
    tree.Invalidate();
    Tick tick{WallMillis(), MonotonicNanos(), &tree, nullptr};
    for (auto& c : collectors) (void)c->Collect(tick, sink);
    cpu += ProcessCpuNanos() - c0;
    wall += MonotonicNanos() - w0;
  }
  return {static_cast<double>(cpu) / ticks, static_cast<double>(wall) / ticks,
          sink.count / static_cast<size_t>(ticks)};
}

double SmiPerCall(int calls) {
  int64_t before = ChildrenCpuNanos();
  for (int i = 0; i < calls; ++i) {
    (void)RunAndCapture(
        {"nvidia-smi",
         "--query-gpu=timestamp,power.draw,utilization.gpu,utilization.memory,memory.used,pstate",
         "--format=csv,noheader,nounits"},
        10000);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return static_cast<double>(ChildrenCpuNanos() - before) / calls;
}

}  // namespace
}  // namespace tb

int main(int argc, char** argv) {
  using namespace tb;
  int ticks = argc > 1 ? std::atoi(argv[1]) : 100;
  int delay_us = argc > 2 ? std::atoi(argv[2]) : 75;
  std::string scenario = "/tmp/tb-gpu-bench-" + std::to_string(getpid()) + ".json";
  nlohmann::json gpus = nlohmann::json::array();
  for (int g = 0; g < 8; ++g) {
    gpus.push_back({{"name", "NVIDIA A100-SXM4-80GB"},
                    {"uuid", "GPU-00000000-0000-0000-0000-00000000000" + std::to_string(g)},
                    {"memory_total_mib", 81920},
                    {"call_delay_us", delay_us},
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
                      {"throttle_reasons", 0}}}});
  }
  std::ofstream(scenario) << nlohmann::json{{"gpus", gpus}}.dump();
  setenv("TRAINBENCH_SIM_SCENARIO", scenario.c_str(), 1);
  setenv("TRAINBENCH_NVML_LIBRARY", TRAINBENCH_SIM_NVML, 1);
  setenv("PATH", (std::string(TRAINBENCH_SIM_BIN) + ":" + std::getenv("PATH")).c_str(), 1);

  SpawnOptions o;
  o.argv = {"sh", "-c", "sleep 600 & sleep 600 & wait"};
  o.new_process_group = true;
  ChildProcess tree = ChildProcess::Spawn(o).value();
  std::shared_ptr<Nvml> nvml = Nvml::Open().value();
  HostFiles files("/");

  std::vector<double> nvml_cpu, nvml_wall, all_cpu, smi;
  size_t nvml_samples = 0, all_samples = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::unique_ptr<Collector>> only_nvml;
    only_nvml.push_back(MakeNvmlCollector(nvml, DeviceSelection{}));
    Cost a = PerTick(only_nvml, tree.pid(), ticks);
    nvml_cpu.push_back(a.cpu_ns);
    nvml_wall.push_back(a.wall_ns);
    nvml_samples = a.samples;
    smi.push_back(SmiPerCall(ticks / 4));
    std::vector<std::unique_ptr<Collector>> all;
    for (const char* name : {"top", "iostat", "net"})
      all.push_back(MakeListener(name, ListenerContext{.files = files}).value());
    all.push_back(MakeNvmlCollector(nvml, DeviceSelection{}));
    Cost b = PerTick(all, tree.pid(), ticks);
    all_cpu.push_back(b.cpu_ns);
    all_samples = b.samples;
  }
  tree.Signal(SIGTERM);
  (void)tree.Wait();
  std::remove(scenario.c_str());

  // What one blocking wait of the call's length costs in CPU on this machine.
  int64_t c0 = ProcessCpuNanos();
  for (int i = 0; i < 1000; ++i) {
    timespec ts{0, delay_us * 1000L};
    nanosleep(&ts, nullptr);
  }
  double wait_cpu = static_cast<double>(ProcessCpuNanos() - c0) / 1000;
  double n = Median(nvml_cpu), w = Median(nvml_wall), s = Median(smi), a = Median(all_cpu);
  std::printf("8 simulated GPUs, NVML calls of %d us, %d ticks at 10 Hz, median of 3 rounds:\n", delay_us,
              ticks);
  std::printf("  nvml listener per tick          CPU %8.1f us   wall %8.1f us  (%zu samples)\n", n / 1e3,
              w / 1e3, nvml_samples);
  std::printf("  nvidia-smi --query-gpu per tick CPU %8.1f us   (simulated tool; NVIDIA's: ~13,600 us)\n",
              s / 1e3);
  std::printf("  per GPU sample: nvml %.1f us, nvidia-smi %.1f us: %.1fx cheaper\n", n / 8e3, s / 8e3, s / n);
  std::printf("  one blocking wait of %d us costs %.1f us of CPU on this machine\n", delay_us,
              wait_cpu / 1e3);
  std::printf("  top+iostat+net+nvml at 10 Hz: %.1f us a tick = %.2f%% of one core (%zu samples a tick)\n",
              a / 1e3, a * 10 / 1e9 * 100, all_samples);
  return 0;
}
