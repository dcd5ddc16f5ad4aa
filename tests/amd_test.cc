// AMD Instinct GPUs end to end through the simulated libamd_smi.so of sim/: the real
// trainbench binary loads the fake library, which answers from a scenario written by each
// test, as ROCm's amdsmi answers (sentinels, 15.3 uJ counts, a wrapping counter, partitions).
// Each energy figure is held to the device's own counter, read from the store, or to the
// scenario's power times the time that passed: not to trainbench's own arithmetic.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "metrics/catalog.h"
#include "store/run_tags.h"
#include "tests/helpers/cli_fixture.h"

namespace tb {
namespace {

using nlohmann::json;

json Mi300x(const std::string& partition) {
  json gpu = json::parse(R"({
    "name": "AMD Instinct MI300X", "uuid": "a7ff74a1-0000-1000-80d4-3c7e1b2f9a00", "memory_total_mib": 196608,
    "memory_partition": "NPS1",
    "metrics": {"util_gpu_pct": 64, "util_mem_pct": 35, "util_mm_pct": 0, "mem_used_mib": 8192, "power_w": 600,
                "temp_hotspot_c": 61, "temp_mem_c": 52, "clock_sm_mhz": 2100, "clock_mem_mhz": 1300},
    "unsupported": ["temp_c"],
    "processes": [{"match": "tb_burner", "memory_used_mib": 6144, "sm_util_percent": 60},
                  {"match": "tb_other", "memory_used_mib": 2048, "sm_util_percent": 20}]})");
  gpu["compute_partition"] = partition;
  return gpu;
}

class AmdTest : public CliTest {
 protected:
  void UseScenario(const json& scenario, const std::string& more_env = "") {
    std::ofstream(dir_ / "scenario.json") << scenario.dump(2);
    env_ = "TRAINBENCH_AMDSMI_LIBRARY=" TRAINBENCH_SIM_AMDSMI
           " TRAINBENCH_NVML_LIBRARY=/nonexistent "
           "TRAINBENCH_SIM_SCENARIO=" +
           (dir_ / "scenario.json").string() + " " + more_env;
  }
  // A copy of the burner under another name, so that another rule of the scenario matches it.
  std::string Other() {
    fs::copy_file(kBurner, dir_ / "tb_other", fs::copy_options::overwrite_existing);
    return (dir_ / "tb_other").string();
  }
  std::set<std::string> LabelsOf(Store& store, const std::string& run_id, const std::string& metric) {
    std::set<std::string> out;
    for (const SeriesInfo& s : store.ListSeries(run_id).value())
      if (s.metric == metric) out.insert(s.labels);
    return out;
  }
  std::vector<RunRecord> Runs(Store& store) { return store.ListRuns("").value(); }
  // `schedule` of one workload of experiment "amd": the burner on `burner_devices` and its
  // copy (Other) on `other_devices`, 10 s each, with the amdsmi listener.
  Shell ScheduleBurnerAndOther(const std::string& workload, const std::string& burner_devices,
                               const std::string& other_devices) {
    std::string other = Other();
    std::ofstream(dir_ / "experiment.csv")
        << "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
        << "amd," << workload << ",,," << burner_devices << ",-," << kBurner
        << ",amdsmi,--duty 0.05 --seconds 10\n"
        << "amd," << workload << ",,," << other_devices << ",-," << other
        << ",amdsmi,--duty 0.05 --seconds 10\n";
    return Trainbench("schedule " + (dir_ / "experiment.csv").string());
  }
  // The run's energy per second of the GPU (label `gpu`) while every run of `runs` ran and
  // its counter had been checked (the first 5 s are held back): the runs' starts and ends
  // are seconds apart on a loaded machine, when the one alone has the whole GPU.
  double JoulesPerSecondWhileAllRan(Store& store, const RunRecord& run, const std::vector<RunRecord>& runs) {
    int64_t from = 0, to = INT64_MAX;
    for (const RunRecord& r : runs) {
      from = std::max(from, r.start_ms + 5500);
      to = std::min(to, r.end_ms - 500);
    }
    std::vector<Point> inside;
    for (const Point& p : Series(store, run.id, "proc.gpu.energy_joules", "gpu=0"))
      if (p.time_ms >= from && p.time_ms <= to) inside.push_back(p);
    EXPECT_GE(inside.size(), 2u) << "no two ticks while all ran";
    if (inside.size() < 2) return 0;
    return (inside.back().value - inside.front().value) * 1000 /
           static_cast<double>(inside.back().time_ms - inside.front().time_ms);
  }
};

TEST_F(AmdTest, EveryFigureReachesTheStoreUnderNvidiasNamesAndWhatIsNotReportedIsAbsent) {
  UseScenario({{"amd_gpus", {Mi300x("SPX")}}});
  Shell r = Trainbench("run -q -i 250ms -l amdsmi -- " + kBurner + " --duty 0.05 --seconds 2");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  for (auto [metric, value, unit] :
       {std::tuple{"gpu.utilization.gpu_ratio", 0.64, "ratio"},
        std::tuple{"gpu.utilization.memory_ratio", 0.35, "ratio"},
        std::tuple{"gpu.utilization.multimedia_ratio", 0.0, "ratio"},
        std::tuple{"gpu.memory.used_bytes", 8192.0 * 1048576, "bytes"},
        std::tuple{"gpu.memory.total_bytes", 196608.0 * 1048576, "bytes"},
        std::tuple{"gpu.power.draw_watts", 600.0, "W"},
        std::tuple{"gpu.temperature.hotspot_celsius", 61.0, "°C"},
        std::tuple{"gpu.temperature.memory_celsius", 52.0, "°C"},
        std::tuple{"gpu.clock.sm_hertz", 2100e6, "Hz"}, std::tuple{"gpu.clock.memory_hertz", 1300e6, "Hz"}}) {
    std::vector<Point> points = Series(*store, run.id, metric, "gpu=0");
    ASSERT_GE(points.size(), 4u) << metric;
    for (const Point& p : points) EXPECT_EQ(p.value, value) << metric;
    EXPECT_EQ(FindMetric(metric)->unit, unit) << metric;
  }
  // The edge sensor an MI300X lacks: absent, not 0 and not 65535.
  EXPECT_TRUE(Series(*store, run.id, "gpu.temperature.gpu_celsius", "gpu=0").empty());
  // The burner's VRAM, and its engine time counted: 60 % of wall time, as the device says.
  std::set<std::string> procs = LabelsOf(*store, run.id, "proc.gpu.memory_used_bytes");
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(Series(*store, run.id, "proc.gpu.memory_used_bytes", *procs.begin()).back().value,
            6144.0 * 1048576);
  std::vector<Point> busy = Series(*store, run.id, "proc.gpu.tree_sm_utilization_ratio", "gpu=0");
  ASSERT_GE(busy.size(), 4u);
  EXPECT_NEAR(busy[busy.size() / 2].value, 0.60, 0.05);
  // The energy counter: 15.3 uJ counts read as joules, growing as 600 W do.
  std::vector<Point> counter = Series(*store, run.id, "gpu.energy.consumed_joules", "gpu=0");
  ASSERT_GE(counter.size(), 2u);
  double seconds = static_cast<double>(counter.back().time_ms - counter.front().time_ms) / 1000;
  EXPECT_NEAR(counter.back().value - counter.front().value, 600 * seconds, 0.05 * 600 * seconds + 20);
}

// Two runs on two compute partitions of one MI300X in CPX mode: each watches its own
// partition, and the GPU's energy (reported by its first partition) is split by the engine
// time each run's processes spent, 60 % against 20 %: 3 to 1, adding up to the counter. The
// report calls them partitions of one GPU, not separate GPUs.
TEST_F(AmdTest, TwoScheduledRunsOnTwoPartitionsSplitOneGpusEnergyAndAreReportedSo) {
  UseScenario({{"amd_gpus", {Mi300x("CPX")}}});
  Shell devices = Trainbench("devices");
  EXPECT_NE(devices.out.find("8 of 8 (CPX/NPS1)"), std::string::npos) << devices.out;
  Shell both = ScheduleBurnerAndOther("partitions", "2", "5");
  ASSERT_EQ(both.code, 0) << both.out << both.err;
  auto store = OpenStore();
  std::vector<RunRecord> runs = Runs(*store);
  ASSERT_EQ(runs.size(), 2u);
  double run_joules[2] = {0, 0}, rate[2] = {0, 0};
  double first_counter = 1e300, last_counter = 0;
  for (const RunRecord& run : runs) {
    int which = run.command.find("tb_other") == std::string::npos ? 0 : 1;
    rate[which] = JoulesPerSecondWhileAllRan(*store, run, runs);
    EXPECT_EQ(TagValue(run, kGpuSocketsTag), "0");
    EXPECT_EQ(TagValue(run, kGpuPartitionTag), "CPX");
    std::string mine = which == 0 ? "gpu=2" : "gpu=5";
    // Its own partition's figures, and no other partition's; its activity its own (its
    // process's 60 or 20 %, from the metrics table's accumulators), not the GPU's 64 %.
    EXPECT_EQ(LabelsOf(*store, run.id, "gpu.utilization.gpu_ratio"), std::set<std::string>{mine});
    std::vector<Point> busy = Series(*store, run.id, "gpu.utilization.gpu_ratio", mine);
    ASSERT_GE(busy.size(), 6u);
    EXPECT_NEAR(busy[busy.size() / 2].value, which == 0 ? 0.6 : 0.2, 0.02) << mine;
    EXPECT_TRUE(store->ListEvents(run.id).value().size() <= 1) << "no word of the partition's activity";
    // The GPU's power and energy come from partition 0, the later ones report none.
    EXPECT_EQ(LabelsOf(*store, run.id, "gpu.power.draw_watts"), std::set<std::string>{"gpu=0"});
    std::vector<Point> energy = Series(*store, run.id, "proc.gpu.energy_joules", "gpu=0");
    ASSERT_GE(energy.size(), 3u);
    run_joules[which] = energy.back().value;
    std::vector<Point> counter = Series(*store, run.id, "gpu.energy.consumed_joules", "gpu=0");
    ASSERT_GE(counter.size(), 3u);
    first_counter = std::min(first_counter, counter.front().value);
    last_counter = std::max(last_counter, counter.back().value);
  }
  double device = last_counter - first_counter;
  EXPECT_NEAR(run_joules[0] + run_joules[1], device, 0.06 * device);
  EXPECT_NEAR(rate[0] / rate[1], 3.0, 0.45);
  // Not "separate GPUs": the partitions share the socket's memory, power and energy.
  Shell report = Trainbench("report amd");
  EXPECT_NE(report.out.find("CPX partitions of one GPU"), std::string::npos) << report.out;
}

// An MI250X is two dies: the odd one reports no power, the even one both dies'. A run on the
// odd die gets its energy from the even die's counter, here a 32-bit accumulator that wraps
// during the run (about 65.7 kJ of 15.3 uJ counts): the energy goes on growing across it.
TEST_F(AmdTest, AnOddMi250xDieIsCoveredByItsEvenDieAcrossTheCountersWrap) {
  json gpu = json::parse(R"({"name": "AMD Instinct MI250X", "uuid": "2bff740f-0000-1000-80a5-61c2d3e4f5a0",
    "memory_total_mib": 131072, "dies": 2, "average_power": true, "compute_partition": "N/A",
    "memory_partition": "N/A", "energy_wrap_bits": 32,
    "metrics": {"util_gpu_pct": 75, "power_w": 540, "temp_c": 48, "mem_used_mib": 4096},
    "processes": [{"match": "tb_burner", "memory_used_mib": 4096, "sm_util_percent": 70}]})");
  // The scenario began 119 s ago: 540 W have counted 4.2e9 of the 4.29e9 counts.
  auto now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
  UseScenario({{"amd_gpus", {gpu}}}, "TRAINBENCH_SIM_START=" + std::to_string(now.count() - 119));
  Shell r = Trainbench("run -q -l amdsmi -d 1 -- " + kBurner + " --duty 0.05 --seconds 7");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_TRUE(Series(*store, run.id, "gpu.power.draw_watts", "gpu=1").empty());
  std::vector<Point> power = Series(*store, run.id, "gpu.power.draw_watts", "gpu=0");
  ASSERT_FALSE(power.empty());
  EXPECT_EQ(power.back().value, 540);  // an MI200's average socket power
  std::vector<Point> counter = Series(*store, run.id, "gpu.energy.consumed_joules", "gpu=0");
  ASSERT_GE(counter.size(), 5u);
  for (size_t i = 1; i < counter.size(); ++i) EXPECT_GT(counter[i].value, counter[i - 1].value) << i;
  double seconds = static_cast<double>(counter.back().time_ms - counter.front().time_ms) / 1000;
  EXPECT_NEAR(counter.back().value - counter.front().value, 540 * seconds, 0.05 * 540 * seconds + 20);
  EXPECT_GT(counter.back().value, 65700.0) << "the counter did not wrap within the run";
  // Alone on the GPU, the run's energy is the GPU's.
  std::vector<Point> energy = Series(*store, run.id, "proc.gpu.energy_joules", "gpu=0");
  ASSERT_FALSE(energy.empty());
  EXPECT_NEAR(energy.back().value, counter.back().value - counter.front().value, 0.05 * 540 * seconds + 20);
}

// A counter that counts a hundredth of the energy (a broken part or ROCm version) disagrees
// with the power integrated over the first seconds: the energy is the power's integral, the
// counter's figures are not kept, and the run is told which was used.
TEST_F(AmdTest, ACounterThatDisagreesWithPowerIsReplacedByIntegratedPowerAndTheRunIsTold) {
  json gpu = Mi300x("SPX");
  gpu["energy_counter_scale"] = 0.01;
  UseScenario({{"amd_gpus", {gpu}}});
  Shell r = Trainbench("run -q -l amdsmi -- " + kBurner + " --duty 0.05 --seconds 8");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  std::vector<EventRecord> events = store->ListEvents(run.id).value();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].label.find("disagrees with power integrated"), std::string::npos) << events[0].label;
  EXPECT_TRUE(Series(*store, run.id, "gpu.energy.consumed_joules", "gpu=0").empty());
  std::vector<Point> power = Series(*store, run.id, "gpu.power.draw_watts", "gpu=0");
  std::vector<Point> energy = Series(*store, run.id, "proc.gpu.energy_joules", "gpu=0");
  ASSERT_GE(energy.size(), 2u);
  double seconds = static_cast<double>(power.back().time_ms - power.front().time_ms) / 1000;
  EXPECT_NEAR(energy.back().value, 600 * seconds, 0.08 * 600 * seconds);
  // The report's energy is the integrated power, not the hundredth.
  Shell show = Trainbench("show " + run.id);
  EXPECT_NE(show.out.find("run energy "), std::string::npos) << show.out;
}

// `trainbench schedule` on an AMD machine (no nvidia-smi): a workload of two runs on one
// MI300X checks its Devices against AMD SMI, and the runs' energies, split by their engine
// time (60 % against 20 %), add up to the GPU's counter over the workload.
TEST_F(AmdTest, TwoScheduledRunsOnOneGpuSplitItsEnergyByEngineTime) {
  UseScenario({{"amd_gpus", {Mi300x("SPX")}}});
  Shell r = ScheduleBurnerAndOther("pair", "0", "0");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto store = OpenStore();
  std::vector<RunRecord> runs = Runs(*store);
  ASSERT_EQ(runs.size(), 2u);
  double sum = 0, first_counter = 1e300, last_counter = 0;
  std::map<std::string, double> rate;  // J/s while both ran, by command
  for (const RunRecord& run : runs) {
    double joules = Series(*store, run.id, "proc.gpu.energy_joules", "gpu=0").back().value;
    rate[run.command.find("tb_other") != std::string::npos ? "other" : "burner"] =
        JoulesPerSecondWhileAllRan(*store, run, runs);
    sum += joules;
    std::vector<Point> counter = Series(*store, run.id, "gpu.energy.consumed_joules", "gpu=0");
    first_counter = std::min(first_counter, counter.front().value);
    last_counter = std::max(last_counter, counter.back().value);
  }
  EXPECT_NEAR(sum, last_counter - first_counter, 0.06 * (last_counter - first_counter));
  EXPECT_NEAR(rate["burner"] / rate["other"], 3.0, 0.45);
  Shell report = Trainbench("report amd");
  EXPECT_NE(report.out.find("GPU J per run"), std::string::npos) << report.out;
}

// A library whose metrics table trainbench does not know the layout of (another ROCm) is
// not read: the partition's activity is the GPU's, and the run is told so once.
TEST_F(AmdTest, AnotherLibrarysMetricsTableIsNotReadAndTheRunIsTold) {
  json scenario = {{"amd_gpus", {Mi300x("CPX")}}, {"amdsmi_version", "25.1.0"}};
  UseScenario(scenario);
  Shell r = Trainbench("run -q -i 250ms -l amdsmi -d 2 -- " + kBurner + " --duty 0.05 --seconds 2");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = Runs(*store).front();
  EXPECT_EQ(Series(*store, run.id, "gpu.utilization.gpu_ratio", "gpu=2").back().value, 0.64);
  std::vector<EventRecord> events = store->ListEvents(run.id).value();
  size_t told = 0;
  for (const EventRecord& e : events) told += e.label.find("AMD SMI 25.1.0 lays out") != std::string::npos;
  EXPECT_EQ(told, 1u);
}

TEST_F(AmdTest, NamingAGpuThatIsNotThereSaysWhichThereAre) {
  UseScenario({{"amd_gpus", {Mi300x("SPX")}}});
  Shell r = Trainbench("run -q -l amdsmi -d 3 -- true");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("device 3 is not a GPU this process may use (1 found)"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tb
