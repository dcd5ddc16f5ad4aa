// GPU listeners end to end through the simulated GPU of sim/: the real trainbench binary
// loads the fake libnvidia-ml.so.1, which answers from a scenario written by each test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "analyze/phases.h"
#include "base/strings.h"
#include "metrics/catalog.h"
#include "query/energy.h"
#include "store/run_tags.h"
#include "tests/helpers/cli_fixture.h"
#include "tests/helpers/recorded_trace.h"

namespace tb {
namespace {

using nlohmann::json;

uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

json Gpu0() {
  return json::parse(R"({
    "name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-11111111-2222-3333-4444-555555555555",
    "memory_total_mib": 40960,
    "metrics": {"util_gpu_pct": 87, "util_mem_pct": 31, "mem_used_mib": 12288, "power_w": 251.5,
                "energy_mj": 1000000, "temp_c": 54, "clock_sm_mhz": 1410, "clock_mem_mhz": 1215,
                "pstate": 2, "pcie_tx_kbps": 20480, "pcie_rx_kbps": 81920, "throttle_reasons": 4},
    "processes": [{"match": "tb_burner", "memory_used_mib": 2048, "sm_util_percent": 45}]})");
}

json Gpu1() {
  return json::parse(R"({
    "name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-66666666-7777-8888-9999-000000000000",
    "memory_total_mib": 40960,
    "metrics": {"util_gpu_pct": 10, "util_mem_pct": 5, "mem_used_mib": 1024, "power_w": 100,
                "temp_c": 41, "clock_sm_mhz": 1410, "clock_mem_mhz": 1215, "pstate": 0},
    "unsupported": ["pcie_tx_kbps", "pcie_rx_kbps", "energy_mj", "throttle_reasons"],
    "mig": [{"uuid": "MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "profile": "3g.20gb", "gpu_instance_id": 1,
             "memory_total_mib": 19968, "memory_used_mib": 512},
            {"uuid": "MIG-ffffffff-0000-1111-2222-333333333333", "profile": "3g.20gb", "gpu_instance_id": 2,
             "memory_total_mib": 19968, "memory_used_mib": 0}]})");
}

class GpuTest : public CliTest {
 protected:
  // Writes the scenario and points every following trainbench command at the simulated GPU.
  void UseScenario(const json& scenario) {
    std::ofstream(dir_ / "scenario.json") << scenario.dump(2);
    env_ = "TRAINBENCH_NVML_LIBRARY=" TRAINBENCH_SIM_NVML " TRAINBENCH_SIM_SCENARIO=" +
           (dir_ / "scenario.json").string();
  }

  // Another user's process on the GPU (a copy of sleep named tb_stranger, so that nothing
  // else matches a rule for it). It outlives the run however slowly a loaded machine starts
  // it, and goes with the returned guard.
  struct Stranger {
    std::string path;
    ~Stranger() { (void)std::system(("pkill -f " + path).c_str()); }
  };
  std::unique_ptr<Stranger> StartStranger() {
    fs::copy_file("/bin/sleep", dir_ / "tb_stranger");
    std::string path = (dir_ / "tb_stranger").string();
    EXPECT_EQ(std::system((env_ + " " + path + " 120 > /dev/null 2>&1 &").c_str()), 0);
    auto stranger = std::make_unique<Stranger>();  // built in place: a moved-from copy would kill it
    stranger->path = path;
    return stranger;
  }

  std::set<std::string> Labels(Store& store, const std::string& run_id, const std::string& metric) {
    std::set<std::string> out;
    for (const SeriesInfo& s : store.ListSeries(run_id).value()) {
      if (s.metric == metric) out.insert(s.labels);
    }
    return out;
  }
};

TEST_F(GpuTest, EveryNvmlMetricReachesTheStoreWithItsValueAndUnit) {
  UseScenario({{"gpus", {Gpu0(), Gpu1()}}});
  Shell r = Trainbench("run -q -i 200ms -l nvml -- " + kBurner + " --duty 0.1 --seconds 1.5");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  struct Expect {
    const char* metric;
    double value;
    const char* unit;
  };
  for (Expect e :
       {Expect{"gpu.utilization.gpu_ratio", 0.87, "ratio"},
        Expect{"gpu.utilization.memory_ratio", 0.31, "ratio"},
        Expect{"gpu.memory.used_bytes", 12288.0 * 1048576, "bytes"},
        Expect{"gpu.memory.total_bytes", 40960.0 * 1048576, "bytes"},
        Expect{"gpu.power.draw_watts", 251.5, "W"}, Expect{"gpu.energy.consumed_joules", 1000, "J"},
        Expect{"gpu.temperature.gpu_celsius", 54, "°C"}, Expect{"gpu.clock.sm_hertz", 1410e6, "Hz"},
        Expect{"gpu.clock.memory_hertz", 1215e6, "Hz"}, Expect{"gpu.performance.state_index", 2, "1"},
        Expect{"gpu.pcie.transmit_bytes_per_second", 20480.0 * 1024, "bytes/s"},
        Expect{"gpu.pcie.receive_bytes_per_second", 81920.0 * 1024, "bytes/s"},
        Expect{"gpu.clock.event_reasons_bitmask", 4, "1"}}) {
    std::vector<Point> points = Series(*store, run.id, e.metric, "gpu=0");
    // The costly fields have their own cadence: PCIe throughput off the tick (each call
    // takes NVIDIA's 20 ms), the energy counter at the run's start and end and every
    // two minutes; the rest every tick.
    std::string_view m = e.metric;
    size_t least = m.find("pcie") != std::string_view::npos     ? 1u
                   : m.find("energy") != std::string_view::npos ? 2u
                                                                : 5u;
    ASSERT_GE(points.size(), least) << e.metric;
    if (m.find("energy") != std::string_view::npos) {
      EXPECT_LE(points.size(), 3u) << "not every tick";
    }
    for (const Point& p : points) EXPECT_EQ(p.value, e.value) << e.metric;
    ASSERT_NE(FindMetric(e.metric), nullptr) << e.metric;
    EXPECT_EQ(FindMetric(e.metric)->unit, e.unit) << e.metric;
  }
  // The burner's own process: its GPU memory and SM share, labelled with its pid.
  std::set<std::string> procs = Labels(*store, run.id, "proc.gpu.memory_used_bytes");
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs.begin()->rfind("gpu=0,pid=", 0), 0u);
  EXPECT_EQ(Series(*store, run.id, "proc.gpu.memory_used_bytes", *procs.begin()).back().value,
            2048.0 * 1048576);
  // Alone on its GPU, the run's activity is the GPU's: per-process utilization (2.2 ms of
  // CPU a call on a real H200) is not asked for, and the run has the whole GPU.
  EXPECT_TRUE(Labels(*store, run.id, "proc.gpu.sm_utilization_ratio").empty());
  for (const Point& p : Series(*store, run.id, "proc.gpu.share_ratio", "gpu=0")) EXPECT_EQ(p.value, 1);
  // MIG devices of GPU 1 are listed and sampled.
  EXPECT_EQ(Labels(*store, run.id, "gpu.mig.memory_used_bytes"),
            (std::set<std::string>{"gpu=1,mig=MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
                                   "gpu=1,mig=MIG-ffffffff-0000-1111-2222-333333333333"}));
  EXPECT_EQ(Series(*store, run.id, "gpu.mig.memory_used_bytes",
                   "gpu=1,mig=MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
                .back()
                .value,
            512.0 * 1048576);
  // What GPU 1 does not support is absent, not zero, and not complained about.
  EXPECT_TRUE(Series(*store, run.id, "gpu.pcie.transmit_bytes_per_second", "gpu=1").empty());
  EXPECT_TRUE(Series(*store, run.id, "gpu.energy.consumed_joules", "gpu=1").empty());
  // GPU 1 is in MIG mode, where NVML has no utilization: said once, nothing stored.
  std::vector<EventRecord> events = store->ListEvents(run.id).value();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].label.find("GPU 1 is in MIG mode"), std::string::npos) << events[0].label;
  EXPECT_TRUE(Series(*store, run.id, "gpu.utilization.gpu_ratio", "gpu=1").empty());
  // Memory as nvidia-smi shows it (nvmlMemory_v2), the driver's reservation apart.
  EXPECT_EQ(Series(*store, run.id, "gpu.memory.reserved_bytes", "gpu=0").back().value, 384.0 * 1048576);
  // The run says where its GPU metrics came from.
  Shell show = Trainbench("show " + run.id);
  EXPECT_NE(show.out.find("simulated GPU"), std::string::npos) << show.out;
}

TEST_F(GpuTest, CollocatedProcessesGetTheirOwnSeriesAndShareTheDevice) {
  json gpu = Gpu0();
  gpu["processes"].push_back(
      json::parse(R"({"match": "tb_stranger", "memory_used_mib": 10, "sm_util_percent": 10})"));
  UseScenario({{"gpus", {gpu}}});
  // Another process on the GPU, so that the run's own processes are measured one by one.
  auto stranger = StartStranger();
  // The burner and its child both match the scenario's process rule.
  Shell r = Trainbench("run -q -i 200ms -l nvml -- " + kBurner + " --duty 0.1 --seconds 1.5 --children 1");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(Labels(*store, run.id, "proc.gpu.memory_used_bytes").size(), 2u);
  EXPECT_EQ(Labels(*store, run.id, "proc.gpu.sm_utilization_ratio").size(), 2u);
  EXPECT_EQ(Labels(*store, run.id, "gpu.utilization.gpu_ratio"), (std::set<std::string>{"gpu=0"}));
}

TEST_F(GpuTest, ALostGpuIsAnEventAndTheRestGoesOn) {
  json gpu1 = Gpu1();
  gpu1["lost_after_s"] = 1.0;
  UseScenario({{"gpus", {Gpu0(), gpu1}}});
  Shell r = Trainbench("run -q -i 200ms -l top+nvml -- " + kBurner + " --duty 0.1 --seconds 2.5");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kFinished);
  std::vector<EventRecord> events = store->ListEvents(run.id).value();
  std::erase_if(events, [](const EventRecord& e) { return e.label.find("MIG mode") != std::string::npos; });
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].label.find("GPU 1"), std::string::npos) << events[0].label;
  EXPECT_NE(events[0].label.find("lost"), std::string::npos) << events[0].label;
  std::vector<Point> lost = Series(*store, run.id, "gpu.power.draw_watts", "gpu=1");
  std::vector<Point> alive = Series(*store, run.id, "gpu.power.draw_watts", "gpu=0");
  ASSERT_FALSE(lost.empty());
  EXPECT_LT(lost.back().time_ms, events[0].time_ms + 1);      // nothing after it was lost
  EXPECT_GT(alive.back().time_ms, events[0].time_ms + 1000);  // GPU 0 went on to the end
}

TEST_F(GpuTest, NoNvmlLibraryMeansOneMessageAndTheRunGoesOn) {
  env_ = "TRAINBENCH_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1";
  Shell r = Trainbench("run -q -i 200ms -l top+nvml -- sleep 0.5");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("GPU listener nvml skipped"), std::string::npos) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kFinished);
  EXPECT_FALSE(Series(*store, run.id, "host.memory.used_bytes").empty());
  // Without a GPU the default listener set leaves nvml out.
  Shell def = Trainbench("run -q -n default -- true");
  EXPECT_EQ(store->FindRun("default")->listeners, "top+iostat+net");
}

TEST_F(GpuTest, RecordedTraceIsStoredWithoutLoss) {
  json gpu = Gpu0();
  gpu["metrics"]["power_w"] = {{"trace", "DCGMI - Power Usage"}};
  gpu["metrics"]["energy_mj"] = {{"trace", "DCGMI - Total Energy Consumption"}};
  UseScenario({{"gpus", {gpu}}, {"trace_file", kRecordedTrace}});
  Shell r = Trainbench("run -q -i 250ms -l nvml -- sleep 3");
  ASSERT_EQ(r.code, 0) << r.err;
  json trace = ReadRecordedTrace(kRecordedTrace);
  std::set<uint64_t> watts, joules;
  for (const json& v : trace["DCGMI - Power Usage"]) watts.insert(Bits(v.get<double>()));
  for (const json& v : trace["DCGMI - Total Energy Consumption"]) joules.insert(Bits(v.get<double>() / 1000));
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  std::vector<Point> power = Series(*store, run.id, "gpu.power.draw_watts", "gpu=0");
  std::vector<Point> energy = Series(*store, run.id, "gpu.energy.consumed_joules", "gpu=0");
  ASSERT_GE(power.size(), 10u);
  std::set<double> distinct;
  for (const Point& p : power) {
    EXPECT_EQ(watts.count(Bits(p.value)), 1u) << p.value << " is not a value of the trace";
    distinct.insert(p.value);
  }
  EXPECT_GE(distinct.size(), 3u);  // it moved through the trace
  for (const Point& p : energy) EXPECT_EQ(joules.count(Bits(p.value)), 1u) << p.value;
  // The run's energy is the counter's difference.
  std::optional<GpuEnergy> e = RunGpuEnergy(*store, run.id).value();
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(e->joules, energy.back().value - energy.front().value);
  EXPECT_FALSE(e->integrated);
}

TEST_F(GpuTest, DevicesChooseTheGpusAndTheChildSeesThem) {
  UseScenario({{"gpus", {Gpu0(), Gpu1()}}});
  Shell r = Trainbench(
      "run -i 200ms -l nvml --devices 1 -- sh -c 'echo visible=$CUDA_VISIBLE_DEVICES "
      "order=$CUDA_DEVICE_ORDER; "
      "sleep 0.5'");
  ASSERT_EQ(r.code, 0) << r.err;
  // NVML's index 1 is named by its UUID, which means the same GPU to CUDA.
  EXPECT_NE(r.out.find("visible=GPU-66666666-7777-8888-9999-000000000000 order=PCI_BUS_ID"),
            std::string::npos)
      << r.out;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.devices, "1");
  EXPECT_EQ(Labels(*store, run.id, "gpu.power.draw_watts"), (std::set<std::string>{"gpu=1"}));
  // A MIG UUID selects its GPU; a device that does not exist is refused before anything runs.
  Shell mig =
      Trainbench("run -q -n mig -l nvml --devices MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee -- sleep 0.3");
  ASSERT_EQ(mig.code, 0) << mig.err;
  EXPECT_EQ(Labels(*store, store->FindRun("mig")->id, "gpu.power.draw_watts"),
            (std::set<std::string>{"gpu=1"}));
  Shell bad = Trainbench("run -l nvml --devices 5 -- touch marker");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("device 5 is not a GPU this process may use"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "marker"));
  // The default listener set includes nvml where a GPU answers.
  Trainbench("run -q -n default -- true");
  EXPECT_EQ(store->FindRun("default")->listeners, "top+iostat+net+nvml");
}

TEST_F(GpuTest, ASlowNvmlCallDoesNotStallTheRun) {
  json gpu = Gpu0();
  gpu["call_delay_us"] = 20000;  // 20 ms a call: a GPU driver in trouble
  UseScenario({{"gpus", {gpu}}});
  Shell r = Trainbench("run -q -i 200ms -l top+nvml -- sleep 2");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kFinished);
  // About 13 calls of 20 ms make a tick longer than the interval: ticks are skipped, but
  // the run ends on time and every listener still samples.
  EXPECT_LT(run.end_ms - run.start_ms, 4000);
  EXPECT_GE(Series(*store, run.id, "host.memory.used_bytes").size(), 3u);
  EXPECT_GE(Series(*store, run.id, "gpu.power.draw_watts", "gpu=0").size(), 3u);
}

// A driver in deep trouble (200 ms a call, a second or more a tick): NVML ticks on its own
// thread, so the host listeners keep their samples, and the run says NVML is late.
TEST_F(GpuTest, AVerySlowNvmlStarvesNoOtherListenerAndIsReportedLate) {
  json gpu = Gpu0();
  gpu["call_delay_us"] = 200000;
  UseScenario({{"gpus", {gpu}}});
  Shell r = Trainbench("run -q -i 500ms -l top+nvml -- sleep 6");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  // About 12 ticks of top in 6 s (one thread for all once gave it 3).
  EXPECT_GE(Series(*store, run.id, "host.memory.used_bytes").size(), 10u);
  EXPECT_GE(Series(*store, run.id, "gpu.power.draw_watts", "gpu=0").size(), 1u);
  bool late = false;
  for (const EventRecord& e : store->ListEvents(run.id).value())
    late |= e.kind == "listener" && e.label.find("listener nvml is late") != std::string::npos;
  EXPECT_TRUE(late);
}

// The command's end is its own: with NVML taking 0.7 s a call (a tick of several calls takes
// far longer than the command's last second), the run ends when the command did, by the
// command's own clock, and its duration is the command's.
TEST_F(GpuTest, ASlowDriverHoldsNeitherTheRunsEndNorItsDuration) {
  json gpu = Gpu0();
  gpu["call_delay_us"] = 700000;
  UseScenario({{"gpus", {gpu}}});
  Shell r = Trainbench("run -i 200ms -l top+nvml -- sh -c 'date +%s%3N; sleep 2; date +%s%3N'");
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string_view> said;
  for (std::string_view line : Split(r.out, '\n')) {
    if (!Trim(line).empty()) said.push_back(Trim(line));
  }
  ASSERT_GE(said.size(), 2u) << r.out;
  int64_t command_start = ParseInt(said[said.size() - 2]).value();
  int64_t command_end = ParseInt(said.back()).value();
  RunRecord run = OnlyRun(*OpenStore());
  // The run begins before the command and ends after it, each within a moment: never by a
  // driver call's length.
  EXPECT_LE(run.start_ms, command_start);
  EXPECT_GE(run.end_ms, command_end);
  EXPECT_LT(run.end_ms - command_end, 1000) << "the end waited for the driver";
  EXPECT_LT((run.end_ms - run.start_ms) - (command_end - command_start), 1500);
}

TEST_F(GpuTest, DevicesCommandListsGpusMigAndListeners) {
  UseScenario({{"gpus", {Gpu0(), Gpu1()}}, {"driver_version", "550.54.15"}, {"cuda_driver_version", 12040}});
  Shell r = Trainbench("devices");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("550.54.15"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("simulated GPU"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("12.4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU-66666666-7777-8888-9999-000000000000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MIG-ffffffff-0000-1111-2222-333333333333"), std::string::npos) << r.out;
  // nvidia-smi is there and answers: the smi listener can work.
  env_ += " PATH=" TRAINBENCH_SIM_BIN ":$PATH";
  r = Trainbench("devices");
  EXPECT_NE(r.out.find("smi                    available ("), std::string::npos) << r.out;
  env_ = "TRAINBENCH_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1";
  r = Trainbench("devices");
  EXPECT_NE(r.out.find("nvml                   not available"), std::string::npos) << r.out;
  // nvidia-smi on PATH but no driver behind it (it exits 9 and says so): not available.
  env_ += " PATH=" TRAINBENCH_SIM_BIN ":$PATH";
  r = Trainbench("devices");
  EXPECT_NE(r.out.find("smi                    not available: nvidia-smi -L failed (NVIDIA-SMI has failed"),
            std::string::npos)
      << r.out;
}

namespace tb {
namespace {

class GpuToolTest : public GpuTest {
 protected:
  // The simulated nvidia-smi and dcgmi first on PATH.
  void UseTools(const json& scenario) {
    UseScenario(scenario);
    env_ += " PATH=" TRAINBENCH_SIM_BIN ":$PATH";
  }
};

TEST_F(GpuToolTest, SmiAndDcgmiReachTheStore) {
  UseTools({{"gpus", {Gpu0(), Gpu1()}}});
  Shell r = Trainbench("run -q -i 200ms -l smi+dcgmi -- sleep 2");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  for (auto [metric, labels, value] :
       {std::tuple{"gpu.power.draw_watts", "gpu=0,listener=smi", 251.5},
        std::tuple{"gpu.utilization.gpu_ratio", "gpu=0,listener=smi", 0.87},
        std::tuple{"gpu.memory.used_bytes", "gpu=0,listener=smi", 12288.0 * 1048576},
        std::tuple{"gpu.performance.state_index", "gpu=0,listener=smi", 2.0},
        std::tuple{"gpu.temperature.gpu_celsius", "gpu=1,listener=smi", 41.0},
        std::tuple{"gpu.power.draw_watts", "gpu=0,listener=dcgmi", 251.5},
        std::tuple{"gpu.energy.consumed_joules", "gpu=0,listener=dcgmi", 1000.0},
        std::tuple{"gpu.utilization.memory_ratio", "gpu=0,listener=dcgmi", 0.31}}) {
    std::vector<Point> points = Series(*store, run.id, metric, labels);
    ASSERT_GE(points.size(), 3u) << metric << " " << labels;
    EXPECT_EQ(points.back().value, value) << metric << " " << labels;
  }
  // Not supported is absent, not zero.
  EXPECT_TRUE(Series(*store, run.id, "gpu.energy.consumed_joules", "gpu=1,listener=dcgmi").empty());
  // The group trainbench created is gone.
  std::ifstream groups(dir_ / "scenario.json.dcgm-groups");
  std::string left;
  std::getline(groups, left);
  EXPECT_EQ(left, "");
  EXPECT_TRUE(store->ListEvents(run.id)->empty());
  std::string tags;
  for (const auto& [k, v] : TagsBesideTheCost(run)) tags += k + "=" + v;
  EXPECT_EQ(tags, std::string(kSimulatedGpuTag) + "=true");
}

TEST_F(GpuToolTest, DcgmiFallsBackWhenProfilingWatchesAreRefused) {
  json gpu = Gpu0();
  for (const char* key : {"gr_engine_active", "sm_active", "sm_occupancy", "tensor_active", "dram_active",
                          "fp64_active", "fp32_active", "fp16_active"}) {
    gpu["metrics"][key] = 0.25;
  }
  gpu["metrics"]["pcie_tx_bytes"] = 1000000;
  // An A10-class GPU watches every profiling field but FP64 (11 of them): radT's second set.
  UseTools({{"gpus", {gpu}}, {"dcgm_max_profiling_fields", 11}});
  ASSERT_EQ(Trainbench("run -q -n partial -i 200ms -l dcgmi -- sleep 2").code, 0);
  UseTools({{"gpus", {gpu}}, {"dcgm_max_profiling_fields", 0}});
  ASSERT_EQ(Trainbench("run -q -n basic -i 200ms -l dcgmi -- sleep 2").code, 0);
  auto store = OpenStore();
  RunRecord partial = store->FindRun("partial").value();
  RunRecord basic = store->FindRun("basic").value();
  // Everything but FP64 stays: SM, tensor, DRAM, FP32, FP16 active and PCIe bytes (1009).
  ASSERT_FALSE(Series(*store, partial.id, "gpu.sm.active_ratio", "gpu=0,listener=dcgmi").empty());
  EXPECT_EQ(Series(*store, partial.id, "gpu.sm.active_ratio", "gpu=0,listener=dcgmi").back().value, 0.25);
  EXPECT_FALSE(Series(*store, partial.id, "gpu.pipe.tensor_active_ratio", "gpu=0,listener=dcgmi").empty());
  EXPECT_FALSE(Series(*store, partial.id, "gpu.pipe.fp32_active_ratio", "gpu=0,listener=dcgmi").empty());
  EXPECT_FALSE(Series(*store, partial.id, "gpu.pipe.fp16_active_ratio", "gpu=0,listener=dcgmi").empty());
  EXPECT_FALSE(
      Series(*store, partial.id, "gpu.pcie.tx_total_bytes_per_second", "gpu=0,listener=dcgmi").empty());
  EXPECT_TRUE(Series(*store, partial.id, "gpu.pipe.fp64_active_ratio", "gpu=0,listener=dcgmi").empty());
  std::vector<EventRecord> events = store->ListEvents(partial.id).value();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].label.find("Error setting watches"), std::string::npos) << events[0].label;
  // No profiling at all: down to the basic fields, still sampling.
  EXPECT_TRUE(Series(*store, basic.id, "gpu.sm.active_ratio", "gpu=0,listener=dcgmi").empty());
  EXPECT_GE(Series(*store, basic.id, "gpu.power.draw_watts", "gpu=0,listener=dcgmi").size(), 3u);
  EXPECT_EQ(store->ListEvents(basic.id)->size(), 2u);  // one notice per step down
  // DCGM never fills its PCIe throughput fields (200/201): nothing pretends they exist.
  for (const RunRecord& r : {partial, basic})
    EXPECT_TRUE(Series(*store, r.id, "gpu.pcie.transmit_bytes_per_second", "gpu=0,listener=dcgmi").empty());
}

TEST_F(GpuToolTest, DcgmiWithoutHostEngineOrInstalledIsOneMessage) {
  UseTools({{"gpus", {Gpu0()}}, {"dcgm_host_engine", false}});
  Shell r = Trainbench("run -q -n noengine -i 200ms -l top+dcgmi -- sleep 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("host engine"), std::string::npos) << r.err;
  auto store = OpenStore();
  RunRecord run = store->FindRun("noengine").value();
  EXPECT_EQ(run.status, kFinished);
  EXPECT_EQ(store->ListEvents(run.id)->size(), 1u);
  EXPECT_FALSE(Series(*store, run.id, "host.memory.used_bytes").empty());
  env_ = "PATH=/usr/bin:/bin";  // a machine without dcgmi
  r = Trainbench("run -q -n missing -l dcgmi -- true");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("dcgmi is not installed"), std::string::npos) << r.err;
}

TEST_F(GpuToolTest, UnparseableLinesAreCountedNotFatal) {
  UseTools({{"gpus", {Gpu0()}}, {"tool_garbage", true}});
  Shell r = Trainbench("run -q -i 200ms -l smi+dcgmi -- sleep 1.5");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(store->ListEvents(run.id)->size(), 2u);  // one per tool
  EXPECT_EQ(Series(*store, run.id, "trainbench.listener.unparsed_lines", "listener=smi").back().value, 1);
  EXPECT_GE(Series(*store, run.id, "gpu.power.draw_watts", "gpu=0,listener=smi").size(), 3u);
}

TEST_F(GpuToolTest, RecordedTraceThroughDcgmiIsStoredWithoutLoss) {
  json gpu = Gpu0();
  gpu["metrics"]["power_w"] = {{"trace", "DCGMI - Power Usage"}};
  gpu["metrics"]["energy_mj"] = {{"trace", "DCGMI - Total Energy Consumption"}};
  gpu["metrics"]["sm_active"] = {{"trace", "DCGMI - SN Actuie"}};
  UseTools({{"gpus", {gpu}}, {"trace_file", kRecordedTrace}});
  Shell r = Trainbench("run -q -i 250ms -l dcgmi -- sleep 3");
  ASSERT_EQ(r.code, 0) << r.err;
  json trace = ReadRecordedTrace(kRecordedTrace);
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  for (auto [column, metric, scale] :
       {std::tuple{"DCGMI - Power Usage", "gpu.power.draw_watts", 1.0},
        std::tuple{"DCGMI - Total Energy Consumption", "gpu.energy.consumed_joules", 0.001},
        std::tuple{"DCGMI - SN Actuie", "gpu.sm.active_ratio", 1.0}}) {
    std::set<uint64_t> expected;
    for (const json& v : trace[column]) expected.insert(Bits(v.get<double>() * scale));
    std::vector<Point> points = Series(*store, run.id, metric, "gpu=0,listener=dcgmi");
    ASSERT_GE(points.size(), 8u) << metric;
    for (const Point& p : points) EXPECT_EQ(expected.count(Bits(p.value)), 1u) << metric << " " << p.value;
  }
}

}  // namespace
}  // namespace tb

namespace tb {
namespace {

// Two runs on one GPU (here: the run's burner and a stranger's process): the run's share is
// its SM utilization over all processes', and its energy is the GPU's power times that
// share, so the shares of everything on the GPU add up to the GPU's energy.
TEST_F(GpuTest, ARunSharingItsGpuGetsItsShareOfTheEnergyAndMemory) {
  json gpu = Gpu0();
  gpu["processes"].push_back(
      json::parse(R"({"match": "tb_stranger", "memory_used_mib": null, "sm_util_percent": 15})"));
  gpu["metrics"].erase("energy_mj");  // the counter grows with the power, as on hardware
  UseScenario({{"gpus", {gpu}}});
  auto stranger = StartStranger();
  Shell r = Trainbench("run -q -i 200ms -l nvml -- " + kBurner + " --duty 0.1 --seconds 2");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  std::vector<Point> share = Series(*store, run.id, "proc.gpu.share_ratio", "gpu=0");
  ASSERT_GE(share.size(), 5u);
  // On a loaded machine the first tick may come before the burner reached the GPU: then
  // its share is below 45 of 45 + 15 (at most one such tick). Then 0.75 while the run
  // computes; 0 once its process has left the GPU (the last tick).
  size_t joined = share[0].value < 0.75 ? 1 : 0;
  size_t computing = joined;
  while (computing < share.size() && share[computing].value == 0.75) ++computing;
  EXPECT_GE(computing - joined, 5u);
  for (size_t i = computing; i < share.size(); ++i) EXPECT_EQ(share[i].value, 0) << i;
  // The run's energy against the GPU's own counter over the same span: its increase times
  // the run's share (0.75 while it computes, 0 on the last tick).
  std::vector<Point> energy = Series(*store, run.id, "proc.gpu.energy_joules", "gpu=0");
  std::vector<Point> counter = Series(*store, run.id, "gpu.energy.consumed_joules", "gpu=0");
  ASSERT_GE(energy.size(), 2u);
  ASSERT_GE(counter.size(), 2u);
  EXPECT_EQ(energy.front().value, 0);
  double increase = counter.back().value - counter.front().value;  // the first tick counts none
  EXPECT_GT(increase, 251.5 * 1.5);
  EXPECT_NEAR(energy.back().value, 0.75 * increase, 0.08 * increase);
  // The stranger's memory is not the run's, and "not available" is no value at all.
  EXPECT_EQ(Series(*store, run.id, "proc.gpu.tree_memory_used_bytes", "gpu=0").back().value,
            2048.0 * 1048576);
  for (const SeriesInfo& s : store->ListSeries(run.id).value()) {
    for (const Point& p : ReadSeriesPoints(*store, s.id).value()) EXPECT_LT(p.value, 1e15) << s.metric;
  }
  // The report's energy is the run's share, not the whole GPU's.
  Result<RunAnalysis> analysis = AnalyzeStoredRun(*store, run);
  ASSERT_TRUE(analysis.ok());
  ASSERT_TRUE(analysis->energy_joules.has_value());
  double run_seconds = static_cast<double>(run.end_ms - run.start_ms) / 1000;
  EXPECT_LT(*analysis->energy_joules, 0.8 * 251.5 * run_seconds);
  EXPECT_GT(*analysis->energy_joules, 0.5 * 251.5 * run_seconds);
  // `show` gives the device total and the run's share beside it.
  std::optional<GpuEnergy> e = RunGpuEnergy(*store, run.id).value();
  ASSERT_TRUE(e.has_value() && e->run_share_joules.has_value());
  EXPECT_NEAR(*e->run_share_joules / e->joules, 0.75, 0.1);
  Shell show = Trainbench("show " + run.id);
  EXPECT_NE(show.out.find("GPU energy "), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("run energy "), std::string::npos) << show.out;
}

// On the H200 a run collocated with another was listed on the GPU with its CUDA context
// seconds before its first kernel, so its first per-process sample read 0 %; fetched again
// only 10 s later, the whole short run was given no share. A newcomer is asked about again
// after 1, 2, 4 and 8 s, so the run's share follows its real activity within seconds.
TEST_F(GpuTest, ARunThatStartsComputingAfterItJoinedTheGpuGetsItsShareWithinSeconds) {
  json gpu = Gpu0();
  gpu["processes"][0]["idle_first_s"] = 1.5;
  gpu["processes"].push_back(
      json::parse(R"({"match": "tb_stranger", "memory_used_mib": 512, "sm_util_percent": 15})"));
  UseScenario({{"gpus", {gpu}}});
  auto stranger = StartStranger();
  Shell r = Trainbench("run -q -i 200ms -l nvml -- " + kBurner + " --duty 0.1 --seconds 6");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  std::vector<Point> share = Series(*store, run.id, "proc.gpu.share_ratio", "gpu=0");
  ASSERT_GE(share.size(), 20u);
  EXPECT_EQ(share.front().value, 0) << "its first sample reads 0 %, as the driver said";
  // 45 of 45 + 15 once it computes: reached within 4 s of the run's start, and kept to the
  // end (its last tick aside, when the process has left the GPU).
  auto first = std::find_if(share.begin(), share.end(), [](const Point& p) { return p.value == 0.75; });
  ASSERT_NE(first, share.end()) << "the run never got its share";
  EXPECT_LE(first->time_ms - share.front().time_ms, 4000);
  for (auto it = first; it + 1 < share.end(); ++it) EXPECT_EQ(it->value, 0.75) << it->time_ms;
}

// In a container with its own PID namespace NVML still lists host PIDs, which name no
// process here: the run's share is not guessed (no 0 share, no 0 energy), and the user is
// told once why and what to do.
TEST_F(GpuTest, InAContainerNvmlsHostPidsGiveNoShareAndOneExplanation) {
  UseScenario({{"gpus", {Gpu0()}}, {"host_pid_offset", 3000000}});
  Shell r = Trainbench("run -q -i 200ms -l nvml -- " + kBurner + " --duty 0.1 --seconds 2");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  for (const char* metric :
       {"proc.gpu.share_ratio", "proc.gpu.energy_joules", "proc.gpu.tree_memory_used_bytes"})
    EXPECT_TRUE(Labels(*store, run.id, metric).empty()) << metric;
  EXPECT_FALSE(Labels(*store, run.id, "gpu.power.draw_watts").empty());  // the device is still watched
  std::vector<EventRecord> events = store->ListEvents(run.id).value();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].label.find("--pid=host"), std::string::npos) << events[0].label;
}

// A node whose cgroup hides a GPU: NVML counts it but may not open it.
TEST_F(GpuTest, AGpuHiddenFromTheRunIsSkippedWithOneMessage) {
  json hidden = Gpu0();
  hidden["no_permission"] = true;
  json visible = Gpu0();
  visible["uuid"] = "GPU-99999999-2222-3333-4444-555555555555";
  UseScenario({{"gpus", {hidden, visible}}});
  Shell devices = Trainbench("devices");
  ASSERT_EQ(devices.code, 0) << devices.err;
  EXPECT_NE(devices.out.find("GPU 0 cannot be opened: Insufficient Permissions"), std::string::npos)
      << devices.out;
  EXPECT_NE(devices.out.find("GPU-99999999"), std::string::npos) << devices.out;
  Shell r = Trainbench("run -q -i 200ms -l nvml -- sleep 1");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(Labels(*store, run.id, "gpu.power.draw_watts"), (std::set<std::string>{"gpu=1"}));
  std::vector<EventRecord> events = store->ListEvents(run.id).value();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].label.find("Insufficient Permissions"), std::string::npos) << events[0].label;
}

// NVIDIA: nvmlDeviceGetPcieThroughput measures over 20 ms per call. Eight GPUs read on the
// tick would take 320 ms, longer than a 100 ms interval; off the tick, every tick is on time.
TEST_F(GpuTest, SlowPcieCallsOnEightGpusDoNotDelayTheTicks) {
  json gpus = json::array();
  for (int i = 0; i < 8; ++i) {
    json g = Gpu0();
    g["uuid"] = "GPU-0000000" + std::to_string(i) + "-2222-3333-4444-555555555555";
    g["pcie_call_ms"] = 20;
    g.erase("processes");
    gpus.push_back(g);
  }
  UseScenario({{"gpus", gpus}});
  Shell r = Trainbench("run -q -i 100ms -l nvml -- sleep 2");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  for (int i = 0; i < 8; ++i) {
    std::string gpu = "gpu=" + std::to_string(i);
    EXPECT_GE(Series(*store, run.id, "gpu.power.draw_watts", gpu).size(), 15u) << gpu;  // of about 20
    EXPECT_FALSE(Series(*store, run.id, "gpu.pcie.receive_bytes_per_second", gpu).empty()) << gpu;
  }
}

// radT's default listeners have no nvml: a run on a MIG device with smi and dcgmi must still
// watch only its GPU and its GPU instance, and its energy is that one GPU's.
TEST_F(GpuToolTest, AMigRunWithSmiAndDcgmiWatchesOnlyItsGpuAndInstance) {
  json gpu1 = Gpu1();
  gpu1["metrics"]["sm_active"] = 0.7;
  UseTools({{"gpus", {Gpu0(), gpu1}}});
  Shell r = Trainbench(
      "run -q -i 200ms -l smi+dcgmi --devices MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee -- sleep 2");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(Labels(*store, run.id, "gpu.power.draw_watts"),
            (std::set<std::string>{"gpu=1,listener=dcgmi", "gpu=1,listener=smi"}));
  // DCGM's GPU-instance entity: a 3g.20gb instance does 3/7 of the GPU's SM activity here.
  std::vector<Point> sm =
      Series(*store, run.id, "gpu.sm.active_ratio", "gpu=1,gpu_instance=1,listener=dcgmi");
  ASSERT_FALSE(sm.empty());
  EXPECT_NEAR(sm.back().value, 0.3, 0.001);
  // nvidia-smi shows [N/A] utilization in MIG mode: absent, not zero.
  EXPECT_TRUE(Series(*store, run.id, "gpu.utilization.gpu_ratio", "gpu=1,listener=smi").empty());
  std::optional<GpuEnergy> e = RunGpuEnergy(*store, run.id).value();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->gpus, 1);
}

}  // namespace
}  // namespace tb

// DGX Spark's GB10 has no memory of its own: NVML answers NOT_SUPPORTED to both memory calls
// and nvidia-smi prints [N/A] (as public reports from the hardware show), while the process
// list still gives each process's memory. The run is told once; the GPU's memory used is its
// processes', its total the system's (/proc/meminfo), both checked against those sources.
TEST_F(GpuTest, AUnifiedMemoryGpuReportsItsProcessesMemoryAndTheSystemsTotal) {
  json gb10 = json::parse(R"({"name": "NVIDIA GB10", "uuid": "GPU-2dee1e25-b3b5-007e-2b55-79f2d0f2ebe5",
    "pci_bus_id": "0000000F:01:00.0", "memory_total_mib": 0, "memory_reserved_mib": 0,
    "metrics": {"util_gpu_pct": 90, "util_mem_pct": 0, "power_w": 40, "temp_c": 36},
    "unsupported": ["mem_used_mib"],
    "processes": [{"match": "tb_burner", "memory_used_mib": 6590, "sm_util_percent": 90}]})");
  UseScenario({{"gpus", {gb10}}});
  Shell smi =
      Run(env_ + " " +
          TRAINBENCH_SIM_BIN "/nvidia-smi --query-gpu=memory.total,memory.used --format=csv,noheader");
  EXPECT_EQ(smi.out, "[N/A], [N/A]\n");
  Shell r = Trainbench("run -q -i 250ms -l nvml -- " + kBurner + " --duty 0.05 --seconds 1.5");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  std::vector<EventRecord> events = store->ListEvents(run.id).value();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].label.find("shares the system's memory"), std::string::npos) << events[0].label;
  std::vector<Point> used = Series(*store, run.id, "gpu.memory.used_bytes", "gpu=0");
  ASSERT_FALSE(used.empty());
  // The burner's memory while it ran (the last tick may come after it left the GPU).
  double most = 0;
  for (const Point& p : used) most = std::max(most, p.value);
  EXPECT_EQ(most, 6590.0 * 1048576);
  std::vector<Point> total = Series(*store, run.id, "gpu.memory.total_bytes", "gpu=0");
  ASSERT_FALSE(total.empty());
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  meminfo >> key >> kib;
  EXPECT_EQ(key, "MemTotal:");
  EXPECT_EQ(total.back().value, kib * 1024);
}

}  // namespace
}  // namespace tb
