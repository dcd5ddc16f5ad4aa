// The shared PostgreSQL store end to end, against a real throw-away server: several
// `trainbench run` processes writing at once, the server stopped in the middle of a run
// and started again, a run that ends while the server is down (its spool written by a
// later command), `trainbench migrate` from SQLite, twice, and `trainbench import` of an
// MLflow database kept in PostgreSQL, twice.
#include <signal.h>

#include <thread>

#include "import/migrate.h"
#include "platform/process.h"
#include "tests/helpers/cli_fixture.h"
#include "tests/helpers/mlflow_database.h"
#include "tests/helpers/postgres_cluster.h"

namespace tb {
namespace {

// Logs `value` N times, every DELAY seconds, through trainbench's client.
std::string Script(int n, double delay) {
  return "import time, trainbench\n"
         "print('hello from the run', flush=True)\n"
         "with trainbench.Run() as run:\n"
         "    for i in range(" +
         std::to_string(n) + "):\n        run.log_metric('value', i, step=i)\n        time.sleep(" +
         std::to_string(delay) + ")\n";
}

class PostgresTest : public CliTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cluster_.ok()) << cluster_.error();
    uri_ = cluster_.CreateDatabase("trainbench");
    env_ = "TRAINBENCH_SPOOL_DIR=" + (dir_ / "spool").string();
  }
  // `trainbench run` against the database, in the background.
  ChildProcess StartRun(const std::string& name, int n, double delay) {
    std::ofstream(dir_ / (name + ".py")) << Script(n, delay);
    SpawnOptions spawn;
    spawn.argv = {"/bin/sh", "-c",
                  "cd " + dir_.string() + " && " + env_ + " exec " + kTrainbench + " run --store " + uri_ +
                      " -e shared -n " + name + " -l top --python /usr/bin/python3 " + name + ".py > " +
                      name + ".out 2> " + name + ".err"};
    return ChildProcess::Spawn(spawn).value();
  }
  std::unique_ptr<Store> Database() { return Store::Open(uri_).value(); }
  std::vector<Point> Values(Store& store, const std::string& run_name) {
    RunRecord run = store.FindRun(run_name).value();
    return Series(store, run.id, "train.value");
  }
  size_t SpoolFiles() {
    size_t n = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir_ / "spool", ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      n += it->path().extension() == ".spool";
    }
    return n;
  }

  PostgresCluster cluster_;
  std::string uri_;
};

TEST_F(PostgresTest, SeveralProcessesWriteAtOnceAndEveryRunIsComplete) {
  std::vector<ChildProcess> runs;
  for (int i = 0; i < 3; ++i) runs.push_back(StartRun("w" + std::to_string(i), 40, 0.02));
  for (ChildProcess& r : runs) EXPECT_EQ(r.Wait()->exit_code, 0);
  auto store = Database();
  std::set<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    std::string name = "w" + std::to_string(i);
    EXPECT_EQ(Values(*store, name).size(), 40u) << Slurp(dir_ / (name + ".err"));
    RunRecord run = store->FindRun(name).value();
    EXPECT_EQ(run.status, kFinished);
    EXPECT_FALSE(Series(*store, run.id, "host.cpu.utilization_ratio").empty());
    // The run's output is in the database, readable from any machine.
    EXPECT_NE(store->GetArtifact(run.id, "stdout.log")->content.find("hello from the run"),
              std::string::npos);
    ids.insert(run.id);
  }
  EXPECT_EQ(ids.size(), 3u);
  Shell ls = Trainbench("ls --store " + uri_);
  EXPECT_EQ(ls.code, 0) << ls.err;
  EXPECT_NE(ls.out.find("experiment shared  (3 runs)"), std::string::npos) << ls.out;
  // `trainbench serve` on the database shows them (and their points).
  SpawnOptions spawn;
  spawn.argv = {kTrainbench, "serve", "--store", uri_, "--port", "0"};
  spawn.stdout_mode = Stdio::kPipe;
  ChildProcess server = ChildProcess::Spawn(spawn).value();
  std::string line;
  char c;
  while (read(server.stdout_fd(), &c, 1) == 1 && c != '\n') line += c;
  size_t at = line.find("http://");
  ASSERT_NE(at, std::string::npos) << line;
  std::string url = line.substr(at, line.find('/', at + 7) - at);
  std::string id = store->FindRun("w0")->id;
  std::ofstream(dir_ / "get.py") << "import json, sys, urllib.request\n"
                                    "r = json.load(urllib.request.urlopen(sys.argv[1]))\n"
                                    "print(len(r['runs']), len(json.load(urllib.request.urlopen(sys.argv[2]))"
                                    "['series'][0]['x']))\n";
  std::string get = "cd " + dir_.string() + " && /usr/bin/python3 get.py '" + url +
                    "/api/v1/runs?experiment=shared&summary=0' '" + url + "/api/v1/series?runs=" + id +
                    "&metric=train.value' > got.txt 2>&1";
  EXPECT_EQ(std::system(get.c_str()), 0);
  ASSERT_TRUE(server.Signal(SIGTERM).ok());
  ASSERT_TRUE(server.Wait().ok());
  EXPECT_EQ(Slurp(dir_ / "got.txt"), "3 40\n");
}

TEST_F(PostgresTest, TheServerGoesAwayMidRunAndEverySampleArrives) {
  ChildProcess run = StartRun("flaky", 60, 0.1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_TRUE(cluster_.Stop());
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  ASSERT_TRUE(cluster_.Start());
  EXPECT_EQ(run.Wait()->exit_code, 0);
  std::string err = Slurp(dir_ / "flaky.err");
  auto store = Database();
  std::vector<Point> values = Values(*store, "flaky");
  ASSERT_EQ(values.size(), 60u) << err;
  for (int i = 0; i < 60; ++i) EXPECT_EQ(values[static_cast<size_t>(i)].value, i);
  EXPECT_EQ(store->FindRun("flaky")->status, kFinished);
  // Told once that it spools, once that it is written; nothing left behind.
  size_t told = 0;
  for (size_t at = err.find("cannot be reached"); at != std::string::npos;
       at = err.find("cannot be reached", at + 1))
    ++told;
  EXPECT_EQ(told, 1u) << err;
  EXPECT_NE(err.find("answers again"), std::string::npos) << err;
  EXPECT_EQ(SpoolFiles(), 0u);
}

TEST_F(PostgresTest, ARunThatEndsWhileTheServerIsDownIsWrittenByALaterCommand) {
  ChildProcess run = StartRun("late", 30, 0.1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  ASSERT_TRUE(cluster_.Stop());
  EXPECT_EQ(run.Wait()->exit_code, 0);  // the run itself went on
  EXPECT_EQ(SpoolFiles(), 1u);
  EXPECT_NE(Slurp(dir_ / "late.err").find("written by the next trainbench command"), std::string::npos);
  ASSERT_TRUE(cluster_.Start());
  Shell ls = Trainbench("ls --store " + uri_);
  EXPECT_EQ(ls.code, 0) << ls.err;
  EXPECT_EQ(SpoolFiles(), 0u);
  auto store = Database();
  EXPECT_EQ(Values(*store, "late").size(), 30u);
  EXPECT_EQ(store->FindRun("late")->status, kFinished);
}

TEST_F(PostgresTest, MigrationFromSqliteTwiceCopiesEachRunOnce) {
  std::string sqlite = (dir_ / "local.db").string();
  for (const char* name : {"a", "b"}) {
    std::ofstream(dir_ / (std::string(name) + ".py")) << Script(25, 0.01);
    Shell r = Trainbench("run --store " + sqlite + " -e local -n " + name +
                         " -l top --python /usr/bin/python3 " + name + ".py");
    ASSERT_EQ(r.code, 0) << r.err;
  }
  Shell first = Trainbench("migrate --from " + sqlite + " --to " + uri_);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.out.find("2 runs copied"), std::string::npos) << first.out;
  std::string chunks = cluster_.Value("SELECT count(*) || ' ' || sum(count) FROM chunks", "trainbench");
  Shell second = Trainbench("migrate --from " + sqlite + " --to " + uri_);
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_NE(second.out.find("0 runs copied (0 points), 2 already there"), std::string::npos) << second.out;
  EXPECT_EQ(cluster_.Value("SELECT count(*) || ' ' || sum(count) FROM chunks", "trainbench"), chunks);

  auto local = Store::Open(sqlite).value();
  auto shared = Database();
  for (const char* name : {"a", "b"}) {
    RunRecord mine = local->FindRun(name).value();
    RunRecord there = shared->FindRun(mine.id).value();
    EXPECT_EQ(there.status, mine.status);
    EXPECT_EQ(Values(*shared, name).size(), 25u);
    for (const SeriesInfo& s : local->ListSeries(mine.id).value()) {
      EXPECT_EQ(Series(*shared, mine.id, s.metric, s.labels).size(), ReadSeriesPoints(*local, s.id)->size())
          << s.metric;
    }
  }
}

// A radT lab's MLflow server keeps its runs in PostgreSQL: they come along, once.
TEST_F(PostgresTest, AnMlflowDatabaseInPostgresqlIsImportedOnce) {
  std::string mlflow = cluster_.CreateDatabase("mlflow");
  for (const std::string& sql : mlflow_fixture::MlflowDatabaseSql())
    ASSERT_EQ(cluster_.Psql(sql, "mlflow"), 0) << sql;
  Shell first = Trainbench("import --mlflow " + mlflow + " --store " + uri_);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.out.find("3 runs imported"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("1 deleted in MLflow left out"), std::string::npos) << first.out;
  std::string chunks = cluster_.Value("SELECT count(*) || ' ' || sum(count) FROM chunks", "trainbench");
  Shell second = Trainbench("import --mlflow " + mlflow + " --store " + uri_);
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_NE(second.out.find("0 runs imported (0 points), 0 brought up to date, 3 already there"),
            std::string::npos)
      << second.out;
  EXPECT_EQ(cluster_.Value("SELECT count(*) || ' ' || sum(count) FROM chunks", "trainbench"), chunks);

  auto store = Database();
  RunRecord a = store->FindRun(mlflow_fixture::kRadtRunA).value();
  EXPECT_EQ(a.experiment, "resnet-collocation");
  EXPECT_EQ(a.workload, "1");
  std::vector<Point> power = Series(*store, a.id, "gpu.power.draw_watts", "gpu=0,listener=smi");
  ASSERT_EQ(power.size(), 2u);
  EXPECT_DOUBLE_EQ(power[1].value, 260.0);
  Shell ls = Trainbench("ls --store " + uri_ + " resnet-collocation");
  EXPECT_NE(ls.out.find("(1 0_B_mps) cifar10"), std::string::npos) << ls.out;
}

// Ids of experiments come from their names (machines agree without asking); a renamed one
// keeps its id, and runs made later under the new name land in it.
TEST_F(PostgresTest, ARenamedExperimentKeepsItsIdAndTakesNewRuns) {
  auto store = Database();
  int64_t id = store->EnsureExperiment("sweep").value();
  ASSERT_TRUE(
      store->ChangeExperiment(id, {.name = "sweep-2", .set_tags = {{"team", "systems"}}, .delete_tags = {}})
          .ok());
  EXPECT_EQ(store->EnsureExperiment("sweep-2").value(), id);
  RunRecord run;
  run.id = NewRunId();
  run.experiment = "sweep-2";
  run.name = "after";
  ASSERT_TRUE(store->CreateRun(run).ok());
  EXPECT_EQ(store->FindRun(run.id)->experiment, "sweep-2");
  std::vector<ExperimentInfo> all = store->ListExperiments().value();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].tags, (KeyValues{{"team", "systems"}}));
  int64_t other = store->EnsureExperiment("other").value();
  EXPECT_FALSE(store->ChangeExperiment(other, {.name = "sweep-2", .set_tags = {}, .delete_tags = {}}).ok());
}

}  // namespace
}  // namespace tb
