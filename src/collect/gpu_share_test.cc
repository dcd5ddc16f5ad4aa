#include "collect/gpu_share.h"

#include <gtest/gtest.h>

namespace tb {
namespace {

// Under MPS NVML measures only the server: each client is an equal part of it, and the
// server itself is no party (the H200 gave each MPS run 1/3 while idle, 0 while computing).
TEST(GpuShare, MpsClientsSplitTheServersActivityEqually) {
  std::vector<GpuParty> two_clients = {{true, true, std::nullopt}, {false, true, std::nullopt}};
  GpuShare busy = RunShareOfGpu(two_clients, 90.0, /*measured=*/true, 2);
  EXPECT_DOUBLE_EQ(busy.share, 0.5);
  EXPECT_DOUBLE_EQ(*busy.tree_percent, 45);
  EXPECT_DOUBLE_EQ(RunShareOfGpu(two_clients, std::nullopt, /*measured=*/false, 2).share, 0.5);
  // A client beside a process NVML measures on its own.
  std::vector<GpuParty> mixed = {{true, true, std::nullopt}, {false, false, 30.0}};
  EXPECT_DOUBLE_EQ(RunShareOfGpu(mixed, 90.0, true, 1).share, 0.75);
}

TEST(GpuShare, PlainSharingAloneIdleAndNobodyOnTheGpu) {
  std::vector<GpuParty> shared = {{true, false, 45.0}, {false, false, 15.0}};
  EXPECT_DOUBLE_EQ(RunShareOfGpu(shared, std::nullopt, true, 1).share, 0.75);
  std::vector<GpuParty> idle = {{true, false, 0.0}, {false, false, 0.0}, {false, false, 0.0}};
  EXPECT_DOUBLE_EQ(RunShareOfGpu(idle, std::nullopt, true, 1).share, 1.0 / 3);
  std::vector<GpuParty> alone = {{true, false, std::nullopt}, {true, false, std::nullopt}};
  EXPECT_DOUBLE_EQ(RunShareOfGpu(alone, std::nullopt, false, 1).share, 1);
  EXPECT_FALSE(RunShareOfGpu(alone, std::nullopt, false, 1).tree_percent.has_value());
  EXPECT_DOUBLE_EQ(RunShareOfGpu({}, std::nullopt, false, 2).share, 0.5) << "two runs still starting";
}

// The counter's increase is split by the run's power-weighted share since the last
// reading: two runs with complementary shares get the whole increase between them.
TEST(RunEnergyAccount, TheCountersIncreaseIsSplitByPowerWeightedShare) {
  RunEnergyAccount a, b;
  EXPECT_EQ(a.Counter(1000), 0);
  EXPECT_EQ(b.Counter(1000), 0);
  int64_t t = 1'000'000'000;
  a.Tick(100.0, t, 1), b.Tick(100.0, t, 0);
  a.Tick(100.0, t + 1'000'000'000, 1), b.Tick(100.0, t + 1'000'000'000, 0);      // 100 J: a's
  a.Tick(300.0, t + 2'000'000'000, 0.5), b.Tick(300.0, t + 2'000'000'000, 0.5);  // 300 J: half each
  double ja = a.Counter(1440), jb = b.Counter(1440);  // the counter says 440 J, not 400
  EXPECT_DOUBLE_EQ(ja + jb, 440);
  EXPECT_DOUBLE_EQ(ja, 440 * 250.0 / 400);
  // Without a counter: power times share.
  RunEnergyAccount c;
  c.Tick(200.0, t, 0.25);
  c.Tick(200.0, t + 2'000'000'000, 0.25);
  EXPECT_DOUBLE_EQ(c.Integrated(), 100);
}

}  // namespace
}  // namespace tb
