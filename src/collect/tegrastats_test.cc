// tegrastats lines as Jetson boards print them (testdata/jetson/, sources in its README).
#include "collect/tegrastats.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/read_file.h"

namespace tb {
namespace {

TegrastatsLine Parse(const std::string& file) {
  std::string text, why;
  EXPECT_TRUE(ReadWholeFile(std::string(TRAINBENCH_TESTDATA) + "/jetson/" + file, &text, &why)) << why;
  TegrastatsLine line;
  EXPECT_TRUE(ParseTegrastatsLine(text.substr(0, text.find('\n')), line)) << file;
  return line;
}

std::map<std::string, double> Rails(const TegrastatsLine& l) {
  return {l.rails_mw.begin(), l.rails_mw.end()};
}

TEST(TegrastatsTest, OrinUnderJetPack7GivesEachGpcsFrequencyAndThreeValuesPerRail) {
  TegrastatsLine l = Parse("tegrastats-orin-jp7.txt");
  EXPECT_EQ(l.ram_used_mb, 20642);
  EXPECT_EQ(l.ram_total_mb, 62817);
  EXPECT_EQ(l.emc_load_percent, 3);
  EXPECT_EQ(l.emc_mhz, 3199);
  EXPECT_EQ(l.gpu_load_percent, 12);
  EXPECT_EQ(l.gpu_mhz, 1300);
  ASSERT_EQ(l.cpu_mhz.size(), 12u);
  EXPECT_EQ(l.cpu_mhz[11], 2201);
  EXPECT_EQ(Rails(l), (std::map<std::string, double>{
                          {"VDD_GPU_SOC", 5139}, {"VDD_CPU_CV", 3268}, {"VIN_SYS_5V0", 5500}}));
  // No VDD_IN on an AGX Orin: the board is the sum of its rails; the GPU shares its rail.
  EXPECT_EQ(BoardPowerMilliwatts(l.rails_mw), 5139 + 3268 + 5500);
  ASSERT_NE(GpuRail(l.rails_mw), nullptr);
  EXPECT_EQ(GpuRail(l.rails_mw)->first, "VDD_GPU_SOC");
}

TEST(TegrastatsTest, OrinUnderJetPack5LeavesOutUnconnectedRails) {
  TegrastatsLine l = Parse("tegrastats-orin-jp5-rails.txt");
  EXPECT_EQ(l.gpu_load_percent, 0);
  EXPECT_EQ(
      Rails(l),
      (std::map<std::string, double>{
          {"VDD_GPU_SOC", 2390}, {"VDD_CPU_CV", 796}, {"VIN_SYS_5V0", 3522}, {"VDDQ_VDD2_1V8AO", 301}}));
}

TEST(TegrastatsTest, XavierPrintsBareMilliwattsAndSwapIsNoRail) {
  TegrastatsLine l = Parse("tegrastats-xavier.txt");
  EXPECT_EQ(l.gpu_load_percent, 37);
  EXPECT_EQ(l.gpu_mhz, 1377);
  std::map<std::string, double> rails = Rails(l);
  EXPECT_EQ(rails.count("SWAP"), 0u);
  EXPECT_EQ(rails.at("GPU"), 1155);
  EXPECT_EQ(rails.at("SYS5V"), 2692);
  EXPECT_EQ(GpuRail(l.rails_mw)->first, "GPU");
}

TEST(TegrastatsTest, Tx2sBoardInputIsItsVddInRailAndCoresOffAreNoFigures) {
  TegrastatsLine l = Parse("tegrastats-tx2.txt");
  EXPECT_EQ(BoardPowerMilliwatts(l.rails_mw), 1383);
  EXPECT_EQ(GpuRail(l.rails_mw)->second, 76);
  EXPECT_EQ(l.gpu_mhz, 114);
  // CPU [2%@345,off,off,1%@345,0%@345,0%@345]: the Denver cores off, no clock for them.
  EXPECT_EQ(l.cpu_mhz, (std::vector<std::optional<double>>{345, std::nullopt, std::nullopt, 345, 345, 345}));
  EXPECT_EQ(l.emc_mhz, 1600);
  EXPECT_EQ(l.emc_load_percent, 0);
}

TEST(TegrastatsTest, ThorPrintsNoGpuLoadOnlyFrequencies) {
  TegrastatsLine l = Parse("tegrastats-thor.txt");
  EXPECT_FALSE(l.gpu_load_percent.has_value());
  EXPECT_EQ(l.gpu_mhz, 1000);
  EXPECT_EQ(GpuRail(l.rails_mw)->first, "VDD_GPU");
}

TEST(TegrastatsTest, OtherLinesAreNotTegrastats) {
  TegrastatsLine l;
  EXPECT_FALSE(ParseTegrastatsLine("tegrastats: command not found", l));
  EXPECT_FALSE(ParseTegrastatsLine("", l));
}

}  // namespace
}  // namespace tb
