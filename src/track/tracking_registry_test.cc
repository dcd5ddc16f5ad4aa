// MLflow's model registry, replayed as MLflow 3's clients send it (mlflow/store/model_registry/
// rest_store.py: GET with query parameters, POST, PATCH and DELETE with JSON bodies) and
// answered as MLflow's server answers: register_model / log_model(registered_model_name=),
// then loads by models:/name/1, models:/name@alias, models:/name/Production and
// models:/name/latest.
#include <gtest/gtest.h>

#include "track/tracking_api_fixture.h"

namespace tb {
namespace {

class RegistryTest : public TrackingApiTest {
 protected:
  // A run with an MLflow 3 logged model, as log_model leaves it.
  std::pair<std::string, std::string> RunWithModel() {
    std::string run = CreateRun();
    std::string experiment = ExperimentOf(run);
    Answer m =
        Post("logged-models", json{{"experiment_id", experiment}, {"name", "model"}, {"source_run_id", run}});
    EXPECT_EQ(m.status, 200) << m.body.dump();
    return {run, m.body["model"]["info"]["model_id"]};
  }
  // mlflow.register_model("runs:/<run>/model", name): the model (already there: a new
  // version), then the version of the logged model the run holds.
  json Register(const std::string& name, const std::string& run, const std::string& model_id) {
    Answer created = Post("registered-models/create", json{{"name", name}});
    EXPECT_TRUE(created.status == 200 || created.body.value("error_code", "") == "RESOURCE_ALREADY_EXISTS")
        << created.body.dump();
    Answer version = Post(
        "model-versions/create",
        json{{"name", name}, {"source", "models:/" + model_id}, {"run_id", run}, {"model_id", model_id}});
    EXPECT_EQ(version.status, 200) << version.body.dump();
    return version.body["model_version"];
  }
};

TEST_F(RegistryTest, RegisterModelThenLoadItByVersionAliasStageAndLatest) {
  auto [run, model_id] = RunWithModel();
  json v1 = Register("digits", run, model_id);
  EXPECT_EQ(v1["version"], "1");
  EXPECT_EQ(v1["status"], "READY");  // register_model waits for READY
  EXPECT_EQ(v1["current_stage"], "None");
  EXPECT_EQ(v1["run_id"], run);
  ExpectError(Post("registered-models/create", json{{"name", "digits"}}), 400, "RESOURCE_ALREADY_EXISTS");
  auto [run2, model2] = RunWithModel();
  EXPECT_EQ(Register("digits", run2, model2)["version"], "2");

  // models:/digits/1: where the files are, the logged model's own folder.
  std::string where = Get("logged-models/" + model_id).body["model"]["info"]["artifact_uri"];
  Answer uri = Get("model-versions/get-download-uri?name=digits&version=1");
  ASSERT_EQ(uri.status, 200) << uri.body.dump();
  EXPECT_EQ(uri.body["artifact_uri"], where);
  // models:/digits@champion
  ASSERT_EQ(Post("registered-models/alias", json{{"name", "digits"}, {"alias", "champion"}, {"version", "1"}})
                .status,
            200);
  Answer alias = Get("registered-models/alias?name=digits&alias=champion");
  ASSERT_EQ(alias.status, 200) << alias.body.dump();
  EXPECT_EQ(alias.body["model_version"]["version"], "1");
  EXPECT_EQ(alias.body["model_version"]["aliases"], json::array({"champion"}));
  // models:/digits/Production, after a transition archiving what was there.
  Answer moved = Post("model-versions/transition-stage", json{{"name", "digits"},
                                                              {"version", "1"},
                                                              {"stage", "production"},
                                                              {"archive_existing_versions", false}});
  ASSERT_EQ(moved.status, 200) << moved.body.dump();
  EXPECT_EQ(moved.body["model_version"]["current_stage"], "Production");
  ASSERT_EQ(Post("model-versions/transition-stage", json{{"name", "digits"},
                                                         {"version", "2"},
                                                         {"stage", "Production"},
                                                         {"archive_existing_versions", true}})
                .status,
            200);
  Answer production =
      Post("registered-models/get-latest-versions", json{{"name", "digits"}, {"stages", {"Production"}}});
  ASSERT_EQ(production.status, 200);
  ASSERT_EQ(production.body["model_versions"].size(), 1u);
  EXPECT_EQ(production.body["model_versions"][0]["version"], "2");
  EXPECT_EQ(Get("model-versions/get?name=digits&version=1").body["model_version"]["current_stage"],
            "Archived");
  // models:/digits/latest: every stage's latest, of which the client takes the highest.
  Answer latest = Post("registered-models/get-latest-versions", json{{"name", "digits"}});
  ASSERT_EQ(latest.body["model_versions"].size(), 2u) << latest.body.dump();

  json model = Get("registered-models/get?name=digits").body["registered_model"];
  EXPECT_EQ(model["aliases"], json::parse(R"([{"alias":"champion","version":"1"}])"));
  ExpectError(Get("registered-models/get?name=nope"), 404, "RESOURCE_DOES_NOT_EXIST");
  ExpectError(Get("model-versions/get?name=digits&version=9"), 404, "RESOURCE_DOES_NOT_EXIST");
}

// MlflowClient's other registry calls: tags, descriptions, rename, search, deletes; a
// deleted version's number is not given again.
TEST_F(RegistryTest, TheRestOfTheRegistryAsMlflowsServerAnswers) {
  auto [run, model_id] = RunWithModel();
  Register("wine", run, model_id);
  Register("wine", run, model_id);
  Register("digits", run, model_id);
  ASSERT_EQ(
      Post("registered-models/set-tag", json{{"name", "wine"}, {"key", "team"}, {"value", "food"}}).status,
      200);
  ASSERT_EQ(Post("model-versions/set-tag",
                 json{{"name", "wine"}, {"version", "2"}, {"key", "ok"}, {"value", "yes"}})
                .status,
            200);
  Answer described =
      Send("PATCH", "registered-models/update", {{"name", "wine"}, {"description", "red or white"}});
  ASSERT_EQ(described.status, 200) << described.body.dump();
  EXPECT_EQ(described.body["registered_model"]["description"], "red or white");
  EXPECT_EQ(
      Send("PATCH", "model-versions/update", {{"name", "wine"}, {"version", "1"}, {"description", "first"}})
          .body["model_version"]["description"],
      "first");

  auto names = [&](const std::string& query) {
    std::vector<std::string> out;
    Answer a = Get("registered-models/search?" + query);
    EXPECT_EQ(a.status, 200) << a.body.dump();
    for (const json& m : a.body.value("registered_models", json::array())) out.push_back(m["name"]);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(""), (V{"digits", "wine"}));
  EXPECT_EQ(names("filter=name%20LIKE%20%27w%25%27"), V{"wine"});
  EXPECT_EQ(names("filter=tags.team%20%3D%20%27food%27"), V{"wine"});
  EXPECT_EQ(names("max_results=1&order_by=name%20DESC"), V{"wine"});
  Answer versions = Get("model-versions/search?filter=name%3D%27wine%27");
  ASSERT_EQ(versions.status, 200) << versions.body.dump();
  ASSERT_EQ(versions.body["model_versions"].size(), 2u);
  EXPECT_EQ(versions.body["model_versions"][0]["version"], "2");
  EXPECT_EQ(versions.body["model_versions"][0]["tags"], json::parse(R"([{"key":"ok","value":"yes"}])"));
  EXPECT_EQ(Get("model-versions/search?filter=run_id%3D%27" + run + "%27").body["model_versions"].size(), 3u);

  ASSERT_EQ(Send("DELETE", "model-versions/delete", {{"name", "wine"}, {"version", "2"}}).status, 200);
  EXPECT_EQ(Register("wine", run, model_id)["version"], "3");
  Answer renamed = Post("registered-models/rename", json{{"name", "wine"}, {"new_name", "vino"}});
  ASSERT_EQ(renamed.status, 200) << renamed.body.dump();
  EXPECT_EQ(Get("model-versions/get?name=vino&version=3").status, 200);
  ExpectError(Get("registered-models/get?name=wine"), 404, "RESOURCE_DOES_NOT_EXIST");
  ASSERT_EQ(Send("DELETE", "registered-models/delete-tag", {{"name", "vino"}, {"key", "team"}}).status, 200);
  EXPECT_TRUE(Get("registered-models/get?name=vino").body["registered_model"]["tags"].empty());
  ASSERT_EQ(Send("DELETE", "registered-models/delete", {{"name", "vino"}}).status, 200);
  EXPECT_EQ(names(""), V{"digits"});
}

// Under `trainbench run` the script registers and reads freely, adds versions to any model,
// and changes only the models it created.
TEST_F(RegistryTest, AConfinedScriptChangesOnlyTheModelsItCreated) {
  auto [run, model_id] = RunWithModel();
  Register("shared", run, model_id);  // someone else's, before
  std::string mine = CreateRun();
  api_->Confine(mine);
  ASSERT_EQ(Post("model-versions/create", json{{"name", "shared"}, {"source", "models:/" + model_id}}).status,
            200);
  EXPECT_EQ(Get("registered-models/get?name=shared").status, 200);
  ExpectError(Send("DELETE", "registered-models/delete", {{"name", "shared"}}), 403, "PERMISSION_DENIED");
  ASSERT_EQ(Post("registered-models/create", json{{"name", "own"}}).status, 200);
  EXPECT_EQ(Send("DELETE", "registered-models/delete", {{"name", "own"}}).status, 200);
}

}  // namespace
}  // namespace tb
