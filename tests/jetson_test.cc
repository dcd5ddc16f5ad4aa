// A Jetson end to end: the real trainbench binary with `tegrastats` and `nvpmodel` on PATH
// answering as a board's do (recorded lines of testdata/jetson/), and with a board's /sys
// under --proc-root for the jetson listener.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <utility>

#include "tests/helpers/cli_fixture.h"

namespace tb {
namespace {

class JetsonRunTest : public CliTest {
 protected:
  // A bin/ with tegrastats printing `line_file` every --interval, and nvpmodel -q.
  void FakeBoardTools(const std::string& line_file) {
    fs::create_directories(dir_ / "bin");
    std::ofstream(dir_ / "bin/tegrastats")
        << "#!/bin/sh\nms=1000\n[ \"$1\" = --interval ] && ms=$2\n"
        << "while :; do cat " << line_file << "; sleep $(awk \"BEGIN{print $ms/1000}\"); done\n";
    std::ofstream(dir_ / "bin/nvpmodel")
        << "#!/bin/sh\n[ \"$1\" = -q ] || exit 1\n"
        << "echo 'NVPM WARN: fan mode is not set!'\necho 'NV Power Mode: 15W'\necho 2\n";
    fs::permissions(dir_ / "bin/tegrastats", fs::perms::owner_all);
    fs::permissions(dir_ / "bin/nvpmodel", fs::perms::owner_all);
    env_ = "PATH=" + (dir_ / "bin").string() + ":$PATH";
  }
};

TEST_F(JetsonRunTest, TegrastatsRailsAndThePowerModeReachTheRun) {
  FakeBoardTools(std::string(TRAINBENCH_TESTDATA) + "/jetson/tegrastats-orin-jp7.txt");
  Shell r = Trainbench("run -q -i 250ms -l tegrastats -- " + kBurner + " --duty 0.05 --seconds 2");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  std::map<std::string, std::string> params(run.params.begin(), run.params.end());
  EXPECT_EQ(params["jetson.power_mode"], "15W");
  EXPECT_EQ(params["jetson.power_mode_id"], "2");
  EXPECT_EQ(Series(*store, run.id, "host.rail.power_watts", "rail=VDD_GPU_SOC").back().value, 5.139);
  EXPECT_EQ(Series(*store, run.id, "host.power.draw_watts", "domain=board").back().value, 13.907);
  EXPECT_EQ(Series(*store, run.id, "gpu.utilization.gpu_ratio", "gpu=0").back().value, 0.12);
  // EMC_FREQ 3%@3199: the memory controller the GPU shares; CPU [23%@2201,...]: each core.
  EXPECT_EQ(Series(*store, run.id, "gpu.clock.memory_hertz", "gpu=0").back().value, 3199e6);
  EXPECT_EQ(Series(*store, run.id, "gpu.utilization.memory_ratio", "gpu=0").back().value, 0.03);
  EXPECT_EQ(Series(*store, run.id, "host.cpu.clock_hertz", "cpu=11").back().value, 2201e6);
  // Energy: the GPU rail's 5.139 W over the time between the first and last readings.
  std::vector<Point> energy = Series(*store, run.id, "proc.gpu.energy_joules", "gpu=0");
  ASSERT_GE(energy.size(), 3u);
  double seconds = static_cast<double>(energy.back().time_ms - energy.front().time_ms) / 1000;
  EXPECT_NEAR(energy.back().value, 5.139 * seconds, 0.01 * seconds + 0.01);
  Shell show = Trainbench("show " + run.id);
  EXPECT_NE(show.out.find("jetson.power_mode = 15W"), std::string::npos) << show.out;
}

// `devices` on an Orin's /sys: its rails as they read now (mV x mA), the GPU's devfreq node,
// the power mode nvpmodel gives, and the jetson and tegrastats listeners available.
TEST_F(JetsonRunTest, DevicesListsTheBoardsRailsAndPowerMode) {
  FakeBoardTools(std::string(TRAINBENCH_TESTDATA) + "/jetson/tegrastats-orin-jp7.txt");
  fs::path hw = dir_ / "root/sys/bus/i2c/devices/1-0040/hwmon/hwmon3";
  fs::create_directories(hw);
  fs::create_directories(dir_ / "root/sys/class/devfreq/17000000.ga10b/device");
  for (auto [file, text] : {std::pair{"in1_label", "VDD_GPU_SOC"},
                            {"in1_input", "5000"},
                            {"curr1_input", "1028"},
                            {"in2_label", "NC"},
                            {"in2_input", "0"},
                            {"curr2_input", "0"}})
    std::ofstream(hw / file) << text << "\n";
  Shell r = Trainbench("devices --proc-root " + (dir_ / "root").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("VDD_GPU_SOC        5.14 W"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("NC "), std::string::npos) << "an unconnected channel is no rail\n" << r.out;
  EXPECT_NE(r.out.find("GPU devfreq    /sys/class/devfreq/17000000.ga10b"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("power mode     15W (2)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  jetson                 available"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  tegrastats             available ("), std::string::npos) << r.out;
  Shell none = Trainbench("devices --proc-root " + (dir_ / "nothing").string());
  EXPECT_NE(none.out.find("  jetson                 not available: no Jetson here"), std::string::npos)
      << none.out;
}

TEST_F(JetsonRunTest, OnAMachineWithoutRailsTheJetsonListenerSaysSo) {
  Shell r = Trainbench("run -q -l jetson -- true");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("no Jetson here"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tb
