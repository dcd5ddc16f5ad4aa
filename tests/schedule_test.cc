// `trainbench schedule` with real child processes: experiment files in radT's format,
// concurrent runs of a workload, write-back, failures, Ctrl-C and resume, bad files.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <map>
#include <sstream>
#include <thread>

#include "analyze/report.h"
#include "base/strings.h"
#include "platform/process.h"
#include "schedule/experiment_file.h"
#include "tests/helpers/cli_fixture.h"

namespace tb {
namespace {

// Sleeps --seconds (30 while the file "slow" exists), logs one value, fails on --fail.
const char* kScript = R"(
import os, subprocess, sys, time, trainbench
args = sys.argv
secs = 30.0 if os.path.exists("slow") else float(args[args.index("--seconds") + 1])
if "SEEN" in os.environ:  # what a run with an Env cell sees
    with open(os.environ["SEEN"], "w") as f:
        f.write(sys.executable + " " + os.environ.get("VIRTUAL_ENV", "") + " " + os.environ.get("FOO", ""))
if "--seen" in args:  # what the run saw: its devices and arguments
    with open("seen-" + os.environ["TRAINBENCH_RUN_ID"], "w") as f:
        f.write(os.environ.get("CUDA_VISIBLE_DEVICES", "") + " " + " ".join(args[1:]))
if "CUDA_MPS_PIPE_DIRECTORY" in os.environ:  # what an MPS run sees
    with open("mps-" + os.environ["TRAINBENCH_RUN_ID"], "w") as f:
        f.write(os.environ["CUDA_MPS_PIPE_DIRECTORY"] + " " + os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "") + " "
                + str(os.path.exists(os.path.join(os.environ["CUDA_MPS_PIPE_DIRECTORY"], "control"))))
        # What CUDA would see through the daemon (the simulated GPU's stand-in for a CUDA program).
        seen = subprocess.run(["cuda-visible-devices"], capture_output=True, text=True)
        f.write(" cuda=%d:%s%s" % (seen.returncode, seen.stdout.strip(), seen.stderr.strip()))
with trainbench.Run() as run:
    run.log_metric("loss", secs)
    time.sleep(secs)
if "--fail" in args:
    sys.exit(3)
)";

// A script that starts up for START seconds, trains STEPS steps of 0.1 s (64 samples
// each) through the trainbench client, and lives on for TAIL seconds.
const char* const kSteppedScript =
    "import os\n"
    "if 'COMM' in os.environ:  # the name the simulated GPU knows it by, from the start\n"
    "    open('/proc/self/comm', 'w').write(os.environ['COMM'])\n"
    "import time, trainbench\n"
    "time.sleep(float(os.environ['START']))\n"
    "with trainbench.Run() as run:\n"
    "    for i in range(int(os.environ['STEPS'])):\n"
    "        with run.step_timer(samples=64):\n"
    "            time.sleep(0.1)\n"
    "    run.flush()\n"
    "    time.sleep(float(os.environ['TAIL']))\n";

class ScheduleTest : public CliTest {
 protected:
  void SetUp() override {
    std::ofstream(dir_ / "work.py") << kScript;
    env_ = "TRAINBENCH_PYTHON=/usr/bin/python3";
  }
  void File(const std::string& text) { std::ofstream(dir_ / "exp.csv") << text; }
  // Schedules `rows` (with an Env column) of runs of kSteppedScript; they must finish.
  void ScheduleStepped(const std::string& rows) {
    std::ofstream(dir_ / "stepped.py") << kSteppedScript;
    File("Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params,Env\n" + rows);
    Shell r = Trainbench("schedule exp.csv");
    ASSERT_EQ(r.code, 0) << r.out << r.err;
  }
  ExperimentFile Read() { return ParseExperimentFile(Slurp(dir_ / "exp.csv"), "exp.csv").value(); }
  size_t RunCount() { return OpenStore()->ListRuns("").value().size(); }
  // Waits up to 10 s until the store holds `n` runs.
  void WaitForRuns(size_t n) {
    for (int i = 0; i < 200 && RunCount() < n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // `trainbench schedule exp.csv` in the background, its output in sched.out and sched.err.
  ChildProcess StartSchedule() {
    SpawnOptions spawn;
    spawn.argv = {"/bin/sh", "-c",
                  "cd " + dir_.string() + " && TRAINBENCH_PYTHON=/usr/bin/python3 TRAINBENCH_STORE=" + db_ +
                      " exec " + kTrainbench + " schedule exp.csv > sched.out 2> sched.err"};
    return ChildProcess::Spawn(spawn).value();
  }
  // A Status cell's outcome ("FINISHED work.py A-" -> FINISHED).
  static std::string Outcome(const ExperimentRow& row) { return row.status.substr(0, row.status.find(' ')); }
  // The simulated GPU: GPU 0 without MIG, GPU 1 in MIG mode with no instances yet.
  void SimulatedGpu() {
    UseSimulatedGpu(R"({"gpus": [
      {"uuid": "GPU-00000000-1111-2222-3333-444444444444", "metrics": {"power_w": 80, "util_gpu_pct": 50, "util_mem_pct": 20}},
      {"uuid": "GPU-55555555-6666-7777-8888-999999999999", "mig_mode": "Enabled", "metrics": {"power_w": 90}}]})");
  }
};

const char* kTwoWorkloads =
    "Experiment,Workload,Status,Run,Devices,Collocation,    File,Listeners,Params\n"
    "         e,       1,        ,   ,      -,          -, work.py,      top,--seconds 0.2\n"
    "         e,       2,        ,   ,      -,          -, work.py,      top,--seconds 1\n"
    "         e,       2,        ,   ,      -,          -, work.py,      top,--seconds 1 --fail\n";

TEST_F(ScheduleTest, WorkloadsRunInOrderTheirRunsTogetherAndStatusesAreWrittenBack) {
  File(kTwoWorkloads);
  fs::permissions(dir_ / "exp.csv", fs::perms(0644));  // shared with the group, as the user set it
  Shell r = Trainbench("exp.csv");                     // radT's form
  EXPECT_EQ(r.code, 1) << r.err;                       // one run failed; the experiment went on
  EXPECT_EQ(fs::status(dir_ / "exp.csv").permissions(), fs::perms(0644));  // written back, mode kept
  ExperimentFile f = Read();
  ASSERT_EQ(f.rows.size(), 3u);
  EXPECT_EQ(Outcome(f.rows[0]), "FINISHED");
  EXPECT_EQ(Outcome(f.rows[1]), "FINISHED");
  EXPECT_EQ(Outcome(f.rows[2]), "FAILED");
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
  // Progress in words: "1 run", "2 runs".
  EXPECT_NE(r.out.find("exp.csv: 2 workloads, 2 to run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("workload 1 of 2 (e/1): 1 run; "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("workload 2 of 2 (e/2): 2 runs; "), std::string::npos) << r.out;

  // The next start skips finished workloads; --rerun (radT's option before the file) runs a
  // workload with a FAILED run again, both of its runs together, as radT does.
  Shell again = Trainbench("schedule exp.csv");
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(RunCount(), 3u);
  Shell rerun = Trainbench("--rerun exp.csv");
  EXPECT_EQ(rerun.code, 1) << rerun.err;
  EXPECT_EQ(RunCount(), 5u);
  ExperimentFile after = Read();
  EXPECT_EQ(after.rows[0].run, f.rows[0].run);
  EXPECT_NE(after.rows[1].run, f.rows[1].run);
  EXPECT_NE(after.rows[2].run, f.rows[2].run);
  RunRecord a2 = store->FindRun(after.rows[1].run).value();
  RunRecord b2 = store->FindRun(after.rows[2].run).value();
  EXPECT_TRUE(a2.start_ms < b2.end_ms && b2.start_ms < a2.end_ms);
}

TEST_F(ScheduleTest, RadtsScriptFormRunsOneRunWithItsOptionsAndTheWordsAsTyped) {
  Shell r =
      Trainbench("-e 3 -w 7 -c nan -t 5 work.py --seconds 0.1 --seen trainer.max_epochs=2 batch-size=128");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  std::vector<RunRecord> runs = store->ListRuns("3").value();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].workload, "7");
  EXPECT_EQ(runs[0].status, "FINISHED");
  // The script saw its words unchanged (no GPU here: no devices).
  EXPECT_EQ(Slurp(dir_ / ("seen-" + runs[0].id)),
            " --seconds 0.1 --seen trainer.max_epochs=2 batch-size=128");
  // Nothing to write back: no file was given.
  EXPECT_FALSE(fs::exists(dir_ / "exp.csv"));
}

// radT 0.2.29's experiment file as its users write it: a Name column (runs named "(W L)
// Name"), radT's default listeners with free and macmon (skipped on Linux, the run goes on),
// a MaxTime that ends a run as planned: FINISHED, written back, and not run again on resume.
TEST_F(ScheduleTest, Radt0229sNameListenersAndTimeLimitsRunAndResumeAsRadtsDo) {
  File(
      "Experiment,Workload,Name,Status,Run,Devices,Collocation,File,Listeners,Params,MaxTime\n"
      "e,1,baseline,,,-,-,work.py,top+iostat+free+macmon,--seconds 0.2,\n"
      "e,2,,,,-,-,work.py,none,--seconds 30,1s\n");
  Shell r = Trainbench("schedule exp.csv");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("listener macmon reads Apple silicon under macOS: skipped on Linux"),
            std::string::npos)
      << r.err;
  ExperimentFile f = Read();
  ASSERT_EQ(f.rows.size(), 2u);
  EXPECT_EQ(Outcome(f.rows[0]), "FINISHED");
  EXPECT_EQ(Outcome(f.rows[1]), "FINISHED") << "a time limit is a planned end";
  auto store = OpenStore();
  RunRecord named = store->FindRun(f.rows[0].run).value();
  EXPECT_EQ(named.name, "(1 A-) baseline");  // radT's letter: A, then the collocation
  EXPECT_EQ(named.listeners, "top+iostat+free");
  RunRecord limited = store->FindRun(f.rows[1].run).value();
  EXPECT_EQ(limited.listeners, "none");
  EXPECT_NE(limited.reason.find("maximum run time"), std::string::npos) << limited.reason;
  EXPECT_EQ(limited.name, "work.py A-");
  Shell again = Trainbench("schedule exp.csv");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(RunCount(), 2u) << "nothing ran again";
}

TEST_F(ScheduleTest, RadtsOptionsTrainbenchCannotHonourAreRefusedByNameBeforeAnythingRuns) {
  for (std::string args : {"-x 1 work.py", "-i five work.py", "-d 0 exp.csv"}) {
    File(kTwoWorkloads);
    Shell r = Trainbench(args);
    EXPECT_NE(r.code, 0) << args;
    std::string option = args.substr(0, args.find(' '));
    EXPECT_NE(r.err.find(option), std::string::npos) << args << ": " << r.err;
  }
  EXPECT_EQ(RunCount(), 0u);
}

TEST_F(ScheduleTest, CtrlCStopsTheRunsInFlightAndTheNextStartResumes) {
  File(kTwoWorkloads);
  std::ofstream(dir_ / "slow") << "";
  ChildProcess scheduler = StartSchedule();
  // Wait until workload 1 is running, then interrupt.
  WaitForRuns(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  kill(scheduler.pid(), SIGINT);
  ExitInfo exit = scheduler.Wait().value();
  EXPECT_EQ(exit.exit_code, 130) << Slurp(dir_ / "sched.err");
  ExperimentFile f = Read();
  EXPECT_EQ(Outcome(f.rows[0]), "KILLED");
  EXPECT_EQ(f.rows[1].status, "");  // never started
  EXPECT_EQ(OpenStore()->FindRun(f.rows[0].run)->status, kKilled);

  fs::remove(dir_ / "slow");
  Shell resume = Trainbench("schedule exp.csv");
  EXPECT_EQ(resume.code, 1) << resume.err;
  ExperimentFile after = Read();
  EXPECT_EQ(Outcome(after.rows[0]), "FINISHED");
  EXPECT_NE(after.rows[0].run, f.rows[0].run);
  EXPECT_EQ(Outcome(after.rows[1]), "FINISHED");
  EXPECT_EQ(RunCount(), 4u);
  // The report counts the attempt that finished, not the interrupted one.
  Result<ExperimentReport> report = BuildReport(*OpenStore(), "e");
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->workloads.size(), 2u);
  EXPECT_EQ(report->workloads[0].runs.size(), 1u);
  EXPECT_EQ(report->workloads[0].runs[0].id, after.rows[0].run);
  EXPECT_EQ(report->workloads[0].collocation, "alone");
  bool said = false;
  for (const std::string& c : report->caveats)
    said |= c.find("interrupted attempt left out") != std::string::npos;
  EXPECT_TRUE(said);
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
      {"e,1,,,-,-,work.py,top+gpu,\n", "exp.csv:2: column Listeners: unknown listener 'gpu'"},
      {std::string(300, 'e') + ",1,,,-,-,work.py,top,\n",
       "exp.csv:2: column Experiment: experiment names are at most 256"},
      {"e,1,,,-,-,work.py,top,\"--a\n", "exp.csv:2: a quote is not closed"},
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

// radT's CSV as radT reads it: File from the working directory (from the experiment file's
// folder only where the working directory has none, and where both have one, which ran is
// said), Listeners in any case.
TEST_F(ScheduleTest, FileIsReadFromTheWorkingDirectoryAsRadtDoesAndListenersInAnyCase) {
  fs::create_directories(dir_ / "exps");
  std::ofstream(dir_ / "which.py") << "print('from the working directory')\n";
  std::ofstream(dir_ / "exps" / "which.py") << "print('beside the csv')\n";
  std::ofstream(dir_ / "exps" / "only_beside.py") << "print('only beside')\n";
  std::ofstream(dir_ / "exps" / "exp.csv")
      << "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
         "e,1,,,-,-,which.py,Top,\n"
         "e,2,,,-,-,only_beside.py,TOP+Iostat,\n";
  Shell r = Trainbench("schedule exps/exp.csv");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("from the working directory"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("beside the csv"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("only beside"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("File which.py is " + (dir_ / "which.py").string()), std::string::npos) << r.err;
  std::vector<RunRecord> runs = OpenStore()->ListRuns("e").value();
  ASSERT_EQ(runs.size(), 2u);
  for (const RunRecord& run : runs) EXPECT_TRUE(run.listeners.starts_with("top")) << run.listeners;
}

// NVIDIA's MPS guide: the daemon's CUDA_VISIBLE_DEVICES remaps what its clients see, so a
// client keeping the machine's index of a GPU other than 0 finds no device. MPS on GPUs 1
// and 2 of three must give every run those two GPUs.
TEST_F(ScheduleTest, MpsOnGpusOtherThanTheFirstReachesThoseGpus) {
  UseSimulatedGpu(R"({"gpus": [
      {"uuid": "GPU-00000000-1111-2222-3333-444444444444", "metrics": {"power_w": 80}},
      {"uuid": "GPU-11111111-1111-2222-3333-444444444444", "metrics": {"power_w": 81}},
      {"uuid": "GPU-22222222-1111-2222-3333-444444444444", "metrics": {"power_w": 82}}]})");
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,1,,,1+2,MPS,work.py,top,--seconds 0.2\n"
      "e,1,,,1+2,MPS,work.py,top,--seconds 0.2\n");
  Shell r = Trainbench("schedule exp.csv");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  ExperimentFile f = Read();
  for (const ExperimentRow& row : f.rows) {
    std::string seen = Slurp(dir_ / ("mps-" + row.run));
    EXPECT_NE(seen.find("cuda=0:0: GPU-11111111-1111-2222-3333-444444444444"), std::string::npos) << seen;
    EXPECT_NE(seen.find("1: GPU-22222222-1111-2222-3333-444444444444"), std::string::npos) << seen;
    EXPECT_EQ(seen.find("GPU-00000000"), std::string::npos) << seen;
  }
}

TEST_F(ScheduleTest, MpsWorkloadsGetTheirOwnDaemonWhichStopsAfterwardsEvenWhenRunsFail) {
  SimulatedGpu();
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,1,,,0,MPS:50,work.py,top,--seconds 0.3\n"
      "e,1,,,0,MPS:50,work.py,top,--seconds 0.3 --fail\n"
      "e,2,,,0,-,work.py,top,--seconds 0.1\n");
  Shell r = Trainbench("schedule exp.csv");
  EXPECT_EQ(r.code, 1) << r.err;
  ExperimentFile f = Read();
  EXPECT_EQ(Outcome(f.rows[0]), "FINISHED");
  EXPECT_EQ(Outcome(f.rows[1]), "FAILED");
  EXPECT_EQ(Outcome(f.rows[2]), "FINISHED");
  // Both runs of the MPS workload saw the same daemon, running, and the percentage.
  std::string a = Slurp(dir_ / ("mps-" + f.rows[0].run)), b = Slurp(dir_ / ("mps-" + f.rows[1].run));
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find(" 50 True"), std::string::npos) << a;
  std::string pipe = a.substr(0, a.find(' '));
  EXPECT_FALSE(fs::exists(pipe + "/control"));  // quit after the workload, though a run failed
  // The daemon's log is kept with both runs (an artifact of each), and its directory in
  // /tmp is gone.
  fs::path artifacts = db_ + ".artifacts";
  std::string log = Slurp(artifacts / f.rows[0].run / "mps-control.log");
  EXPECT_EQ(log, Slurp(artifacts / f.rows[1].run / "mps-control.log"));
  EXPECT_TRUE(OpenStore()->GetArtifact(f.rows[1].run, "mps-control.log").ok());
  EXPECT_FALSE(fs::exists(fs::path(pipe).parent_path())) << pipe;
  // The daemon is given the GPU's UUID (CUDA's syntax), and its clients see that GPU.
  EXPECT_NE(log.find("Startup CUDA_VISIBLE_DEVICES=GPU-00000000-1111-2222-3333-444444444444"),
            std::string::npos)
      << log;
  EXPECT_NE(a.find("cuda=0:0: GPU-00000000-1111-2222-3333-444444444444"), std::string::npos) << a;
  EXPECT_NE(log.find("quit"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir_ / ("mps-" + f.rows[2].run)));  // the naive workload has no daemon
  EXPECT_FALSE(fs::exists(artifacts / f.rows[2].run / "mps-control.log"));

  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\ne,1,,,0,MPS:0,work.py,top,"
      "\n");
  Shell bad = Trainbench("schedule exp.csv");
  EXPECT_NE(bad.err.find("exp.csv:2: column Collocation"), std::string::npos) << bad.err;
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,1,,,0,MPS,work.py,top,\ne,1,,,1,MPS,work.py,top,\n");
  Shell split = Trainbench("schedule exp.csv");
  EXPECT_NE(split.err.find("exp.csv:3: column Devices: the MPS runs of a workload share one daemon"),
            std::string::npos)
      << split.err;
}

TEST_F(ScheduleTest, MigWorkloadsGetTheirOwnInstancesWhichAreDestroyedAfterwards) {
  SimulatedGpu();
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,1,,,1,2g.10gb,work.py,top+nvml,--seconds 0.3 --seen\n"
      "e,1,,,1,2g.10gb,work.py,top+nvml,--seconds 0.3 --seen --fail\n"
      "e,2,,,1,3g.20gb,work.py,top,--seconds 0.1 --seen\n");
  Shell dry = Trainbench("schedule --dry-run exp.csv");
  EXPECT_NE(dry.out.find("<MIG 2g.10gb instance created on GPU 1>"), std::string::npos) << dry.out;
  EXPECT_FALSE(fs::exists(dir_ / "sim.json.mig.log"));  // a dry run creates nothing

  Shell r = Trainbench("schedule exp.csv");
  EXPECT_EQ(r.code, 1) << r.err;
  ExperimentFile f = Read();
  EXPECT_EQ(Outcome(f.rows[0]), "FINISHED");
  EXPECT_EQ(Outcome(f.rows[1]), "FAILED");
  EXPECT_EQ(Outcome(f.rows[2]), "FINISHED");
  // Each run saw its own MIG instance, by its UUID.
  std::string a = Slurp(dir_ / ("seen-" + f.rows[0].run)), b = Slurp(dir_ / ("seen-" + f.rows[1].run));
  EXPECT_EQ(a.rfind("MIG-", 0), 0u) << a;
  EXPECT_EQ(b.rfind("MIG-", 0), 0u) << b;
  EXPECT_NE(a.substr(0, a.find(' ')), b.substr(0, b.find(' ')));
  auto store = OpenStore();
  EXPECT_EQ(store->FindRun(f.rows[0].run)->devices, a.substr(0, a.find(' ')));
  // The GPU listener watched the MIG instance's GPU.
  EXPECT_FALSE(Series(*store, f.rows[0].run, "gpu.power.draw_watts", "gpu=1").empty());
  // Both instances of workload 1 were created in one call and destroyed (the failed run too),
  // compute instances first; nothing is left on the GPU.
  std::string log = Slurp(dir_ / "sim.json.mig.log");
  EXPECT_NE(log.find("-cgi 2g.10gb,2g.10gb -C => 0"), std::string::npos) << log;
  EXPECT_NE(log.find("-cgi 3g.20gb -C => 0"), std::string::npos) << log;
  for (const char* gi : {"-gi 1", "-gi 2"}) {
    size_t ci = log.find(std::string(gi) + " -ci 0 -dci => 0"), g = log.find(std::string(gi) + " -dgi => 0");
    EXPECT_NE(ci, std::string::npos) << log;
    EXPECT_NE(g, std::string::npos) << log;
    EXPECT_LT(ci, g) << log;
  }
  EXPECT_EQ(Slurp(dir_ / "sim.json.mig"), "");
}

TEST_F(ScheduleTest, MigIsCheckedBeforeAnythingRunsAndAFailedCreationSkipsOnlyItsWorkload) {
  SimulatedGpu();
  const std::string header = "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n";
  // GPU 0 is not in MIG mode: refused before workload 1 runs.
  File(header + "e,1,,,-,-,work.py,top,--seconds 0.1\ne,2,,,0,1g.5gb,work.py,top,--seconds 0.1\n");
  Shell off = Trainbench("schedule exp.csv");
  EXPECT_NE(off.err.find("exp.csv:3: column Collocation: 1g.5gb needs MIG mode on GPU 0, which is Disabled"),
            std::string::npos)
      << off.err;
  EXPECT_FALSE(fs::exists(dir_ / "tb.db"));
  // Devices must exist.
  File(header + "e,1,,,7,-,work.py,top,--seconds 0.1\n");
  Shell missing = Trainbench("schedule exp.csv");
  EXPECT_NE(missing.err.find("exp.csv:2: column Devices: GPU 7 does not exist"), std::string::npos)
      << missing.err;
  // Without root: refused before anything runs (setpriv drops to nobody).
  File(header + "e,1,,,1,1g.5gb,work.py,top,--seconds 0.1\n");
  fs::permissions(dir_, fs::perms::all);
  std::string as_nobody = "cd " + dir_.string() + " && " + env_ +
                          " setpriv --reuid=65534 --regid=65534 --clear-groups " + kTrainbench +
                          " schedule exp.csv 2> nobody.err";
  EXPECT_NE(std::system(as_nobody.c_str()), 0);
  EXPECT_NE(Slurp(dir_ / "nobody.err").find("column Collocation: creating MIG instances (1g.5gb) needs root"),
            std::string::npos)
      << Slurp(dir_ / "nobody.err");
  // More than the GPU holds: that workload fails, nothing stays created, the next one runs.
  File(header +
       "e,1,,,1,4g.20gb,work.py,top,--seconds 0.1\ne,1,,,1,4g.20gb,work.py,top,--seconds 0.1\n"
       "e,2,,,-,-,work.py,top,--seconds 0.1\n");
  Shell full = Trainbench("schedule exp.csv");
  EXPECT_EQ(full.code, 1) << full.err;
  EXPECT_NE(full.err.find("Insufficient Resources"), std::string::npos) << full.err;
  ExperimentFile f = Read();
  EXPECT_EQ(Outcome(f.rows[0]), "FAILED");
  EXPECT_EQ(f.rows[0].run, "");
  EXPECT_EQ(Outcome(f.rows[2]), "FINISHED");
  EXPECT_EQ(Slurp(dir_ / "sim.json.mig"), "");
  EXPECT_NE(Slurp(dir_ / "sim.json.mig.log").find("-gi 1 -dgi => 0"), std::string::npos);
}

TEST_F(ScheduleTest, NsightListenersWrapTheRunAndTheirReportsBecomeArtifacts) {
  SimulatedGpu();
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,1,,,0,-,work.py,top+nsys,--seconds 0.1 --seen\n"
      "e,1,,,0,-,work.py,top,--seconds 0.1\n"
      "e,2,,,0,-,work.py,ncuraw,--seconds 0.1 --seen yes\n"
      "e,3,,,0,-,work.py,ncuattach,--seconds 0.1\n");
  Shell r = Trainbench("schedule exp.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  ExperimentFile f = Read();
  auto store = OpenStore();
  auto artifact_names = [&](const std::string& run) {
    std::string names;
    for (const ArtifactRecord& a : store->ListArtifacts(run).value()) names += a.name + " ";
    return names;
  };
  // The report lands with the run, and names the script it profiled with radT's capture range.
  std::string nsys = artifact_names(f.rows[0].run);
  EXPECT_NE(nsys.find("nsys_e_1_0A-.nsys-rep"), std::string::npos) << nsys;
  std::string report = Slurp(fs::path(db_ + ".artifacts") / f.rows[0].run / "nsys_e_1_0A-.nsys-rep");
  EXPECT_NE(report.find("--capture-range nvtx --nvtx-capture profile"), std::string::npos) << report;
  EXPECT_NE(report.find("work.py --seconds 0.1 --seen"), std::string::npos) << report;
  EXPECT_EQ(artifact_names(f.rows[1].run).find(".nsys-rep"), std::string::npos);
  EXPECT_NE(artifact_names(f.rows[2].run).find("ncuraw_e_2_0A-.ncu-rep"), std::string::npos);
  // ncuattach starts the run for a profiler to attach to from elsewhere: no report here.
  EXPECT_EQ(artifact_names(f.rows[3].run).find(".ncu-rep"), std::string::npos);
  EXPECT_EQ(Outcome(f.rows[3]), "FINISHED");
  EXPECT_NE(r.out.find("Waiting for profiler to attach"), std::string::npos) << r.out;
  // The params are the script's, not the profiler's.
  RunRecord profiled = store->FindRun(f.rows[2].run).value();
  EXPECT_EQ(profiled.params, (KeyValues{{"seconds", "0.1"}, {"seen", "yes"}}));
  EXPECT_NE(Slurp(dir_ / ("seen-" + f.rows[2].run)).find("--seconds 0.1 --seen yes"), std::string::npos);
  // DCGM's profiling was paused for each profiled workload and resumed.
  EXPECT_EQ(Slurp(dir_ / "sim.json.dcgm-profiling-paused.log"),
            "pause\nresume\npause\nresume\npause\nresume\n");
  // The workload's interleaved output is kept with each of its runs.
  std::string wl = Slurp(fs::path(db_ + ".artifacts") / f.rows[1].run / "workload.log");
  EXPECT_NE(wl.find("[0A-] "), std::string::npos) << wl;
  EXPECT_NE(wl.find("[0B-] "), std::string::npos) << wl;
  EXPECT_NE(artifact_names(f.rows[0].run).find("workload.log"), std::string::npos);
  // The summary table lists every run.
  EXPECT_NE(r.out.find("e/2                  0A-            FINISHED"), std::string::npos) << r.out;
}

TEST_F(ScheduleTest, EditsMadeWhileItRunsAreKeptAndStatusesFindTheirRows) {
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,1,,,-,-,work.py,top,--seconds 1.5\n"
      "e,2,,,-,-,work.py,top,--seconds 0.1\n");
  ChildProcess scheduler = StartSchedule();
  WaitForRuns(1);
  // While workload 1 runs, the user adds a row above it and changes workload 2's params.
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,0,,,-,-,work.py,top,--seconds 0.1\n"
      "e,1,,,-,-,work.py,top,--seconds 1.5\n"
      "e,2,,,-,-,work.py,top,--seconds 0.2\n");
  ExitInfo exit = scheduler.Wait().value();
  EXPECT_EQ(exit.exit_code, 0) << Slurp(dir_ / "sched.err");
  ExperimentFile f = Read();
  ASSERT_EQ(f.rows.size(), 3u);
  EXPECT_EQ(f.rows[0].status, "");               // the new row: not part of this start
  EXPECT_EQ(Outcome(f.rows[1]), "FINISHED");     // moved down a line, found
  EXPECT_EQ(f.rows[2].params, "--seconds 0.2");  // the user's edit kept
  EXPECT_EQ(f.rows[2].status, "");               // it changed, so it is not the row that ran
  EXPECT_NE(Slurp(dir_ / "sched.err").find("the row was changed or removed while it ran"), std::string::npos);
}

// The user is in the middle of an edit (an unclosed quote) when workload 1 ends: the file is
// left as the user has it, the outcome waits in a side file and reaches the file after
// workload 2, once it reads again.
TEST_F(ScheduleTest, AFileThatDoesNotReadWhileItRunsIsNeverOverwritten) {
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,1,,,-,-,work.py,top,--seconds 1.5\n"
      "e,2,,,-,-,work.py,top,--seconds 2\n");
  ChildProcess scheduler = StartSchedule();
  WaitForRuns(1);
  std::string editing =
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,1,,,-,-,work.py,top,--seconds 1.5\n"
      "e,2,,,-,-,work.py,top,--seconds 2\n"
      "e,3,,,-,-,work.py,top,\"--note half-typed\n";
  File(editing);
  // Workload 1 ends; workload 2 starts: by then the write-back was tried.
  WaitForRuns(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Slurp(dir_ / "exp.csv"), editing);  // the user's lines, untouched
  std::string side = Slurp(dir_ / "exp.csv.trainbench-status");
  EXPECT_NE(side.find("2,FINISHED"), std::string::npos) << side;
  // The user finishes the edit; after workload 2 both outcomes are written in.
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,1,,,-,-,work.py,top,--seconds 1.5\n"
      "e,2,,,-,-,work.py,top,--seconds 2\n"
      "e,3,,,-,-,work.py,top,\"--note typed\"\n");
  ExitInfo exit = scheduler.Wait().value();
  EXPECT_EQ(exit.exit_code, 0) << Slurp(dir_ / "sched.err");
  ExperimentFile f = Read();
  ASSERT_EQ(f.rows.size(), 3u);
  EXPECT_EQ(Outcome(f.rows[0]), "FINISHED");
  EXPECT_EQ(Outcome(f.rows[1]), "FINISHED");
  EXPECT_EQ(f.rows[2].params, "--note typed");
  EXPECT_FALSE(fs::exists(dir_ / "exp.csv.trainbench-status"));
  EXPECT_FALSE(fs::exists(dir_ / "exp.csv.trainbench-tmp"));
  EXPECT_NE(Slurp(dir_ / "sched.err").find("cannot be read back"), std::string::npos)
      << Slurp(dir_ / "sched.err");
}

// Output as chatty scripts write it: a 20 MB line and 200,000 short ones reach the
// terminal whole and in order, behind the run's letter.
TEST_F(ScheduleTest, LongLinesAndManyLinesPassThroughWhole) {
  std::ofstream(dir_ / "chatty.py") << "import sys\n"
                                       "sys.stdout.write('x' * 20000000 + '\\n')\n"
                                       "for i in range(200000): sys.stdout.write('line %d\\n' % i)\n";
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,1,,,-,-,chatty.py,top,\n");
  Shell r = Trainbench("schedule exp.csv");
  ASSERT_EQ(r.code, 0) << r.err.substr(0, 2000);
  // The long line arrives in pieces behind the letter, every byte of it.
  size_t xs = 0;
  for (std::string_view line : Split(r.out, '\n')) {
    if (StartsWith(line, "[A-] x") && line.find_first_not_of('x', 5) == std::string_view::npos)
      xs += line.size() - 5;
  }
  EXPECT_EQ(xs, 20000000u);
  EXPECT_NE(r.out.find("[A-] line 0\n"), std::string::npos);
  EXPECT_NE(r.out.find("[A-] line 199999\n"), std::string::npos);
  EXPECT_LT(r.out.find("[A-] line 0\n"), r.out.find("[A-] line 199999\n"));
}

// A Params cell longer than Linux lets a command line be: the workload is not run, and the
// message says why and what to do.
TEST_F(ScheduleTest, AParamsCellTooLongForLinuxIsSaidSo) {
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,1,,,-,-,work.py,top,--note " +
      std::string(200000, 'x') + "\n");
  Shell r = Trainbench("schedule exp.csv");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("command line is too long"), std::string::npos) << r.err.substr(0, 1000);
}

// The start gate that makes a workload's runs start together: `trainbench run` sets up,
// says so, and starts its command only when the scheduler closes the gate.
TEST_F(ScheduleTest, ARunWaitsAtTheStartGateUntilItOpens) {
  int ready[2], gate[2];
  ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);  // as the scheduler: the child gets one end of each
  ASSERT_EQ(pipe2(gate, O_CLOEXEC), 0);
  fcntl(ready[1], F_SETFD, 0);
  fcntl(gate[0], F_SETFD, 0);
  struct stat st {};
  fstat(ready[1], &st);
  ino_t ready_inode = st.st_ino;
  fstat(gate[0], &st);
  ino_t gate_inode = st.st_ino;
  SpawnOptions spawn;
  spawn.argv = {"/bin/sh", "-c",
                "cd " + dir_.string() + " && TRAINBENCH_START_GATE=" + std::to_string(ready[1]) + "," +
                    std::to_string(gate[0]) + " TRAINBENCH_STORE=" + db_ + " exec " + kTrainbench +
                    " run -q -l top -- sh -c 'touch started; ls -l /proc/self/fd > links'"};
  ChildProcess run = ChildProcess::Spawn(spawn).value();
  close(ready[1]);
  close(gate[0]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);  // set up
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(fs::exists(dir_ / "started"));  // but waiting
  close(gate[1]);
  EXPECT_EQ(run.Wait().value().exit_code, 0);
  EXPECT_TRUE(fs::exists(dir_ / "started"));
  EXPECT_EQ(read(ready[0], &byte, 1), 0);  // the run closed its end
  close(ready[0]);
  // The command inherited neither pipe.
  std::string links = Slurp(dir_ / "links");
  for (ino_t inode : {ready_inode, gate_inode})
    EXPECT_EQ(links.find("pipe:[" + std::to_string(inode) + "]"), std::string::npos) << links;
}

// The README's experiment: real PyTorch training alone, collocated, under MPS and on MIG
// instances of the simulated GPU (one epoch per run).
TEST_F(ScheduleTest, TheDigitsExampleExperimentRunsEndToEndOnTheSimulatedGpu) {
  SimulatedGpu();
  fs::path example = fs::path(TRAINBENCH_SOURCE_DIR) / "examples" / "digits";
  fs::copy_file(example / "experiment.csv", dir_ / "experiment.csv");
  fs::create_symlink(example / "train.py", dir_ / "train.py");
  Shell r = Trainbench("schedule experiment.csv --max-epochs 1");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  ExperimentFile f = ParseExperimentFile(Slurp(dir_ / "experiment.csv"), "experiment.csv").value();
  ASSERT_EQ(f.rows.size(), 8u);
  auto store = OpenStore();
  std::map<std::string, std::vector<RunRecord>> workloads;
  for (const ExperimentRow& row : f.rows) {
    EXPECT_EQ(Outcome(row), "FINISHED") << row.status;
    RunRecord run = store->FindRun(row.run).value();
    EXPECT_EQ(Series(*store, run.id, "train.epoch_loss").size(), 1u) << run.name;  // --max-epochs 1
    workloads[run.workload].push_back(run);
  }
  for (const char* pair : {"cpu-pair", "gpu-mps", "gpu-mig"}) {
    const std::vector<RunRecord>& runs = workloads[pair];
    ASSERT_EQ(runs.size(), 2u) << pair;
    EXPECT_TRUE(runs[0].start_ms < runs[1].end_ms && runs[1].start_ms < runs[0].end_ms) << pair;
  }
  for (const RunRecord& run : workloads["gpu-mig"])
    EXPECT_EQ(run.devices.rfind("MIG-", 0), 0u) << run.devices;
  EXPECT_NE(r.out.find("MPS control daemon started for GPU 0"), std::string::npos) << r.out;
  EXPECT_EQ(Slurp(dir_ / "sim.json.mig"), "");  // the MIG instances are gone again
  EXPECT_FALSE(Series(*store, workloads["gpu-alone"][0].id, "gpu.power.draw_watts", "gpu=0").empty());
}

// `trainbench schedule` inside a Slurm job (SLURM_JOB_GPUS: the job got GPU 1 of the node):
// the row's GPU 0 is the job's first GPU, so the run gets and watches GPU 1.
TEST_F(ScheduleTest, InsideASlurmJobARowsGpuIsCountedWithinTheJobsGpus) {
  SimulatedGpu();
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,w,,,0,-,work.py,top+nvml,--seconds 0.3\n");
  env_ += " SLURM_JOB_GPUS=1";
  Shell r = Trainbench("schedule exp.csv");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::unique_ptr<Store> store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.devices, "1");
  EXPECT_FALSE(Series(*store, run.id, "gpu.power.draw_watts", "gpu=1").empty()) << "GPU 1 watched";
  EXPECT_TRUE(Series(*store, run.id, "gpu.power.draw_watts", "gpu=0").empty()) << "GPU 0 is not the job's";
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "e,w,,,1,-,work.py,top,--seconds 0.3\n");
  Shell refused = Trainbench("schedule exp.csv");
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.err.find("the Slurm job has 1 GPU(s)"), std::string::npos) << refused.err;
}

// Runs logged under one workload one after another by hand are its repeats: the report
// neither adds their throughputs up nor calls it a speed-up.
TEST_F(ScheduleTest, TheReportAddsUpOnlyRunsThatRanTogether) {
  std::ofstream(dir_ / "tput.py") << "import sys, time, trainbench\n"
                                     "with trainbench.Run() as run:\n"
                                     "    for epoch in range(2):\n"
                                     "        run.epoch()\n"
                                     "        for i in range(6):\n"
                                     "            run.log_metric('throughput_samples_per_second', 100)\n"
                                     "            time.sleep(0.1)\n";
  ASSERT_EQ(Trainbench("run -e e -w alone -l top tput.py --batch-size 64").code, 0);
  for (const char* seed : {"1", "2"})
    ASSERT_EQ(
        Trainbench(std::string("run -e e -w repeats -l top tput.py --batch-size 64 --seed ") + seed).code, 0);
  Shell csv = Trainbench("report e --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  std::istringstream lines(csv.out);
  std::string header, row, repeats;
  std::getline(lines, header);
  while (std::getline(lines, row))
    if (row.starts_with("e,repeats,")) repeats = row;
  ASSERT_FALSE(repeats.empty()) << csv.out;
  std::map<std::string, std::string> cells;
  std::vector<std::string_view> names = Split(header, ','), values = Split(repeats, ',');
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) cells[std::string(names[i])] = values[i];
  // Started by hand one after another: two repeats of one run, not two runs together.
  EXPECT_NEAR(ParseDouble(cells["samples/s per run"]).value_or(0), 100, 0.1) << csv.out;
  EXPECT_EQ(cells["collocation"], "alone") << csv.out;
  EXPECT_EQ(cells["repeats"], "2") << csv.out;
  EXPECT_NEAR(ParseDouble(cells["samples/s combined"]).value_or(0), 100, 0.1) << "not added up: " << csv.out;
  EXPECT_EQ(cells["speed-up"], "") << csv.out;
  Shell table = Trainbench("report e");
  EXPECT_EQ(table.out.find("the work of one alone"), std::string::npos) << table.out;
}

// `trainbench report` on an experiment run on the simulated GPU: one run alone, the same
// two runs together (each slower); the speed-up is what their logged throughputs say.
TEST_F(ScheduleTest, TheReportComparesCollocatedRunsWithTheSameRunAlone) {
  SimulatedGpu();
  std::ofstream(dir_ / "tput.py") << "import os, time, trainbench\n"
                                     "rate = float(os.environ['RATE'])\n"
                                     "with trainbench.Run() as run:\n"
                                     "    for epoch in range(3):\n"
                                     "        run.epoch()\n"
                                     "        for i in range(10):\n"
                                     "            run.log_metric('throughput_samples_per_second', rate)\n"
                                     "            time.sleep(0.1)\n";
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params,Env\n"
      "e,alone,,,0,-,tput.py,top+nvml,--batch-size 64,RATE=100\n"
      "e,pair,,,0,-,tput.py,top+nvml,--batch-size 64,RATE=60\n"
      "e,pair,,,0,-,tput.py,top+nvml,--batch-size 64 --seed 1,RATE=60\n");
  ASSERT_EQ(Trainbench("schedule exp.csv").code, 0);
  Shell csv = Trainbench("report e --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  SCOPED_TRACE(csv.out);
  std::istringstream lines(csv.out);
  std::string header, alone, pair;
  std::getline(lines, header);
  std::getline(lines, alone);
  std::getline(lines, pair);
  auto cell = [&](const std::string& row, const std::string& column) {
    std::vector<std::string_view> names = Split(header, ','), cells = Split(row, ',');
    for (size_t i = 0; i < names.size() && i < cells.size(); ++i) {
      if (names[i] == column) return std::string(cells[i]);
    }
    return std::string("?");
  };
  auto num = [&](const std::string& row, const std::string& column) {
    return ParseDouble(cell(row, column)).value_or(std::nan(""));
  };
  EXPECT_EQ(cell(alone, "workload"), "alone");
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_EQ(cell(pair, "nodes"), host) << "the node the runs ran on";
  EXPECT_NEAR(num(alone, "samples/s per run"), 100, 0.1) << csv.out;
  EXPECT_NEAR(num(pair, "samples/s combined"), 120, 0.1) << csv.out;
  EXPECT_EQ(cell(pair, "vs alone"), "alone");
  EXPECT_NEAR(num(pair, "speed-up"), 1.2, 0.01) << csv.out;
  EXPECT_NEAR(num(pair, "time per run"), 100.0 / 60, 0.01) << csv.out;
  // Both runs' logged throughput spans the same three seconds: they trained together.
  std::vector<std::string_view> overlap = Split(cell(pair, "trained together"), '/');
  ASSERT_EQ(overlap.size(), 2u) << csv.out;
  for (std::string_view o : overlap)
    EXPECT_GE(ParseDouble(o.substr(0, o.size() - 1)).value_or(0), 80) << csv.out;
  EXPECT_NEAR(num(alone, "s per epoch"), 1.0, 0.3) << csv.out;
  EXPECT_NEAR(num(alone, "GPU util %"), 50, 1) << csv.out;  // the simulated GPU's 50%

  Shell table = Trainbench("report e");
  EXPECT_NE(table.out.find("did 1.20x the work of one alone"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("note: GPU figures come from the simulated GPU"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("samples only"), std::string::npos) << table.out;
  ASSERT_EQ(Trainbench("report e --format html -o report.html").code, 0);
  std::string html = Slurp(dir_ / "report.html");
  EXPECT_NE(html.find("<b>1.20x</b>"), std::string::npos);
  // The charts are the figure renderer's, inline, their text as text: workload names, the
  // value axis with its unit, and the workloads' GPU utilization over time.
  EXPECT_EQ(html.find("<?xml"), std::string::npos);
  EXPECT_NE(html.find(">Throughput per run</text>"), std::string::npos);
  EXPECT_NE(html.find(">Samples per second</text>"), std::string::npos);
  EXPECT_NE(html.find(">pair</text>"), std::string::npos);
  EXPECT_NE(html.find(">1.2</text>"), std::string::npos) << "the speed-up bar's value";
  EXPECT_NE(html.find(">GPU utilization over time: workload mean, range</text>"), std::string::npos);
  EXPECT_NE(html.find(">Throughput over time: workload mean, range</text>"), std::string::npos);
  EXPECT_NE(html.find(">Throughput (samples/s)</text>"), std::string::npos)
      << "the unit from the metric's name";

  // The whole report as a PDF: A4 landscape, every font embedded and none Type 3, the table,
  // the sentence and the charts' titles and names as text.
  Shell pdf = Trainbench("report e -o report.pdf");
  ASSERT_EQ(pdf.code, 0) << pdf.err;
  std::string file = (dir_ / "report.pdf").string();
  Shell info = Run("pdfinfo " + file);
  EXPECT_NE(info.out.find("841.89 x 595.28 pts (A4)"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("trainbench report: e"), std::string::npos) << info.out;
  Shell fonts = Run("pdffonts " + file);
  ASSERT_NE(fonts.out.find("------"), std::string::npos) << fonts.out;
  std::istringstream font_lines(fonts.out.substr(fonts.out.find("------")));
  std::string font_line;
  std::getline(font_lines, font_line);
  while (std::getline(font_lines, font_line)) {
    EXPECT_EQ(font_line.find("Type 3"), std::string::npos) << font_line;
    EXPECT_NE(font_line.find(" yes yes "), std::string::npos) << "embedded as a subset: " << font_line;
  }
  std::string text = Run("pdftotext -layout " + file + " -").out;
  for (const char* expected : {"Experiment e", "samples/s", "speed-up", "did 1.20x the work of one alone",
                               "Throughput per run", "Steady GPU utilization", "GPU utilization (%)",
                               "GPU utilization over time: workload mean, range", "page 1 of"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << " in\n" << text;
  }
  EXPECT_EQ(Trainbench("report e --format pdf | head -c 5").out, "%PDF-") << "a PDF goes down a pipe";
  EXPECT_NE(Trainbench("report e --format svg").err.find("table, csv, html or pdf"), std::string::npos);
  EXPECT_NE(Trainbench("report nope").err.find("no runs in experiment 'nope'"), std::string::npos);
}

// A report row as column -> cell, from `report --format csv`.
std::map<std::string, std::string> ReportCells(const std::string& csv, const std::string& workload) {
  std::istringstream lines(csv);
  std::string header, row;
  std::getline(lines, header);
  std::map<std::string, std::string> cells;
  while (std::getline(lines, row)) {
    std::vector<std::string_view> names = Split(header, ','), values = Split(row, ',');
    if (values.size() < 2 || values[1] != workload) continue;
    for (size_t i = 0; i < names.size() && i < values.size(); ++i) cells[std::string(names[i])] = values[i];
  }
  return cells;
}

// Two runs started together whose processes overlap from start to end, but whose training
// came one after the other (a long start-up, as on a fast GPU): not together, no combined
// throughput, no speed-up, and the report says how little their training overlapped.
TEST_F(ScheduleTest, RunsWhoseProcessesOverlapButWhoseTrainingDoesNotAreNotTogether) {
  ASSERT_NO_FATAL_FAILURE(
      ScheduleStepped("e,alone,,,-,-,stepped.py,top,--batch-size 64,START=0 STEPS=15 TAIL=0\n"
                      "e,apart,,,-,-,stepped.py,top,--batch-size 64,START=0 STEPS=15 TAIL=2.5\n"
                      "e,apart,,,-,-,stepped.py,top,--batch-size 64 --seed 1,START=2.5 STEPS=15 TAIL=0\n"));
  std::unique_ptr<Store> store = OpenStore();
  std::vector<RunRecord> runs = store->ListRuns("e").value();
  std::vector<RunRecord> apart;
  for (const RunRecord& run : runs)
    if (run.workload == "apart") apart.push_back(run);
  ASSERT_EQ(apart.size(), 2u);
  ASSERT_TRUE(apart[0].start_ms < apart[1].end_ms && apart[1].start_ms < apart[0].end_ms)
      << "the processes ran at the same time";
  Shell csv = Trainbench("report e --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  std::map<std::string, std::string> cells = ReportCells(csv.out, "apart");
  EXPECT_EQ(cells["collocation"], "not together") << csv.out;
  EXPECT_EQ(cells["samples/s combined"], "") << csv.out;
  EXPECT_EQ(cells["speed-up"], "") << csv.out;
  std::vector<std::string_view> overlap = Split(cells["trained together"], '/');
  ASSERT_EQ(overlap.size(), 2u) << csv.out;
  for (std::string_view o : overlap)
    EXPECT_LT(ParseDouble(o.substr(0, o.size() - 1)).value_or(100), 50) << csv.out;
  Shell table = Trainbench("report e");
  EXPECT_NE(table.out.find("did not train at the same time"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("by the steps the script logged"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("the work of one alone"), std::string::npos) << table.out;
}

// A run whose training (1.5 s of steps) is shorter than its start-up (4 s): its steady
// throughput is its steps', its samples are the ones its steps trained, and its training
// is placed where the steps were.
TEST_F(ScheduleTest, ARunWhoseTrainingIsShorterThanItsStartUpIsMeasuredOnItsTraining) {
  std::ofstream(dir_ / "stepped.py") << kSteppedScript;
  env_ += " START=4 STEPS=15 TAIL=0";
  Shell r = Trainbench("run -e e -w slow-start -l top stepped.py");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::unique_ptr<Store> store = OpenStore();
  RunRecord run = OnlyRun(*store);
  std::vector<Point> tput = Series(*store, run.id, "train.throughput_samples_per_second");
  ASSERT_EQ(tput.size(), 15u);
  double logged_mean = 0;
  for (const Point& p : tput) logged_mean += p.value / 15;
  Shell csv = Trainbench("report e --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  std::map<std::string, std::string> cells = ReportCells(csv.out, "slow-start");
  EXPECT_NEAR(ParseDouble(cells["samples/s per run"]).value_or(0), logged_mean, 0.1 * logged_mean) << csv.out;
  Shell show = Trainbench("show " + run.id);
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("samples     960 trained"), std::string::npos) << "15 steps x 64\n" << show.out;
  EXPECT_NE(show.out.find("by the steps the script logged"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("start-up"), std::string::npos) << show.out;
}

// Two runs under MPS on one GPU of the simulated GPU, which answers as NVIDIA's driver did on
// an H200: the running-process list holds the MPS server beside its two clients, the MPS
// list the clients, and per-process utilization has one sample, the server's. The server
// is no third party: each client is half of it, and the two runs' energy adds up to the
// GPU's own counter over the workload.
TEST_F(ScheduleTest, UnderMpsTheServersActivityAndEnergyAreItsClients) {
  UseSimulatedGpu(R"({"gpus": [{"uuid": "GPU-00000000-1111-2222-3333-444444444444",
      "metrics": {"power_w": 200, "util_gpu_pct": 90, "util_mem_pct": 20, "mem_used_mib": 4096},
      "processes": [{"match": "tb_trainer", "memory_used_mib": 1024, "sm_util_percent": 40}]}]})");
  ASSERT_NO_FATAL_FAILURE(ScheduleStepped(
      "e,mps,,,0,MPS,stepped.py,nvml,--batch-size 64,START=0.3 STEPS=40 TAIL=0 COMM=tb_trainer\n"
      "e,mps,,,0,MPS,stepped.py,nvml,--batch-size 64 --seed 1,START=0.3 STEPS=40 TAIL=0 COMM=tb_trainer\n"));
  std::unique_ptr<Store> store = OpenStore();
  std::vector<RunRecord> runs = store->ListRuns("e").value();
  ASSERT_EQ(runs.size(), 2u);
  double runs_energy = 0, first_counter = INFINITY, last_counter = -INFINITY;
  for (const RunRecord& run : runs) {
    std::vector<Point> share = Series(*store, run.id, "proc.gpu.share_ratio", "gpu=0");
    size_t halves = 0;
    for (const Point& p : share) {
      halves += p.value == 0.5;
      EXPECT_TRUE(p.value == 0.5 || p.value == 1 || p.value == 0)
          << p.value << " (the server counted as a party?)";
    }
    EXPECT_GE(halves, 1u) << "both clients computing: half each";
    std::vector<Point> energy = Series(*store, run.id, "proc.gpu.energy_joules", "gpu=0");
    ASSERT_FALSE(energy.empty()) << run.name;
    runs_energy += energy.back().value;
    std::vector<Point> counter = Series(*store, run.id, "gpu.energy.consumed_joules", "gpu=0");
    ASSERT_GE(counter.size(), 2u);
    first_counter = std::min(first_counter, counter.front().value);
    last_counter = std::max(last_counter, counter.back().value);
    bool told = false;
    for (const EventRecord& e : store->ListEvents(run.id).value())
      told |= e.label.find("split equally among its clients") != std::string::npos;
    EXPECT_TRUE(told) << "the run says its figures were split";
  }
  // The GPU's own counter over the workload, against the two runs' shares of it.
  double gpu_energy = last_counter - first_counter;
  EXPECT_GT(gpu_energy, 200 * 2.0);
  EXPECT_NEAR(runs_energy, gpu_energy, 0.1 * gpu_energy);
}

// An experiment file saved by Excel in Windows-1252 (a Latin-1 byte in a name and a param):
// its run starts, gets its bytes unchanged and finishes; before, the run aborted on the
// byte and the row read KILLED.
TEST_F(ScheduleTest, ALegacyEncodedExperimentFileRuns) {
  File(
      "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "caf\xe9,1,,,-,-,work.py,top,--seconds 0.1 --note caf\xe9\n");
  Shell r = Trainbench("schedule exp.csv");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  ExperimentFile f = Read();
  ASSERT_EQ(f.rows.size(), 1u);
  EXPECT_EQ(Outcome(f.rows[0]), "FINISHED") << f.rows[0].status;
  RunRecord run = OpenStore()->FindRun(f.rows[0].run).value();
  EXPECT_NE(run.command.find("caf\xe9"), std::string::npos) << run.command;
  EXPECT_EQ(run.experiment, "caf\xe9");
}

}  // namespace
}  // namespace tb
