// End to end against a captured machine: two snapshots of /proc (testdata/proc-tree/a and
// b, one second apart) of a CPU burner with two child processes, sampled through the real
// listeners into a real store. Expected figures were worked out by hand from the files.
#include "run/sampler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "collect/listeners.h"
#include "store/series_writer.h"
#include "store/store.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {
namespace {

namespace fs = std::filesystem;

constexpr pid_t kRootPid = 5518;  // testdata/proc-tree/ROOT_PID

class FixtureSamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    UseSnapshot("a");
    store_ = Store::Open((dir_ / "t.db").string()).value();
    run_.id = NewRunId();
    run_.experiment = "fixture";
    run_.name = "burner";
    ASSERT_TRUE(store_->EnsureExperiment("fixture").ok());
    ASSERT_TRUE(store_->CreateRun(run_).ok());
  }

  // Makes the proc root hold one snapshot. Files are overwritten in place, as /proc's
  // contents change under files the listeners keep open.
  void UseSnapshot(const char* snapshot) {
    fs::copy(fs::path(TRAINBENCH_TESTDATA) / "proc-tree" / snapshot, dir_ / "root",
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  }

  std::string Root() const { return (dir_ / "root").string(); }

  // metric|labels -> values, in time order.
  std::map<std::string, std::vector<double>> Stored() {
    std::map<std::string, std::vector<double>> out;
    for (const SeriesInfo& s : store_->ListSeries(run_.id).value()) {
      for (const Point& p : ReadSeriesPoints(*store_, s.id).value()) {
        out[s.metric + "|" + s.labels].push_back(p.value);
      }
    }
    return out;
  }

  ScratchDirectory scratch_{"tb-sampler"};
  const fs::path& dir_ = scratch_.path();
  std::unique_ptr<Store> store_;
  RunRecord run_;
};

std::vector<std::unique_ptr<Collector>> Listeners(const HostFiles& files, std::vector<std::string> names) {
  std::vector<std::unique_ptr<Collector>> out;
  for (const auto& n : names) out.push_back(MakeListener(n, ListenerContext{.files = files}).value());
  return out;
}

TEST_F(FixtureSamplerTest, CapturedTreeGivesHandComputedFigures) {
  HostFiles files(Root());
  SeriesWriter writer(*store_, run_.id);
  Sampler sampler(Listeners(files, {"top", "ps", "iostat", "net"}), writer, 1000, nullptr);
  sampler.WatchProcessTree(files, kRootPid);
  sampler.TickOnce(1763777000000, 0);
  UseSnapshot("b");
  sampler.TickOnce(1763777001000, 1000000000);
  ASSERT_TRUE(writer.Close().ok());
  auto s = Stored();

  // /proc/stat: busy 18278 -> 18413, total 145686 -> 145909 ticks.
  ASSERT_EQ(s["host.cpu.utilization_ratio|"].size(), 1u);
  EXPECT_NEAR(s["host.cpu.utilization_ratio|"][0], 135.0 / 223.0, 1e-5);
  // The tree's utime+stime: 174 -> 295 ticks (root 79->134, children 47->80, 48->81).
  ASSERT_EQ(s["proc.cpu.utilization_ratio|"].size(), 1u);
  EXPECT_NEAR(s["proc.cpu.utilization_ratio|"][0], 1.21, 1e-9);
  EXPECT_EQ(s["proc.processes.count|"], (std::vector<double>{3, 3}));
  EXPECT_EQ(s["proc.threads.count|"], (std::vector<double>{3, 3}));
  // rss pages 668 + 178 + 178, 4 KiB each.
  EXPECT_EQ(s["proc.memory.rss_bytes|"][0], (668 + 178 + 178) * 4096.0);
  // Per-thread status: voluntary 16->27 in each of 3 threads; involuntary +113 +170 +112.
  EXPECT_EQ(s["proc.sched.voluntary_switches_per_second|"], (std::vector<double>{33}));
  EXPECT_EQ(s["proc.sched.involuntary_switches_per_second|"], (std::vector<double>{395}));
  EXPECT_EQ(s["host.memory.used_bytes|"][0], (24682416.0 - 24282596.0) * 1024);
  EXPECT_EQ(s["host.load.average_1m|"][0], 0.49);
  // ps: the root thread went from 79 to 134 ticks; it last ran on core 1.
  EXPECT_NEAR(s["proc.thread.cpu_utilization_ratio|pid=5518,tid=5518,name=burner"][0], 0.55, 1e-9);
  EXPECT_EQ(s["proc.thread.core_index|pid=5518,tid=5518,name=burner"].size(), 2u);
  // Disk and network were idle between the snapshots: zero rates, present.
  EXPECT_EQ(s["disk.read_bytes_per_second|device=vda"], (std::vector<double>{0}));
  EXPECT_EQ(s["net.receive_bytes_per_second|interface=eth0"], (std::vector<double>{0}));
  // Loop devices are not disks users care about; partitions are not whole disks.
  EXPECT_EQ(s.count("disk.read_bytes_per_second|device=loop0"), 0u);
  // Every listener reported its own cost on both ticks.
  for (const char* l : {"top", "ps", "iostat", "net"}) {
    EXPECT_EQ(s[std::string("trainbench.listener.cpu_seconds|listener=") + l].size(), 2u) << l;
  }
}

class BrokenCollector : public Collector {
 public:
  std::string_view name() const override { return "broken"; }
  Status Collect(const Tick&, SampleSink&) override { return Status::IoError("no such device"); }
};

TEST_F(FixtureSamplerTest, FailingListenerNeverStopsTheOthers) {
  HostFiles files(Root());
  SeriesWriter writer(*store_, run_.id);
  std::vector<std::unique_ptr<Collector>> listeners;
  listeners.push_back(std::make_unique<BrokenCollector>());
  listeners.push_back(MakeListener("top", ListenerContext{.files = files}).value());
  std::vector<std::string> events;
  Sampler sampler(std::move(listeners), writer, 1000, [&](const std::string& kind, const std::string& label) {
    events.push_back(kind + ": " + label);
  });
  for (int i = 0; i < 3; ++i) sampler.TickOnce(1763777000000 + i * 1000, i * 1000000000LL);
  ASSERT_TRUE(writer.Close().ok());
  EXPECT_EQ(Stored()["host.memory.used_bytes|"].size(), 3u);
  ASSERT_EQ(events.size(), 1u);  // told once, not every tick
  EXPECT_NE(events[0].find("broken"), std::string::npos);
  EXPECT_EQ(sampler.Health()[0].failures, 3);
}

TEST_F(FixtureSamplerTest, MissingProcFilesAreAnErrorNotZeros) {
  fs::remove_all(dir_ / "root");
  fs::create_directories(dir_ / "root" / "proc");
  HostFiles files(Root());
  SeriesWriter writer(*store_, run_.id);
  Sampler sampler(Listeners(files, {"iostat"}), writer, 1000, nullptr);
  sampler.TickOnce(1, 0);
  sampler.TickOnce(2, 1000000000);
  ASSERT_TRUE(writer.Close().ok());
  EXPECT_EQ(sampler.Health()[0].failures, 2);
  for (const auto& [key, values] : Stored()) EXPECT_EQ(key.rfind("disk.", 0), std::string::npos) << key;
}

}  // namespace
}  // namespace tb
