// The rapl listener on a fake /sys and /proc: which powercap zones count, the counter's wrap
// at max_energy_range_uj, power over the tick, and the run's share by its CPU time.
#include "collect/rapl.h"

#include <gtest/gtest.h>

#include <map>

#include "collect/process_tree.h"
#include "metrics/names.h"
#include "tests/helpers/fake_host.h"

namespace tb {
namespace {

class RaplTest : public FakeHostTest {
 protected:
  void SetUp() override {
    Zone("intel-rapl:0", "package-0", 999'000'000);
    Zone("intel-rapl:0:0", "core", 5);
    Zone("intel-rapl:0:1", "dram", 40'000'000);
    Zone("intel-rapl:1", "package-1", 7'000'000);
    Zone("intel-rapl-mmio:0", "package-0", 1);  // the same package through MMIO: not counted twice
    CpuAndRun(1000, 100);
  }

  void Zone(const std::string& zone, const std::string& name, uint64_t uj) {
    Write("sys/class/powercap/" + zone + "/name", name + "\n");
    Write("sys/class/powercap/" + zone + "/max_energy_range_uj", "1000000000\n");
    Write("sys/class/powercap/" + zone + "/energy_uj", std::to_string(uj) + "\n");
  }
  // The machine's busy CPU time and the run's (pid 4242, one thread, no children), in ticks.
  void CpuAndRun(uint64_t busy, uint64_t run) {
    Write("proc/stat", "cpu  " + std::to_string(busy) + " 0 0 5000 0 0 0 0 0 0\ncpu0 " +
                           std::to_string(busy) + " 0 0 5000 0 0 0 0 0 0\n");
    Write("proc/4242/stat", "4242 (python3) S 1 4242 4242 0 -1 0 0 0 0 0 " + std::to_string(run) +
                                " 0 0 0 20 0 1 0 100 1000 10 0\n");
    Write("proc/4242/task/4242/children", "");
  }
};

TEST_F(RaplTest, PackagesAndTheirDramAreCountedCoreIsListedOnly) {
  RaplDomains found = FindRaplDomains(HostFiles(root_.string()));
  ASSERT_TRUE(found.absent.empty());
  std::map<std::string, bool> counted;
  for (const RaplDomain& d : found.domains) counted[d.label] = d.counted;
  EXPECT_EQ(
      counted,
      (std::map<std::string, bool>{
          {"package-0", true}, {"package-0/core", false}, {"package-0/dram", true}, {"package-1", true}}));
}

TEST_F(RaplTest, NoPowercapSaysSoAndTheListenerRecordsNothing) {
  RaplDomains found = FindRaplDomains(HostFiles((root_ / "nothing").string()));
  EXPECT_TRUE(found.domains.empty());
  EXPECT_NE(found.absent.find("no RAPL here"), std::string::npos) << found.absent;
  std::unique_ptr<Collector> rapl = MakeRaplCollector(HostFiles((root_ / "nothing").string()));
  CollectingSink sink;
  Status s = rapl->Collect(Tick{.time_ms = 1, .monotonic_ns = 1}, sink);
  EXPECT_NE(s.message().find("no CPU energy: no RAPL here"), std::string::npos) << s.message();
  EXPECT_TRUE(sink.last.empty());
}

TEST_F(RaplTest, TheCounterWrapsAtItsRangeAndTheRunGetsItsShareOfCpuTime) {
  HostFiles files(root_.string());
  std::unique_ptr<Collector> rapl = MakeRaplCollector(files);
  ProcessTree tree(HostFiles(root_.string()), 4242);
  CollectingSink sink;
  Tick tick{.time_ms = 1000, .monotonic_ns = 1'000'000'000, .tree = &tree};
  ASSERT_TRUE(rapl->Collect(tick, sink).ok());
  EXPECT_EQ(sink.last.at("host.energy.consumed_joules{domain=package-0}"), 0);
  // One second later: package-0 wrapped at 1e9 uJ and moved 2 J; the machine used 400 ticks
  // of CPU time, the run 100 of them.
  Zone("intel-rapl:0", "package-0", 1'000'000);
  Zone("intel-rapl:0:1", "dram", 41'000'000);
  CpuAndRun(1400, 200);
  tree.Invalidate();
  tick.time_ms = 2000;
  tick.monotonic_ns = 2'000'000'000;
  ASSERT_TRUE(rapl->Collect(tick, sink).ok());
  EXPECT_DOUBLE_EQ(sink.last.at("host.energy.consumed_joules{domain=package-0}"), 2);
  EXPECT_DOUBLE_EQ(sink.last.at("host.power.draw_watts{domain=package-0}"), 2);
  EXPECT_DOUBLE_EQ(sink.last.at("host.energy.consumed_joules{domain=package-0/dram}"), 1);
  EXPECT_DOUBLE_EQ(sink.last.at("proc.cpu.energy_joules{domain=package-0}"), 0.5);
  EXPECT_DOUBLE_EQ(sink.last.at("proc.cpu.energy_joules{domain=package-0/dram}"), 0.25);
  EXPECT_EQ(sink.last.count("host.energy.consumed_joules{domain=package-0/core}"), 0u);
}

}  // namespace
}  // namespace tb
