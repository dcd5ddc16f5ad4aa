#include "collect/amd_partition_activity.h"

#include <gtest/gtest.h>

#include <cstring>

namespace tb {
namespace {

// A table as the library fills it for an MI300X in CPX mode: every field at its type's
// largest value (not filled) but 8 partitions of one XCC each.
amdsmi::GpuMetrics Cpx(uint64_t cycles, uint64_t partition3_acc, uint32_t partition3_now) {
  amdsmi::GpuMetrics m{};
  std::memset(&m, 0xFF, sizeof(m));
  m.num_partition = 8;
  m.accumulation_counter = cycles;
  for (auto& x : m.xcp_stats) x.gfx_busy_inst[0] = 0, x.gfx_busy_acc[0] = 0;
  m.xcp_stats[3].gfx_busy_inst[0] = partition3_now;
  m.xcp_stats[3].gfx_busy_acc[0] = partition3_acc;
  return m;
}

// Between readings the partition's activity is counted from its accumulator, whatever the
// instantaneous figure says at that moment; the first reading can only give the instant's.
TEST(PartitionActivity, CountedBetweenReadingsFromTheAccumulators) {
  PartitionActivity a;
  EXPECT_EQ(a.Read(Cpx(1000, 5000, 90), 3), 0.9);
  // 1000 cycles later, 40 000 more %-cycles: busy 40 % of the time; the instant says 100.
  EXPECT_DOUBLE_EQ(a.Read(Cpx(2000, 45000, 100), 3).value(), 0.4);
  PartitionActivity idle;
  idle.Read(Cpx(1000, 0, 0), 0);
  EXPECT_EQ(idle.Read(Cpx(1500, 0, 0), 0), 0.0);
}

// An SPX GPU's one partition has 8 XCCs: their mean; the accumulators summed over them.
TEST(PartitionActivity, APartitionOfSeveralXccsIsTheirMean) {
  amdsmi::GpuMetrics m{};
  std::memset(&m, 0xFF, sizeof(m));
  m.num_partition = 1;
  m.accumulation_counter = 100;
  for (int i = 0; i < 8; ++i)
    m.xcp_stats[0].gfx_busy_inst[i] = i < 4 ? 100 : 0, m.xcp_stats[0].gfx_busy_acc[i] = 0;
  PartitionActivity a;
  EXPECT_EQ(a.Read(m, 0), 0.5);
  m.accumulation_counter = 200;
  for (int i = 0; i < 8; ++i) m.xcp_stats[0].gfx_busy_acc[i] = i < 2 ? 100 * 100 : 0;
  EXPECT_EQ(a.Read(m, 0), 0.25);
}

// What the table does not give is no figure: no partitions (an MI200's table), a partition
// past them, every XCC unfilled.
TEST(PartitionActivity, WhatTheTableDoesNotFillIsNoFigure) {
  amdsmi::GpuMetrics m{};
  std::memset(&m, 0xFF, sizeof(m));
  PartitionActivity a;
  EXPECT_FALSE(a.Read(m, 0).has_value());
  m.num_partition = 2;
  EXPECT_FALSE(a.Read(m, 0).has_value());
  EXPECT_FALSE(a.Read(Cpx(10, 0, 0), 8).has_value());
}

}  // namespace
}  // namespace tb
