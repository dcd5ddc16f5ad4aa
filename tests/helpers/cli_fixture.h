// The fixture of the end-to-end tests: the trainbench binary, the CPU burner, a scratch
// directory with a store, and helpers to read what a run left in it.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "run/run_cost.h"
#include "store/store.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {

namespace fs = std::filesystem;

inline const std::string kTrainbench = TRAINBENCH_BINARY;
inline const std::string kBurner = TRAINBENCH_BURNER;

// A run's tags without the cost trainbench records for every run (run/run_cost.h).
inline KeyValues TagsBesideTheCost(const RunRecord& run) {
  KeyValues tags;
  for (const auto& tag : run.tags) {
    if (!IsRunCostTag(tag.first)) tags.push_back(tag);
  }
  return tags;
}

struct Shell {
  int code = -1;
  std::string out, err;
};

// Runs the trainbench binary against a store in a scratch directory and reads the store.
class CliTest : public ::testing::Test {
 protected:
#if defined(TRAINBENCH_SIM_NVML) && defined(TRAINBENCH_SIM_BIN)
  // Writes `scenario` (sim/README.md) to sim.json and points every following command at
  // that simulated GPU: its NVML, nvidia-smi and the other tools.
  void UseSimulatedGpu(const std::string& scenario) {
    std::ofstream(dir_ / "sim.json") << scenario;
    env_ += " TRAINBENCH_SIM_SCENARIO=" + (dir_ / "sim.json").string() +
            " TRAINBENCH_NVML_LIBRARY=" + std::string(TRAINBENCH_SIM_NVML) + " PATH=" + TRAINBENCH_SIM_BIN +
            ":$PATH";
  }
#endif
  // Runs trainbench with `args` (a shell fragment) against this test's store.
  Shell Trainbench(const std::string& args) {
    return Run(env_ + " TRAINBENCH_STORE=" + db_ + " " + kTrainbench + " " + args);
  }

  // Runs a shell command in the scratch directory.
  Shell Run(const std::string& command) {
    std::string cmd = "cd " + dir_.string() + " && " + command + " > out.txt 2> err.txt";
    Shell r;
    int status = std::system(cmd.c_str());
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = Slurp(dir_ / "out.txt");
    r.err = Slurp(dir_ / "err.txt");
    return r;
  }

  static std::string Slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::unique_ptr<Store> OpenStore() { return Store::Open(db_).value(); }

  RunRecord OnlyRun(Store& store) {
    std::vector<RunRecord> runs = store.ListRuns("").value();
    EXPECT_EQ(runs.size(), 1u);
    return runs.empty() ? RunRecord{} : runs[0];
  }

  std::vector<Point> Series(Store& store, const std::string& run_id, const std::string& metric,
                            const std::string& labels = "") {
    for (const SeriesInfo& s : store.ListSeries(run_id).value()) {
      if (s.metric == metric && s.labels == labels) return ReadSeriesPoints(store, s.id).value();
    }
    return {};
  }

  // CPU seconds and wall seconds the burner reported for itself and its children.
  std::pair<double, double> BurnerTruth() {
    std::istringstream in(Slurp(dir_ / "truth.txt"));
    double cpu = 0, wall = 0;
    in >> cpu >> wall;
    return {cpu, wall};
  }

  ScratchDirectory scratch_{"tb-cli"};
  const fs::path& dir_ = scratch_.path();
  std::string db_ = (dir_ / "tb.db").string();
  std::string env_;  // "K=V K2=V2" put before every trainbench command
};

}  // namespace tb
