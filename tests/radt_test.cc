// What a radT 0.2.29 user types, run for real (`trainbench` as radT's command, each run a
// child process, the simulated GPU): radT's YAML sweep example unchanged, its experiment
// numbers, and its scripts started in their own folder.
#include <algorithm>
#include <map>
#include <set>

#include "base/strings.h"
#include "schedule/experiment_file.h"
#include "store/run_tags.h"
#include "tests/helpers/cli_fixture.h"

namespace tb {
namespace {

// radT's examples/yaml/experiment_grid_context.yaml, as it ships.
const char* kRadtSweep =
    "name: Sweep name\n"
    "experiment: 0\n"
    "collocation: \"-\"\n"
    "devices: 0\n"
    "listeners: smi+top\n"
    "file: ../pytorch/cifar10_context.py\n"
    "method: grid\n"
    "parameters:\n"
    "  batch-size:\n"
    "    values: [8, 16, 32, 64, 128]\n"
    "  learning-rate: \n"
    "    values: [0.001, 0.0015, 0.002]\n";

// A stand-in for radT's cifar10_context.py (which downloads CIFAR-10): its arguments, its
// ./data beside it, radT's context manager; fails where FAIL_AT names its batch size.
const char* kCifarStandIn = R"(
import argparse, os, radt
p = argparse.ArgumentParser()
p.add_argument("-b", "--batch-size", type=int, default=8)
p.add_argument("-lr", "--learning-rate", type=float, default=0.001)
a = p.parse_args()
with open("./data/seen.txt", "a") as f:  # ./data: the script's own folder's
    f.write("%d %s %s\n" % (a.batch_size, a.learning_rate, os.getcwd()))
with radt.run.RADTBenchmark() as run:
    for epoch in range(2):
        run.log_metric("ML - epoch", epoch, epoch)
if str(a.batch_size) == os.environ.get("FAIL_AT"):
    raise SystemExit(2)
)";

class RadtTest : public CliTest {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "examples" / "yaml");
    fs::create_directories(dir_ / "examples" / "pytorch" / "data");
    std::ofstream(dir_ / "examples" / "pytorch" / "cifar10_context.py") << kCifarStandIn;
    std::ofstream(dir_ / "examples" / "yaml" / "experiment_grid_context.yaml") << kRadtSweep;
    env_ = "TRAINBENCH_PYTHON=/usr/bin/python3";
    UseSimulatedGpu(
        R"({"gpus": [{"uuid": "GPU-00000000-1111-2222-3333-444444444444", "metrics": {"power_w": 80}}]})");
  }
  // radT's command, typed in examples/yaml as radT's README does.
  Shell Radt(const std::string& args) {
    return Run("(cd examples/yaml && " + env_ + " TRAINBENCH_STORE=" + db_ + " " + kTrainbench + " " + args +
               ")");
  }
  std::string Sweep() { return Slurp(dir_ / "examples" / "yaml" / "experiment_grid_context.yaml"); }
  // What PyYAML (radT's reader) makes of the sweep's status: workload number -> outcome.
  std::map<int, std::string> StatusAsRadtReadsIt() {
    Shell r =
        Run("/usr/bin/python3 -c \"import yaml; d = "
            "yaml.safe_load(open('examples/yaml/experiment_grid_context.yaml')); "
            "[print(k, v) for k, v in sorted(d.get('status', {}).items())]\"");
    EXPECT_EQ(r.code, 0) << r.err;
    std::map<int, std::string> status;
    for (std::string_view line : Split(r.out, '\n')) {
      if (line.empty()) continue;
      status[std::stoi(std::string(line.substr(0, line.find(' '))))] =
          std::string(line.substr(line.find(' ') + 1));
    }
    return status;
  }
};

TEST_F(RadtTest, RadtsSweepExampleRunsUnchangedEveryRunUnderOneParentAndResumesAsRadtDoes) {
  Shell r = Radt("experiment_grid_context.yaml");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto store = OpenStore();
  // Experiment 0 is MLflow's Default, where radT's sweep goes.
  std::vector<RunRecord> runs = store->ListRuns("Default").value();
  ASSERT_EQ(runs.size(), 16u) << "15 combinations and their parent run";
  auto found =
      std::find_if(runs.begin(), runs.end(), [](const RunRecord& x) { return x.name == "Sweep name"; });
  ASSERT_NE(found, runs.end());
  const RunRecord parent_run = *found;  // `runs` is read again below
  const RunRecord* parent = &parent_run;
  std::set<std::string> params;
  for (const RunRecord& x : runs) {
    if (x.id == parent->id) continue;
    EXPECT_EQ(x.status, "FINISHED") << x.name;
    EXPECT_EQ(TagValue(x, kParentRunTag), parent->id) << x.name;
    EXPECT_EQ(x.working_directory, (dir_ / "examples" / "pytorch").string())
        << "radT starts a script in its folder";
    params.insert(x.command.substr(x.command.find("--batch-size")));
  }
  EXPECT_EQ(params.size(), 15u);
  EXPECT_TRUE(params.count("--batch-size 128 --learning-rate 0.0015"));
  EXPECT_EQ(Split(Slurp(dir_ / "examples" / "pytorch" / "data" / "seen.txt"), '\n').size(), 16u);

  // Written back as radT writes it, and read by radT's own YAML reader.
  std::map<int, std::string> status = StatusAsRadtReadsIt();
  ASSERT_EQ(status.size(), 15u) << Sweep();
  EXPECT_TRUE(status[0].starts_with("FINISHED ")) << status[0];
  EXPECT_TRUE(status[0].ends_with("(--batch-size 8 --learning-rate 0.001)")) << status[0];
  EXPECT_NE(Sweep().find("parent: \"" + parent->id + "\""), std::string::npos) << Sweep();
  EXPECT_TRUE(Sweep().starts_with(kRadtSweep)) << "the user's lines stay as written";

  // A resume runs nothing; a run marked FAILED runs again, alone, under the same parent.
  Shell again = Radt("experiment_grid_context.yaml");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(store->ListRuns("Default").value().size(), 16u);
  std::string text = Sweep();
  size_t at = text.find("  14: \"FINISHED");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at + 7, 8, "FAILED");
  std::ofstream(dir_ / "examples" / "yaml" / "experiment_grid_context.yaml") << text;
  Shell rerun = Radt("experiment_grid_context.yaml");
  ASSERT_EQ(rerun.code, 0) << rerun.err;
  runs = store->ListRuns("Default").value();
  ASSERT_EQ(runs.size(), 17u);
  const RunRecord& newest =
      *std::max_element(runs.begin(), runs.end(), [](auto& a, auto& b) { return a.start_ms < b.start_ms; });
  EXPECT_EQ(TagValue(newest, kParentRunTag), parent->id);
  EXPECT_TRUE(newest.command.ends_with("--batch-size 128 --learning-rate 0.002")) << newest.command;
  status = StatusAsRadtReadsIt();
  EXPECT_TRUE(status[29].starts_with("FINISHED " + newest.id))
      << "radT numbers on from the highest: 14 + 14 + 1";

  // Run against another store, the sweep's recorded parent is not there: a new parent run,
  // named for the sweep.
  text = Sweep();
  at = text.find("  29: \"FINISHED");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at + 7, 8, "FAILED");
  std::ofstream(dir_ / "examples" / "yaml" / "experiment_grid_context.yaml") << text;
  Shell elsewhere = Run("(cd examples/yaml && " + env_ + " TRAINBENCH_STORE=" + (dir_ / "other.db").string() +
                        " " + kTrainbench + " experiment_grid_context.yaml)");
  ASSERT_EQ(elsewhere.code, 0) << elsewhere.err;
  std::vector<RunRecord> there =
      Store::Open((dir_ / "other.db").string()).value()->ListRuns("Default").value();
  ASSERT_EQ(there.size(), 2u)
      << "the one combination not FINISHED (14 and 29 are the same one) and its parent";
  EXPECT_EQ(
      std::count_if(there.begin(), there.end(), [](const RunRecord& x) { return x.name == "Sweep name"; }),
      1);

  // ls groups the sweep under its parent run.
  Shell ls = Trainbench("ls");
  EXPECT_NE(ls.out.find("parent run " + parent->id.substr(0, 8) + "  FINISHED  Sweep name  (16 nested runs)"),
            std::string::npos)
      << ls.out;
  // So does the report, on the terminal, in HTML and in the PDF; the parent run is no workload of it.
  Shell report = Trainbench("report Default");
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_NE(report.out.find("parent run Sweep name (" + parent->id.substr(0, 8) + "):\n000 "),
            std::string::npos)
      << report.out;
  EXPECT_NE(report.out.find("experiment Default: 16 workloads"), std::string::npos) << report.out;
  Shell html = Trainbench("report Default --format html");
  EXPECT_NE(html.out.find("parent run Sweep name (" + parent->id.substr(0, 8) + ")</th>"), std::string::npos);
  Shell pdf = Trainbench("report Default -o report.pdf");
  ASSERT_EQ(pdf.code, 0) << pdf.err;
  Shell pdf_text = Run("pdftotext report.pdf -");
  EXPECT_NE(pdf_text.out.find("parent run Sweep name (" + parent->id.substr(0, 8) + ")"), std::string::npos)
      << pdf_text.out;
}

TEST_F(RadtTest, ARandomSweepRunsEveryCombinationAndABadSweepIsRefusedBeforeAnythingRuns) {
  std::ofstream(dir_ / "examples" / "yaml" / "r.yaml")
      << "name: r\nexperiment: 0\ncollocation: '-'\ndevices: '-'\nlisteners: top\nfile: "
         "../pytorch/cifar10_context.py\n"
         "method: random\nparameters:\n  batch-size: {values: [1, 2, 3, 4]}\n";
  Shell r = Radt("r.yaml");
  ASSERT_EQ(r.code, 0) << r.err;
  std::set<std::string> seen;
  for (const RunRecord& x : OpenStore()->ListRuns("Default").value())
    if (x.name != "r") seen.insert(x.command.substr(x.command.rfind(' ') + 1));
  EXPECT_EQ(seen, (std::set<std::string>{"1", "2", "3", "4"}));

  std::ofstream(dir_ / "examples" / "yaml" / "bad.yaml") << "name: b\nexperiment: 0\nfile: x.py\n";
  Shell bad = Radt("bad.yaml");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("bad.yaml: the sweep has no 'collocation' field"), std::string::npos) << bad.err;
  std::ofstream(dir_ / "examples" / "yaml" / "bad.yaml")
      << "name: b\nexperiment: 0\ncollocation: '-'\ndevices: '-'\nlisteners: top\nfile: "
         "../pytorch/cifar10_context.py\n"
         "method: bayes\nparameters:\n  x: {values: [1]}\n";
  bad = Radt("bad.yaml");
  EXPECT_NE(bad.err.find("bad.yaml:7: method 'bayes' is neither grid"), std::string::npos) << bad.err;
  EXPECT_EQ(OpenStore()->ListRuns("Default").value().size(), 5u) << "nothing more recorded";
}

// radT's examples/csv/experiment_collocation.csv as it ships, through `python -m radt` (radT's
// README form in a virtual environment): alone, naive, MPS on GPU 0 and MIG on GPU 2, in
// experiment 0 (Default); every status written back into the file, every row found by its
// cells (Experiment 0 is still 0 in the file).
TEST_F(RadtTest, RadtsCollocationExampleRunsUnchangedThroughPythonMRadt) {
  UseSimulatedGpu(R"({"gpus": [
    {"uuid": "GPU-00000000-1111-2222-3333-444444444444", "metrics": {"power_w": 80}},
    {"uuid": "GPU-00000000-1111-2222-3333-555555555555", "metrics": {"power_w": 70}},
    {"name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-00000000-1111-2222-3333-666666666666", "memory_total_mib": 40960,
     "mig_mode": "Enabled", "metrics": {"power_w": 90}}]})");
  fs::create_directories(dir_ / "examples" / "csv");
  const std::string kCsv =
      "Experiment,Workload,Name,Status,Run,Devices,Collocation,File,Listeners,Params\n"
      "0,1,no sharing,,,0,-,../pytorch/cifar10_context.py,smi+top,--batch-size 128 --learning-rate 0.01\n"
      "0,2,shared gpu 1,,,0,-,../pytorch/cifar10_context.py,smi+top,--batch-size 128 --learning-rate 0.01\n"
      "0,2,shared gpu 2,,,0,-,../pytorch/cifar10_context.py,smi+top,--batch-size 128 --learning-rate 0.01\n"
      "0,3,MPS shared gpu 1,,,0,MPS,../pytorch/cifar10_context.py,smi+top,--batch-size 128 --learning-rate "
      "0.01\n"
      "0,3,MPS shared gpu 2,,,0,MPS,../pytorch/cifar10_context.py,smi+top,--batch-size 128 --learning-rate "
      "0.01\n"
      "0,4,MIG shared gpu 1,,,2,3g.20gb,../pytorch/cifar10_context.py,smi+top,--batch-size 128 "
      "--learning-rate 0.01\n"
      "0,4,MIG shared gpu 2,,,2,3g.20gb,../pytorch/cifar10_context.py,smi+top,--batch-size 128 "
      "--learning-rate 0.01\n";
  std::ofstream(dir_ / "examples" / "csv" / "experiment_collocation.csv") << kCsv;
  Shell r = Run("(cd examples/csv && " + env_ + " TRAINBENCH_STORE=" + db_ +
                " TRAINBENCH_BINARY=" + kTrainbench + " PYTHONPATH=" + TRAINBENCH_SOURCE_DIR +
                "/python /usr/bin/python3 -m radt experiment_collocation.csv)");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  ExperimentFile f = ParseExperimentFile(Slurp(dir_ / "examples" / "csv" / "experiment_collocation.csv"),
                                         "experiment_collocation.csv")
                         .value();
  ASSERT_EQ(f.rows.size(), 7u);
  auto store = OpenStore();
  for (const ExperimentRow& row : f.rows) {
    EXPECT_EQ(row.experiment, "0");
    EXPECT_TRUE(row.status.starts_with("FINISHED (" + row.workload)) << row.line << ": " << row.status;
    Result<RunRecord> run = store->FindRun(row.run);
    ASSERT_TRUE(run.ok()) << row.line << ": " << row.run;
    EXPECT_EQ(run->experiment, "Default");
    EXPECT_TRUE(run->name.ends_with(row.name)) << run->name;
    EXPECT_EQ(run->working_directory, (dir_ / "examples" / "pytorch").string());
  }
  EXPECT_EQ(TagValue(store->FindRun(f.rows[3].run).value(), kCollocationTag), "MPS");
  EXPECT_EQ(TagValue(store->FindRun(f.rows[5].run).value(), kCollocationTag), "3g.20gb");
  Shell again = Run("(cd examples/csv && " + env_ + " TRAINBENCH_STORE=" + db_ + " " + kTrainbench +
                    " experiment_collocation.csv)");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(store->ListRuns("Default").value().size(), 7u) << "every row is FINISHED: nothing runs again";
}

// radT's script form: -e 0 is MLflow's Default, where a plain run goes too (one experiment,
// not two); a radT experiment number names the same experiment every time.
TEST_F(RadtTest, ExperimentZeroIsDefaultAndANumberMeansItsMlflowIdEveryTime) {
  ASSERT_EQ(Radt("-e 0 -d - ../pytorch/cifar10_context.py").code, 0);
  ASSERT_EQ(Radt("-d - ../pytorch/cifar10_context.py").code, 0);
  ASSERT_EQ(Radt("-e 2 -d - ../pytorch/cifar10_context.py").code, 0);
  ASSERT_EQ(Radt("-e 1 -d - ../pytorch/cifar10_context.py").code, 0);
  ASSERT_EQ(Radt("-e 2 -d - ../pytorch/cifar10_context.py").code, 0);
  auto store = OpenStore();
  std::map<std::string, size_t> runs;
  for (const ExperimentInfo& e : store->ListExperiments().value())
    runs[MlflowExperimentId(e) + ":" + e.name] = store->ListRuns(e.name).value().size();
  EXPECT_EQ(runs, (std::map<std::string, size_t>{{"0:Default", 2}, {"1:1", 1}, {"2:2", 2}}));
}

}  // namespace
}  // namespace tb
