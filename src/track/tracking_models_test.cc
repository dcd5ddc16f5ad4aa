// A model and the data it was trained on, kept with the run through the calls MLflow's
// clients make: MLflow 3's log_model (logged-models, runs/outputs), MLflow 2's log_model
// (runs/log-model) and log_input (runs/log-inputs). The requests are those of MLflow's
// RestStore, in the order its log_model sends them.
#include <gtest/gtest.h>

#include "track/tracking_api_fixture.h"

namespace tb {
namespace {

class LoggedModelTest : public TrackingApiTest {
 protected:
  // Where MLflow's client uploads a file under an mlflow-artifacts: URI of this server.
  std::string ArtifactPath(const std::string& uri, const std::string& file) {
    return "/api/2.0/mlflow-artifacts/artifacts/" + uri.substr(std::string("mlflow-artifacts:/").size()) +
           "/" + file;
  }
};

// mlflow.pytorch.log_model(model, name="model") in MLflow 3: the model is created PENDING,
// its files go up to its artifact URI, it is finalized READY and linked to the run as an
// output; loading it back (models:/<id>) finds it and downloads its files.
TEST_F(LoggedModelTest, AnMlflow3LoggedModelIsKeptWithItsRunAndLoadsBack) {
  std::string run_id = CreateRun();
  std::string experiment_id = ExperimentOf(run_id);
  Answer created =
      Post("logged-models", json{{"experiment_id", experiment_id},
                                 {"name", "model"},
                                 {"source_run_id", run_id},
                                 {"params", json::array()},
                                 {"tags", {{{"key", "mlflow.source.type"}, {"value", "LOCAL"}}}}});
  ASSERT_EQ(created.status, 200) << created.body.dump();
  json info = created.body["model"]["info"];
  std::string model_id = info["model_id"];
  EXPECT_TRUE(model_id.starts_with("m-")) << model_id;
  EXPECT_EQ(info["status"], "LOGGED_MODEL_PENDING");
  EXPECT_EQ(info["source_run_id"], run_id);
  EXPECT_EQ(info["name"], "model");
  std::string uri = info["artifact_uri"];
  EXPECT_EQ(uri, "mlflow-artifacts:/" + experiment_id + "/" + run_id + "/artifacts/models/" + model_id);

  ASSERT_EQ(Get("logged-models/" + model_id).status, 200);  // log_model_artifacts reads it first
  for (const char* file : {"MLmodel", "data/model.pth"}) {
    auto put =
        client_->Put(ArtifactPath(uri, file), std::string("bytes of ") + file, "application/octet-stream");
    ASSERT_TRUE(put);
    EXPECT_EQ(put->status, 200) << put->body;
  }
  Answer ready =
      Send("PATCH", "logged-models/" + model_id, {{"model_id", model_id}, {"status", "LOGGED_MODEL_READY"}});
  ASSERT_EQ(ready.status, 200) << ready.body.dump();
  EXPECT_EQ(ready.body["model"]["info"]["status"], "LOGGED_MODEL_READY");
  ASSERT_EQ(
      Post("runs/outputs", json{{"run_id", run_id}, {"models", {{{"model_id", model_id}, {"step", 0}}}}})
          .status,
      200);

  json run = Get("runs/get?run_id=" + run_id).body["run"];
  EXPECT_EQ(run["outputs"]["model_outputs"], json::parse(R"([{"model_id":")" + model_id + R"(","step":0}])"));
  for (const json& tag : run["data"]["tags"])
    EXPECT_FALSE(tag["key"].get<std::string>().starts_with("trainbench.model"));

  // Loading: the model by id, then its folder listed and its files downloaded.
  Answer got = Get("logged-models/" + model_id);
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.body["model"]["info"]["artifact_uri"], uri);
  auto listed = client_->Get("/api/2.0/mlflow-artifacts/artifacts?path=" +
                             uri.substr(std::string("mlflow-artifacts:/").size()));
  ASSERT_TRUE(listed);
  json files = json::parse(listed->body)["files"];
  ASSERT_EQ(files.size(), 2u) << files.dump();
  auto file = client_->Get(ArtifactPath(uri, "MLmodel"));
  ASSERT_TRUE(file);
  EXPECT_EQ(file->body, "bytes of MLmodel");

  Answer search = Post("logged-models/search", json{{"experiment_ids", {experiment_id}}});
  ASSERT_EQ(search.status, 200);
  ASSERT_EQ(search.body["models"].size(), 1u);
  EXPECT_EQ(search.body["models"][0]["info"]["model_id"], model_id);

  // Tags and params after the fact, as set_logged_model_tags and log_model_params send them.
  EXPECT_EQ(
      Send("PATCH", "logged-models/" + model_id + "/tags", {{"tags", {{{"key", "stage"}, {"value", "dev"}}}}})
          .status,
      200);
  EXPECT_EQ(Post("logged-models/" + model_id + "/params",
                 json{{"model_id", model_id}, {"params", {{{"key", "lr"}, {"value", "0.1"}}}}})
                .status,
            200);
  json after = Get("logged-models/" + model_id).body["model"];
  EXPECT_EQ(after["data"]["params"], json::parse(R"([{"key":"lr","value":"0.1"}])"));
  EXPECT_EQ(after["info"]["tags"].size(), 2u);
  EXPECT_EQ(Send("DELETE", "logged-models/" + model_id + "/tags/stage").status, 200);
  EXPECT_EQ(Get("logged-models/" + model_id).body["model"]["info"]["tags"].size(), 1u);

  EXPECT_EQ(Send("DELETE", "logged-models/" + model_id, {{"model_id", model_id}}).status, 200);
  ExpectError(Get("logged-models/" + model_id), 404, "RESOURCE_DOES_NOT_EXIST");
  ExpectError(Get("logged-models/m-0123"), 404, "RESOURCE_DOES_NOT_EXIST");
}

// A model logged with no run: the script of `trainbench run` (a confined API) logs it into
// its run; `trainbench serve` refuses it saying what to do.
TEST_F(LoggedModelTest, AModelWithoutARunBelongsToTheScriptsRunOrIsRefused) {
  std::string run_id = CreateRun();
  std::string experiment_id = ExperimentOf(run_id);
  Answer refused = Post("logged-models", json{{"experiment_id", experiment_id}, {"name", "orphan"}});
  ExpectError(refused, 400, "INVALID_PARAMETER_VALUE");
  EXPECT_NE(refused.body["message"].get<std::string>().find("mlflow.start_run()"), std::string::npos);

  api_->Confine(run_id);
  Answer kept = Post("logged-models", json{{"experiment_id", experiment_id}, {"name", "orphan"}});
  ASSERT_EQ(kept.status, 200) << kept.body.dump();
  EXPECT_EQ(kept.body["model"]["info"]["source_run_id"], run_id);
}

// mlflow.log_input(dataset, context="training"): each dataset once per name and digest, with
// its context, in the run's inputs as runs/get and runs/search give them.
TEST_F(LoggedModelTest, DatasetInputsAreKeptOncePerDatasetWithTheirContext) {
  std::string run_id = CreateRun();
  auto input = [&](const std::string& name, const std::string& digest, const std::string& context) {
    return json{{"tags", {{{"key", "mlflow.data.context"}, {"value", context}}}},
                {"dataset",
                 {{"name", name},
                  {"digest", digest},
                  {"source_type", "local"},
                  {"source", R"({"uri": "/data/mnist"})"},
                  {"schema", R"({"mlflow_tensorspec": {}})"},
                  {"profile", R"({"num_rows": 60000})"}}}};
  };
  for (int twice = 0; twice < 2; ++twice) {
    Answer logged =
        Post("runs/log-inputs", json{{"run_id", run_id}, {"datasets", {input("mnist", "a1b2", "training")}}});
    ASSERT_EQ(logged.status, 200) << logged.body.dump();
  }
  ASSERT_EQ(
      Post("runs/log-inputs", json{{"run_id", run_id}, {"datasets", {input("mnist-test", "c3d4", "eval")}}})
          .status,
      200);
  json inputs = Get("runs/get?run_id=" + run_id).body["run"]["inputs"]["dataset_inputs"];
  ASSERT_EQ(inputs.size(), 2u) << inputs.dump();
  std::set<std::string> seen;
  for (const json& i : inputs) {
    seen.insert(i["dataset"]["name"].get<std::string>() + "/" + i["tags"][0]["value"].get<std::string>());
    EXPECT_EQ(i["dataset"]["source_type"], "local");
  }
  EXPECT_EQ(seen, (std::set<std::string>{"mnist/training", "mnist-test/eval"}));
  std::string experiment_id = ExperimentOf(run_id);
  json found = Post("runs/search", json{{"experiment_ids", {experiment_id}}}).body["runs"];
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]["inputs"]["dataset_inputs"].size(), 2u);
  ExpectError(
      Post("runs/log-inputs", json{{"run_id", run_id}, {"datasets", {{{"dataset", {{"name", "x"}}}}}}}), 400,
      "INVALID_PARAMETER_VALUE");
}

// MLflow 2's log_model, once the files are up: the model's metadata appended to the run's
// mlflow.log-model.history tag (flavors' config left out), as MLflow's server keeps it.
TEST_F(LoggedModelTest, AnMlflow2LogModelAppendsToTheRunsModelHistory) {
  std::string run_id = CreateRun();
  auto model = [&](const std::string& uuid) {
    return json{
        {"artifact_path", "model"},
        {"run_id", run_id},
        {"utc_time_created", "2026-11-27 19:00:00.000000"},
        {"model_uuid", uuid},
        {"flavors",
         {{"python_function", {{"loader_module", "mlflow.pytorch"}, {"config", {{"device", "cuda"}}}}}}}}
        .dump();
  };
  for (const char* uuid : {"u1", "u2"})
    ASSERT_EQ(Post("runs/log-model", json{{"run_id", run_id}, {"model_json", model(uuid)}}).status, 200);
  std::string history;
  json tags = Get("runs/get?run_id=" + run_id).body["run"]["data"]["tags"];
  for (const json& tag : tags) {
    if (tag["key"] == "mlflow.log-model.history") history = tag["value"];
  }
  json parsed = json::parse(history);
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[1]["model_uuid"], "u2");
  EXPECT_EQ(parsed[0]["flavors"]["python_function"]["loader_module"], "mlflow.pytorch");
  EXPECT_FALSE(parsed[0]["flavors"]["python_function"].contains("config"));
  Answer missing =
      Post("runs/log-model", json{{"run_id", run_id}, {"model_json", json{{"run_id", run_id}}.dump()}});
  ExpectError(missing, 400, "INVALID_PARAMETER_VALUE");
  EXPECT_NE(missing.body["message"].get<std::string>().find("'artifact_path'"), std::string::npos);
  ExpectError(Post("runs/log-model", json{{"run_id", run_id}, {"model_json", "not json"}}), 400,
              "INVALID_PARAMETER_VALUE");
}

}  // namespace
}  // namespace tb
