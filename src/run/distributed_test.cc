#include "run/distributed.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "store/series_writer.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {
namespace {

// What srun puts into the environment of task `procid` of a step of `tasks` tasks.
std::map<std::string, std::string> SlurmStep(int tasks, int nodes, int procid,
                                             const std::string& step = "0") {
  return {{"SLURM_CLUSTER_NAME", "lab"},
          {"SLURM_JOB_ID", "4242"},
          {"SLURM_STEP_ID", step},
          {"SLURM_STEP_NUM_TASKS", std::to_string(tasks)},
          {"SLURM_STEP_NUM_NODES", std::to_string(nodes)},
          {"SLURM_PROCID", std::to_string(procid)},
          {"SLURMD_NODENAME", "gpu" + std::to_string(procid + 1)}};
}

TEST(DistributedTest, EveryTaskOfASlurmStepFindsTheSameRunAndItsOwnPart) {
  Result<DistributedRun> a = ResolveDistributed({}, SlurmStep(2, 2, 0), "login");
  Result<DistributedRun> b = ResolveDistributed({}, SlurmStep(2, 2, 1), "login");
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(a->run_id, b->run_id);
  EXPECT_EQ(a->run_id.size(), 32u);
  EXPECT_EQ(a->part.count, 2);
  EXPECT_EQ(a->part.index, 0);
  EXPECT_EQ(b->part.index, 1);
  EXPECT_EQ(a->part.node, "gpu1");
  EXPECT_EQ(b->part.node, "gpu2");
  EXPECT_EQ(a->part.ArtifactPrefix(), "");
  EXPECT_EQ(b->part.ArtifactPrefix(), "node-gpu2/");
  // The next step of the same job is another run.
  EXPECT_NE(ResolveDistributed({}, SlurmStep(2, 2, 0, "1"), "login")->run_id, a->run_id);
}

TEST(DistributedTest, WhatCannotWorkIsRefusedWithWhatToDo) {
  // Four tasks on two nodes: two parts would sample the same node.
  Result<DistributedRun> r = ResolveDistributed({}, SlurmStep(4, 2, 0), "h");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--ntasks-per-node=1"), std::string::npos) << r.status().message();
  // Outside Slurm: the parts and a shared run id must be given.
  r = ResolveDistributed({}, {}, "h");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--nodes N and --node-rank R"), std::string::npos);
  r = ResolveDistributed({.nodes = 2, .rank = 0, .node = "", .run_id = ""}, {}, "h");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--run-id"), std::string::npos);
  r = ResolveDistributed({.nodes = 2, .rank = 2, .node = "", .run_id = std::string(32, 'a')}, {}, "h");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not below --nodes 2"), std::string::npos);
  // Given explicitly, with the host name as the node's.
  r = ResolveDistributed({.nodes = 2, .rank = 1, .node = "", .run_id = std::string(32, 'a')}, {}, "h1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->part.node, "h1");
}

class PartsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<Store>> s = Store::Open((scratch_.path() / "t.db").string());
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
    run_.id = NewRunId();
    run_.experiment = "dist";
    run_.name = "train.py";
    run_.start_ms = 1000;
    ASSERT_TRUE(store_->EnsureExperiment("dist").ok());
    ASSERT_TRUE(store_->CreateRun(run_).ok());
  }
  RunPart Part(int index) { return {3, index, "n" + std::to_string(index)}; }

  ScratchDirectory scratch_{"tb-dist"};
  std::unique_ptr<Store> store_;
  RunRecord run_;
};

TEST_F(PartsTest, TheRunEndsWithItsLastPartAndAFailedPartFailsIt) {
  Result<std::optional<PartEnding>> r = EndPart(*store_, run_.id, Part(1), {kFinished, 0, {}, "", 5000});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  r = EndPart(*store_, run_.id, Part(0), {kFailed, 3, {}, "exit code 3", 4000});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  r = EndPart(*store_, run_.id, Part(2), {kFinished, 0, {}, "", 6000});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->status, kFailed);
  EXPECT_EQ((*r)->reason, "n0: exit code 3");
  EXPECT_EQ((*r)->end_ms, 6000);  // the last part's end
}

TEST_F(PartsTest, AKilledPartKillsTheRunAndAPartCountsOnce) {
  ASSERT_TRUE(EndPart(*store_, run_.id, Part(0), {kFinished, 0, {}, "", 2000}).ok());
  // The same part twice (a retried write) is still one part.
  Result<std::optional<PartEnding>> r = EndPart(*store_, run_.id, Part(0), {kFinished, 0, {}, "", 2000});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  ASSERT_TRUE(EndPart(*store_, run_.id, Part(1), {kKilled, 143, 15, "signal SIGTERM", 3000}).ok());
  r = EndPart(*store_, run_.id, Part(2), {kFinished, 0, {}, "", 2500});
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->status, kKilled);
  EXPECT_EQ((*r)->end_ms, 3000);
}

TEST(DistributedTest, EachNodesSamplesAreItsOwnSeries) {
  ScratchDirectory scratch{"tb-dist"};
  Result<std::unique_ptr<Store>> store = Store::Open((scratch.path() / "t.db").string());
  ASSERT_TRUE(store.ok());
  RunRecord run;
  run.id = NewRunId();
  run.experiment = "dist";
  ASSERT_TRUE((*store)->EnsureExperiment("dist").ok());
  ASSERT_TRUE((*store)->CreateRun(run).ok());
  for (const char* node : {"a", "b"}) {
    SeriesWriter writer(**store, run.id);
    writer.AddSampleLabels(Labels{{"node", node}});
    Labels gpu{{"gpu", "0"}};
    writer.Add({"gpu.utilization.gpu_ratio", gpu, 1000, 0.5});
    writer.Add({"host.cpu.utilization_ratio", kNoLabels, 1000, 0.25});
    writer.Append("train.loss", "", {1000, 1.0, 1});  // the script's own: no node label
    ASSERT_TRUE(writer.Close().ok());
  }
  std::set<std::string> series;
  Result<std::vector<SeriesInfo>> listed = (*store)->ListSeries(run.id);
  ASSERT_TRUE(listed.ok());
  for (const SeriesInfo& s : *listed) series.insert(s.metric + "{" + s.labels + "}");
  EXPECT_EQ(series,
            (std::set<std::string>{
                "gpu.utilization.gpu_ratio{gpu=0,node=a}", "gpu.utilization.gpu_ratio{gpu=0,node=b}",
                "host.cpu.utilization_ratio{node=a}", "host.cpu.utilization_ratio{node=b}", "train.loss{}"}));
}

}  // namespace
}  // namespace tb
