// MLflow 3's logged-model search and model metrics, replayed as its RestStore sends them
// (mlflow/store/tracking/rest_store.py: search_logged_models, log_batch), with what MLflow's
// server answers: list_artifacts(run, "dir") and load_model("runs:/<run>/<name>") look a
// model up by `name = '<first part>'`, set_active_model(name=) by `name='<name>'` with
// max_results 2, and Model.log re-sends the run's metrics with a model_id.
#include <gtest/gtest.h>

#include "track/tracking_api_fixture.h"

namespace tb {
namespace {

class ModelSearchTest : public TrackingApiTest {
 protected:
  // A logged model as MLflow 3's log_model creates it.
  std::string LogModel(const std::string& run_id, const std::string& name, const json& params = json::array(),
                       const json& tags = json::array()) {
    Answer a = Post("logged-models", json{{"experiment_id", ExperimentOf(run_id)},
                                          {"name", name},
                                          {"source_run_id", run_id},
                                          {"params", params},
                                          {"tags", tags}});
    EXPECT_EQ(a.status, 200) << a.body.dump();
    return a.body["model"]["info"]["model_id"];
  }
  Answer Search(json body) { return Post("logged-models/search", body); }
  static std::vector<std::string> Names(const Answer& a) {
    std::vector<std::string> out;
    for (const json& m : a.body.value("models", json::array())) out.push_back(m["info"]["name"]);
    return out;
  }
};

// RunsArtifactRepository._get_logged_model_artifact_repo: the experiment's models named
// after the path's first part, of which it keeps the one the run logged.
TEST_F(ModelSearchTest, ListArtifactsOfASubfolderFindsTheRunsModelByName) {
  std::string run = CreateRun();
  std::string other = CreateRun();
  std::string exp = ExperimentOf(run);
  std::string mine = LogModel(run, "model");
  LogModel(other, "model");
  LogModel(run, "best_estimator");

  Answer a = Search({{"experiment_ids", {exp}}, {"filter", "name = 'model'"}});
  ASSERT_EQ(a.status, 200) << a.body.dump();
  ASSERT_EQ(a.body["models"].size(), 2u);
  int of_run = 0;
  for (const json& m : a.body["models"]) {
    EXPECT_EQ(m["info"]["name"], "model");
    if (m["info"]["source_run_id"] == run) {
      ++of_run;
      EXPECT_EQ(m["info"]["model_id"], mine);
    }
  }
  EXPECT_EQ(of_run, 1);
  // A sub-folder named like no model: nothing, not an error.
  Answer none = Search({{"experiment_ids", {exp}}, {"filter", "name = 'estimator_html'"}});
  ASSERT_EQ(none.status, 200) << none.body.dump();
  EXPECT_TRUE(none.body.value("models", json::array()).empty());
}

// set_active_model(name="clf"): `name='clf'` (no spaces), at most 2, newest first.
TEST_F(ModelSearchTest, SetActiveModelByNameFindsTheNewest) {
  std::string run = CreateRun();
  std::string exp = ExperimentOf(run);
  std::string first = LogModel(run, "clf");
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::string second = LogModel(run, "clf");
  LogModel(run, "other");
  Answer a = Search({{"experiment_ids", {exp}}, {"filter", "name='clf'"}, {"max_results", 2}});
  ASSERT_EQ(a.status, 200) << a.body.dump();
  ASSERT_EQ(a.body["models"].size(), 2u);
  EXPECT_EQ(a.body["models"][0]["info"]["model_id"], second);
  EXPECT_EQ(a.body["models"][1]["info"]["model_id"], first);
}

TEST_F(ModelSearchTest, FiltersOverParamsTagsMetricsAndAttributes) {
  std::string run = CreateRun();
  std::string other = CreateRun();
  std::string exp = ExperimentOf(run);
  std::string a =
      LogModel(run, "svc-a", {{{"key", "C"}, {"value", "1"}}}, {{{"key", "team"}, {"value", "vision"}}});
  std::string b =
      LogModel(other, "svc-b", {{{"key", "C"}, {"value", "10"}}}, {{{"key", "team"}, {"value", "nlp"}}});
  LogModel(other, "tree", {{{"key", "depth"}, {"value", "3"}}});
  // Accuracies linked to the models, as log_metric(model_id=...) sends them.
  auto metric = [&](const std::string& run_id, const std::string& model, double v,
                    const std::string& dataset) {
    Answer m = Post("runs/log-batch", json{{"run_id", run_id},
                                           {"metrics",
                                            {{{"key", "accuracy"},
                                              {"value", v},
                                              {"timestamp", 1763777001000},
                                              {"step", 0},
                                              {"model_id", model},
                                              {"dataset_name", dataset},
                                              {"dataset_digest", "d1"}}}}});
    ASSERT_EQ(m.status, 200) << m.body.dump();
  };
  metric(run, a, 0.91, "test");
  metric(other, b, 0.75, "train");

  auto names = [&](json body) {
    body["experiment_ids"] = {exp};
    Answer r = Search(body);
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return Names(r);
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names({{"filter", "params.C = '10'"}}), V{"svc-b"});
  EXPECT_EQ(names({{"filter", "tags.team != 'nlp' AND name LIKE 'svc%'"}}), V{"svc-a"});
  EXPECT_EQ(names({{"filter", "metrics.accuracy > 0.8"}}), V{"svc-a"});
  EXPECT_EQ(names({{"filter", "source_run_id = '" + other + "'"}, {"order_by", {{{"field_name", "name"}}}}}),
            (V{"svc-b", "tree"}));
  EXPECT_EQ(names({{"filter", "name IN ('tree', 'svc-a')"}, {"order_by", {{{"field_name", "name"}}}}}),
            (V{"svc-a", "tree"}));
  EXPECT_EQ(names({{"filter", "name ILIKE 'SVC-%'"}, {"order_by", {{{"field_name", "metrics.accuracy"}}}}}),
            (V{"svc-b", "svc-a"}));
  // Ordered by a metric: models without it last, whichever the direction.
  EXPECT_EQ(names({{"order_by", {{{"field_name", "metrics.accuracy"}, {"ascending", false}}}}}),
            (V{"svc-a", "svc-b", "tree"}));
  // datasets=: only metrics measured on them count; with no metric clause, a model needs one.
  EXPECT_EQ(names({{"datasets", {{{"dataset_name", "train"}}}}}), V{"svc-b"});
  EXPECT_TRUE(
      names({{"filter", "metrics.accuracy > 0.8"}, {"datasets", {{{"dataset_name", "train"}}}}}).empty());

  // What MLflow's server refuses, refused with its words.
  for (json bad : {json{{"filter", "colour = 'red'"}}, json{{"filter", "metrics.accuracy LIKE '0.9%'"}},
                   json{{"order_by", {{{"field_name", "params.C"}}}}},
                   json{{"datasets", {{{"dataset_digest", "x"}}}}}}) {
    bad["experiment_ids"] = {exp};
    ExpectError(Search(bad), 400, "INVALID_PARAMETER_VALUE");
  }
}

TEST_F(ModelSearchTest, PagesFollowTheNextPageToken) {
  std::string run = CreateRun();
  std::string exp = ExperimentOf(run);
  for (int i = 0; i < 5; ++i) LogModel(run, "m" + std::to_string(i));
  std::vector<std::string> seen;
  json body = {{"experiment_ids", {exp}}, {"max_results", 2}, {"order_by", {{{"field_name", "name"}}}}};
  for (int page = 0; page < 5; ++page) {
    Answer a = Search(body);
    ASSERT_EQ(a.status, 200) << a.body.dump();
    for (const std::string& n : Names(a)) seen.push_back(n);
    if (!a.body.contains("next_page_token")) break;
    body["page_token"] = a.body["next_page_token"];
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"m0", "m1", "m2", "m3", "m4"}));
}

// Model.log(...) in MLflow 3 re-sends every point of the step with the new model's id: MLflow
// keeps the run's point once and gives the model its metrics.
TEST_F(ModelSearchTest, LogModelsResentMetricsAreStoredOnceAndBelongToTheModel) {
  std::string run = CreateRun();
  json point = {{"key", "loss"}, {"value", 0.25}, {"timestamp", 1763777001000}, {"step", 0}};
  ASSERT_EQ(Post("runs/log-batch", json{{"run_id", run}, {"metrics", {point}}}).status, 200);
  std::string model = LogModel(run, "model");
  json linked = point;
  linked["run_id"] = run;
  linked["model_id"] = model;
  ASSERT_EQ(Post("runs/log-batch", json{{"run_id", run}, {"metrics", {linked}}}).status, 200);
  // The same point in another batch beside a new one: only the new one is added.
  json later = point;
  later["step"] = 1;
  later["value"] = 0.2;
  ASSERT_EQ(Post("runs/log-batch", json{{"run_id", run}, {"metrics", {point, later}}}).status, 200);

  json history = History(run, "loss")["metrics"];
  ASSERT_EQ(history.size(), 2u) << history.dump();
  EXPECT_EQ(history[0]["value"], 0.25);
  EXPECT_EQ(history[1]["value"], 0.2);
  json metrics = Get("logged-models/" + model).body["model"]["data"]["metrics"];
  ASSERT_EQ(metrics.size(), 1u) << metrics.dump();
  EXPECT_EQ(metrics[0]["key"], "loss");
  EXPECT_EQ(metrics[0]["value"], 0.25);
  EXPECT_EQ(metrics[0]["run_id"], run);
}

// A run this server did not write (a restart in between): a point it already holds is still
// kept once.
TEST_F(ModelSearchTest, APointStoredBeforeARestartIsNotStoredAgain) {
  std::string run = CreateRun();
  json point = {{"key", "acc"}, {"value", 0.5}, {"timestamp", 1763777001000}, {"step", 3}};
  ASSERT_EQ(
      Post("runs/log-metric",
           json{{"run_id", run}, {"key", "acc"}, {"value", 0.5}, {"timestamp", 1763777001000}, {"step", 3}})
          .status,
      200);
  server_->Stop();
  api_ = std::make_unique<TrackingApi>(*store_);
  server_ = std::make_unique<HttpServer>(std::vector<ApiHandler>{api_->Handler()});
  ASSERT_TRUE(server_->Start(TrackingApi::ServerOptions()).ok());
  client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  ASSERT_EQ(Post("runs/log-batch", json{{"run_id", run}, {"metrics", {point}}}).status, 200);
  EXPECT_EQ(History(run, "acc")["metrics"].size(), 1u);
}

// A model record forged in a run's tags (another shape, or not JSON at all: a shared
// PostgreSQL store someone wrote to) hides only itself: the experiment's search, the run and
// its inputs are answered.
TEST_F(ModelSearchTest, AForgedModelRecordHidesOnlyItself) {
  std::string run = CreateRun();
  std::string exp = ExperimentOf(run);
  LogModel(run, "good");
  std::string forged = "m-" + run + "0badf00d";
  ASSERT_TRUE(store_
                  ->SetTags(run, {{"trainbench.model.m-" + run + "deadbeef", "{not json"},
                                  {"trainbench.model." + forged,
                                   R"({"name": 5, "tags": [1, {"key": 2}], "created": "x",
                                        "metrics": [{"key": "acc", "value": "high"}]})"},
                                  {"trainbench.dataset.ffff", "[1, 2]"}})
                  .ok());
  Answer found = Search({{"experiment_ids", {exp}}});
  ASSERT_EQ(found.status, 200) << found.body.dump();
  std::vector<std::string> names = Names(found);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"", "good"})) << "the forged record's text fields left out";
  EXPECT_EQ(Get("logged-models/" + forged).status, 200);
  Answer got = Get("runs/get?run_id=" + run);
  ASSERT_EQ(got.status, 200) << got.body.dump();
}

}  // namespace
}  // namespace tb
