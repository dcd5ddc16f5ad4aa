// The jetson listener on a fake /sys: an AGX Orin's INA3221 channels (hwmon: label, mV, mA)
// and its GPU's devfreq node, an older board's iio channels (mW), and nvpmodel's answer.
#include "collect/jetson.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "collect/process_tree.h"
#include "tests/helpers/fake_host.h"

namespace tb {
namespace {

class JetsonTest : public FakeHostTest {
 protected:
  // An AGX Orin: three rails on one INA3221, the fourth channel unconnected, the seventh the
  // sum of shunt voltages; the GPU's devfreq node.
  void Orin(int gpu_mv, int gpu_ma) {
    std::string hw = "sys/bus/i2c/devices/1-0040/hwmon/hwmon3/";
    Write(hw + "in1_label", "VDD_GPU_SOC");
    Write(hw + "in1_input", std::to_string(gpu_mv));
    Write(hw + "curr1_input", std::to_string(gpu_ma));
    Write(hw + "in2_label", "VDD_CPU_CV");
    Write(hw + "in2_input", "5000");
    Write(hw + "curr2_input", "600");
    Write(hw + "in3_label", "VIN_SYS_5V0");
    Write(hw + "in3_input", "5000");
    Write(hw + "curr3_input", "1100");
    Write(hw + "in4_label", "NC");
    Write(hw + "in4_input", "0");
    Write(hw + "curr4_input", "0");
    Write(hw + "in7_label", "sum of shunt voltages");
    Write(hw + "in7_input", "80");
    Write(hw + "curr7_input", "0");
    Write("sys/class/devfreq/17000000.ga10b/device/load", "512");
    Write("sys/class/devfreq/17000000.ga10b/cur_freq", "1300500000");
    Write("sys/class/devfreq/3100000.cpufreq/cur_freq", "1");
    // Two cores, the second offline; the EMC's clock from the BPMP's debugfs.
    Write("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "2201600");
    Write("sys/devices/system/cpu/cpu1/online", "0");
    Write("sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", "729600");
    Write("sys/kernel/debug/bpmp/debug/clk/emc/rate", "3199000000");
  }
};

TEST_F(JetsonTest, TheRailsThatAreConnectedAreFoundAndTheGpusDevfreqNode) {
  Orin(5000, 1000);
  JetsonBoard board = FindJetsonBoard(HostFiles(root_.string()));
  std::vector<std::string> names;
  for (const JetsonRail& r : board.rails) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0"}));
  EXPECT_EQ(board.gpu_devfreq, "/sys/class/devfreq/17000000.ga10b");
  EXPECT_NE(FindJetsonBoard(HostFiles((root_ / "none").string())).absent.find("no Jetson here"),
            std::string::npos);
}

// Two ticks a second apart: power from mV x mA, the board the sum of its rails (an Orin has
// no VDD_IN), energy the trapezoid between the ticks, the GPU's part an equal share of two runs.
TEST_F(JetsonTest, RailsAreWattsTheBoardIsTheirSumAndEnergyIsPowerIntegrated) {
  Orin(5000, 1000);
  std::unique_ptr<Collector> jetson = MakeJetsonCollector(HostFiles(root_.string()), 2);
  Write("proc/4242/stat", "4242 (python3) S 1 4242 4242 0 -1 0 0 0 0 0 1 0 0 0 20 0 1 0 100 1000 10 0");
  ProcessTree tree(HostFiles(root_.string()), 4242);
  CollectingSink sink;
  Tick tick{.time_ms = 1000, .monotonic_ns = 1'000'000'000, .tree = &tree};
  ASSERT_TRUE(jetson->Collect(tick, sink).ok());
  EXPECT_DOUBLE_EQ(sink.last.at("host.rail.power_watts{rail=VDD_GPU_SOC}"), 5);
  EXPECT_DOUBLE_EQ(sink.last.at("host.power.draw_watts{domain=board}"), 5 + 3 + 5.5);
  EXPECT_DOUBLE_EQ(sink.last.at("gpu.utilization.gpu_ratio{gpu=0}"), 0.512);
  EXPECT_DOUBLE_EQ(sink.last.at("gpu.clock.sm_hertz{gpu=0}"), 1300500000);
  EXPECT_EQ(sink.last.count("host.rail.power_watts{rail=NC}"), 0u);
  EXPECT_DOUBLE_EQ(sink.last.at("host.cpu.clock_hertz{cpu=0}"), 2201600000);
  EXPECT_EQ(sink.last.count("host.cpu.clock_hertz{cpu=1}"), 0u) << "an offline core has no clock";
  EXPECT_DOUBLE_EQ(sink.last.at("gpu.clock.memory_hertz{gpu=0}"), 3199000000);
  Orin(5000, 3000);  // the GPU rail from 5 W to 15 W
  tick.time_ms = 2000;
  tick.monotonic_ns = 2'000'000'000;
  ASSERT_TRUE(jetson->Collect(tick, sink).ok());
  EXPECT_DOUBLE_EQ(sink.last.at("gpu.power.draw_watts{gpu=0}"), 15);
  EXPECT_DOUBLE_EQ(sink.last.at("host.energy.consumed_joules{domain=board}"), (13.5 + 23.5) / 2);
  EXPECT_DOUBLE_EQ(sink.last.at("proc.gpu.energy_joules{gpu=0}"), (5 + 15) / 2.0 / 2);
  EXPECT_DOUBLE_EQ(sink.last.at("proc.gpu.share_ratio{gpu=0}"), 0.5);
}

TEST_F(JetsonTest, AnOlderBoardsIioChannelsGiveMilliwattsAndVddInIsTheBoard) {
  std::string iio = "sys/bus/i2c/devices/0-0040/iio:device0/";
  Write(iio + "rail_name_0", "VDD_IN");
  Write(iio + "in_power0_input", "4200");
  Write(iio + "rail_name_1", "VDD_GPU");
  Write(iio + "in_power1_input", "1500");
  std::unique_ptr<Collector> jetson = MakeJetsonCollector(HostFiles(root_.string()), 1);
  CollectingSink sink;
  ASSERT_TRUE(jetson->Collect(Tick{.time_ms = 1, .monotonic_ns = 1}, sink).ok());
  EXPECT_DOUBLE_EQ(sink.last.at("host.power.draw_watts{domain=board}"), 4.2);
  EXPECT_DOUBLE_EQ(sink.last.at("gpu.power.draw_watts{gpu=0}"), 1.5);
}

TEST(NvpmodelTest, ThePowerModesNameAndNumberWarningsAside) {
  auto mode = ParseNvpmodelQuery("NVPM WARN: fan mode is not set!\nNV Power Mode: MAXN\n0\n");
  ASSERT_TRUE(mode);
  EXPECT_EQ(mode->first, "MAXN");
  EXPECT_EQ(mode->second, 0);
  EXPECT_EQ(ParseNvpmodelQuery("NV Power Mode: 15W\n2")->first, "15W");
  EXPECT_FALSE(ParseNvpmodelQuery("nvpmodel: command not found"));
}

}  // namespace
}  // namespace tb
