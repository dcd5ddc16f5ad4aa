// The shapes MLflow's scripts take under `trainbench run`, as MLflow 3's client sends them:
// start_run() after set_experiment and lookups between, nested runs, renames, dataset
// filters, unknown run ids.
#include <gtest/gtest.h>

#include "store/run_tags.h"
#include "track/tracking_api_fixture.h"

namespace tb {
namespace {

// mlflow.start_run() under `trainbench run` (no MLFLOW_RUN_ID): the script's first runs/create
// is answered with the confined run, moved into the experiment the client named by its own
// rules, whatever the script looked up or created in between; nested and later runs are
// runs of their own.
TEST_F(TrackingApiTest, TheScriptsFirstRunIsTheConfinedRunInTheExperimentItNames) {
  std::string mine = CreateRun("mine");
  api_->Confine(mine);
  // set_experiment("resnet") on a store without it: not found, then created; then the shapes
  // that used to confuse the guess: a lookup of another experiment, a search by names, a
  // create_experiment of another.
  ExpectError(Get("experiments/get-by-name?experiment_name=resnet"), 404, "RESOURCE_DOES_NOT_EXIST");
  Answer created = Post("experiments/create", json{{"name", "resnet"}});
  ASSERT_EQ(created.status, 200);
  std::string resnet_id = created.body["experiment_id"];
  ASSERT_EQ(Get("experiments/get-by-name?experiment_name=mine").status, 200);
  // mlflow.search_runs(experiment_names=["Default"]) on a store that never used it.
  ASSERT_EQ(Get("experiments/get-by-name?experiment_name=Default").body["experiment"]["experiment_id"], "0");
  ASSERT_EQ(Post("experiments/search", json{{"filter", "name = 'mine'"}}).status, 200);
  ASSERT_EQ(Post("experiments/create", json{{"name", "elsewhere"}}).status, 200);
  // start_run(run_name="bs128"): what MLflow's client sends.
  Answer started =
      Post("runs/create", json{{"experiment_id", resnet_id},
                               {"start_time", 1763777000000},
                               {"run_name", "bs128"},
                               {"tags", {{{"key", "mlflow.source.name"}, {"value", "train.py"}}}}});
  ASSERT_EQ(started.status, 200) << started.body.dump();
  EXPECT_EQ(started.body["run"]["info"]["run_id"], mine);
  EXPECT_EQ(started.body["run"]["info"]["experiment_id"], resnet_id);
  EXPECT_EQ(started.body["run"]["info"]["run_name"], "bs128");
  RunRecord run = store_->FindRun(mine).value();
  EXPECT_EQ(run.experiment, "resnet");
  EXPECT_EQ(TagValue(run, "mlflow.source.name"), "train.py");
  std::vector<EventRecord> events = store_->ListEvents(mine).value();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "experiment");
  EXPECT_NE(events[0].label.find("'mine'"), std::string::npos) << events[0].label;
  // A nested run (a grid search's child) and a later top-level run are runs of their own.
  Answer child = Post("runs/create", json{{"experiment_id", resnet_id},
                                          {"tags", {{{"key", "mlflow.parentRunId"}, {"value", mine}}}}});
  ASSERT_EQ(child.status, 200);
  EXPECT_NE(child.body["run"]["info"]["run_id"], mine);
  Answer later = Post("runs/create", json{{"experiment_id", resnet_id}});
  ASSERT_EQ(later.status, 200);
  EXPECT_NE(later.body["run"]["info"]["run_id"], mine);
  EXPECT_EQ(store_->FindRun(mine)->experiment, "resnet");
  EXPECT_EQ(store_->ListEvents(mine)->size(), 1u);
}

// The smaller things MLflow's examples rely on: a run's mlflow.runName searched after a
// rename, the datasets.* filters over a run's inputs (name, digest, the mlflow.data.context
// tag), an experiment holding only the script's run renamed and still its own, an unknown run id not there
// rather than someone else's.
TEST_F(TrackingApiTest, RenamesDatasetFiltersAndUnknownRunsAsMlflowAnswers) {
  std::string run = CreateRun("mine");
  std::string other = CreateRun("mine");
  std::string experiment = ExperimentOf(run);
  ASSERT_EQ(Post("runs/update", json{{"run_id", run}, {"run_name", "renamed"}}).status, 200);
  auto found = [&](const std::string& filter) {
    Answer a = Post("runs/search", json{{"experiment_ids", {experiment}}, {"filter", filter}});
    EXPECT_EQ(a.status, 200) << a.body.dump();
    std::vector<std::string> ids;
    for (const json& r : a.body.value("runs", json::array())) ids.push_back(r["info"]["run_id"]);
    return ids;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(found("tags.mlflow.runName = 'renamed'"), V{run});
  EXPECT_TRUE(found("tags.mlflow.runName = 'r1'") == V{other});
  json input = {
      {"tags", {{{"key", "mlflow.data.context"}, {"value", "training"}}}},
      {"dataset", {{"name", "digits"}, {"digest", "9f3a"}, {"source_type", "code"}, {"source", "{}"}}}};
  ASSERT_EQ(Post("runs/log-inputs", json{{"run_id", run}, {"datasets", {input}}}).status, 200);
  EXPECT_EQ(found("datasets.name = 'digits'"), V{run});
  EXPECT_EQ(found("datasets.context IN ('training', 'eval') AND datasets.digest LIKE '9f%'"), V{run});
  EXPECT_TRUE(found("datasets.context = 'eval'").empty());
  ExpectError(
      Post("runs/search", json{{"experiment_ids", {experiment}}, {"filter", "datasets.colour = 'x'"}}), 400,
      "INVALID_PARAMETER_VALUE");

  // The other run goes elsewhere: "mine" then holds only the script's run.
  ASSERT_TRUE(store_->MoveRun(other, *store_->EnsureExperiment("theirs")).ok());
  api_->Confine(run);
  ASSERT_EQ(Post("experiments/update", json{{"experiment_id", experiment}, {"new_name", "mine-v2"}}).status,
            200);
  EXPECT_EQ(Post("experiments/set-experiment-tag",
                 json{{"experiment_id", experiment}, {"key", "k"}, {"value", "v"}})
                .status,
            200)
      << "renamed, still the script's";
  ExpectError(Get("runs/get?run_id=0123456789abcdef0123456789abcdef"), 404, "RESOURCE_DOES_NOT_EXIST");
  ExpectError(Get("runs/get?run_id=" + other), 403, "PERMISSION_DENIED");
}

// A confined script that set_experiment()s a colleague's experiment by name logs its run
// there, but cannot rename, delete or tag it: an experiment is the script's to change only
// when it created it or every run in it is the script's.
TEST_F(TrackingApiTest, AColleaguesExperimentFoundByNameStaysTheirs) {
  CreateRun("shared");  // a colleague's run
  std::string mine = CreateRun("scratch");
  api_->Confine(mine);
  std::string shared =
      Get("experiments/get-by-name?experiment_name=shared").body["experiment"]["experiment_id"];
  Answer started = Post("runs/create", json{{"experiment_id", shared}, {"run_name", "bs64"}});
  ASSERT_EQ(started.status, 200) << started.body.dump();
  EXPECT_EQ(started.body["run"]["info"]["run_id"], mine);
  EXPECT_EQ(started.body["run"]["info"]["experiment_id"], shared);
  ExpectError(Post("experiments/update", json{{"experiment_id", shared}, {"new_name", "gone"}}), 403,
              "PERMISSION_DENIED");
  ExpectError(Post("experiments/delete", json{{"experiment_id", shared}}), 403, "PERMISSION_DENIED");
  ExpectError(
      Post("experiments/set-experiment-tag", json{{"experiment_id", shared}, {"key", "k"}, {"value", "v"}}),
      403, "PERMISSION_DENIED");
  EXPECT_EQ(Get("experiments/get-by-name?experiment_name=shared").status, 200)
      << "still there under its name";
  // The experiment the run left is empty now: nothing in it is the script's either.
  std::string scratch =
      Get("experiments/get-by-name?experiment_name=scratch").body["experiment"]["experiment_id"];
  ExpectError(Post("experiments/update", json{{"experiment_id", scratch}, {"new_name", "x"}}), 403,
              "PERMISSION_DENIED");
}

}  // namespace
}  // namespace tb
