// `trainbench schedule --slurm` against a real throw-away Slurm cluster on this machine
// (slurmctld, one slurmd, munged; tests/helpers/slurm_cluster.h) and a real PostgreSQL
// store: workloads as jobs one after another, rows written back with the runs' outcomes and
// the node they ran on, a submitter interrupted and run again that follows the job it had
// submitted instead of submitting it twice, Ctrl-C cancelling the job, a job past its time
// limit, and the refusals
// that come before anything is submitted. Where Slurm cannot start, the tests say why and
// are skipped.
#include "schedule/slurm.h"

#include <signal.h>

#include <chrono>
#include <thread>

#include "base/strings.h"
#include "metrics/sample.h"
#include "platform/process.h"
#include "tests/helpers/cli_fixture.h"
#include "tests/helpers/postgres_cluster.h"
#include "tests/helpers/slurm_cluster.h"

namespace tb {
namespace {

const char* const kHeader = "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n";

// Logs a value SECONDS times, once a second, through trainbench's client.
const char* const kScript =
    "import sys, time, trainbench\n"
    "seconds = int(sys.argv[sys.argv.index('--seconds') + 1])\n"
    "with trainbench.Run() as run:\n"
    "    for i in range(seconds * 5):\n"
    "        run.log_metric('value', i, step=i)\n"
    "        time.sleep(0.2)\n";

class SlurmTest : public CliTest {
 protected:
  static void SetUpTestSuite() {
    slurm_ = new SlurmCluster(1, 2);  // one node with two GPUs (GRES gpu:2)
    postgres_ = new PostgresCluster();
  }
  static void TearDownTestSuite() {
    delete slurm_;
    delete postgres_;
  }
  void SetUp() override {
    if (!slurm_->ok()) GTEST_SKIP() << "no Slurm cluster can start here: " << slurm_->error();
    ASSERT_TRUE(postgres_->ok()) << postgres_->error();
    uri_ = postgres_->CreateDatabase("slurm" + std::to_string(++databases_));
    env_ = slurm_->env();
    std::ofstream(dir_ / "work.py") << kScript;
  }
  void File(const std::string& rows) { std::ofstream(dir_ / "exp.csv") << kHeader << rows; }
  ExperimentFile Rows() { return ParseExperimentFile(Slurp(dir_ / "exp.csv"), "exp.csv").value(); }
  std::string Schedule(const std::string& extra = "") {
    return "schedule exp.csv --slurm --store " + uri_ + " --python /usr/bin/python3 " + extra;
  }
  // `trainbench schedule --slurm` in the background, its output in submit.out.
  ChildProcess StartSchedule() {
    SpawnOptions spawn;
    spawn.argv = {"/bin/sh", "-c",
                  "cd " + dir_.string() + " && " + env_ + " exec " + kTrainbench + " " + Schedule() +
                      " > submit.out 2> submit.err"};
    return ChildProcess::Spawn(spawn).value();
  }
  // Waits until `done` holds, up to `seconds`.
  template <typename Condition>
  bool WaitFor(Condition done, int seconds) {
    for (int i = 0; i < seconds * 5; ++i) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return done();
  }
  std::string JobState(const std::string& id) {
    Result<SlurmJobState> s =
        ParseScontrolJob(SlurmCluster::Capture(slurm_->env() + " scontrol show job -o " + id + " 2>&1"));
    return s.ok() ? s->state : "?";
  }
  size_t JobsKnown() {
    std::string all = SlurmCluster::Capture(slurm_->env() + " scontrol show job -o 2>/dev/null");
    return static_cast<size_t>(std::count(all.begin(), all.end(), '\n')) +
           (all.find("JobId=") != std::string::npos);
  }

  static SlurmCluster* slurm_;
  static PostgresCluster* postgres_;
  static int databases_;
  std::string uri_;
};

SlurmCluster* SlurmTest::slurm_ = nullptr;
PostgresCluster* SlurmTest::postgres_ = nullptr;
int SlurmTest::databases_ = 0;

TEST_F(SlurmTest, EachWorkloadIsAJobItsRowsGetTheirOutcomesAndTheRunsTheirNode) {
  File(
      "e,alone,,,-,-,work.py,top,--seconds 1\n"
      "e,pair,,,-,-,work.py,top,--seconds 1\n"
      "e,pair,,,-,-,work.py,top,--seconds 1 --seed 2\n");
  Shell r = Trainbench(Schedule());
  ASSERT_EQ(r.code, 0) << r.out << r.err << Slurp(dir_ / ".exp.e.alone.slurm.out");
  EXPECT_NE(r.out.find("workload e/alone submitted as Slurm job"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 runs finished, 0 failed"), std::string::npos) << r.out;
  ExperimentFile f = Rows();
  std::unique_ptr<Store> store = Store::Open(uri_).value();
  std::set<std::string> jobs;
  std::vector<std::string> letters;
  for (const ExperimentRow& row : f.rows) {
    EXPECT_EQ(StatusWord(row.status), "FINISHED") << row.status;
    ASSERT_FALSE(row.run.empty());
    RunRecord run = store->FindRun(row.run).value();
    EXPECT_EQ(run.workload, row.workload);
    std::map<std::string, std::string> tags(run.tags.begin(), run.tags.end());
    EXPECT_EQ(tags["slurm.node"], slurm_->node()) << "the node it ran on";
    EXPECT_FALSE(tags["slurm.job_id"].empty());
    jobs.insert(row.workload + "=" + tags["slurm.job_id"]);
    if (row.workload == "pair") letters.push_back(tags["trainbench.letter"]);
    EXPECT_FALSE(Series(*store, run.id, "train.value").empty()) << "the script's metrics reached the store";
  }
  EXPECT_EQ(jobs.size(), 2u) << "one job per workload, the pair's runs in one job";
  // The job files of finished workloads are gone; each job's output is kept.
  EXPECT_FALSE(fs::exists(dir_ / ".exp.e.alone.slurm.csv"));
  std::string output = Slurp(dir_ / ".exp.e.pair.slurm.out");
  ASSERT_EQ(letters.size(), 2u);
  for (const std::string& letter : letters)
    EXPECT_NE(output.find("[" + letter + "]"), std::string::npos) << "each run's output behind its letter\n"
                                                                  << output;
}

// --max-jobs 2: independent workloads are queued together and run side by side (the node
// has a CPU for each); by default the second is submitted only once the first has ended.
TEST_F(SlurmTest, MaxJobsLetsWorkloadsRunSideBySideOnlyWhenAsked) {
  File(
      "e,a,,,-,-,work.py,top,--seconds 4\n"
      "e,b,,,-,-,work.py,top,--seconds 4\n");
  Shell r = Trainbench(Schedule("--max-jobs 2"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::unique_ptr<Store> store = Store::Open(uri_).value();
  auto span = [&](size_t i) {
    RunRecord run = store->FindRun(Rows().rows[i].run).value();
    return std::pair{run.start_ms, run.end_ms};
  };
  EXPECT_LT(span(1).first, span(0).second) << "b started before a ended";
  EXPECT_NE(r.out.find("0 queued, 2 running"), std::string::npos) << r.out;

  File(
      "e,a,,,-,-,work.py,top,--seconds 1\n"
      "e,b,,,-,-,work.py,top,--seconds 1\n");
  uri_ = postgres_->CreateDatabase("slurm" + std::to_string(++databases_));
  r = Trainbench(Schedule());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  store = Store::Open(uri_).value();
  EXPECT_GE(span(1).first, span(0).second) << "one after another by default";
}

TEST_F(SlurmTest, AnInterruptedSubmitterFollowsItsJobInsteadOfSubmittingItAgain) {
  File("e,long,,,-,-,work.py,top,--seconds 6\n");
  size_t before = JobsKnown();
  ChildProcess submitter = StartSchedule();
  ASSERT_TRUE(WaitFor([&] { return Rows().rows[0].status.starts_with("SLURM "); }, 30))
      << Slurp(dir_ / "submit.out");
  std::string job = std::string(SplitWhitespace(Rows().rows[0].status)[1]);
  kill(submitter.pid(), SIGKILL);  // the submitting machine goes away; the job goes on
  EXPECT_TRUE(submitter.Wait().ok());
  EXPECT_TRUE(WaitFor([&] { return JobState(job) == "RUNNING"; }, 30)) << JobState(job);

  Shell again = Trainbench(Schedule());
  ASSERT_EQ(again.code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("is Slurm job " + job + ", submitted before: followed, not submitted again"),
            std::string::npos)
      << again.out;
  EXPECT_EQ(JobsKnown(), before + 1) << "no second job";
  ExperimentRow row = Rows().rows[0];
  EXPECT_EQ(StatusWord(row.status), "FINISHED") << row.status;
  EXPECT_FALSE(row.run.empty());
}

TEST_F(SlurmTest, CtrlCCancelsTheJobAndItsRowsSaySo) {
  File("e,long,,,-,-,work.py,top,--seconds 120\n");
  ChildProcess submitter = StartSchedule();
  ASSERT_TRUE(WaitFor([&] { return Rows().rows[0].status.starts_with("SLURM "); }, 30))
      << Slurp(dir_ / "submit.out");
  std::string job = std::string(SplitWhitespace(Rows().rows[0].status)[1]);
  ASSERT_TRUE(WaitFor([&] { return JobState(job) == "RUNNING"; }, 30)) << JobState(job);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the run has started in the job
  kill(submitter.pid(), SIGINT);
  Result<ExitInfo> exit = submitter.Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->ShellCode(), 130) << Slurp(dir_ / "submit.out") << Slurp(dir_ / "submit.err");
  EXPECT_NE(Slurp(dir_ / "submit.out").find("cancelling 1 Slurm job"), std::string::npos);
  EXPECT_EQ(JobState(job), "CANCELLED");
  ExperimentRow row = Rows().rows[0];
  EXPECT_EQ(StatusWord(row.status), "KILLED") << row.status;
  EXPECT_NE(row.status.find("CANCELLED"), std::string::npos) << row.status;
}

// Slurm's shortest time limit is a minute: this test takes about that long.
TEST_F(SlurmTest, AJobPastItsTimeLimitIsKilledAndItsRowSaysTimeout) {
  File("e,long,,,-,-,work.py,top,--seconds 600\n");
  Shell r = Trainbench(Schedule("--time-limit 1"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("TIMEOUT"), std::string::npos) << r.out;
  ExperimentRow row = Rows().rows[0];
  EXPECT_EQ(StatusWord(row.status), "KILLED") << row.status;
  EXPECT_NE(row.status.find("(Slurm: TIMEOUT"), std::string::npos) << row.status;
  EXPECT_NE(Slurp(dir_ / ".exp.e.long.slurm.sh").find("#SBATCH --time=1\n"), std::string::npos);
}

// GPUs are the node's business: the submitting machine (here without any) does not check
// them, the job asks Slurm for them (--gres=gpu:2), and Slurm's refusal (this cluster has
// no GPU GRES) reaches the user word for word, with the rows left as they were.
// A workload asking for more GPUs than any node has: sbatch's refusal, word for word.
TEST_F(SlurmTest, GpuRowsAskSlurmForTheirGpusAndARefusalIsSaid) {
  File("e,gpus,,,0+1+2,-,work.py,top,--seconds 1\n");
  Shell r = Trainbench(Schedule());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("sbatch refused workload gpus: sbatch: error:"), std::string::npos) << r.out << r.err;
  EXPECT_NE(Slurp(dir_ / ".exp.e.gpus.slurm.sh").find("#SBATCH --gres=gpu:3\n"), std::string::npos);
  EXPECT_EQ(Rows().rows[0].status, "");
}

// GPU rows through Slurm's GRES on the simulated GPU: the job gets two GPUs, its rows run on
// them, each run's nvml listener watches only its own.
TEST_F(SlurmTest, GpuRowsRunOnTheGpusSlurmGivesTheJob) {
  if (slurm_->gpus() < 2) GTEST_SKIP() << "the test cluster has no GPU GRES: " << slurm_->gres_error();
  UseSimulatedGpu(R"({"gpus": [
      {"uuid": "GPU-00000000-1111-2222-3333-444444444444", "metrics": {"power_w": 80}},
      {"uuid": "GPU-55555555-6666-7777-8888-999999999999", "metrics": {"power_w": 90}}]})");
  File(
      "e,pair,,,0,-,work.py,top+nvml,--seconds 1\n"
      "e,pair,,,1,-,work.py,top+nvml,--seconds 1 --seed 2\n");
  Shell r = Trainbench(Schedule());
  ASSERT_EQ(r.code, 0) << r.out << r.err << Slurp(dir_ / ".exp.e.pair.slurm.out");
  std::unique_ptr<Store> store = Store::Open(uri_).value();
  std::set<std::string> devices;
  for (const ExperimentRow& row : Rows().rows) {
    EXPECT_EQ(StatusWord(row.status), "FINISHED") << row.status;
    RunRecord run = store->FindRun(row.run).value();
    devices.insert(run.devices);
    std::string other = run.devices == "0" ? "1" : "0";
    EXPECT_FALSE(Series(*store, run.id, "gpu.power.draw_watts", "gpu=" + run.devices).empty()) << run.devices;
    EXPECT_TRUE(Series(*store, run.id, "gpu.power.draw_watts", "gpu=" + other).empty()) << "only its own GPU";
  }
  EXPECT_EQ(devices, (std::set<std::string>{"0", "1"}));
}

TEST_F(SlurmTest, NothingIsSubmittedWithoutAStoreTheNodesReach) {
  File("e,alone,,,-,-,work.py,top,--seconds 1\n");
  size_t before = JobsKnown();
  Shell r = Trainbench("schedule exp.csv --slurm --store local.db");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--store postgresql://"), std::string::npos) << r.err;
  EXPECT_EQ(JobsKnown(), before);
  EXPECT_EQ(Rows().rows[0].status, "");
}

// One run across two nodes: a real two-node cluster (two slurmd on this machine, each a
// node of its own), one `srun -N2 trainbench run --distributed` step.
const char* const kDistributedScript =
    "import os, sys, time, trainbench\n"
    "rank = int(os.environ['TRAINBENCH_NODE_RANK'])\n"
    "print('rank', rank, 'on', os.environ['TRAINBENCH_NODE'], flush=True)\n"
    "with trainbench.Run(all_ranks='--all-ranks' in sys.argv) as run:\n"
    "    for i in range(10):\n"
    "        run.log_metric('loss', 1.0 / (i + 1) + rank, step=i)\n"
    "        time.sleep(0.1)\n"
    "    run.epoch(1)\n"
    "time.sleep(2 * rank)  # the second node's part ends later\n"
    "sys.exit(3 if rank == 1 and '--fail' in sys.argv else 0)\n";

class SlurmDistributedTest : public CliTest {
 protected:
  static void SetUpTestSuite() {
    slurm_ = new SlurmCluster(2);
    postgres_ = new PostgresCluster();
  }
  static void TearDownTestSuite() {
    delete slurm_;
    delete postgres_;
  }
  void SetUp() override {
    if (!slurm_->ok()) GTEST_SKIP() << "no two-node Slurm cluster can start here: " << slurm_->error();
    ASSERT_TRUE(postgres_->ok()) << postgres_->error();
    uri_ = postgres_->CreateDatabase("dist" + std::to_string(++databases_));
    std::ofstream(dir_ / "dist.py") << kDistributedScript;
  }
  // srun's step of one task on each node, every task a part of one run.
  Shell Srun(const std::string& script_args) {
    return Run(slurm_->env() + " srun -N2 --ntasks-per-node=1 " + kTrainbench +
               " run --distributed -q -e dist " + "-i 250ms -l top --store " + uri_ +
               " -- /usr/bin/python3 dist.py " + script_args);
  }
  RunRecord OnlyRun(Store& store) {
    std::vector<RunRecord> runs = store.ListRuns("dist").value();
    EXPECT_EQ(runs.size(), 1u) << "one run, whatever the number of nodes";
    return runs.empty() ? RunRecord() : runs.front();
  }
  std::set<std::string> LabelsOf(Store& store, const std::string& run_id, const std::string& metric) {
    std::set<std::string> out;
    for (const SeriesInfo& s : store.ListSeries(run_id).value())
      if (s.metric == metric) out.insert(s.labels);
    return out;
  }

  static SlurmCluster* slurm_;
  static PostgresCluster* postgres_;
  static int databases_;
  std::string uri_;
};
SlurmCluster* SlurmDistributedTest::slurm_ = nullptr;
PostgresCluster* SlurmDistributedTest::postgres_ = nullptr;
int SlurmDistributedTest::databases_ = 0;

TEST_F(SlurmDistributedTest, EachNodeSamplesItselfIntoOneRunAndTheScriptLogsOnce) {
  ASSERT_EQ(slurm_->nodes().size(), 2u);
  Shell r = Srun("");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::unique_ptr<Store> store = Store::Open(uri_).value();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kFinished);
  std::map<std::string, std::string> tags(run.tags.begin(), run.tags.end());
  EXPECT_EQ(tags["trainbench.nodes"], "2");
  EXPECT_EQ(tags["trainbench.node.0"], "tbnode1");
  EXPECT_EQ(tags["trainbench.node.1"], "tbnode2");
  // The report names both nodes of the run.
  Shell report = Trainbench("report dist --format csv --store " + uri_);
  EXPECT_NE(report.out.find("tbnode1 tbnode2"), std::string::npos) << report.out << report.err;
  EXPECT_FALSE(tags["slurm.job_id"].empty());
  // Each node's host metrics, labelled with its node.
  std::set<std::string> nodes;
  for (const SeriesInfo& s : store->ListSeries(run.id).value()) {
    Labels labels = Labels::Parse(s.labels);
    if (labels.Has("node")) nodes.insert(std::string(labels.Get("node")));
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"tbnode1", "tbnode2"}));
  std::set<std::string> cpu = LabelsOf(*store, run.id, "host.cpu.utilization_ratio");
  EXPECT_EQ(cpu.count("node=tbnode1") + cpu.count("node=tbnode2"), 2u) << "each node's CPU, labelled";
  // The script's metric once: rank 0's ten values, not rank 1's.
  EXPECT_EQ(LabelsOf(*store, run.id, "train.loss"), std::set<std::string>{""});
  std::vector<Point> loss = Series(*store, run.id, "train.loss");
  ASSERT_EQ(loss.size(), 10u);
  EXPECT_DOUBLE_EQ(loss.front().value, 1.0);
  // The run ends with the later part, and both parts' starts and ends are events.
  int starts = 0, ends = 0, epochs = 0;
  int64_t last_end = 0;
  for (const EventRecord& e : store->ListEvents(run.id).value()) {
    starts += e.kind == "part.start";
    epochs += e.kind == "epoch";
    if (e.kind == "part.end") {
      ++ends;
      last_end = std::max(last_end, e.time_ms);
    }
  }
  EXPECT_EQ(starts, 2);
  EXPECT_EQ(ends, 2);
  EXPECT_EQ(epochs, 1) << "rank 0's events only";
  EXPECT_EQ(run.end_ms, last_end);
  // Each node's output is kept: part 0's as the run's, the other's under its node.
  // (A small log is kept in the shared database, where every machine reads it.)
  EXPECT_NE(store->GetArtifact(run.id, "stdout.log")->content.find("rank 0 on tbnode1"), std::string::npos);
  EXPECT_NE(store->GetArtifact(run.id, "node-tbnode2/stdout.log")->content.find("rank 1 on tbnode2"),
            std::string::npos);
}

TEST_F(SlurmDistributedTest, EveryRankLogsWhenAskedAndAFailedNodeFailsTheRun) {
  Shell r = Srun("--all-ranks --fail");
  EXPECT_NE(r.code, 0) << "srun says a task failed";
  std::unique_ptr<Store> store = Store::Open(uri_).value();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kFailed);
  EXPECT_NE(run.reason.find("tbnode2: exit code 3"), std::string::npos) << run.reason;
  EXPECT_EQ(LabelsOf(*store, run.id, "train.loss"), (std::set<std::string>{"rank=0", "rank=1"}));
  EXPECT_DOUBLE_EQ(Series(*store, run.id, "train.loss", "rank=1").front().value, 2.0);
}

TEST(SlurmParsing, JobStatesScriptsAndOutcomes) {
  Result<SlurmJobState> s = ParseScontrolJob(
      "JobId=7 JobName=x JobState=TIMEOUT Reason=TimeLimit Dependency=(null) RunTime=00:01:04 "
      "TimeLimit=00:01:00 NodeList=gpu03");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->state, "TIMEOUT");
  EXPECT_FALSE(s->Active());
  EXPECT_EQ(s->nodes, "gpu03");
  EXPECT_EQ(SlurmOutcome(*s), "KILLED (Slurm: TIMEOUT, TimeLimit)");
  EXPECT_TRUE(ParseScontrolJob("JobId=8 JobState=PENDING Reason=Priority")->Active());
  Result<SlurmJobState> failed = ParseScontrolJob("JobId=9 JobState=FAILED Reason=NonZeroExitCode");
  EXPECT_FALSE(failed->EndedBySlurm());
  EXPECT_EQ(SlurmOutcome(*failed), "FAILED (Slurm: FAILED, NonZeroExitCode)");
  EXPECT_TRUE(ParseScontrolJob("JobId=10 JobState=NODE_FAIL Reason=NodeDown")->EndedBySlurm());
  EXPECT_FALSE(ParseScontrolJob("slurm_load_jobs error: Invalid job id specified").ok());

  Workload w;
  for (const char* devices : {"0", "1+2", "-"}) {
    PlannedRun r;
    r.row.devices = devices;
    w.runs.push_back(r);
  }
  EXPECT_EQ(GpusOfWorkload(w), 3);
  // Inside the job GPU k is the job's k-th: a row on GPU 1 needs two; a UUID one more.
  Workload sparse;
  for (const char* devices : {"1", "GPU-1234"}) {
    PlannedRun r;
    r.row.devices = devices;
    sparse.runs.push_back(r);
  }
  EXPECT_EQ(GpusOfWorkload(sparse), 3);
  std::string script = SlurmBatchScript({"trainbench:e/w",
                                         "/x/.e.w.slurm.out",
                                         3,
                                         "gpu",
                                         "",
                                         "1:00:00",
                                         {"/usr/bin/trainbench", "schedule", "/x/it's.csv"}});
  EXPECT_NE(script.find("#SBATCH --gres=gpu:3\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --partition=gpu\n"), std::string::npos);
  EXPECT_EQ(script.find("--account"), std::string::npos);
  EXPECT_NE(script.find("exec '/usr/bin/trainbench' 'schedule' '/x/it'\\''s.csv'\n"), std::string::npos)
      << script;
}

}  // namespace
}  // namespace tb
