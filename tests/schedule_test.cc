// `trainbench schedule` with real child processes: experiment files in radT's format,
// concurrent runs of a workload, write-back, failures, Ctrl-C and resume, bad files.
#include <signal.h>

#include <thread>

#include "platform/process.h"
#include "schedule/experiment_file.h"
#include "tests/helpers/cli_fixture.h"

namespace tb {
namespace {

// Sleeps --seconds (30 while the file "slow" exists), logs one value, fails on --fail.
const char* kScript = R"(
import os, sys, time, trainbench
args = sys.argv
secs = 30.0 if os.path.exists("slow") else float(args[args.index("--seconds") + 1])
if "SEEN" in os.environ:  # what a run with an Env cell sees
    with open(os.environ["SEEN"], "w") as f:
        f.write(sys.executable + " " + os.environ.get("VIRTUAL_ENV", "") + " " + os.environ.get("FOO", ""))
if "CUDA_MPS_PIPE_DIRECTORY" in os.environ:  # what an MPS run sees
    with open("mps-" + os.environ["TRAINBENCH_RUN_ID"], "w") as f:
        f.write(os.environ["CUDA_MPS_PIPE_DIRECTORY"] + " " + os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "") + " "
                + str(os.path.exists(os.path.join(os.environ["CUDA_MPS_PIPE_DIRECTORY"], "control"))))
with trainbench.Run() as run:
    run.log_metric("loss", secs)
    time.sleep(secs)
if "--fail" in args:
    sys.exit(3)
)";

class ScheduleTest : public CliTest {
 protected:
  void SetUp() override {
    std::ofstream(dir_ / "work.py") << kScript;
    env_ = "TRAINBENCH_PYTHON=/usr/bin/python3";
  }
  void File(const std::string& text) { std::ofstream(dir_ / "exp.csv") << text; }
  ExperimentFile Read() { return ParseExperimentFile(Slurp(dir_ / "exp.csv"), "exp.csv").value(); }
  size_t RunCount() { return OpenStore()->ListRuns("").value().size(); }
};

const char* kTwoWorkloads =
    "Experiment,Workload,Status,Run,Devices,Collocation,    File,Listeners,Params\n"
    "         e,       1,        ,   ,      -,          -, work.py,      top,--seconds 0.2\n"
    "         e,       2,        ,   ,      -,          -, work.py,      top,--seconds 1\n"
    "         e,       2,        ,   ,      -,          -, work.py,      top,--seconds 1 --fail\n";

TEST_F(ScheduleTest, WorkloadsRunInOrderTheirRunsTogetherAndStatusesAreWrittenBack) {
  File(kTwoWorkloads);
  Shell r = Trainbench("exp.csv");  // radT's form
  EXPECT_EQ(r.code, 1) << r.err;    // one run failed; the experiment went on
  ExperimentFile f = Read();
  ASSERT_EQ(f.rows.size(), 3u);
  EXPECT_EQ(f.rows[0].status, "FINISHED");
  EXPECT_EQ(f.rows[1].status, "FINISHED");
  EXPECT_EQ(f.rows[2].status, "FAILED");
  EXPECT_EQ(f.lines[0], "Experiment,Workload,Status,Run,Devices,Collocation,    File,Listeners,Params");
  EXPECT_NE(f.lines[1].find(",      -,          -, work.py,      top,--seconds 0.2"), std::string::npos)
      << f.lines[1];

  auto store = OpenStore();
  RunRecord first = store->FindRun(f.rows[0].run).value();
  RunRecord a = store->FindRun(f.rows[1].run).value();
  RunRecord b = store->FindRun(f.rows[2].run).value();
  EXPECT_EQ(a.workload, "2");
  EXPECT_EQ(b.exit_code, 3);
  EXPECT_LE(first.end_ms, a.start_ms);                          // workloads one after another
  EXPECT_TRUE(a.start_ms < b.end_ms && b.start_ms < a.end_ms);  // runs of a workload together
  EXPECT_LT(std::abs(a.start_ms - b.start_ms), 500);
  EXPECT_NE(r.err.find("[A-] trainbench: run"), std::string::npos) << r.err;  // output behind each letter
  EXPECT_NE(r.err.find("[B-] trainbench: run"), std::string::npos) << r.err;
  EXPECT_EQ(Series(*store, a.id, "train.loss").size(), 1u);

  // The next start skips FINISHED rows; --rerun runs the FAILED one again.
  Shell again = Trainbench("schedule exp.csv");
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(RunCount(), 3u);
  Shell rerun = Trainbench("schedule --rerun exp.csv");
  EXPECT_EQ(rerun.code, 1);
  EXPECT_EQ(RunCount(), 4u);
  EXPECT_NE(Read().rows[2].run, f.rows[2].run);
}

TEST_F(ScheduleTest, CtrlCStopsTheRunsInFlightAndTheNextStartResumes) {
  File(kTwoWorkloads);
  std::ofstream(dir_ / "slow") << "";
  SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c",
                "cd " + dir_.string() + " && TRAINBENCH_PYTHON=/usr/bin/python3 TRAINBENCH_STORE=" + db_ +
                    " exec " + kTrainbench + " schedule exp.csv > sched.out 2> sched.err"};
  ChildProcess scheduler = ChildProcess::Spawn(spawn).value();
  // Wait until workload 1 is running, then interrupt.
  for (int i = 0; i < 100 && RunCount() < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  kill(scheduler.pid(), SIGINT);
  ExitInfo exit = scheduler.Wait().value();
  EXPECT_EQ(exit.exit_code, 130) << Slurp(dir_ / "sched.err");
  ExperimentFile f = Read();
  EXPECT_EQ(f.rows[0].status, "KILLED");
  EXPECT_EQ(f.rows[1].status, "");  // never started
  EXPECT_EQ(OpenStore()->FindRun(f.rows[0].run)->status, kKilled);

  fs::remove(dir_ / "slow");
  Shell resume = Trainbench("schedule exp.csv");
  EXPECT_EQ(resume.code, 1) << resume.err;
  ExperimentFile after = Read();
  EXPECT_EQ(after.rows[0].status, "FINISHED");
  EXPECT_NE(after.rows[0].run, f.rows[0].run);
  EXPECT_EQ(after.rows[1].status, "FINISHED");
  EXPECT_EQ(RunCount(), 4u);
}

TEST_F(ScheduleTest, BadFilesAreRefusedBeforeAnythingRunsAndDryRunChangesNothing) {
  const std::string header = "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n";
  struct Case {
    std::string rows, expected;
  } cases[] = {
      {"e,1,,,-,-,work.py,top,\ne,2,,,-,sideways,work.py,top,\n", "exp.csv:3: column Collocation"},
      {"e,1,,,-,-,missing.py,top,\n", "exp.csv:2: column File: missing.py does not exist"},
      {"e,1,,,zero,-,work.py,top,\n", "exp.csv:2: column Devices"},
      {"e,1,,,-,-,work.py,top\n", "exp.csv:2: 8 cells, but the header has 9"},
  };
  for (const Case& c : cases) {
    File(header + c.rows);
    Shell r = Trainbench("schedule exp.csv");
    EXPECT_NE(r.code, 0) << c.rows;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_EQ(Slurp(dir_ / "exp.csv"), header + c.rows);
  }
  File(kTwoWorkloads);
  Shell dry = Trainbench("schedule --dry-run exp.csv");
  EXPECT_EQ(dry.code, 0) << dry.err;
  EXPECT_NE(dry.out.find("--seconds 1 --fail"), std::string::npos) << dry.out;
  EXPECT_EQ(Slurp(dir_ / "exp.csv"), kTwoWorkloads);
  EXPECT_FALSE(fs::exists(dir_ / "tb.db"));
}

TEST_F(ScheduleTest, TheEnvColumnSetsVariablesAndChoosesAVenv) {
  fs::create_directories(dir_ / "venv" / "bin");
  fs::create_symlink("/usr/bin/python3", dir_ / "venv" / "bin" / "python");
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params,Env\n"
      "e,1,,,-,-,work.py,top,--seconds 0.1,venv FOO=bar SEEN=seen.txt\n"
      "e,2,,,-,-,work.py,top,--seconds 0.1,no-such-env\n");
  Shell bad = Trainbench("schedule exp.csv");
  EXPECT_NE(bad.err.find("exp.csv:3: column Env"), std::string::npos) << bad.err;
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params,Env\n"
      "e,1,,,-,-,work.py,top,--seconds 0.1,venv FOO=bar SEEN=seen.txt\n");
  Shell r = Trainbench("schedule exp.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  std::string seen = Slurp(dir_ / "seen.txt");
  EXPECT_NE(seen.find((dir_ / "venv" / "bin" / "python").string()), std::string::npos) << seen;
  EXPECT_NE(seen.find(" bar"), std::string::npos) << seen;
  EXPECT_NE(OnlyRun(*OpenStore()).command.find("venv/bin/python"), std::string::npos);
}

TEST_F(ScheduleTest, MpsWorkloadsGetTheirOwnDaemonWhichStopsAfterwardsEvenWhenRunsFail) {
  env_ += " PATH=" + std::string(TRAINBENCH_SIM_BIN) + ":$PATH";
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,1,,,0,MPS:50,work.py,top,--seconds 0.3\n"
      "e,1,,,0,MPS:50,work.py,top,--seconds 0.3 --fail\n"
      "e,2,,,0,-,work.py,top,--seconds 0.1\n");
  Shell r = Trainbench("schedule exp.csv");
  EXPECT_EQ(r.code, 1) << r.err;
  ExperimentFile f = Read();
  EXPECT_EQ(f.rows[0].status, "FINISHED");
  EXPECT_EQ(f.rows[1].status, "FAILED");
  EXPECT_EQ(f.rows[2].status, "FINISHED");
  // Both runs of the MPS workload saw the same daemon, running, and the percentage.
  std::string a = Slurp(dir_ / ("mps-" + f.rows[0].run)), b = Slurp(dir_ / ("mps-" + f.rows[1].run));
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find(" 50 True"), std::string::npos) << a;
  std::string pipe = a.substr(0, a.find(' '));
  EXPECT_FALSE(fs::exists(pipe + "/control"));  // quit after the workload, though a run failed
  std::string log = Slurp(fs::path(pipe).parent_path() / "log" / "control.log");
  EXPECT_NE(log.find("Startup CUDA_VISIBLE_DEVICES=0"), std::string::npos) << log;
  EXPECT_NE(log.find("quit"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir_ / ("mps-" + f.rows[2].run)));  // the naive workload has no daemon
  fs::remove_all(fs::path(pipe).parent_path());

  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\ne,1,,,0,MPS:0,work.py,top,"
      "\n");
  Shell bad = Trainbench("schedule exp.csv");
  EXPECT_NE(bad.err.find("exp.csv:2: column Collocation"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace tb
