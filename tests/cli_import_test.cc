// `trainbench import --mlflow` end to end: the binary against an MLflow SQLite database in
// a scratch directory, once and following a database that keeps changing.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "analyze/phases.h"
#include "platform/process.h"
#include "store/store.h"
#include "tests/helpers/cli_fixture.h"
#include "tests/helpers/mlflow_database.h"
#include "tests/helpers/sqlite_script.h"

namespace tb {
namespace {

class CliImportTest : public CliTest {
 protected:
  void Sql(const std::vector<std::string>& statements) {
    RunSqlite((dir_ / "mlflow.db").string(), statements);
  }

  // Waits up to 20 s for `done` to hold of the store.
  bool Eventually(const std::function<bool(Store&)>& done) {
    for (int i = 0; i < 200; ++i) {
      if (fs::exists(db_)) {
        Result<std::unique_ptr<Store>> store = Store::Open(db_);
        if (store.ok() && done(**store)) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
};

// An import whose MLflow source cannot be read fails saying what to give, and leaves no
// empty store behind where none was.
TEST_F(CliImportTest, AnImportFromASourceThatDoesNotOpenLeavesNoStore) {
  for (const char* source : {"sqlite:///mlflow.db", "sqlite://", "missing.db"}) {
    Shell r = Trainbench(std::string("import --mlflow ") + source + " --store fresh.db");
    EXPECT_NE(r.code, 0) << source;
    EXPECT_NE(r.err.find("sqlite:///mlflow.db"), std::string::npos) << source << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "fresh.db")) << source;
  }
}

// Someone moving over runs MLflow and trainbench side by side: `import --follow` brings a
// run MLflow is still logging, then its later points and its end, and stops on SIGTERM.
TEST_F(CliImportTest, FollowKeepsTheStoreInStepWithAGrowingMlflowDatabase) {
  const std::string live = "e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0";
  Sql(mlflow_fixture::MlflowDatabaseSql());
  auto log = [&](int from, int to) {
    std::string sql = "INSERT INTO metrics VALUES ";
    for (int step = from; step < to; ++step) {
      sql += (step == from ? "" : ", ") + std::string("('loss', 0.5, ") +
             std::to_string(1700000400000 + step) + ", '" + live + "', " + std::to_string(step) + ", false)";
    }
    Sql({sql});
  };
  Sql({"INSERT INTO runs VALUES ('" + live +
       "', 'growing', 'LOCAL', 'y.py', '', 'ana', 'RUNNING', 1700000400000, NULL, NULL, NULL, 'active', '', "
       "0)"});
  log(0, 100);
  SpawnOptions o;
  o.argv = {"sh", "-c",
            "exec " + kTrainbench + " import --mlflow sqlite:///mlflow.db --store " + db_ +
                " --follow --every 0.2 > follow.txt 2>&1"};
  o.working_directory = dir_.string();
  ChildProcess follow = ChildProcess::Spawn(o).value();
  auto points = [&](Store& store) {
    for (const SeriesInfo& s : store.ListSeries(live).value()) {
      if (s.metric == "train.loss") return ReadSeriesPoints(store, s.id).value().size();
    }
    return size_t{0};
  };
  EXPECT_TRUE(Eventually([&](Store& store) { return points(store) == 100; })) << Slurp(dir_ / "follow.txt");

  log(100, 500);
  Sql({"UPDATE runs SET status = 'FINISHED', end_time = 1700000500000 WHERE run_uuid = '" + live + "'"});
  EXPECT_TRUE(Eventually([&](Store& store) {
    Result<RunRecord> run = store.FindRun(live);
    return run.ok() && run->status == kFinished && points(store) == 500;
  })) << Slurp(dir_ / "follow.txt");

  ASSERT_TRUE(follow.Signal(SIGTERM).ok());
  Result<ExitInfo> exit = follow.Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->ShellCode(), 0);
  std::string out = Slurp(dir_ / "follow.txt");
  EXPECT_NE(out.find("e0e0e0e0  growing: 400 more points, RUNNING -> FINISHED"), std::string::npos) << out;
  EXPECT_NE(out.find("stopped following"), std::string::npos) << out;
  EXPECT_EQ(points(*OpenStore()), 500u);
}

// A run imported while MLflow still ran it has no end yet: ls and show say its duration is
// unknown (not the years since it started) and name no listeners it never had; importing
// again after it ended gives its duration.
TEST_F(CliImportTest, ARunImportedWhileRunningShowsNoMadeUpFigures) {
  Sql(mlflow_fixture::MlflowDatabaseSql());
  Sql(
      {"INSERT INTO runs VALUES ('e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0', 'growing', 'LOCAL', 'y.py', '', 'ana', "
       "'RUNNING', 1700000400000, NULL, NULL, NULL, 'active', '', 0)"});
  ASSERT_EQ(Trainbench("import --mlflow sqlite:///mlflow.db").code, 0);
  Shell ls = Trainbench("ls Default");
  std::string line = ls.out.substr(ls.out.find("e0e0e0e0"));
  line = line.substr(0, line.find('\n'));
  EXPECT_NE(line.find("RUNNING"), std::string::npos) << line;
  EXPECT_NE(line.find("          -  "), std::string::npos) << line;
  Shell show = Trainbench("show growing");
  EXPECT_NE(show.out.find("duration - (RUNNING in MLflow when imported"), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("so far"), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("every 0s"), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("listeners"), std::string::npos) << show.out;  // MLflow recorded none

  Sql(
      {"UPDATE runs SET status = 'FINISHED', end_time = 1700000500000 WHERE run_uuid = "
       "'e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0'"});
  Shell again = Trainbench("import --mlflow sqlite:///mlflow.db");
  EXPECT_NE(again.out.find("1 brought up to date"), std::string::npos) << again.out;
  EXPECT_NE(Trainbench("show growing").out.find("duration 1:40.0"), std::string::npos);
  // radT's runs name their listeners, though not how often they sampled.
  Shell radt = Trainbench("show a0a0a0a0");
  EXPECT_NE(radt.out.find("listeners   smi+dcgmi+top\n"), std::string::npos) << radt.out;
}

// An imported run that had ended carries its analysis, as one that ended under `trainbench
// run` does: a table of runs (store.runs(), the report) reads its steady-state figures
// rather than its points.
TEST_F(CliImportTest, AnImportedRunThatEndedCarriesItsAnalysis) {
  Sql(mlflow_fixture::MlflowDatabaseSql());
  ASSERT_EQ(Trainbench("import --mlflow sqlite:///mlflow.db").code, 0);
  std::unique_ptr<Store> store = OpenStore();
  int ended = 0;
  for (const RunRecord& r : store->ListRuns("").value()) {
    if (r.status == kRunning) continue;
    ++ended;
    EXPECT_TRUE(KeptAnalysisJson(*store, r).has_value()) << r.name << " has no current analysis kept";
  }
  EXPECT_GT(ended, 0);
}

}  // namespace
}  // namespace tb
