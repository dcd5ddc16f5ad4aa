#include "schedule/plan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "schedule/experiment_numbers.h"
#include "schedule/write_back.h"
#include "store/run_tags.h"
#include "store/store.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {
namespace {

constexpr const char* kHeader = "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n";

class PlanTest : public ::testing::Test {
 protected:
  PlanTest() { std::ofstream(dir_.path() / "work.py") << "print('hi')\n"; }

  std::string Write(const std::string& text) {
    std::string path = (dir_.path() / "exp.csv").string();
    std::ofstream(path) << text;
    return path;
  }
  Result<std::vector<Workload>> PlanOf(const std::string& text, bool rerun = false) {
    std::string path = Write(text);
    Result<ExperimentFile> file = ParseExperimentFile(text, path);
    if (!file.ok()) return file.status();
    ScheduleOptions o;
    o.file = path;
    o.rerun = rerun;
    return Plan(*file, o);
  }
  std::string Slurp(const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  ScratchDirectory dir_{"tb-plan"};
};

TEST_F(PlanTest, RowsBecomeWorkloadsInFileOrderWithLettersAndArguments) {
  Result<std::vector<Workload>> plan = PlanOf(std::string(kHeader) +
                                              "e,1,,,-,-,work.py,top,--batch-size 64\n"
                                              "e,1,,,-,-,work.py,top+ps,--batch-size 128\n"
                                              "e,2,FINISHED,abc,-,-,work.py,top,\n");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->size(), 2u);
  const Workload& first = (*plan)[0];
  ASSERT_EQ(first.runs.size(), 2u);
  EXPECT_EQ(first.runs[0].letter, "A-");  // no devices: the letter and the collocation
  EXPECT_EQ(first.runs[1].letter, "B-");
  EXPECT_EQ(first.runs[1].listeners, "top+ps");
  EXPECT_EQ(first.runs[1].params, (std::vector<std::string>{"--batch-size", "128"}));
  EXPECT_NE(first.runs[0].id, first.runs[1].id);
  // A finished workload is planned (it keeps its place) but does not run again.
  EXPECT_FALSE(Runnable((*plan)[1], false));
  EXPECT_TRUE(Runnable(first, false));
}

TEST_F(PlanTest, ARowThatCannotRunIsRefusedWithItsLineAndCell) {
  Result<std::vector<Workload>> plan = PlanOf(std::string(kHeader) +
                                              "e,1,,,-,-,work.py,top,\n"
                                              "e,1,,,-,-,work.py,top+gpustat,\n");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("Listeners"), std::string::npos) << plan.status().message();
  EXPECT_NE(plan.status().message().find("gpustat"), std::string::npos) << plan.status().message();
  plan = PlanOf(std::string(kHeader) + "e,1,,,-,-,missing.py,top,\n");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("missing.py"), std::string::npos) << plan.status().message();
}

TEST_F(PlanTest, AWorkloadRunsWholeOrNotAtAllAsInRadt) {
  std::string text = std::string(kHeader) +
                     "e,1,FAILED,abc,-,-,work.py,top,\n"
                     "e,1,FINISHED,abd,-,-,work.py,top,\n"
                     "e,2,FINISHED,abe,-,-,work.py,top,\n"
                     "e,2,KILLED,abf,-,-,work.py,top,\n";
  Result<std::vector<Workload>> plan = PlanOf(text);
  ASSERT_TRUE(plan.ok());
  // A failed run reruns only when asked, and then with its finished partner.
  EXPECT_FALSE(Runnable((*plan)[0], false));
  EXPECT_TRUE(Runnable((*plan)[0], true));
  // An interrupted workload runs again whole.
  EXPECT_TRUE(Runnable((*plan)[1], false));
  EXPECT_TRUE(Done((*plan)[1].runs[0].row, false));
  EXPECT_FALSE(Done((*plan)[1].runs[1].row, false));
}

TEST_F(PlanTest, CellsRadtWritesAreUnderstood) {
  Result<std::vector<Workload>> plan =
      PlanOf(std::string(kHeader) + "e,1,,,-,nan,work.py,,batch-size=128 trainer.max_epochs=2\n");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const PlannedRun& r = (*plan)[0].runs[0];
  EXPECT_EQ(r.row.collocation, "-");
  EXPECT_EQ(r.letter, "A-");
  EXPECT_TRUE(r.listeners.empty());  // an empty Listeners cell: trainbench's default set
  EXPECT_EQ(r.params, (std::vector<std::string>{"batch-size=128", "trainer.max_epochs=2"}));
}

TEST_F(PlanTest, WriteBackFillsTheRowAndKeepsTheUsersOtherLines) {
  std::string text = std::string(kHeader) + "e,1,,,-,-,work.py,top,\n";
  Result<std::vector<Workload>> plan = PlanOf(text);
  ASSERT_TRUE(plan.ok());
  std::string path = (dir_.path() / "exp.csv").string();
  // Meanwhile the user added a row below.
  Write(text + "e,2,,,-,-,work.py,top,--note added\n");
  std::vector<Unwritten> pending = {{&(*plan)[0].runs[0], "FINISHED", "0123abcd"}};
  WriteBack(path, pending);
  EXPECT_TRUE(pending.empty());
  std::string now = Slurp(path);
  EXPECT_NE(now.find("e,1,FINISHED,0123abcd,-,-,work.py,top,\n"), std::string::npos) << now;
  EXPECT_NE(now.find("e,2,,,-,-,work.py,top,--note added\n"), std::string::npos) << now;
}

TEST_F(PlanTest, WriteBackLeavesAFileThatDoesNotReadAndKeepsTheOutcome) {
  std::string text = std::string(kHeader) + "e,1,,,-,-,work.py,top,\n";
  Result<std::vector<Workload>> plan = PlanOf(text);
  ASSERT_TRUE(plan.ok());
  std::string path = (dir_.path() / "exp.csv").string();
  std::string editing = std::string(kHeader) + "e,1,,,-,-,work.py,top,\"unclosed\n";
  Write(editing);
  std::vector<Unwritten> pending = {{&(*plan)[0].runs[0], "FAILED", "0123abcd"}};
  WriteBack(path, pending);
  EXPECT_EQ(pending.size(), 1u);  // tried again later
  EXPECT_EQ(Slurp(path), editing);
  std::string side = Slurp(path + ".trainbench-status");
  EXPECT_NE(side.find("2,FAILED,0123abcd"), std::string::npos) << side;
  // Once it reads again, the outcome goes in and the side file goes away.
  Write(text);
  WriteBack(path, pending);
  EXPECT_TRUE(pending.empty());
  EXPECT_NE(Slurp(path).find("FAILED,0123abcd"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path + ".trainbench-status"));
}

// Inside a Slurm job a row's GPU k is the job's k-th GPU; elsewhere the cell is taken as is.
TEST(DevicesOnThisNode, IndicesCountWithinTheSlurmJobsGpus) {
  EXPECT_EQ(DevicesOnThisNode("0+1", "").value(), "0+1");
  EXPECT_EQ(DevicesOnThisNode("-", "2,3").value(), "");
  EXPECT_EQ(DevicesOnThisNode("0", "2,3").value(), "2");
  EXPECT_EQ(DevicesOnThisNode("1+0", "2,3").value(), "3+2");
  EXPECT_EQ(DevicesOnThisNode("GPU-abc+1", "5,7").value(), "GPU-abc+7");
  Result<std::string> past = DevicesOnThisNode("2", "2,3");
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("the Slurm job has 2 GPU(s) (SLURM_JOB_GPUS=2,3)"),
            std::string::npos)
      << past.status().message();
}

// radT's Experiment column holds MLflow's experiment id: after its history is imported, a
// number names the experiment MLflow gave it (the import keeps it), 0 is Default, and a
// number no experiment has becomes an experiment of that name with that id, so that it
// names the same experiment the next time, through MLflow's API too.
TEST_F(PlanTest, AnExperimentNumberIsTheMlflowIdOfAnImportedExperiment) {
  std::unique_ptr<Store> store = Store::Open((dir_.path() / "t.db").string()).value();
  int64_t traces = store->EnsureExperiment("radt-traces").value();
  ASSERT_TRUE(
      store
          ->ChangeExperiment(
              traces, {.name = std::nullopt, .set_tags = {{kMlflowExperimentIdTag, "1"}}, .delete_tags = {}})
          .ok());
  ASSERT_TRUE(store->EnsureExperiment("Default").ok());
  Result<std::vector<Workload>> plan = PlanOf(std::string(kHeader) +
                                              "1,w,,,-,-,work.py,top,\n"
                                              "0,w,,,-,-,work.py,top,\n"
                                              "42,w,,,-,-,work.py,top,\n");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_TRUE(ResolveExperimentIds(*store, *plan).ok());
  ASSERT_EQ(plan->size(), 3u);
  EXPECT_EQ((*plan)[0].experiment, "radt-traces");
  EXPECT_EQ((*plan)[0].runs[0].experiment, "radt-traces") << "what `trainbench run -e` is given";
  EXPECT_EQ((*plan)[0].runs[0].row.experiment, "1") << "the row keeps its cell, by which write-back finds it";
  EXPECT_EQ((*plan)[1].experiment, "Default");
  EXPECT_EQ((*plan)[2].experiment, "42");
  std::vector<ExperimentInfo> all = store->ListExperiments().value();
  auto made = std::find_if(all.begin(), all.end(), [](const ExperimentInfo& e) { return e.name == "42"; });
  ASSERT_NE(made, all.end());
  EXPECT_EQ(MlflowExperimentId(*made), "42");
}

// In a fresh store, radT's examples (Experiment 0, then 1) go to Default and to the
// experiment MLflow calls 1, whatever order they are made in.
TEST_F(PlanTest, ExperimentZeroIsDefaultAndNumbersKeepTheirIdsInAFreshStore) {
  std::unique_ptr<Store> store = Store::Open((dir_.path() / "t.db").string()).value();
  Result<std::vector<Workload>> plan = PlanOf(std::string(kHeader) +
                                              "2,w,,,-,-,work.py,top,\n"
                                              "0,w,,,-,-,work.py,top,\n"
                                              "1,w,,,-,-,work.py,top,\n");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_TRUE(ResolveExperimentIds(*store, *plan).ok());
  EXPECT_EQ((*plan)[0].experiment, "2");
  EXPECT_EQ((*plan)[1].experiment, "Default");
  EXPECT_EQ((*plan)[2].experiment, "1") << "experiment 2, made first, is not MLflow's 1";
  for (const ExperimentInfo& e : store->ListExperiments().value()) {
    if (e.name != "Default") {
      EXPECT_EQ(MlflowExperimentId(e), e.name);
    }
  }
  // The second time, the same numbers name the same experiments.
  Result<std::vector<Workload>> again = PlanOf(std::string(kHeader) + "1,w,,,-,-,work.py,top,\n");
  ASSERT_TRUE(ResolveExperimentIds(*store, *again).ok());
  EXPECT_EQ((*again)[0].experiment, "1");
  EXPECT_EQ(store->ListExperiments().value().size(), 3u);
}

}  // namespace
}  // namespace tb
