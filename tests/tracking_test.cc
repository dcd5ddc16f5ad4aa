// Real Python processes (/usr/bin/python3) logging through the trainbench client and
// through MLflow-shaped REST calls while `trainbench run` supervises them.
#include <sys/stat.h>

#include <cmath>
#include <set>

#include "store/run_tags.h"
#include "tests/helpers/cli_fixture.h"
#include "tests/helpers/free_port.h"

namespace tb {
namespace {

const std::string kPython = "/usr/bin/python3";

class TrackingTest : public CliTest {
 protected:
  void Script(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  // A script that speaks to the tracking API as MLflow's client does (tests/helpers/mlflow_rest.py).
  void MlflowScript(const std::string& name, const std::string& text) {
    Script(name, "import sys\nsys.path.insert(0, '" + std::string(TRAINBENCH_SOURCE_DIR) +
                     "/tests/helpers')\nimport mlflow_rest as mlflow\n" + text);
  }
  // Runs a script with the Python interpreter directly, not under trainbench.
  Shell Direct(const std::string& env, const std::string& script) {
    std::string cmd = "cd " + dir_.string() +
                      " && env -u TRAINBENCH_RUN_ID -u TRAINBENCH_TRACKING_URI -u MLFLOW_RUN_ID " +
                      "-u MLFLOW_TRACKING_URI PYTHONPATH=" + std::string(TRAINBENCH_PYTHON_DIR) + " " + env +
                      " " + kPython + " " + script + " > out.txt 2> err.txt";
    Shell r;
    int status = std::system(cmd.c_str());
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = Slurp(dir_ / "out.txt");
    r.err = Slurp(dir_ / "err.txt");
    return r;
  }
  std::vector<EventRecord> Events(Store& store, const std::string& run_id, const std::string& kind) {
    std::vector<EventRecord> out;
    for (EventRecord& e : store.ListEvents(run_id).value()) {
      if (e.kind == kind) out.push_back(e);
    }
    return out;
  }
};

TEST_F(TrackingTest, ClientRecordsMetricsParamsEventsAndStepTiming) {
  Script("train.py", R"(
import time, trainbench
with trainbench.Run() as run:
    run.log_params({"optimizer": "adam"})
    run.set_tag("model", "mlp")
    for epoch in range(2):
        run.epoch()
        for batch in run.steps([[0] * 32] * 5):
            time.sleep(0.02)
            run.log_metric("loss", 1.0 / run.step)
        with run.phase("eval"):
            run.log_metric("accuracy", 0.5 + epoch / 10, step=epoch)
    run.event("checkpoint saved")
    run.log_text("done", "notes/summary.txt")
)");
  Shell r = Trainbench("run -l top --python " + kPython + " train.py --lr 0.1");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.params, (KeyValues{{"lr", "0.1"}, {"optimizer", "adam"}}));
  EXPECT_EQ(TagsBesideTheCost(run), (KeyValues{{"model", "mlp"}}));
  // The tracking API's share of what trainbench cost: it answered the client's requests.
  ASSERT_TRUE(RunCostOfTags(run.tags).has_value());
  EXPECT_GT(RunCostOfTags(run.tags)->tracking_server, 0);

  std::vector<Point> loss = Series(*store, run.id, "train.loss");
  ASSERT_EQ(loss.size(), 10u);
  for (size_t i = 0; i < loss.size(); ++i) {
    EXPECT_EQ(loss[i].step, static_cast<int64_t>(i + 1));  // the client's step counter
    EXPECT_DOUBLE_EQ(loss[i].value, 1.0 / static_cast<double>(i + 1));
  }
  std::vector<Point> compute = Series(*store, run.id, "train.step.compute_seconds");
  ASSERT_EQ(compute.size(), 10u);
  for (const Point& p : compute) EXPECT_GE(p.value, 0.019);  // the loop body sleeps 20 ms
  std::vector<Point> throughput = Series(*store, run.id, "train.throughput_samples_per_second");
  ASSERT_EQ(throughput.size(), 10u);
  for (const Point& p : throughput) EXPECT_LT(p.value, 32 / 0.019);  // 32 samples per step
  EXPECT_EQ(Series(*store, run.id, "train.step.data_wait_seconds").size(), 10u);
  EXPECT_EQ(Series(*store, run.id, "train.accuracy").size(), 2u);

  EXPECT_EQ(Events(*store, run.id, "epoch").size(), 2u);
  std::vector<EventRecord> starts = Events(*store, run.id, "phase.start");
  std::vector<EventRecord> ends = Events(*store, run.id, "phase.end");
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(starts[0].label, "eval");
  EXPECT_LE(starts[0].time_ms, ends[0].time_ms);
  EXPECT_GE(starts[0].time_ms, run.start_ms);
  EXPECT_EQ(Events(*store, run.id, "event").at(0).label, "checkpoint saved");
  EXPECT_EQ(store->GetArtifact(run.id, "notes/summary.txt")->size, 4);
}

TEST_F(TrackingTest, SeveralProcessesOfOneRunLogTogether) {
  Script("multi.py", R"(
import multiprocessing as mp, trainbench

def work(name):
    run = trainbench.active_run()  # forked: the parent's run; spawned: a new one
    for i in range(200):
        run.log_metric(name, i, step=i)

if __name__ == "__main__":
    with trainbench.active_run() as run:
        run.log_metric("main", 1)  # queued before the fork: sent once, by the parent
        procs = [mp.get_context("fork").Process(target=work, args=("fork%d" % i,)) for i in range(2)]
        procs.append(mp.get_context("spawn").Process(target=work, args=("spawned",)))
        for p in procs: p.start()
        for p in procs: p.join()
        for i in range(200):
            run.log_metric("main", i, step=i)
)");
  Shell r = Trainbench("run -l top --python " + kPython + " multi.py");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  for (const char* name : {"fork0", "fork1", "spawned"}) {
    std::vector<Point> points = Series(*store, run.id, std::string("train.") + name);
    ASSERT_EQ(points.size(), 200u) << name;
    std::set<int64_t> steps;
    for (const Point& p : points) steps.insert(p.step);
    EXPECT_EQ(steps.size(), 200u) << name;
  }
  EXPECT_EQ(Series(*store, run.id, "train.main").size(), 201u);
}

// torchrun's ranks under one trainbench: rank 0's values only, or each rank's labelled.
TEST_F(TrackingTest, InDistributedTrainingRankZeroLogsUnlessEveryRankIsAsked) {
  Script("ranks.py", R"(
import os, subprocess, sys, trainbench
if len(sys.argv) == 1:  # the launcher: three ranks, as torchrun starts them
    for rank in range(3):
        subprocess.run([sys.executable, __file__, str(rank)], env=dict(os.environ, RANK=str(rank)), check=True)
    sys.exit(0)
rank = int(sys.argv[1])
with trainbench.Run() as run:
    run.log_metric("loss", rank)
    run.log_param("rank%d" % rank, rank)
    run.event("rank %d here" % rank)
with trainbench.Run(all_ranks=True) as run:
    run.log_metric("grad_norm", 10 + rank)
)");
  Shell r = Trainbench("run -l top --python " + kPython + " ranks.py");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  std::vector<Point> loss = Series(*store, run.id, "train.loss");
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_EQ(loss[0].value, 0);
  EXPECT_EQ(run.params, (KeyValues{{"rank0", "0"}}));
  EXPECT_EQ(Events(*store, run.id, "event").size(), 1u);
  for (int rank = 0; rank < 3; ++rank) {
    std::vector<Point> norm = Series(*store, run.id, "train.grad_norm", "rank=" + std::to_string(rank));
    ASSERT_EQ(norm.size(), 1u) << rank;
    EXPECT_EQ(norm[0].value, 10 + rank);
  }
}

TEST_F(TrackingTest, ACrashAfterLoggingKeepsEverythingLogged) {
  Script("crash.py", R"(
import trainbench
run = trainbench.Run(flush_interval=60)  # nothing is sent before the crash
for i in range(50):
    run.log_metric("loss", i)
print(1 / 0)
)");
  Shell r = Trainbench("run -l top --python " + kPython + " crash.py");
  EXPECT_EQ(r.code, 1);
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kFailed);
  EXPECT_EQ(Series(*store, run.id, "train.loss").size(), 50u);
  std::vector<EventRecord> crash = Events(*store, run.id, "crash");
  ASSERT_EQ(crash.size(), 1u);
  EXPECT_NE(crash[0].label.find("ZeroDivisionError"), std::string::npos);
}

TEST_F(TrackingTest, SigtermSendsWhatIsQueuedAndTheRunEndsAtItsTimeLimit) {
  Script("loop.py", R"(
import time, trainbench
run = trainbench.Run(flush_interval=60)  # only the SIGTERM handler sends
i = 0
while True:
    i += 1
    run.log_metric("loss", i, step=i)
    time.sleep(0.005)
)");
  Shell r = Trainbench("run -l top --max-time 2s --python " + kPython + " loop.py");
  EXPECT_EQ(r.code, 0) << r.err;  // a time limit is a planned end
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kFinished);
  EXPECT_NE(run.reason.find("maximum run time 0:02"), std::string::npos) << run.reason;
  EXPECT_EQ(run.signal, SIGTERM);  // the script still dies of the signal
  std::vector<Point> loss = Series(*store, run.id, "train.loss");
  ASSERT_GT(loss.size(), 50u);
  for (size_t i = 0; i < loss.size(); ++i) EXPECT_EQ(loss[i].step, static_cast<int64_t>(i + 1));
}

TEST_F(TrackingTest, MaxEpochsEndsTheScriptCleanlyAfterThatManyEpochs) {
  Script("epochs.py", R"(
import trainbench
with trainbench.Run() as run:
    for epoch in range(100):
        run.epoch()
        run.log_metric("accuracy", epoch)
    print("all 100 epochs ran")
)");
  Shell r = Trainbench("run -l top --max-epochs 3 --python " + kPython + " epochs.py");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("all 100"), std::string::npos);
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kFinished);
  EXPECT_EQ(Series(*store, run.id, "train.accuracy").size(), 3u);
  EXPECT_EQ(Events(*store, run.id, "max-epochs").size(), 1u);
}

TEST_F(TrackingTest, OutsideTrainbenchTheClientDoesNothingAndAnUnreachableEndpointIsReportedOnce) {
  Script("plain.py", R"(
import trainbench
with trainbench.Run() as run:
    for i in range(3000):
        run.log_metric("loss", i)
    run.event("x")
    with run.phase("eval"):
        pass
    n = sum(1 for _ in run.steps(range(10)))
print("active" if run.active else "inactive", n)
)");
  Shell plain = Direct("", "plain.py");
  EXPECT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out, "inactive 10\n");
  EXPECT_EQ(plain.err, "");

  Shell gone =
      Direct("TRAINBENCH_TRACKING_URI=http://127.0.0.1:9 TRAINBENCH_RUN_ID=0123456789abcdef0123456789abcdef",
             "plain.py");
  EXPECT_EQ(gone.code, 0) << gone.err;
  EXPECT_EQ(gone.out, "active 10\n");
  size_t first = gone.err.find("unreachable");
  ASSERT_NE(first, std::string::npos) << gone.err;
  EXPECT_EQ(gone.err.find("unreachable", first + 1), std::string::npos) << gone.err;
}

// What MLflow's Python client sends (MLflow itself cannot be installed here): start_run()
// creates a run, which is the run trainbench started; metrics one by one and in batches,
// params, tags, and artifacts uploaded to the mlflow-artifacts URI and listed. The user's
// environment holds a company server's credentials, which the client sends as Basic auth:
// the port lets the user's own process in whatever it sends.
TEST_F(TrackingTest, MlflowShapedCallsFromTheScriptLandInTheRun) {
  MlflowScript("mlflow_like.py", R"(
import json, os, time, urllib.request, urllib.parse
assert "Basic " in mlflow.headers().get("Authorization", ""), mlflow.headers()
info = mlflow.start_run()
run_id = info["run_id"]
assert run_id == os.environ["TRAINBENCH_RUN_ID"], (run_id, os.environ["TRAINBENCH_RUN_ID"])
now = int(time.time() * 1000)
mlflow.ok("POST", "runs/log-metric", {"run_id": run_id, "key": "loss", "value": 0.5, "timestamp": now, "step": 0})
mlflow.ok("POST", "runs/log-batch", {"run_id": run_id,
     "metrics": [{"key": "loss", "value": 0.25, "timestamp": now + 1, "step": 1}],
     "params": [{"key": "hidden", "value": "128"}],
     "tags": [{"key": "mlflow.source.name", "value": "mlflow_like.py"}]})
mlflow.ok("POST", "runs/set-tag", {"run_id": run_id, "key": "stage", "value": "dev"})
# MLflow's client resolves mlflow-artifacts:/ against the tracking URI and uploads there.
uri = info["artifact_uri"]
assert uri.startswith("mlflow-artifacts:/"), uri
files = os.environ["MLFLOW_TRACKING_URI"] + "/api/2.0/mlflow-artifacts/artifacts"
root = uri[len("mlflow-artifacts:/"):]
put = urllib.request.Request(files + "/" + root + "/model/weights.txt", data=b"0.1 0.2", method="PUT",
                             headers=mlflow.headers())
urllib.request.urlopen(put).read()
listing = urllib.request.Request(files + "?" + urllib.parse.urlencode({"path": root + "/model"}))
with urllib.request.urlopen(listing) as r:
    print([(f["path"], f["is_dir"], f["file_size"]) for f in json.loads(r.read())["files"]])
history = mlflow.ok("GET", "metrics/get-history", query={"run_id": run_id, "metric_key": "loss"})["metrics"]
print([m["value"] for m in history])
mlflow.end_run(run_id)
)");
  env_ += " MLFLOW_TRACKING_USERNAME=alice MLFLOW_TRACKING_PASSWORD=hunter2";
  Shell r = Trainbench("run -l top --python " + kPython + " mlflow_like.py");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("[0.5, 0.25]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[('weights.txt', False, 7)]"), std::string::npos) << r.out;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kFinished);
  EXPECT_EQ(Series(*store, run.id, "train.loss").size(), 2u);
  EXPECT_EQ(run.params.back(), (std::pair<std::string, std::string>{"hidden", "128"}));
  EXPECT_EQ(TagValue(run, "mlflow.source.name"), "mlflow_like.py");
  EXPECT_EQ(TagValue(run, "stage"), "dev");
  EXPECT_EQ(store->GetArtifact(run.id, "model/weights.txt")->size, 7);
}

// The commonest script shape: mlflow.set_experiment("x") then mlflow.start_run(), under
// `trainbench run` without -e, with the shapes between them that used to crash it: a
// lookup of another experiment, a search by experiment names, a create_experiment. The
// run lands in the script's experiment, the first time by creating it and the second by
// finding it.
TEST_F(TrackingTest, SetExperimentThenStartRunLandsInTheScriptsExperiment) {
  MlflowScript("set_experiment.py", R"(
import sys
active = mlflow.set_experiment("resnet sweep")
mlflow.call("GET", "experiments/get-by-name", query={"experiment_name": "Default"})
mlflow.ok("POST", "experiments/search", {"filter": "name = 'resnet sweep'", "max_results": 1})
mlflow.call("POST", "experiments/create", {"name": "scratch " + sys.argv[1]})
info = mlflow.start_run()
if info["experiment_id"] != active:
    sys.exit("the run is in %s, not %s" % (info["experiment_id"], active))
mlflow.log_metric(info["run_id"], "loss", 0.5)
print("joined", active)
)");
  for (int round = 0; round < 2; ++round) {
    Shell r = Trainbench("run -l top --python " + kPython + " set_experiment.py " + std::to_string(round));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("joined"), std::string::npos) << r.out;
  }
  auto store = OpenStore();
  Result<std::vector<RunRecord>> runs = store->ListRuns("resnet sweep");
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u) << "both runs in the script's experiment";
  for (const RunRecord& run : *runs) {
    EXPECT_EQ(run.status, kFinished);
    EXPECT_EQ(Series(*store, run.id, "train.loss").size(), 1u);
    std::vector<EventRecord> events = store->ListEvents(run.id).value();
    EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const EventRecord& e) {
      return e.kind == "experiment" && e.label.find("'resnet sweep'") != std::string::npos;
    })) << "the move is said";
  }
}

// On a shared GPU server another user can find the run's port (/proc/net/tcp): the port
// knows from the connection itself whose process calls, answers the user's own with no
// secret (raw REST as MLflow's documentation shows it, a bearer token or Basic auth meant
// for the user's own server) and refuses everyone else's; the script reaches its own run
// and the runs it creates, not the rest of the store. What is recorded keeps the user's
// secrets out, and is readable by its owner only.
TEST_F(TrackingTest, OnlyTheUsersProcessesReachThePortAndOnlyTheScriptsRuns) {
  Script("earlier.py", "print('earlier')\n");
  ASSERT_EQ(Trainbench("run -l top -e shared -p secret_param=42 --python " + kPython + " earlier.py").code,
            0);
  std::string earlier = OnlyRun(*OpenStore()).id;
  Script("probe.py", R"(
import json, os, subprocess, urllib.request, urllib.error
uri = os.environ["MLFLOW_TRACKING_URI"]
base = uri + "/api/2.0/mlflow/"
print("secrets given", sorted(k for k in os.environ if k in ("TRAINBENCH_TOKEN", "MLFLOW_RUN_ID")))
def call(method, endpoint, body=None, auth=None):
    headers = {"Content-Type": "application/json"}
    if auth:
        headers["Authorization"] = auth
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + endpoint, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")
# mlflow.start_run(): the experiment MLFLOW_EXPERIMENT_NAME names, then a run in it.
status, found = call("GET", "experiments/get-by-name?experiment_name=" + os.environ["MLFLOW_EXPERIMENT_NAME"])
status, made = call("POST", "runs/create", {"experiment_id": found["experiment"]["experiment_id"]})
self_id = made["run"]["info"]["run_id"]
experiment = made["run"]["info"]["experiment_id"]
search = {"experiment_ids": [experiment], "max_results": 100}
print("plain", call("POST", "runs/search", search)[0])
print("bearer", call("POST", "runs/search", search, "Bearer users-own-token")[0])
print("basic", call("POST", "runs/search", search, "Basic YWxpY2U6aHVudGVyMg==")[0])
# Another local user, through the same port, with and without credentials.
for auth in ["", "Basic YWxpY2U6aHVudGVyMg=="]:
    stranger = subprocess.run(["runuser", "-u", "nobody", "--", "/usr/bin/python3", "-c",
        "import sys, urllib.request, urllib.error\n"
        "req = urllib.request.Request(sys.argv[1] + '/api/2.0/mlflow/runs/search', data=b'{}', method='POST')\n"
        "if sys.argv[2]: req.add_header('Authorization', sys.argv[2])\n"
        "try:\n    urllib.request.urlopen(req)\n    print('answered')\n"
        "except urllib.error.HTTPError as e:\n    print(e.code)\n", uri, auth], capture_output=True, text=True)
    print("nobody", stranger.stdout.strip(), stranger.stderr.strip()[-200:])
status, found = call("POST", "runs/search", search)
print("search", status, sorted(r["info"]["run_id"] for r in found.get("runs", [])))
print("other run", call("GET", "runs/get?run_id=" + os.environ["EARLIER"])[0])
print("rename other", call("POST", "runs/update", {"run_id": os.environ["EARLIER"], "run_name": "mine"})[0])
print("delete other", call("POST", "runs/delete", {"run_id": os.environ["EARLIER"]})[0])
print("log to other", call("POST", "runs/log-metric", {"run_id": os.environ["EARLIER"], "key": "x",
                                                        "value": 1, "timestamp": 1})[0])
status, made = call("POST", "runs/create", {"experiment_id": experiment})
print("create", status)
status, found = call("POST", "runs/search", search)
print("search after", len(found.get("runs", [])))
)");
  env_ += " EARLIER=" + earlier + " MLFLOW_TRACKING_PASSWORD=hunter2 MLFLOW_TRACKING_TOKEN=users-own-token";
  Shell r = Trainbench("run -l top -e shared --python " + kPython + " probe.py");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("secrets given []"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plain 200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bearer 200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("basic 200"), std::string::npos) << r.out;
  size_t first = r.out.find("nobody 403");
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nobody 403", first + 1), std::string::npos) << r.out;
  auto store = OpenStore();
  std::string self;
  for (const RunRecord& run : store->ListRuns("shared").value()) {
    if (run.id != earlier && run.command.find("probe.py") != std::string::npos) self = run.id;
  }
  ASSERT_FALSE(self.empty());
  EXPECT_NE(r.out.find("search 200 ['" + self + "']"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("other run 403"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rename other 403"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("delete other 403"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("log to other 403"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("create 200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("search after 2"), std::string::npos) << r.out;
  RunRecord untouched = store->FindRun(earlier).value();
  EXPECT_EQ(untouched.status, kFinished);
  EXPECT_NE(untouched.name, "mine");

  // The manifest (which serve serves) holds none of the user's secrets.
  std::string manifest = store->GetArtifact(self, "manifest.json")->content;
  ASSERT_NE(manifest.find("MLFLOW_TRACKING_URI"), std::string::npos) << manifest;
  EXPECT_EQ(manifest.find("hunter2"), std::string::npos);
  EXPECT_EQ(manifest.find("users-own-token"), std::string::npos);
  EXPECT_NE(manifest.find("\"MLFLOW_TRACKING_TOKEN\": \"(secret, not recorded)\""), std::string::npos);

  // The store and the run's logs are its owner's only.
  struct stat st {};
  ASSERT_EQ(stat(db_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u) << std::oct << st.st_mode;
  std::string dir = store->ArtifactDirectory(self).value();
  ASSERT_EQ(stat((dir + "/stdout.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u) << std::oct << st.st_mode;
}

// A script that brings its own tracking server (its own MLFLOW_TRACKING_URI, set in the
// script) works as it does without trainbench: its run and metrics on its server, in the
// experiment MLFLOW_EXPERIMENT_NAME names; trainbench still records the hardware, and no
// secret of trainbench's reaches the other server.
TEST_F(TrackingTest, AScriptWithItsOwnTrackingServerLogsThereWhileTrainbenchRecords) {
  std::string own_db = (dir_ / "own.db").string();
  int port = FreeLoopbackPort();
  std::string serve = kTrainbench + " serve --store " + own_db + " --port " + std::to_string(port) + " > " +
                      (dir_ / "own.log").string() + " 2>&1 & echo $!";
  FILE* p = popen(serve.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char pid[32] = {};
  ASSERT_NE(fgets(pid, sizeof pid, p), nullptr);
  pclose(p);
  MlflowScript("own_server.py", R"(
import os, sys, time
os.environ["MLFLOW_TRACKING_URI"] = sys.argv[1]
for _ in range(100):
    try:
        mlflow.call("GET", "experiments/get-by-name", query={"experiment_name": "Default"})
        break
    except OSError:
        time.sleep(0.1)
print("authorization sent", mlflow.headers().get("Authorization"))
info = mlflow.start_run(run_name="on-my-server")
mlflow.log_metric(info["run_id"], "loss", 0.75)
time.sleep(1.5)  # training, while trainbench samples
mlflow.end_run(info["run_id"])
print("own run", info["run_id"])
)");
  Shell r = Trainbench("run -l top -e bench --python " + kPython +
                       " own_server.py http://127.0.0.1:" + std::to_string(port));
  std::system(("kill " + std::string(pid)).c_str());
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("authorization sent None"), std::string::npos) << r.out;
  size_t at = r.out.find("own run ");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string own_run = r.out.substr(at + 8, 32);

  auto own = Store::Open(own_db).value();
  RunRecord there = own->FindRun(own_run).value();
  EXPECT_EQ(there.name, "on-my-server");
  EXPECT_EQ(there.experiment, "bench");  // MLFLOW_EXPERIMENT_NAME, created on the script's server
  EXPECT_EQ(there.status, kFinished);
  EXPECT_EQ(Series(*own, own_run, "train.loss").size(), 1u);

  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kFinished);
  EXPECT_TRUE(Series(*store, run.id, "train.loss").empty());
  EXPECT_FALSE(Series(*store, run.id, "proc.cpu.utilization_ratio").empty()) << "the hardware is recorded";
}

TEST_F(TrackingTest, DigitsExampleTrainsWithRealPytorchAndLogsThroughTheClient) {
  Shell r = Trainbench("run -l top+ps --python " + kPython + " " + std::string(TRAINBENCH_SOURCE_DIR) +
                       "/examples/digits/train.py --epochs 2 --workers 1");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kFinished);
  std::vector<Point> accuracy = Series(*store, run.id, "train.accuracy");
  ASSERT_EQ(accuracy.size(), 2u);
  EXPECT_GT(accuracy[1].value, 0.5);  // it learns: 10 classes, chance is 0.1
  std::vector<Point> loss = Series(*store, run.id, "train.loss");
  EXPECT_EQ(loss.size(), Series(*store, run.id, "train.step.data_wait_seconds").size());
  EXPECT_GT(loss.size(), 20u);
  EXPECT_LT(loss.back().value, loss.front().value);
  EXPECT_EQ(Events(*store, run.id, "epoch").size(), 2u);
  EXPECT_EQ(Events(*store, run.id, "phase.end").size(), 2u);
}

}  // namespace
}  // namespace tb
