// Parsers on literal text captured from real machines (Debian 12, kernel 6.1).
#include "collect/proc_parsers.h"

#include <gtest/gtest.h>

namespace tb {
namespace {

TEST(ProcStat, AggregateAndPerCoreLines) {
  const char* text =
      "cpu  12078 0 4964 126887 521 0 178 1058 0 0\n"
      "cpu0 6000 0 2500 63000 300 0 100 500 0 0\n"
      "cpu1 6078 0 2464 63887 221 0 78 558 0 0\n"
      "intr 1234 0 0\n"
      "ctxt 987654\n";
  std::vector<CpuTimes> cpus;
  ASSERT_TRUE(ParseProcStat(text, cpus).ok());
  ASSERT_EQ(cpus.size(), 3u);
  EXPECT_EQ(cpus[0].core, -1);
  EXPECT_EQ(cpus[0].busy, 12078u + 4964 + 178 + 1058);
  EXPECT_EQ(cpus[0].idle, 126887u + 521);
  EXPECT_EQ(cpus[2].core, 1);
  EXPECT_EQ(cpus[2].busy, 6078u + 2464 + 78 + 558);
}

TEST(ProcStat, OldKernelWithFourFields) {
  std::vector<CpuTimes> cpus;
  ASSERT_TRUE(ParseProcStat("cpu  10 20 30 40\n", cpus).ok());
  EXPECT_EQ(cpus[0].busy, 60u);
  EXPECT_EQ(cpus[0].idle, 40u);
}

TEST(ProcStat, MalformedIsAnError) {
  std::vector<CpuTimes> cpus;
  Status s = ParseProcStat("intr 1 2 3\n", cpus);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/proc/stat"), std::string::npos);
  EXPECT_FALSE(ParseProcStat("cpu  10 x\n", cpus).ok());
}

TEST(MemInfo, ReadsKilobytesAsBytes) {
  const char* text =
      "MemTotal:       24682416 kB\n"
      "MemFree:        23998332 kB\n"
      "MemAvailable:   24282596 kB\n"
      "Buffers:           12345 kB\n"
      "SwapTotal:       1048572 kB\n"
      "SwapFree:         948572 kB\n";
  MemInfo m;
  ASSERT_TRUE(ParseMemInfo(text, m).ok());
  EXPECT_EQ(m.total_bytes, 24682416ull * 1024);
  EXPECT_EQ(m.available_bytes, 24282596ull * 1024);
  EXPECT_EQ(m.swap_total_bytes - m.swap_free_bytes, 100000ull * 1024);
  EXPECT_FALSE(ParseMemInfo("Buffers: 1 kB\n", m).ok());
}

TEST(LoadAverage, FirstField) {
  Result<double> load = ParseLoadAverage("0.21 0.37 0.39 1/719 19737\n");
  ASSERT_TRUE(load.ok());
  EXPECT_DOUBLE_EQ(*load, 0.21);
  EXPECT_FALSE(ParseLoadAverage("").ok());
}

TEST(PidStat, CommWithSpacesAndParentheses) {
  // A DataLoader worker renamed by PyTorch keeps spaces; ')' may appear inside comm too.
  const char* text =
      "5518 (pt_data (worker) 0) S 5510 5518 5510 34816 5518 4194304 1089 0 0 0 44 35 7 3 20 0 "
      "3 0 123456 12345678 668 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  PidStat s;
  ASSERT_TRUE(ParsePidStat(text, s).ok());
  EXPECT_EQ(s.pid, 5518);
  EXPECT_EQ(s.comm, "pt_data (worker) 0");
  EXPECT_EQ(s.state, 'S');
  EXPECT_EQ(s.ppid, 5510);
  EXPECT_EQ(s.utime, 44u);
  EXPECT_EQ(s.stime, 35u);
  EXPECT_EQ(s.cutime, 7u);
  EXPECT_EQ(s.cstime, 3u);
  EXPECT_EQ(s.num_threads, 3);
  EXPECT_EQ(s.start_time, 123456u);
  EXPECT_EQ(s.rss_pages, 668);
  EXPECT_EQ(s.processor, 1);
}

TEST(PidStat, TruncatedIsAnError) {
  PidStat s;
  EXPECT_FALSE(ParsePidStat("5518 (burner) S 1 2 3", s).ok());
  EXPECT_FALSE(ParsePidStat("garbage", s).ok());
}

TEST(ContextSwitches, FromStatus) {
  const char* text =
      "Name:\tburner\nState:\tS (sleeping)\nThreads:\t1\n"
      "voluntary_ctxt_switches:\t16\nnonvoluntary_ctxt_switches:\t185\n";
  ContextSwitches c;
  ASSERT_TRUE(ParseContextSwitches(text, c).ok());
  EXPECT_EQ(c.voluntary, 16u);
  EXPECT_EQ(c.involuntary, 185u);
  EXPECT_FALSE(ParseContextSwitches("Name:\tx\n", c).ok());
}

TEST(DiskStats, KernelSixLines) {
  const char* text =
      "   7       0 loop0 10 0 20 1 0 0 0 0 0 4 1 0 0 0 0 0 0\n"
      " 254       0 vda 72110 27860 3345410 15917 45559 25337 3418776 19162 0 11288 35824 5532 122 "
      "509984 557 4315 186\n"
      " 254       1 vda1 70000 27000 3300000 15000 45000 25000 3400000 19000 0 11000 35000 0 0 0 0 0 0\n";
  std::vector<DiskCounters> disks;
  ASSERT_TRUE(ParseDiskStats(text, disks).ok());
  ASSERT_EQ(disks.size(), 3u);
  EXPECT_EQ(disks[1].device, "vda");
  EXPECT_EQ(disks[1].reads, 72110u);
  EXPECT_EQ(disks[1].sectors_read, 3345410u);
  EXPECT_EQ(disks[1].writes, 45559u);
  EXPECT_EQ(disks[1].sectors_written, 3418776u);
  EXPECT_EQ(disks[1].io_ms, 11288u);
  EXPECT_FALSE(ParseDiskStats(" 254 0 vda 1 2 3\n", disks).ok());
}

TEST(NetDev, InterfacesAfterTwoHeaderLines) {
  const char* text =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop "
      "fifo colls carrier compressed\n"
      "    lo:    4242      42    0    0    0     0          0         0     4242      42    0    0 "
      "   0     0       0          0\n"
      "  eth0: 72111547    1808    0    0    0     0          0         0    66578     871    0    0 "
      "   0     0       0          0\n";
  std::vector<NetCounters> nics;
  ASSERT_TRUE(ParseNetDev(text, nics).ok());
  ASSERT_EQ(nics.size(), 2u);
  EXPECT_EQ(nics[1].interface, "eth0");
  EXPECT_EQ(nics[1].rx_bytes, 72111547u);
  EXPECT_EQ(nics[1].tx_bytes, 66578u);
}

TEST(Children, SpaceSeparatedPids) {
  std::vector<pid_t> pids;
  ParseChildren("5520 5521 ", pids);
  EXPECT_EQ(pids, (std::vector<pid_t>{5520, 5521}));
}

}  // namespace
}  // namespace tb
