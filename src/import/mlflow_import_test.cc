#include "import/mlflow_import.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "base/strings.h"
#include "store/run_tags.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/helpers/mlflow_database.h"
#include "tests/helpers/recorded_trace.h"
#include "tests/helpers/scratch_directory.h"
#include "tests/helpers/sqlite_script.h"

namespace tb {
namespace {

using mlflow_fixture::kDeletedRun;
using mlflow_fixture::kNotebookRun;
using mlflow_fixture::kRadtRunA;
using mlflow_fixture::kRadtRunB;

class MlflowImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mlflow_ = (scratch_.path() / "mlflow.db").string();
    Sql(mlflow_fixture::MlflowDatabaseSql());
    store_ = OpenSqliteStore((scratch_.path() / "t.db").string()).value();
  }

  void Sql(const std::vector<std::string>& statements) { RunSqlite(mlflow_, statements); }

  // The points of one series of a run ("" when it has none such).
  std::vector<Point> Points(const std::string& run_id, const std::string& metric, const std::string& labels) {
    for (const SeriesInfo& s : store_->ListSeries(run_id).value()) {
      if (s.metric == metric && s.labels == labels) return ReadSeriesPoints(*store_, s.id).value();
    }
    return {};
  }

  std::string Tag(const RunRecord& r, const std::string& key) {
    for (const auto& [k, v] : r.tags) {
      if (k == key) return v;
    }
    return "";
  }

  ScratchDirectory scratch_{"mlflow-import"};
  std::string mlflow_;
  std::unique_ptr<Store> store_;
};

TEST_F(MlflowImportTest, RadtRunsBecomeAWorkloadsRunsWithCatalogMetricsInTrainbenchsUnits) {
  Result<ImportResult> done = ImportMlflow("sqlite:///" + mlflow_, *store_);
  ASSERT_TRUE(done.ok()) << done.status().message();
  EXPECT_EQ(done->imported, 3);
  EXPECT_EQ(done->deleted, 1);

  RunRecord a = store_->FindRun(kRadtRunA).value();
  EXPECT_EQ(a.experiment, "resnet-collocation");
  // The experiment keeps its tags, and MLflow's id, which radT's Experiment column names.
  for (const ExperimentInfo& e : store_->ListExperiments().value()) {
    if (e.name != "resnet-collocation") continue;
    EXPECT_EQ(e.tags, (KeyValues{{"team", "vision"}, {kMlflowExperimentIdTag, "7"}}));
  }
  EXPECT_EQ(a.workload, "1");
  EXPECT_EQ(a.name, "(1 0_A_mps) cifar10");
  EXPECT_EQ(a.status, kFinished);
  EXPECT_EQ(a.start_ms, 1700000100000);
  EXPECT_EQ(a.end_ms, 1700000160000);
  EXPECT_EQ(a.devices, "0");
  EXPECT_EQ(a.listeners, "smi+dcgmi+top");
  EXPECT_EQ(Tag(a, "trainbench.letter"), "0_A_mps");
  EXPECT_EQ(Tag(a, "trainbench.collocation"), "mps");
  EXPECT_EQ(Tag(a, kImportedTag), "mlflow");
  RunRecord b = store_->FindRun(kRadtRunB).value();
  EXPECT_EQ(b.workload, "1");
  EXPECT_EQ(b.status, kFailed);
  EXPECT_EQ(Tag(b, "mlflow.parentRunId"), kRadtRunA);

  std::vector<Point> power = Points(kRadtRunA, "gpu.power.draw_watts", "gpu=0,listener=smi");
  ASSERT_EQ(power.size(), 2u);
  EXPECT_EQ(power[0].time_ms, 1700000101000);
  EXPECT_DOUBLE_EQ(power[0].value, 250.5);
  EXPECT_DOUBLE_EQ(power[1].value, 260.0);
  // MiB to bytes, mJ to J, percent of a core to cores; radT's -1 (N/A) is no value.
  EXPECT_DOUBLE_EQ(Points(kRadtRunA, "gpu.memory.used_bytes", "gpu=0,listener=smi").at(0).value,
                   1073741824.0);
  EXPECT_DOUBLE_EQ(Points(kRadtRunA, "gpu.energy.consumed_joules", "gpu=0,listener=dcgmi").at(0).value, 5.0);
  EXPECT_DOUBLE_EQ(Points(kRadtRunA, "gpu.sm.active_ratio", "gpu=0,listener=dcgmi").at(0).value, 0.75);
  EXPECT_DOUBLE_EQ(Points(kRadtRunA, "proc.cpu.utilization_ratio", "").at(0).value, 2.5);
  EXPECT_TRUE(std::isnan(Points(kRadtRunA, "gpu.utilization.gpu_ratio", "gpu=0,listener=smi").at(0).value));
  // Percent to a ratio exactly as the live path stores it (95 % is 0.95, not a step off).
  EXPECT_EQ(Points(kRadtRunA, "gpu.utilization.gpu_ratio", "gpu=0,listener=dcgmi").at(0).value, 0.95);
  // top's %MEM is the listener's metric, not the script's; DCGM's never-filled PCIe
  // throughput (radT's 0s) is no data at all.
  EXPECT_EQ(Points(kRadtRunA, "proc.memory.share_ratio", "").at(0).value, 0.125);
  EXPECT_TRUE(Points(kRadtRunA, "train.TOP - Memory Utilization", "").empty());
  EXPECT_TRUE(Points(kRadtRunA, "gpu.pcie.transmit_bytes_per_second", "gpu=0,listener=dcgmi").empty());
  EXPECT_TRUE(Points(kRadtRunA, "gpu.pcie.receive_bytes_per_second", "gpu=0,listener=dcgmi").empty());
  std::vector<Point> accuracy = Points(kRadtRunA, "train.accuracy", "");
  ASSERT_EQ(accuracy.size(), 1u);
  EXPECT_EQ(accuracy[0].step, 1);
  for (const SeriesInfo& s : store_->ListSeries(kRadtRunA).value()) {
    EXPECT_EQ(s.metric.find("SMI"), std::string::npos) << s.metric;  // the clock is left behind
  }

  RunRecord notebook = store_->FindRun(kNotebookRun).value();
  EXPECT_EQ(notebook.experiment, "Default");
  EXPECT_EQ(notebook.workload, "");
  EXPECT_EQ(notebook.command, "analysis.ipynb");
  std::vector<Point> loss = Points(kNotebookRun, "train.loss", "");
  ASSERT_EQ(loss.size(), 3u);
  EXPECT_DOUBLE_EQ(loss[0].value, 0.9);
  EXPECT_TRUE(std::isnan(loss[1].value));
  EXPECT_EQ(loss[2].step, 2);
  EXPECT_FALSE(store_->FindRun(kDeletedRun).ok() && store_->FindRun(kDeletedRun)->id == kDeletedRun);
}

// radT 0.2.21+ logs every listener metric as "system/<name>" (and 0.2.29's free listener in
// GB of free --mega's MB / 1024): they become the catalog's series, not script metrics.
TEST_F(MlflowImportTest, Radt0229sSystemPrefixedMetricsBecomeHardwareSeries) {
  const std::string run = kRadtRunA;
  auto point = [&](const char* key, double value, int64_t at) {
    return Concat(
        {"('", key, "', ", std::to_string(value), ", ", std::to_string(at), ", '", run, "', 0, false)"});
  };
  Sql({"INSERT INTO metrics VALUES " + point("system/SMI - Power Draw", 123.5, 1700000200000) + ", " +
       point("system/system/TOP - CPU Utilization", 150.0, 1700000200000) + ", " +
       point("system/Free - Mem Total GB", 24.0, 1700000200000) + ", " +
       point("system/SMI - Timestamp", 1.0, 1700000200000)});
  ASSERT_TRUE(ImportMlflow(mlflow_, *store_).ok());
  auto at = [&](const std::string& metric, const std::string& labels) {
    for (const Point& p : Points(run, metric, labels))
      if (p.time_ms == 1700000200000) return p.value;
    return -1.0;
  };
  EXPECT_EQ(at("gpu.power.draw_watts", "gpu=0,listener=smi"), 123.5);
  EXPECT_EQ(at("proc.cpu.utilization_ratio", ""), 1.5);
  EXPECT_EQ(at("host.memory.total_bytes", "listener=free"), 24.0 * 1024e6);
  for (const SeriesInfo& s : store_->ListSeries(run).value())
    EXPECT_EQ(s.metric.find("system/"), std::string::npos) << s.metric;
}

TEST_F(MlflowImportTest, ImportingAgainAddsOnlyNewRunsAndDoublesNothing) {
  ASSERT_TRUE(ImportMlflow(mlflow_, *store_).ok());
  Sql(
      {"INSERT INTO runs VALUES ('e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0', 'later', 'LOCAL', 'y.py', '', 'ana', "
       "'RUNNING', 1700000400000, NULL, NULL, NULL, 'active', '', 0)"});
  Result<ImportResult> again = ImportMlflow(mlflow_, *store_);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->imported, 1);
  EXPECT_EQ(again->skipped, 3);
  EXPECT_EQ(Points(kRadtRunA, "gpu.power.draw_watts", "gpu=0,listener=smi").size(), 2u);
  EXPECT_EQ(store_->FindRun("e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0")->status, kRunning);
  EXPECT_EQ(store_->ListRuns("").value().size(), 4u);
}

// A run still logging when imported: importing again brings its new points, tags, status
// and end, says so, and a third pass finds nothing to do and doubles nothing.
TEST_F(MlflowImportTest, ImportingAgainBringsARunningRunUpToDate) {
  const std::string live = "e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0";
  auto log = [&](int from, int to) {
    std::string sql = "INSERT INTO metrics VALUES ";
    for (int step = from; step < to; ++step) {
      sql += (step == from ? "" : ", ") + std::string("('loss', ") + std::to_string(1.0 / (step + 1)) + ", " +
             std::to_string(1700000400000 + step) + ", '" + live + "', " + std::to_string(step) + ", false)";
    }
    Sql({sql});
  };
  Sql({"INSERT INTO runs VALUES ('" + live +
       "', 'growing', 'LOCAL', 'y.py', '', 'ana', 'RUNNING', 1700000400000, NULL, NULL, NULL, 'active', '', "
       "0)"});
  log(0, 1350);
  ASSERT_TRUE(ImportMlflow(mlflow_, *store_).ok());
  EXPECT_EQ(Points(live, "train.loss", "").size(), 1350u);
  EXPECT_EQ(store_->FindRun(live)->status, kRunning);

  log(1350, 12500);  // across the first pass's last, partly filled chunk
  Sql({"UPDATE runs SET status = 'FINISHED', end_time = 1700000500000 WHERE run_uuid = '" + live + "'",
       "INSERT INTO tags VALUES ('best', '0.01', '" + live + "')"});
  Result<ImportResult> again = ImportMlflow(mlflow_, *store_);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->updated, 1);
  EXPECT_EQ(again->skipped, 3);
  ASSERT_EQ(again->updates.size(), 1u);
  EXPECT_NE(again->updates[0].find("11150 more points"), std::string::npos) << again->updates[0];
  EXPECT_NE(again->updates[0].find("RUNNING -> FINISHED"), std::string::npos) << again->updates[0];
  std::vector<Point> loss = Points(live, "train.loss", "");
  ASSERT_EQ(loss.size(), 12500u);
  for (size_t i = 0; i < loss.size(); ++i) ASSERT_EQ(loss[i].step, static_cast<int64_t>(i));
  RunRecord run = store_->FindRun(live).value();
  EXPECT_EQ(run.status, kFinished);
  EXPECT_EQ(run.end_ms, 1700000500000);
  EXPECT_EQ(Tag(run, "best"), "0.01");

  Result<ImportResult> third = ImportMlflow(mlflow_, *store_);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->updated, 0);
  EXPECT_EQ(third->skipped, 4);
  EXPECT_EQ(Points(live, "train.loss", "").size(), 12500u);
}

// MLflow receives a point older than the last one imported (a retried batch, a second
// process logging to the run): the next pass brings it, and every other point stays once.
TEST_F(MlflowImportTest, APointOlderThanTheLastImportedArrivesAndNothingDoubles) {
  const std::string live = "e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0";
  auto point = [&](double value, int64_t at, int step) {
    return "('loss', " + std::to_string(value) + ", " + std::to_string(at) + ", '" + live + "', " +
           std::to_string(step) + ", false)";
  };
  Sql({"INSERT INTO runs VALUES ('" + live +
           "', 'late', 'LOCAL', 'y.py', '', 'ana', 'RUNNING', 1700000400000, NULL, NULL, NULL, 'active', '', "
           "0)",
       "INSERT INTO metrics VALUES " + point(1.0, 1700000400000, 0) + ", " + point(0.5, 1700000400020, 2) +
           ", " + point(0.25, 1700000400030, 3)});
  ASSERT_TRUE(ImportMlflow(mlflow_, *store_).ok());
  ASSERT_EQ(Points(live, "train.loss", "").size(), 3u);
  // Step 1 arrives late, with its own (earlier) time; step 4 in order.
  Sql({"INSERT INTO metrics VALUES " + point(0.75, 1700000400010, 1) + ", " +
       point(0.125, 1700000400040, 4)});
  ASSERT_TRUE(ImportMlflow(mlflow_, *store_).ok());
  std::vector<Point> loss = Points(live, "train.loss", "");
  std::vector<int64_t> steps;
  for (const Point& p : loss) steps.push_back(p.step);
  std::sort(steps.begin(), steps.end());
  EXPECT_EQ(steps, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  ASSERT_TRUE(ImportMlflow(mlflow_, *store_).ok());
  EXPECT_EQ(Points(live, "train.loss", "").size(), 5u) << "a third pass doubles nothing";
}

// What arrives after a run ended: points logged to a FINISHED run (evaluation after
// training), a new metric on a KILLED one, an experiment renamed in MLflow; each brought
// by the next pass, while a run with an empty param is not "brought up to date" every time.
// Both ways MLflow's databases say a metric moved: its latest_metrics table, and, in one
// without it, the points themselves.
TEST_F(MlflowImportTest, WhatArrivesAfterARunEndedIsBroughtByTheNextPass) {
  for (bool latest_table : {false, true}) {
    SCOPED_TRACE(latest_table ? "with latest_metrics" : "points only");
    if (latest_table) SetUp();  // afresh
    const std::string done = "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0", killed = "f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1";
    if (latest_table)
      Sql(
          {"CREATE TABLE latest_metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT, "
           "step BIGINT NOT NULL, is_nan BOOLEAN NOT NULL, run_uuid VARCHAR(32) NOT NULL, PRIMARY KEY (key, "
           "run_uuid))"});
    // What MLflow's store does for each point: the point, and the metric's latest moved on.
    auto log = [&](const std::string& run, const std::string& key, int from, int to) {
      for (int step = from; step < to; ++step) {
        std::string values = "('" + key + "', 0.5, " + std::to_string(1700000400000 + step) + ", '" + run +
                             "', " + std::to_string(step) + ", false)";
        Sql({"INSERT INTO metrics VALUES " + values});
        if (latest_table)
          Sql({"INSERT OR REPLACE INTO latest_metrics VALUES ('" + key + "', 0.5, " +
               std::to_string(1700000400000 + step) + ", " + std::to_string(step) + ", false, '" + run +
               "')"});
      }
    };
    for (const std::string& id : {done, killed}) {
      Sql({"INSERT INTO runs VALUES ('" + id + "', 'r-" + id.substr(0, 2) +
               "', 'LOCAL', 'y.py', '', 'ana', '" + (id == done ? "FINISHED" : "KILLED") +
               "', 1700000400000, 1700000500000, NULL, NULL, 'active', '', 7)",
           "INSERT INTO params VALUES ('note', '', '" + id + "')"});
    }
    log(done, "loss", 0, 200);
    ASSERT_TRUE(ImportMlflow(mlflow_, *store_).ok());
    ASSERT_EQ(Points(done, "train.loss", "").size(), 200u);
    Result<ImportResult> quiet = ImportMlflow(mlflow_, *store_);
    ASSERT_TRUE(quiet.ok());
    EXPECT_EQ(quiet->updated, 0) << "an empty param is a param";

    log(done, "loss", 200, 205);
    log(killed, "eval_accuracy", 0, 1);
    Sql({"UPDATE experiments SET name = 'resnet-collocation-v2' WHERE experiment_id = 7"});
    Result<ImportResult> again = ImportMlflow(mlflow_, *store_);
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ(again->updated, 2) << (again->updates.empty() ? "" : again->updates[0]);
    EXPECT_EQ(Points(done, "train.loss", "").size(), 205u);
    EXPECT_EQ(Points(killed, "train.eval_accuracy", "").size(), 1u);
    EXPECT_EQ(store_->FindRun(done)->experiment, "resnet-collocation-v2");
    EXPECT_EQ(store_->FindRun(kRadtRunA)->experiment, "resnet-collocation-v2");
    EXPECT_TRUE(store_->ListRuns("resnet-collocation").value().empty());
    Result<ImportResult> third = ImportMlflow(mlflow_, *store_);
    ASSERT_TRUE(third.ok());
    EXPECT_EQ(third->updated, 0);
    EXPECT_EQ(Points(done, "train.loss", "").size(), 205u);
    store_.reset();
    std::filesystem::remove_all(scratch_.path());
    std::filesystem::create_directories(scratch_.path());
  }
}

// What no MLflow client writes (text or bytes in numeric columns, which SQLite keeps;
// timestamps in nanoseconds) leaves that run out, said by its id and what is wrong.
TEST_F(MlflowImportTest, HostileValuesLeaveTheirRunOutByName) {
  Sql(
      {"INSERT INTO runs VALUES ('e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1', 'text', 'LOCAL', '', '', 'x', "
       "'FINISHED', "
       "1700000000000, 1700000001000, NULL, NULL, 'active', '', 0), "
       "('e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2', 'blob', 'LOCAL', '', '', 'x', 'FINISHED', 1700000000000, "
       "1700000001000, NULL, NULL, 'active', '', 0), "
       "('e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3', 'nanoseconds', 'LOCAL', '', '', 'x', 'FINISHED', 1700000000000, "
       "1700000001000, NULL, NULL, 'active', '', 0), "
       "('e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4', 'start', 'LOCAL', '', '', 'x', 'FINISHED', 'yesterday', "
       "1700000001000, NULL, NULL, 'active', '', 0)",
       "INSERT INTO metrics VALUES ('loss', 'abc', 1700000000100, 'e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1', 0, 0), "
       "('loss', 0.5, x'00ff', 'e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2', 0, 0), "
       "('loss', 0.5, 1700000000100000000, 'e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3', 0, 0)"});
  Result<ImportResult> done = ImportMlflow(mlflow_, *store_);
  ASSERT_TRUE(done.ok()) << done.status().message();
  EXPECT_EQ(done->imported, 3);  // the fixture's
  ASSERT_EQ(done->refused.size(), 4u);
  std::string all;
  for (const std::string& why : done->refused) all += why + "\n";
  for (const char* expected :
       {"run e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1 (its metric 'loss' holds text as a value",
        "run e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2 (its metric 'loss' holds blob as a timestamp",
        "run e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3 (its metric 'loss' has the timestamp 1700000000100000000",
        "run e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4 (its start_time holds text"}) {
    EXPECT_NE(all.find(expected), std::string::npos) << expected << " in\n" << all;
  }
  for (const char* id : {"e1e1e1e1", "e2e2e2e2", "e3e3e3e3", "e4e4e4e4"}) {
    Result<RunRecord> r = store_->FindRun(id);
    EXPECT_FALSE(r.ok()) << id;
  }
}

TEST_F(MlflowImportTest, AnOlderMlflowDatabaseWithoutRunNamesOrNanFlagsIsRead) {
  Sql({"ALTER TABLE runs DROP COLUMN name",
       "CREATE TABLE old AS SELECT key, value, timestamp, run_uuid, step FROM metrics WHERE NOT is_nan",
       "DROP TABLE metrics", "ALTER TABLE old RENAME TO metrics",
       "INSERT INTO tags VALUES ('mlflow.runName', 'old-name', 'c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0')"});
  Result<ImportResult> done = ImportMlflow(mlflow_, *store_);
  ASSERT_TRUE(done.ok()) << done.status().message();
  EXPECT_EQ(store_->FindRun(kNotebookRun)->name, "old-name");
  EXPECT_EQ(Points(kNotebookRun, "train.loss", "").size(), 2u);
}

TEST_F(MlflowImportTest, WhatIsNotAnMlflowDatabaseIsRefusedSayingWhatToGive) {
  std::string other = (scratch_.path() / "t.db").string();  // trainbench's own store
  Result<ImportResult> wrong = ImportMlflow(other, *store_);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("not an MLflow tracking database"), std::string::npos)
      << wrong.status().message();
  Result<ImportResult> missing = ImportMlflow((scratch_.path() / "nothing.db").string(), *store_);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--backend-store-uri"), std::string::npos)
      << missing.status().message();
}

// radT's recorded run (testdata: 9,345 s of dcgmi at 1 Hz) as radT's listener logged it into
// MLflow: every column arrives, every value in trainbench's units.
// MLflow's URIs as SQLAlchemy reads them: sqlite:///mlflow.db is the file in the working
// directory (the form MLflow's docs and trainbench's messages give), four slashes an
// absolute path.
TEST_F(MlflowImportTest, SqliteUrisAreReadAsMlflowReadsThem) {
  std::filesystem::path db = mlflow_;
  char here[4096];
  ASSERT_NE(getcwd(here, sizeof here), nullptr);
  ASSERT_EQ(chdir(db.parent_path().c_str()), 0);
  Result<ImportResult> relative = ImportMlflow("sqlite:///" + db.filename().string(), *store_);
  ASSERT_EQ(chdir(here), 0);
  ASSERT_TRUE(relative.ok()) << relative.status().message();
  EXPECT_EQ(relative->imported, 3);
  ASSERT_TRUE(db.is_absolute());
  EXPECT_TRUE(ImportMlflow("sqlite:///" + db.string(), *store_).ok()) << "sqlite:////abs/path";
  Result<ImportResult> memory = ImportMlflow("sqlite://", *store_);
  ASSERT_FALSE(memory.ok());
  EXPECT_NE(memory.status().message().find("sqlite:///mlflow.db"), std::string::npos)
      << memory.status().message();
}

TEST_F(MlflowImportTest, ARecordedRadtRunArrivesWholeInTrainbenchsUnits) {
  nlohmann::json trace = ReadRecordedTrace(kRecordedTrace);
  const nlohmann::json& times = trace["Timestamp"];
  std::string run = "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0";
  std::vector<std::string> sql = {
      "BEGIN",
      "INSERT INTO runs VALUES ('" + run + "', 'recorded', 'PROJECT', '', 'main', 'ana', 'FINISHED', " +
          times.front().dump() + ", " + times.back().dump() + ", NULL, NULL, 'active', '', 7)",
      "INSERT INTO params VALUES ('workload', '2', '" + run + "'), ('letter', '1', '" + run + "')"};
  size_t logged = 0, never_filled = 0;  // DCGM's PCIe throughput: radT's 0s, which are no data
  for (auto& [column, values] : trace.items()) {
    if (!column.starts_with("DCGMI - ")) continue;
    for (size_t i = 0; i < times.size(); ++i) {
      if (!values[i].is_number()) continue;
      sql.push_back(Concat({"INSERT INTO metrics VALUES ('", column, "', ", values[i].dump(), ", ",
                            times[i].dump(), ", '", run, "', 0, false)"}));
      ++logged;
      never_filled += column.starts_with("DCGMI - PCIE") && column.ends_with("Throughput") && values[i] == 0;
    }
  }
  sql.push_back("COMMIT");
  Sql(sql);
  Result<ImportResult> done = ImportMlflow(mlflow_, *store_);
  ASSERT_TRUE(done.ok()) << done.status().message();
  EXPECT_GT(logged, 100000u);
  EXPECT_GT(never_filled, 10000u);
  EXPECT_EQ(done->points, static_cast<int64_t>(logged - never_filled) + 14);  // and the fixture's other runs

  std::vector<Point> sm = Points(run, "gpu.sm.active_ratio", "gpu=1,listener=dcgmi");
  std::vector<Point> energy = Points(run, "gpu.energy.consumed_joules", "gpu=1,listener=dcgmi");
  ASSERT_EQ(sm.size(), times.size());
  ASSERT_EQ(energy.size(), times.size());
  for (size_t i = 0; i < times.size(); i += 997) {
    EXPECT_EQ(sm[i].time_ms, times[i].get<int64_t>());
    EXPECT_DOUBLE_EQ(sm[i].value, trace["DCGMI - SN Actuie"][i].get<double>());
    EXPECT_DOUBLE_EQ(energy[i].value, trace["DCGMI - Total Energy Consumption"][i].get<double>() * 0.001);
  }
  for (const SeriesInfo& s : store_->ListSeries(run).value()) {
    EXPECT_FALSE(s.metric.starts_with("train.")) << s.metric << ": a radT column left unmapped";
  }
}

// A hostile or damaged MLflow database: a run id shaped like a path (which would have made
// the store's own folder a run's artifacts), an experiment name trainbench cannot keep,
// infinities in a series. Each bad run is skipped and said by name; the rest arrive.
TEST_F(MlflowImportTest, BadRunsAreSkippedByNameAndTheRestArrive) {
  Sql({"INSERT INTO experiments VALUES (9, 'bad' || char(7) || 'name', 'x', 'active', 1, 1)",
       "INSERT INTO runs VALUES ('..', 'up', 'LOCAL', '', '', 'x', 'FINISHED', 1700000000000, 1700000001000, "
       "NULL, "
       "NULL, 'active', '', 0)",
       "INSERT INTO runs VALUES ('e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0', 'in bad', 'LOCAL', '', '', 'x', "
       "'FINISHED', "
       "1700000000000, 1700000001000, NULL, NULL, 'active', '', 9)",
       "INSERT INTO runs VALUES ('f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0', 'infinite', 'LOCAL', '', '', 'x', "
       "'FINISHED', 1700000000000, 1700000001000, NULL, NULL, 'active', '', 0)",
       "INSERT INTO metrics VALUES ('loss', 9e999, 1700000000100, 'f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0', 0, 0), "
       "('loss', -9e999, 1700000000200, 'f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0', 1, 0), "
       "('loss', 0.5, 1700000000300, 'f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0', 2, 0)"});
  Result<ImportResult> done = ImportMlflow("sqlite:///" + mlflow_, *store_);
  ASSERT_TRUE(done.ok()) << done.status().message();
  EXPECT_EQ(done->imported, 4);  // the three of the fixture, and the one with infinities
  ASSERT_EQ(done->refused.size(), 2u);
  EXPECT_NE(done->refused[0].find("'..'"), std::string::npos) << done->refused[0];
  EXPECT_NE(done->refused[0].find("not an MLflow run id"), std::string::npos) << done->refused[0];
  // Nor can any other way put such a run in the store, or give it a folder.
  RunRecord up;
  up.id = "..";
  up.experiment = "Default";
  EXPECT_FALSE(store_->CreateRun(up).ok());
  EXPECT_FALSE(store_->ArtifactDirectory("..").ok());
  EXPECT_FALSE(store_->ArtifactDirectory("a/../../x").ok());
  EXPECT_NE(done->refused[1].find("e0e0e0e0"), std::string::npos) << done->refused[1];
  EXPECT_NE(done->refused[1].find("control characters"), std::string::npos) << done->refused[1];
  EXPECT_FALSE(store_->FindRun("..").ok() && store_->FindRun("..")->id == "..");
  std::vector<Point> loss = Points("f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0", "train.loss", "");
  ASSERT_EQ(loss.size(), 3u);
  EXPECT_EQ(loss[0].value, std::numeric_limits<double>::infinity());
  EXPECT_EQ(loss[1].value, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(loss[2].value, 0.5);
}

TEST(RadtLetter, DevicesNumberAndCollocation) {
  EXPECT_EQ(ParseRadtLetter("0").devices, "0");
  EXPECT_EQ(ParseRadtLetter("0").collocation, "");
  EXPECT_EQ(ParseRadtLetter("1_B").devices, "1");
  EXPECT_EQ(ParseRadtLetter("1_B").collocation, "");
  EXPECT_EQ(ParseRadtLetter("0_A_mps").collocation, "mps");
  EXPECT_EQ(ParseRadtLetter("0_3g.20gb").collocation, "3g.20gb");
  EXPECT_EQ(ParseRadtLetter("0+1_A").devices, "0+1");
}

}  // namespace
}  // namespace tb
