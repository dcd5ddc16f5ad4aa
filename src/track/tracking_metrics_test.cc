// The tracking API's metrics, artifacts and events over real HTTP, as MLflow's clients log
// and read them: exact values and steps, latest values, history in intervals, retried
// batches, artifact upload, download and listing.
#include <gtest/gtest.h>

#include "track/tracking_api_fixture.h"

namespace tb {
namespace {

TEST_F(TrackingApiTest, MetricsRoundTripExactlyWithStepsAndNonFiniteValues) {
  std::string run_id = CreateRun();
  ASSERT_EQ(Post("runs/log-metric", json{{"run_id", run_id},
                                         {"key", "loss"},
                                         {"value", 0.693147},
                                         {"timestamp", 1763777001000},
                                         {"step", 1}})
                .status,
            200);
  // As Python's json.dumps writes non-finite floats, and as protobuf's JSON mapping does.
  std::string batch = R"({"run_id": ")" + run_id + R"(", "metrics": [
      {"key": "loss", "value": NaN, "timestamp": 1763777002000, "step": 2},
      {"key": "loss", "value": "Infinity", "timestamp": "1763777003000", "step": "3"},
      {"key": "loss", "value": -Infinity, "timestamp": 1763777004000, "step": 4},
      {"key": "acc", "value": 0.1, "timestamp": 1763777004000}]})";
  ASSERT_EQ(Post("runs/log-batch", batch).status, 200);

  json h = History(run_id, "loss");
  ASSERT_EQ(h["metrics"].size(), 4u);
  EXPECT_EQ(h["metrics"][0]["value"], 0.693147);
  EXPECT_EQ(h["metrics"][0]["step"], 1);
  EXPECT_EQ(h["metrics"][0]["timestamp"], 1763777001000);
  EXPECT_EQ(h["metrics"][1]["value"], "NaN");
  EXPECT_EQ(h["metrics"][2]["value"], "Infinity");
  EXPECT_EQ(h["metrics"][3]["value"], "-Infinity");
  EXPECT_EQ(History(run_id, "acc")["metrics"][0]["step"], 0);  // MLflow's default step
  EXPECT_TRUE(History(run_id, "unknown")["metrics"].empty());

  // Pages.
  json first = History(run_id, "loss", "&max_results=3");
  EXPECT_EQ(first["metrics"].size(), 3u);
  ASSERT_TRUE(first.contains("next_page_token"));
  json rest =
      History(run_id, "loss", "&max_results=3&page_token=" + first["next_page_token"].get<std::string>());
  EXPECT_EQ(rest["metrics"].size(), 1u);
  EXPECT_FALSE(rest.contains("next_page_token"));

  // runs/get shows each metric's latest value (the highest step), stored as train.<key>.
  json metrics = Get("runs/get?run_id=" + run_id).body["run"]["data"]["metrics"];
  ASSERT_EQ(metrics.size(), 2u);
  for (const json& m : metrics) {
    if (m["key"] == "loss") {
      EXPECT_EQ(m["value"], "-Infinity");
    }
  }
  bool stored_as_train = false;
  for (const SeriesInfo& s : store_->ListSeries(run_id).value()) stored_as_train |= s.metric == "train.loss";
  EXPECT_TRUE(stored_as_train);
}

// A long run's metrics: runs/get and runs/search give each one's value at its highest step
// (the newest of equal steps), wherever in time it was logged, from a series of many chunks
// and its journal, read a chunk at a time.
TEST_F(TrackingApiTest, TheLatestValueOfALongMetricIsAtItsHighestStep) {
  std::string run_id = CreateRun();
  constexpr int kSteps = 20000;
  {
    SeriesWriter writer(*store_, run_id, /*seal_points=*/512, /*checkpoint_flushes=*/4);
    for (int i = 0; i < kSteps; ++i) {
      int64_t t = 1763777000000 + int64_t{100} * i;
      writer.Append("train.loss", "", {t, 1.0 / (i + 1), i});
      // An evaluation metric whose highest step was logged early, then lower ones.
      if (i % 100 == 0) writer.Append("train.eval", "", {t, i == 0 ? 0.25 : 0.5, i == 0 ? kSteps * 2 : i});
      if (i % 1000 == 999) {
        ASSERT_TRUE(writer.Flush().ok());
      }
    }
    // A late value at an earlier step: not the latest.
    writer.Append("train.loss", "", {1763777000000 + int64_t{100} * kSteps, 9.0, 5});
    ASSERT_TRUE(writer.Flush().ok());
    int64_t loss = store_->EnsureSeries(run_id, "train.loss", "").value();
    ASSERT_GT(store_->ReadChunks({.series = {loss}, .part = ChunkPart::kInfo})->size(), 10u);
    ASSERT_FALSE(store_->ReadJournal(loss)->empty()) << "the newest points only in the journal";
    ASSERT_TRUE(writer.Close().ok());
  }
  auto expect_latest = [&](const json& metrics) {
    ASSERT_EQ(metrics.size(), 2u) << metrics.dump();
    for (const json& m : metrics) {
      if (m["key"] == "loss") {
        EXPECT_EQ(m["step"], kSteps - 1);
        EXPECT_DOUBLE_EQ(m["value"].get<double>(), 1.0 / kSteps);
      } else {
        EXPECT_EQ(m["key"], "eval");
        EXPECT_EQ(m["step"], kSteps * 2);
        EXPECT_EQ(m["value"], 0.25);
        EXPECT_EQ(m["timestamp"], 1763777000000);
      }
    }
  };
  expect_latest(Get("runs/get?run_id=" + run_id).body["run"]["data"]["metrics"]);
  Answer search = Post("runs/search", json{{"experiment_ids", {ExperimentOf(run_id)}}});
  ASSERT_EQ(search.status, 200) << search.body.dump();
  ASSERT_EQ(search.body["runs"].size(), 1u);
  expect_latest(search.body["runs"][0]["data"]["metrics"]);
}

// Every rank of a distributed run logging the same metric: one series per rank, which
// MLflow's views leave out (they show the run's own metrics once).
TEST_F(TrackingApiTest, LabelledMetricsOfEachRankAreSeriesOfTheirOwn) {
  std::string run_id = CreateRun();
  for (const char* rank : {"0", "1"}) {
    json batch = {{"run_id", run_id},
                  {"metrics", {{{"key", "loss"}, {"value", 0.5}, {"timestamp", 1763777001000}, {"step", 1}}}},
                  {"trainbench_labels", {{"rank", rank}}}};
    ASSERT_EQ(Post("runs/log-batch", batch).status, 200);
  }
  std::set<std::string> labels;
  for (const SeriesInfo& s : store_->ListSeries(run_id).value())
    if (s.metric == "train.loss") labels.insert(s.labels);
  EXPECT_EQ(labels, (std::set<std::string>{"rank=0", "rank=1"}));
  EXPECT_TRUE(History(run_id, "loss")["metrics"].empty());
  ExpectError(Post("runs/log-batch", json{{"run_id", run_id}, {"trainbench_labels", "rank=1"}}), 400,
              "INVALID_PARAMETER_VALUE");
  ExpectError(Post("runs/log-batch", json{{"run_id", run_id}, {"trainbench_labels", {{"rank", 1}}}}), 400,
              "INVALID_PARAMETER_VALUE");
}

// What MLflow's UI and get_metric_history_bulk_interval ask to chart a metric of several
// runs: the steps MLflow's server picks, worked out here by hand from its rule (every
// (count / max_results)-th distinct step from step 0, the last, and each run's first and
// last), runs in the order asked.
TEST_F(TrackingApiTest, BulkIntervalHistoryPicksTheStepsMlflowPicks) {
  std::string a = CreateRun(), b = CreateRun();
  for (const auto& [run, steps] : {std::pair{a, 10}, std::pair{b, 5}}) {
    json metrics = json::array();
    for (int step = 0; step < steps; ++step)
      metrics.push_back(
          {{"key", "loss"}, {"value", 1.0 / (step + 1)}, {"timestamp", 1000 + step}, {"step", step}});
    ASSERT_EQ(Post("runs/log-batch", json{{"run_id", run}, {"metrics", metrics}}).status, 200);
  }
  auto bulk = [&](const std::string& query, const std::string& first, const std::string& second) {
    return Get("metrics/get-history-bulk-interval?run_ids=" + first + "&run_ids=" + second +
               "&metric_key=loss" + query);
  };
  auto steps_of = [](const json& metrics, const std::string& run) {
    std::vector<int64_t> out;
    for (const json& m : metrics) {
      if (m["run_id"] == run) out.push_back(m["step"].get<int64_t>());
    }
    return out;
  };
  json all = bulk("", a, b).body["metrics"];
  EXPECT_EQ(all.size(), 15u);
  // Ten distinct steps, three asked: every 3.33rd (0, 3, 6), the last (9), and b's last (4).
  json three = bulk("&max_results=3", a, b).body["metrics"];
  EXPECT_EQ(steps_of(three, a), (std::vector<int64_t>{0, 3, 4, 6, 9}));
  EXPECT_EQ(steps_of(three, b), (std::vector<int64_t>{0, 3, 4}));
  EXPECT_EQ(three[0]["key"], "loss");
  EXPECT_EQ(three[0]["run_id"], a);
  EXPECT_EQ(three[2]["value"], 1.0 / 5);  // a's step 4
  // The runs come back in the order asked, not sorted by id.
  json swapped = bulk("&max_results=3", b, a).body["metrics"];
  EXPECT_EQ(swapped[0]["run_id"], b);
  EXPECT_EQ(swapped.back()["run_id"], a);
  json window = bulk("&start_step=2&end_step=4", a, b).body["metrics"];
  EXPECT_EQ(steps_of(window, a), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(steps_of(window, b), (std::vector<int64_t>{2, 3, 4}));
  ExpectError(bulk("&start_step=2", a, b), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(bulk("&start_step=5&end_step=2", a, b), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(bulk("&max_results=0", a, b), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(Get("metrics/get-history-bulk-interval?metric_key=loss"), 400, "INVALID_PARAMETER_VALUE");
}

// Steps below 0 (a warm-up logged at step -1) are left out unless a range asks for them, as
// MLflow's server starts an unbounded range at step 0.
TEST_F(TrackingApiTest, BulkIntervalHistoryStartsAtStepZeroUnlessAsked) {
  std::string run = CreateRun();
  json metrics = json::array();
  for (int step = -2; step < 3; ++step)
    metrics.push_back({{"key", "loss"}, {"value", step}, {"timestamp", 1000}, {"step", step}});
  ASSERT_EQ(Post("runs/log-batch", json{{"run_id", run}, {"metrics", metrics}}).status, 200);
  auto steps = [&](const std::string& query) {
    std::vector<int64_t> out;
    json got = Get("metrics/get-history-bulk-interval?run_ids=" + run + "&metric_key=loss" + query).body;
    for (const json& m : got["metrics"]) out.push_back(m["step"].get<int64_t>());
    return out;
  };
  EXPECT_EQ(steps(""), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(steps("&start_step=-2&end_step=2"), (std::vector<int64_t>{-2, -1, 0, 1, 2}));
}

// A client whose connection broke after the server took its batch sends it again: the
// batch is stored once (by the id trainbench's client gives each request; for MLflow's
// clients, which send none, by the body, as MLflow keeps one copy of a point logged twice).
TEST_F(TrackingApiTest, ARetriedBatchIsStoredOnce) {
  std::string run_id = CreateRun();
  json batch{{"run_id", run_id},
             {"metrics", json::array({{{"key", "loss"}, {"value", 0.5}, {"timestamp", 1}, {"step", 1}},
                                      {{"key", "loss"}, {"value", 0.4}, {"timestamp", 2}, {"step", 2}}})}};
  EXPECT_EQ(Post("runs/log-batch", batch).status, 200);
  EXPECT_EQ(Post("runs/log-batch", batch).status, 200);  // MLflow's client retrying
  EXPECT_EQ(History(run_id, "loss")["metrics"].size(), 2u);

  json next{{"run_id", run_id},
            {"metrics", json::array({{{"key", "loss"}, {"value", 0.3}, {"timestamp", 3}, {"step", 3}}})}};
  httplib::Headers once{{"X-Trainbench-Request", "b1"}};
  for (int attempt = 0; attempt < 2; ++attempt)
    EXPECT_EQ(client_->Post("/api/2.0/mlflow/runs/log-batch", once, next.dump(), "application/json")->status,
              200);
  EXPECT_EQ(History(run_id, "loss")["metrics"].size(), 3u);
  // Another request with the same points (key, value, time and step): MLflow's stores keep
  // such a point once, whichever request brings it.
  httplib::Headers other{{"X-Trainbench-Request", "b2"}};
  EXPECT_EQ(client_->Post("/api/2.0/mlflow/runs/log-batch", other, next.dump(), "application/json")->status,
            200);
  EXPECT_EQ(History(run_id, "loss")["metrics"].size(), 3u);
  next["metrics"][0]["timestamp"] = 4;  // the same value logged again later is another point
  EXPECT_EQ(Post("runs/log-batch", next).status, 200);
  EXPECT_EQ(History(run_id, "loss")["metrics"].size(), 4u);
  // A refused batch is not remembered: sent again once the run exists, it is stored.
  json early = next;
  early["run_id"] = "0123456789abcdef0123456789abcdef";
  EXPECT_EQ(Post("runs/log-batch", early).status, 404);
}

TEST_F(TrackingApiTest, ArtifactsUploadAndDownloadInsideTheRunOnly) {
  std::string run_id = CreateRun();
  std::string base = "/api/2.0/mlflow-artifacts/artifacts/1/" + run_id + "/artifacts/";
  auto put = client_->Put(base + "model/weights.bin", std::string("\x01\x02\x00\x03", 4),
                          "application/octet-stream");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 200);
  auto got = client_->Get(base + "model/weights.bin");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->body, std::string("\x01\x02\x00\x03", 4));
  EXPECT_EQ(store_->GetArtifact(run_id, "model/weights.bin")->size, 4);

  auto escape = client_->Put(base + "../../escape.txt", "x", "text/plain");
  ASSERT_TRUE(escape);
  EXPECT_EQ(escape->status, 400);
  EXPECT_FALSE(std::filesystem::exists(scratch_.path() / "t.db.artifacts" / "escape.txt"));
  auto missing = client_->Get(base + "nothing.txt");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

// A run trainbench launched keeps its own records (its output, its manifest) whole; a run a
// client made has none, and its files may take those names.
TEST_F(TrackingApiTest, OnlyLaunchedRunsKeepTheirRecordNames) {
  RunRecord launched;
  launched.id = "0123456789abcdef0123456789abcdef";
  launched.experiment = "exp";
  launched.name = "launched";
  launched.command = "python3 train.py";
  launched.working_directory = "/work";
  launched.start_ms = 1763777000000;
  ASSERT_TRUE(store_->EnsureExperiment("exp").ok());
  ASSERT_TRUE(store_->CreateRun(launched).ok());
  ASSERT_TRUE(store_->PutArtifact({launched.id, "manifest.json", 2, "{}", ""}).ok());
  std::string base = "/api/2.0/mlflow-artifacts/artifacts/1/" + launched.id + "/artifacts/";
  for (const char* own : {"stdout.log", "manifest.json", "stderr.log"}) {
    auto replace = client_->Put(base + own, "not the output", "text/plain");
    ASSERT_TRUE(replace);
    EXPECT_EQ(replace->status, 400) << own;
    EXPECT_NE(replace->body.find("another name"), std::string::npos) << replace->body;
  }
  EXPECT_EQ(store_->GetArtifact(launched.id, "manifest.json")->content, "{}");

  std::string made = CreateRun();
  std::string mine = "/api/2.0/mlflow-artifacts/artifacts/1/" + made + "/artifacts/";
  for (const char* name : {"stdout.log", "manifest.json"}) {
    auto put = client_->Put(mine + name, "the script's own", "text/plain");
    ASSERT_TRUE(put);
    EXPECT_EQ(put->status, 200) << name << ": " << put->body;
    auto back = client_->Get(mine + name);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->body, "the script's own");
  }
}

// What MLflow's client does with the run's mlflow-artifacts URI: resolve it against the
// tracking URI, upload, list a folder (by name, folders marked) before downloading.
TEST_F(TrackingApiTest, ArtifactsListedByFolderAtTheRunsArtifactUri) {
  std::string run_id = CreateRun();
  std::string uri = Get("runs/get?run_id=" + run_id).body["run"]["info"]["artifact_uri"];
  ASSERT_TRUE(uri.starts_with("mlflow-artifacts:/")) << uri;
  std::string root = uri.substr(std::string("mlflow-artifacts:/").size());
  std::string endpoint = "/api/2.0/mlflow-artifacts/artifacts";
  for (const char* file : {"model/weights.bin", "model/config/opts.json", "notes.txt"}) {
    auto put = client_->Put(endpoint + "/" + root + "/" + file, "12345", "application/octet-stream");
    ASSERT_TRUE(put);
    ASSERT_EQ(put->status, 200) << put->body;
  }
  auto list = [&](const std::string& path) {
    auto got = client_->Get(endpoint + "?path=" + path);
    EXPECT_TRUE(got);
    EXPECT_EQ(got->status, 200) << got->body;
    return json::parse(got->body)["files"];
  };
  json top = list(root);
  ASSERT_EQ(top.size(), 2u) << top;
  EXPECT_EQ(top[0], (json{{"path", "model"}, {"is_dir", true}})) << top;
  EXPECT_EQ(top[1], (json{{"path", "notes.txt"}, {"is_dir", false}, {"file_size", 5}})) << top;
  json model = list(root + "/model");
  ASSERT_EQ(model.size(), 2u) << model;
  EXPECT_EQ(model[0]["path"], "config");
  EXPECT_EQ(model[1]["path"], "weights.bin");
  EXPECT_TRUE(list(root + "/nothing").empty());
  auto outside = client_->Get(endpoint + "?path=1/" + run_id);
  ASSERT_TRUE(outside);
  EXPECT_EQ(outside->status, 400);
  auto unknown = client_->Get(endpoint + "?path=1/00000000000000000000000000000000/artifacts");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
}

TEST_F(TrackingApiTest, EventsAreStoredWithTheirTimes) {
  std::string run_id = CreateRun();
  auto r = client_->Post("/api/2.0/trainbench/runs/log-events",
                         json{{"run_id", run_id},
                              {"events",
                               {{{"timestamp", 1763777005000}, {"kind", "epoch"}, {"label", "epoch 1"}},
                                {{"timestamp", 1763777006000}, {"kind", "phase.start"}, {"label", "eval"}}}}}
                             .dump(),
                         "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  std::vector<EventRecord> events = store_->ListEvents(run_id).value();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].time_ms, 1763777005000);
  EXPECT_EQ(events[1].kind, "phase.start");
  EXPECT_EQ(events[1].label, "eval");
}

}  // namespace
}  // namespace tb
