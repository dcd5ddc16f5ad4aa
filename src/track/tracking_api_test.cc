// The tracking API over real HTTP, with requests shaped as MLflow's REST API documentation
// shows them, and MLflow's error answers for bad ones.
#include "track/tracking_api.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "base/secret.h"
#include "store/series_writer.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {
namespace {

using json = nlohmann::json;

struct Answer {
  int status = 0;
  json body;
};

class TrackingApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = Store::Open((scratch_.path() / "t.db").string()).value();
    api_ = std::make_unique<TrackingApi>(*store_);
    server_ = std::make_unique<HttpServer>(std::vector<ApiHandler>{api_->Handler()});
    ASSERT_TRUE(server_->Start(TrackingApi::ServerOptions()).ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  void TearDown() override {
    server_->Stop();
    api_.reset();
  }

  static Answer Parse(const httplib::Result& r) {
    if (!r) return {-1, {}};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  Answer Post(const std::string& endpoint, const std::string& body) {
    return Parse(client_->Post("/api/2.0/mlflow/" + endpoint, body, "application/json"));
  }
  Answer Post(const std::string& endpoint, const json& body) { return Post(endpoint, body.dump()); }
  Answer Get(const std::string& endpoint_and_query) {
    return Parse(client_->Get("/api/2.0/mlflow/" + endpoint_and_query));
  }

  std::string CreateRun(const std::string& experiment = "exp") {
    Answer e = Post("experiments/create", json{{"name", experiment}});
    std::string experiment_id = e.status == 200 ? e.body["experiment_id"].get<std::string>()
                                                : Get("experiments/get-by-name?experiment_name=" + experiment)
                                                      .body["experiment"]["experiment_id"]
                                                      .get<std::string>();
    Answer r =
        Post("runs/create",
             json{{"experiment_id", experiment_id}, {"start_time", 1763777000000}, {"run_name", "r1"}});
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body["run"]["info"]["run_id"];
  }

  json History(const std::string& run_id, const std::string& key, const std::string& extra = "") {
    Answer h = Get("metrics/get-history?run_id=" + run_id + "&metric_key=" + key + extra);
    EXPECT_EQ(h.status, 200) << h.body.dump();
    return h.body;
  }

  static void ExpectError(const Answer& a, int status, const std::string& code) {
    EXPECT_EQ(a.status, status) << a.body.dump();
    EXPECT_EQ(a.body.value("error_code", ""), code) << a.body.dump();
    EXPECT_FALSE(a.body.value("message", "").empty());
  }

  ScratchDirectory scratch_{"tb-track"};
  std::unique_ptr<Store> store_;
  std::unique_ptr<TrackingApi> api_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(TrackingApiTest, ExperimentsCreateGetAndGetByName) {
  Answer created = Post("experiments/create", json{{"name", "resnet sweep"}});
  ASSERT_EQ(created.status, 200);
  std::string id = created.body["experiment_id"];
  Answer got = Get("experiments/get?experiment_id=" + id);
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.body["experiment"]["name"], "resnet sweep");
  EXPECT_EQ(got.body["experiment"]["lifecycle_stage"], "active");
  Answer by_name = Get("experiments/get-by-name?experiment_name=resnet%20sweep");
  EXPECT_EQ(by_name.body["experiment"]["experiment_id"], id);

  ExpectError(Post("experiments/create", json{{"name", "resnet sweep"}}), 400, "RESOURCE_ALREADY_EXISTS");
  ExpectError(Get("experiments/get?experiment_id=999"), 404, "RESOURCE_DOES_NOT_EXIST");
  ExpectError(Get("experiments/get-by-name?experiment_name=nope"), 404, "RESOURCE_DOES_NOT_EXIST");
  ExpectError(Post("experiments/create", json::object()), 400, "INVALID_PARAMETER_VALUE");
}

TEST_F(TrackingApiTest, TheDefaultExperimentIsZeroAsInEveryMlflowStore) {
  // `with mlflow.start_run():` with no experiment set creates its run in experiment "0".
  Answer run = Post("runs/create", json{{"start_time", 1763777000000}});
  ASSERT_EQ(run.status, 200) << run.body.dump();
  EXPECT_EQ(run.body["run"]["info"]["experiment_id"], "0");
  Answer zero = Get("experiments/get?experiment_id=0");
  ASSERT_EQ(zero.status, 200);
  EXPECT_EQ(zero.body["experiment"]["name"], "Default");
  EXPECT_EQ(Get("experiments/get-by-name?experiment_name=Default").body["experiment"]["experiment_id"], "0");
  EXPECT_EQ(store_->FindRun(run.body["run"]["info"]["run_id"].get<std::string>())->experiment, "Default");
}

TEST_F(TrackingApiTest, SearchRunsAsMlflowsClientsAskIt) {
  std::string exp = Post("experiments/create", json{{"name", "sweep"}}).body["experiment_id"];
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    Answer r = Post("runs/create", json{{"experiment_id", exp},
                                        {"start_time", 1763777000000 + i * 1000},
                                        {"run_name", "lr" + std::to_string(i)}});
    std::string id = r.body["run"]["info"]["run_id"];
    ids.push_back(id);
    ASSERT_EQ(
        Post("runs/log-batch",
             json{{"run_id", id},
                  {"metrics",
                   {{{"key", "loss"}, {"value", 1.0 / (i + 1)}, {"timestamp", 1763777000000}, {"step", 0}}}},
                  {"params", {{{"key", "lr"}, {"value", std::to_string(i)}}}}})
            .status,
        200);
  }
  Post("runs/update", json{{"run_id", ids[2]}, {"status", "FINISHED"}});
  auto search = [&](json body) {
    body["experiment_ids"] = json::array({exp});
    return Post("runs/search", body);
  };
  auto names = [](const Answer& a) {
    std::vector<std::string> out;
    for (const json& r : a.body.value("runs", json::array())) out.push_back(r["info"]["run_name"]);
    return out;
  };
  // Newest first by default, as MLflow.
  EXPECT_EQ(names(search(json::object())), (std::vector<std::string>{"lr2", "lr1", "lr0"}));
  EXPECT_EQ(names(search({{"filter", "metrics.loss < 0.6"}, {"order_by", {"metrics.loss ASC"}}})),
            (std::vector<std::string>{"lr2", "lr1"}));
  EXPECT_EQ(names(search({{"filter", "params.lr = '0' and attributes.status = 'RUNNING'"}})),
            (std::vector<std::string>{"lr0"}));
  EXPECT_EQ(names(search({{"filter", "attributes.status = 'FINISHED'"}})), (std::vector<std::string>{"lr2"}));
  // Pages: max_results and the next_page_token of the answer.
  Answer first = search({{"max_results", 2}});
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(names(first).size(), 2u);
  ASSERT_TRUE(first.body.contains("next_page_token"));
  Answer second = search({{"max_results", 2}, {"page_token", first.body["next_page_token"]}});
  EXPECT_EQ(names(second), (std::vector<std::string>{"lr0"}));
  EXPECT_FALSE(second.body.contains("next_page_token"));
  // Each run as runs/get gives it, metrics, params and all.
  json run = search({{"filter", "params.lr = '1'"}}).body["runs"][0];
  EXPECT_EQ(run["data"]["metrics"][0]["value"], 0.5);
  // Mistakes are MLflow's errors.
  ExpectError(search({{"filter", "attributes.colour = 'red'"}}), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(search({{"order_by", {"metrics.loss sideways"}}}), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(Post("runs/search", json{{"experiment_ids", {"424242"}}}), 404, "RESOURCE_DOES_NOT_EXIST");

  // experiments/search lists Default too; a filter on the name.
  Answer experiments = Post("experiments/search", json{{"max_results", 100}});
  ASSERT_EQ(experiments.status, 200);
  std::set<std::string> listed;
  for (const json& e : experiments.body["experiments"]) listed.insert(e["name"]);
  EXPECT_EQ(listed, (std::set<std::string>{"Default", "sweep"}));
  Answer sweep = Post("experiments/search", json{{"filter", "name LIKE 'sw%'"}});
  ASSERT_EQ(sweep.body["experiments"].size(), 1u);
  EXPECT_EQ(sweep.body["experiments"][0]["experiment_id"], exp);
  // A deleted run leaves the default view and comes back when restored.
  ASSERT_EQ(Post("runs/delete", json{{"run_id", ids[0]}}).status, 200);
  EXPECT_EQ(names(search(json::object())), (std::vector<std::string>{"lr2", "lr1"}));
  EXPECT_EQ(names(search({{"run_view_type", "DELETED_ONLY"}})), (std::vector<std::string>{"lr0"}));
  Answer deleted = Get("runs/get?run_id=" + ids[0]);
  EXPECT_EQ(deleted.body["run"]["info"]["lifecycle_stage"], "deleted");
  EXPECT_TRUE(deleted.body["run"]["data"]["tags"].empty()) << deleted.body.dump();
  ASSERT_EQ(Post("runs/restore", json{{"run_id", ids[0]}}).status, 200);
  EXPECT_EQ(names(search({{"run_view_type", "ALL"}})).size(), 3u);
  EXPECT_EQ(Get("runs/get?run_id=" + ids[0]).body["run"]["info"]["lifecycle_stage"], "active");
  ExpectError(Post("runs/delete", json{{"run_id", "0123456789abcdef0123456789abcdef"}}), 404,
              "RESOURCE_DOES_NOT_EXIST");
  // MLflow 3's client asks for logged models; there are none.
  EXPECT_EQ(Post("logged-models/search", json{{"experiment_ids", {exp}}}).body["models"], json::array());
}

TEST_F(TrackingApiTest, RunsCreateGetUpdate) {
  std::string run_id = CreateRun();
  ASSERT_EQ(run_id.size(), 32u);
  Answer got = Get("runs/get?run_id=" + run_id);
  ASSERT_EQ(got.status, 200);
  const json& info = got.body["run"]["info"];
  EXPECT_EQ(info["run_id"], run_id);
  EXPECT_EQ(info["run_uuid"], run_id);
  EXPECT_EQ(info["run_name"], "r1");
  EXPECT_EQ(info["status"], "RUNNING");
  EXPECT_EQ(info["start_time"], 1763777000000);
  // As an MLflow server that serves artifacts: a client elsewhere uploads through the server.
  EXPECT_EQ(info["artifact_uri"],
            "mlflow-artifacts:/" + info["experiment_id"].get<std::string>() + "/" + run_id + "/artifacts");

  Answer updated = Post(
      "runs/update",
      json{{"run_id", run_id}, {"status", "FINISHED"}, {"end_time", 1763777060000}, {"run_name", "final"}});
  ASSERT_EQ(updated.status, 200) << updated.body.dump();
  EXPECT_EQ(updated.body["run_info"]["status"], "FINISHED");
  EXPECT_EQ(updated.body["run_info"]["end_time"], 1763777060000);
  EXPECT_EQ(updated.body["run_info"]["run_name"], "final");
  EXPECT_EQ(store_->FindRun(run_id)->status, kFinished);

  ExpectError(Get("runs/get?run_id=0123456789abcdef0123456789abcdef"), 404, "RESOURCE_DOES_NOT_EXIST");
  ExpectError(Post("runs/update", json{{"run_id", run_id}, {"status", "DONE"}}), 400,
              "INVALID_PARAMETER_VALUE");
}

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
    ASSERT_GT(store_->ListChunkInfo(loss)->size(), 10u);
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
  Answer search =
      Post("runs/search",
           json{{"experiment_ids", {Get("runs/get?run_id=" + run_id).body["run"]["info"]["experiment_id"]}}});
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

TEST_F(TrackingApiTest, ParamsTagsAndTheirErrors) {
  std::string run_id = CreateRun();
  EXPECT_EQ(Post("runs/log-parameter", json{{"run_id", run_id}, {"key", "lr"}, {"value", "0.1"}}).status,
            200);
  EXPECT_EQ(Post("runs/log-parameter", json{{"run_id", run_id}, {"key", "lr"}, {"value", "0.1"}}).status,
            200);
  ExpectError(Post("runs/log-parameter", json{{"run_id", run_id}, {"key", "lr"}, {"value", "0.2"}}), 400,
              "INVALID_PARAMETER_VALUE");
  EXPECT_EQ(Post("runs/set-tag", json{{"run_id", run_id}, {"key", "model"}, {"value", "cnn"}}).status, 200);
  EXPECT_EQ(Post("runs/set-tag", json{{"run_id", run_id}, {"key", "model"}, {"value", "vit"}}).status, 200);
  EXPECT_EQ(Post("runs/set-tag", json{{"run_id", run_id}, {"key", "gone"}, {"value", "x"}}).status, 200);
  EXPECT_EQ(Post("runs/delete-tag", json{{"run_id", run_id}, {"key", "gone"}}).status, 200);
  ExpectError(Post("runs/delete-tag", json{{"run_id", run_id}, {"key", "gone"}}), 404,
              "RESOURCE_DOES_NOT_EXIST");

  const json data = Get("runs/get?run_id=" + run_id).body["run"]["data"];
  EXPECT_EQ(data["params"], json::parse(R"([{"key": "lr", "value": "0.1"}])"));
  EXPECT_EQ(data["tags"], json::parse(R"([{"key": "model", "value": "vit"}])"));

  // A batch whose param changes a value stores nothing: not its metrics, not its tags.
  Answer refused =
      Post("runs/log-batch", json{{"run_id", run_id},
                                  {"params", {{{"key", "lr"}, {"value", "0.5"}}}},
                                  {"tags", {{{"key", "new"}, {"value", "1"}}}},
                                  {"metrics", {{{"key", "m"}, {"value", 1}, {"timestamp", 1}}}}});
  ExpectError(refused, 400, "INVALID_PARAMETER_VALUE");
  EXPECT_TRUE(History(run_id, "m")["metrics"].empty());
  EXPECT_EQ(store_->FindRun(run_id)->tags.size(), 1u);
}

TEST_F(TrackingApiTest, BadRequestsAreRefusedWholeWithMlflowErrors) {
  std::string run_id = CreateRun();
  ExpectError(Post("runs/log-batch", std::string("{not json")), 400, "MALFORMED_REQUEST");
  ExpectError(
      Post("runs/log-metric", json{{"run_id", run_id}, {"key", "loss"}, {"value", "abc"}, {"timestamp", 1}}),
      400, "INVALID_PARAMETER_VALUE");
  ExpectError(Post("runs/log-metric", json{{"run_id", run_id}, {"key", "loss"}, {"value", 1}}), 400,
              "INVALID_PARAMETER_VALUE");  // no timestamp
  ExpectError(
      Post("runs/log-metric", json{{"run_id", run_id}, {"key", "loss"}, {"value", 1}, {"timestamp", "soon"}}),
      400, "INVALID_PARAMETER_VALUE");
  for (const char* bad : {"", "/a", "a//b", "a/../b", "a/", "bad:name", "x\\y"}) {
    ExpectError(
        Post("runs/log-metric", json{{"run_id", run_id}, {"key", bad}, {"value", 1}, {"timestamp", 1}}), 400,
        "INVALID_PARAMETER_VALUE");
  }
  EXPECT_EQ(Post("runs/log-metric",
                 json{{"run_id", run_id}, {"key", "a..a/._./o_O/.e. x"}, {"value", 1}, {"timestamp", 1}})
                .status,
            200);
  ExpectError(
      Post(
          "runs/log-metric",
          json{{"run_id", "ffffffffffffffffffffffffffffffff"}, {"key", "l"}, {"value", 1}, {"timestamp", 1}}),
      404, "RESOURCE_DOES_NOT_EXIST");

  // 1001 metrics: refused, and the valid first thousand are not stored either.
  json metrics = json::array();
  for (int i = 0; i < 1001; ++i) metrics.push_back({{"key", "big"}, {"value", i}, {"timestamp", i}});
  ExpectError(Post("runs/log-batch", json{{"run_id", run_id}, {"metrics", metrics}}), 400,
              "INVALID_PARAMETER_VALUE");
  // One bad metric at the end of a batch: nothing of it stored.
  metrics.erase(metrics.begin() + 10, metrics.end());
  metrics.push_back({{"key", "big"}, {"value", "x"}, {"timestamp", 1}});
  ExpectError(Post("runs/log-batch", json{{"run_id", run_id}, {"metrics", metrics}}), 400,
              "INVALID_PARAMETER_VALUE");
  EXPECT_TRUE(History(run_id, "big")["metrics"].empty());

  json params = json::array();
  for (int i = 0; i < 101; ++i) params.push_back({{"key", "p" + std::to_string(i)}, {"value", "1"}});
  ExpectError(Post("runs/log-batch", json{{"run_id", run_id}, {"params", params}}), 400,
              "INVALID_PARAMETER_VALUE");
  ExpectError(Post("runs/log-parameter",
                   json{{"run_id", run_id}, {"key", "long"}, {"value", std::string(6001, 'x')}}),
              400, "INVALID_PARAMETER_VALUE");
  std::string huge =
      json{{"run_id", run_id}, {"tags", {{{"key", "t"}, {"value", std::string(1100000, 'x')}}}}}.dump();
  ExpectError(Post("runs/log-batch", huge), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(Post("runs/no-such-call", json::object()), 404, "ENDPOINT_NOT_FOUND");
  ExpectError(Post("runs/log-metric", json{{"key", "l"}, {"value", 1}, {"timestamp", 1}}), 400,
              "INVALID_PARAMETER_VALUE");  // no run id
  EXPECT_TRUE(store_->FindRun(run_id)->params.empty());
}

// Requests as an attacker or an unlucky client sends them: refused with a clear error,
// never wrapped, never a crash; and -0.0 comes back as -0.0.
TEST_F(TrackingApiTest, HostileNumbersAndDocumentsAreRefused) {
  std::string run_id = CreateRun();
  std::string deep = std::string(60000, '[') + std::string(60000, ']');
  ExpectError(Post("runs/log-batch", deep), 400, "MALFORMED_REQUEST");
  ExpectError(Post("runs/log-metric", "{\"run_id\": \"" + run_id + "\", \"key\": " + std::string(40, '[') +
                                          "1" + std::string(40, ']') + "}"),
              400, "MALFORMED_REQUEST");
  // Brackets inside strings are text, not nesting.
  EXPECT_EQ(
      Post("runs/set-tag", json{{"run_id", run_id}, {"key", "t"}, {"value", std::string(100, '[')}}).status,
      200);
  // Integers beyond int64: 2^63 as a step, 2^64 - 1 as a timestamp, as numbers and as strings.
  for (const char* metric : {R"("value": 1, "timestamp": 18446744073709551615)",
                             R"("value": 1, "timestamp": 1, "step": 9223372036854775808)",
                             R"("value": 1, "timestamp": "18446744073709551615")",
                             R"("value": 1, "timestamp": 1, "step": "9223372036854775808")",
                             R"("value": 1, "timestamp": 1e300)"}) {
    ExpectError(Post("runs/log-metric", "{\"run_id\": \"" + run_id + "\", \"key\": \"big\", " + metric + "}"),
                400, "INVALID_PARAMETER_VALUE");
  }
  EXPECT_TRUE(History(run_id, "big")["metrics"].empty());
  // The largest int64 step is kept as it is.
  ASSERT_EQ(Post("runs/log-metric",
                 "{\"run_id\": \"" + run_id +
                     "\", \"key\": \"z\", \"value\": -0.0, \"timestamp\": 5, \"step\": 9223372036854775807}")
                .status,
            200);
  json z = History(run_id, "z")["metrics"][0];
  EXPECT_EQ(z["step"].get<int64_t>(), INT64_MAX);
  EXPECT_TRUE(std::signbit(z["value"].get<double>())) << z.dump();
  // Experiment names: no NUL or other control characters, at most 256 bytes.
  ExpectError(Post("experiments/create", std::string(R"({"name": "a\u0000b"})")), 400,
              "INVALID_PARAMETER_VALUE");
  ExpectError(Post("experiments/create", json{{"name", std::string(300, 'e')}}), 400,
              "INVALID_PARAMETER_VALUE");
  // A page token at the end of int64 does not wrap into a page.
  json far = History(run_id, "z", "&page_token=9223372036854775807&max_results=9223372036854775807");
  EXPECT_TRUE(far["metrics"].empty());
}

// What MlflowClient's delete_experiment, restore_experiment, rename_experiment,
// set_experiment_tag and delete_experiment_tag send, and what the user then sees.
TEST_F(TrackingApiTest, ExperimentsAreTaggedRenamedDeletedWithTheirRunsAndRestored) {
  std::string run_id = CreateRun("sweep");
  std::string id = Get("experiments/get-by-name?experiment_name=sweep").body["experiment"]["experiment_id"];
  ASSERT_EQ(Post("experiments/set-experiment-tag",
                 json{{"experiment_id", id}, {"key", "team"}, {"value", "systems"}})
                .status,
            200);
  json e = Get("experiments/get?experiment_id=" + id).body["experiment"];
  EXPECT_EQ(e["tags"], (json::array({{{"key", "team"}, {"value", "systems"}}})));
  auto searched = [&](const json& body) {
    std::vector<std::string> names;
    for (const json& x : Post("experiments/search", body).body.value("experiments", json::array()))
      names.push_back(x["name"]);
    return names;
  };
  EXPECT_EQ(searched(json{{"filter", "tags.team = 'systems'"}}), std::vector<std::string>{"sweep"});

  ASSERT_EQ(Post("experiments/delete", json{{"experiment_id", id}}).status, 200);
  EXPECT_EQ(Get("experiments/get?experiment_id=" + id).body["experiment"]["lifecycle_stage"], "deleted");
  EXPECT_EQ(searched(json::object()), std::vector<std::string>{"Default"});
  EXPECT_EQ(searched(json{{"view_type", "DELETED_ONLY"}}), std::vector<std::string>{"sweep"});
  // Its runs are deleted with it: gone from the default view, there in ALL, marked.
  EXPECT_TRUE(Post("runs/search", json{{"experiment_ids", {id}}}).body.value("runs", json::array()).empty());
  json all = Post("runs/search", json{{"experiment_ids", {id}}, {"run_view_type", "ALL"}}).body["runs"];
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0]["info"]["lifecycle_stage"], "deleted");
  EXPECT_EQ(Get("runs/get?run_id=" + run_id).body["run"]["info"]["lifecycle_stage"], "deleted");
  ExpectError(Post("runs/create", json{{"experiment_id", id}}), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(Post("experiments/update", json{{"experiment_id", id}, {"new_name", "x"}}), 400,
              "INVALID_PARAMETER_VALUE");

  ASSERT_EQ(Post("experiments/restore", json{{"experiment_id", id}}).status, 200);
  EXPECT_EQ(Get("runs/get?run_id=" + run_id).body["run"]["info"]["lifecycle_stage"], "active");
  ASSERT_EQ(Post("experiments/update", json{{"experiment_id", id}, {"new_name", "sweep-2"}}).status, 200);
  json renamed = Get("experiments/get-by-name?experiment_name=sweep-2").body["experiment"];
  EXPECT_EQ(renamed["experiment_id"], id);
  EXPECT_EQ(store_->FindRun(run_id)->experiment, "sweep-2");  // its runs go along
  ExpectError(Post("experiments/update", json{{"experiment_id", id}, {"new_name", "Default"}}), 400,
              "RESOURCE_ALREADY_EXISTS");
  ASSERT_EQ(Post("experiments/delete-experiment-tag", json{{"experiment_id", id}, {"key", "team"}}).status,
            200);
  EXPECT_TRUE(Get("experiments/get?experiment_id=" + id).body["experiment"]["tags"].empty());
  ExpectError(Post("experiments/delete-experiment-tag", json{{"experiment_id", id}, {"key", "team"}}), 404,
              "RESOURCE_DOES_NOT_EXIST");
  ExpectError(Post("experiments/delete", json{{"experiment_id", "0"}}), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(Post("experiments/delete", json{{"experiment_id", "987654"}}), 404, "RESOURCE_DOES_NOT_EXIST");
  // MLflow 1.x's list, which older clients call.
  json listed = Get("experiments/list").body["experiments"];
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0]["name"].get<std::string>() + " " + listed[1]["name"].get<std::string>(),
            "sweep-2 Default");
}

// What MLflow's UI and get_metric_history_bulk_interval ask to chart a metric of several runs.
TEST_F(TrackingApiTest, BulkIntervalHistoryGivesEvenlySpreadStepsOfEveryRun) {
  std::string a = CreateRun(), b = CreateRun();
  for (const auto& [run, steps] : {std::pair{a, 10}, std::pair{b, 5}}) {
    json metrics = json::array();
    for (int step = 0; step < steps; ++step)
      metrics.push_back(
          {{"key", "loss"}, {"value", 1.0 / (step + 1)}, {"timestamp", 1000 + step}, {"step", step}});
    ASSERT_EQ(Post("runs/log-batch", json{{"run_id", run}, {"metrics", metrics}}).status, 200);
  }
  auto bulk = [&](const std::string& query) {
    return Get("metrics/get-history-bulk-interval?run_ids=" + a + "&run_ids=" + b + "&metric_key=loss" +
               query);
  };
  auto steps_of = [](const json& metrics, const std::string& run) {
    std::vector<int64_t> out;
    for (const json& m : metrics) {
      if (m["run_id"] == run) out.push_back(m["step"].get<int64_t>());
    }
    return out;
  };
  json all = bulk("").body["metrics"];
  EXPECT_EQ(all.size(), 15u);
  json three = bulk("&max_results=3").body["metrics"];
  EXPECT_EQ(steps_of(three, a), (std::vector<int64_t>{0, 5, 9}));  // first and last among them
  EXPECT_EQ(steps_of(three, b), (std::vector<int64_t>{0}));
  EXPECT_EQ(three[0]["key"], "loss");
  for (const json& m : three) {
    if (m["run_id"] == a && m["step"] == 5) {
      EXPECT_EQ(m["value"], 1.0 / 6);
    }
  }
  json window = bulk("&start_step=2&end_step=4").body["metrics"];
  EXPECT_EQ(steps_of(window, a), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(steps_of(window, b), (std::vector<int64_t>{2, 3, 4}));
  ExpectError(bulk("&start_step=2"), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(bulk("&start_step=5&end_step=2"), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(bulk("&max_results=0"), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(Get("metrics/get-history-bulk-interval?metric_key=loss"), 400, "INVALID_PARAMETER_VALUE");
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
  // The run's own records keep their content.
  ASSERT_TRUE(store_->PutArtifact({run_id, "manifest.json", 2, "{}", ""}).ok());
  for (const char* own : {"stdout.log", "manifest.json", "stderr.log"}) {
    auto replace = client_->Put(base + own, "not the output", "text/plain");
    ASSERT_TRUE(replace);
    EXPECT_EQ(replace->status, 400) << own;
    EXPECT_NE(replace->body.find("another name"), std::string::npos) << replace->body;
  }
  EXPECT_EQ(store_->GetArtifact(run_id, "manifest.json")->content, "{}");
  auto missing = client_->Get(base + "nothing.txt");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
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

TEST_F(TrackingApiTest, ASupervisedRunKeepsTheStatusItsProcessEarns) {
  std::string run_id = CreateRun();
  SeriesWriter writer(*store_, run_id);
  api_->AttachRun(run_id, &writer);
  EXPECT_EQ(Post("runs/update", json{{"run_id", run_id}, {"status", "FINISHED"}}).status, 200);
  EXPECT_EQ(store_->FindRun(run_id)->status, kRunning);
  // Its metrics go to the supervisor's writer and are readable at once.
  EXPECT_EQ(
      Post("runs/log-metric", json{{"run_id", run_id}, {"key", "loss"}, {"value", 2.5}, {"timestamp", 7}})
          .status,
      200);
  EXPECT_EQ(History(run_id, "loss")["metrics"][0]["value"], 2.5);
  server_->Stop();
  EXPECT_TRUE(writer.Close().ok());
}

}  // namespace
}  // namespace tb

namespace tb {
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
  // Another request of trainbench's client with the same points is another batch.
  httplib::Headers other{{"X-Trainbench-Request", "b2"}};
  EXPECT_EQ(client_->Post("/api/2.0/mlflow/runs/log-batch", other, next.dump(), "application/json")->status,
            200);
  EXPECT_EQ(History(run_id, "loss")["metrics"].size(), 4u);
  // A refused batch is not remembered: sent again once the run exists, it is stored.
  json early = next;
  early["run_id"] = "0123456789abcdef0123456789abcdef";
  EXPECT_EQ(Post("runs/log-batch", early).status, 404);
}

// The API of `trainbench run`'s port, confined to its run: others are neither found by a
// search nor reachable by id, and experiments other than its own cannot be changed.
TEST_F(TrackingApiTest, AConfinedApiReachesItsRunAndTheRunsItCreates) {
  std::string other = CreateRun("theirs");
  std::string mine = CreateRun("mine");
  api_->Confine(mine, "mine");
  ExpectError(Get("runs/get?run_id=" + other), 403, "PERMISSION_DENIED");
  ExpectError(Post("runs/update", json{{"run_id", other}, {"run_name", "x"}}), 403, "PERMISSION_DENIED");
  ExpectError(Post("runs/set-tag", json{{"run_id", other}, {"key", "k"}, {"value", "v"}}), 403,
              "PERMISSION_DENIED");
  EXPECT_EQ(Get("runs/get?run_id=" + mine).status, 200);
  std::string theirs_id =
      Get("experiments/get-by-name?experiment_name=theirs").body["experiment"]["experiment_id"];
  std::string mine_id =
      Get("experiments/get-by-name?experiment_name=mine").body["experiment"]["experiment_id"];
  ExpectError(Post("experiments/update", json{{"experiment_id", theirs_id}, {"new_name", "x"}}), 403,
              "PERMISSION_DENIED");
  ExpectError(Post("experiments/delete", json{{"experiment_id", theirs_id}}), 403, "PERMISSION_DENIED");
  Answer found = Post("runs/search", json{{"experiment_ids", json::array({theirs_id, mine_id})}});
  ASSERT_EQ(found.status, 200);
  ASSERT_EQ(found.body["runs"].size(), 1u) << found.body.dump();
  EXPECT_EQ(found.body["runs"][0]["info"]["run_id"], mine);
  // What the script makes is its own.
  Answer made = Post("runs/create", json{{"experiment_id", theirs_id}});
  ASSERT_EQ(made.status, 200);
  std::string made_id = made.body["run"]["info"]["run_id"];
  EXPECT_EQ(Post("runs/set-tag", json{{"run_id", made_id}, {"key", "k"}, {"value", "v"}}).status, 200);
  Answer created = Post("experiments/create", json{{"name", "new"}});
  ASSERT_EQ(created.status, 200);
  EXPECT_EQ(Post("experiments/update",
                 json{{"experiment_id", created.body["experiment_id"]}, {"new_name", "newer"}})
                .status,
            200);
}

namespace {

// `serve --host` without a token only where the address is this machine's loopback.
TEST(HttpServer, LoopbackMeansAddressesThatAre) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"})
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  for (const char* host :
       {"0.0.0.0", "10.0.0.1", "::", "127.example.invalid", "127.0.0.1.nip.invalid", "", "1270.0.0.1"})
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  EXPECT_TRUE(SecretsEqual("s3cret", "s3cret"));
  EXPECT_FALSE(SecretsEqual("s3cret", "s3cret2"));
  EXPECT_FALSE(SecretsEqual("s3cret", "s3cre"));
  EXPECT_FALSE(SecretsEqual("", "x"));
}

// A server's threads start as connections come (a WorkerPool): a server that one client
// talks to at a time, as a run's tracking server, has one thread answering, not 64.
TEST(HttpServer, StartsItsWorkersAsClientsComeAndOneClientAtATimeUsesOne) {
  auto threads = [] {
    size_t n = 0;
    for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task")) ++n;
    return n;
  };
  auto ok = [](const ApiRequest&) -> std::optional<ApiResponse> {
    ApiResponse answer;
    answer.body = "{}";
    return answer;
  };
  HttpServer server({ok});
  size_t before = threads();
  ASSERT_TRUE(server.Start(HttpServerOptions{}).ok());  // 64 workers at most
  EXPECT_EQ(threads(), before + 1) << "the accepting thread alone";
  for (int i = 0; i < 10; ++i) {
    httplib::Client client("127.0.0.1", server.port());
    auto r = client.Get("/anything");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    client.stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // its worker waits again
  }
  // One worker, unless a worker was slow to see its client go (a loaded machine).
  EXPECT_LE(threads(), before + 5) << "ten clients one after another should need a worker or two, not ten";
  server.Stop();
}

}  // namespace
}  // namespace tb
