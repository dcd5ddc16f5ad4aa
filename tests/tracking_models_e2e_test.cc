// A script under `trainbench run` saving its model and naming its data as MLflow 3's
// log_model and log_input do (the requests of MLflow's RestStore, in its order; the client
// itself cannot be installed here): the model's files and record, and the dataset, stay
// with the run, and `trainbench show` lists them; registered, the model loads by its alias.
#include <string>

#include "store/run_tags.h"
#include "tests/helpers/cli_fixture.h"

namespace tb {
namespace {

const std::string kPython = "/usr/bin/python3";

TEST_F(CliTest, AModelAndDatasetLoggedAsMlflow3DoesStayWithTheRun) {
  std::ofstream(dir_ / "save_model.py")
      << "import sys\nsys.path.insert(0, '" << TRAINBENCH_SOURCE_DIR << "/tests/helpers')\n"
      << R"(
import json, os, urllib.request
import mlflow_rest as mlflow
call = mlflow.ok
root = mlflow.uri()
auth = mlflow.headers()
info = mlflow.start_run()
run_id, experiment_id = info["run_id"], info["experiment_id"]
call("POST", "runs/log-inputs", {"run_id": run_id, "datasets": [{"tags": [{"key": "mlflow.data.context", "value": "training"}],
     "dataset": {"name": "digits", "digest": "9f3a", "source_type": "code", "source": "{}"}}]})
model = call("POST", "logged-models", {"experiment_id": experiment_id, "name": "digits-mlp", "source_run_id": run_id,
             "model_type": "pytorch", "params": [], "tags": []})["model"]["info"]
model = call("GET", "logged-models/" + model["model_id"])["model"]["info"]
# list_artifacts(run_id, "digits-mlp") and load_model("runs:/<run>/digits-mlp") in MLflow 3:
# the experiment's models of that name, of which the run's.
found = call("POST", "logged-models/search", {"experiment_ids": [experiment_id],
             "filter": "name = 'digits-mlp'"})["models"]
assert [m["info"]["model_id"] for m in found if m["info"]["source_run_id"] == run_id] == [model["model_id"]], found
files = root + "/api/2.0/mlflow-artifacts/artifacts/" + model["artifact_uri"][len("mlflow-artifacts:/"):]
for name, data in [("MLmodel", b"flavors: {}\n"), ("data/model.pth", b"\x00weights")]:
    urllib.request.urlopen(urllib.request.Request(files + "/" + name, data=data, method="PUT", headers=auth)).read()
call("PATCH", "logged-models/" + model["model_id"], {"model_id": model["model_id"], "status": "LOGGED_MODEL_READY"})
call("POST", "runs/outputs", {"run_id": run_id, "models": [{"model_id": model["model_id"], "step": 0}]})
listing = urllib.request.Request(root + "/api/2.0/mlflow-artifacts/artifacts?path=" +
                                 model["artifact_uri"][len("mlflow-artifacts:/"):] + "/data", headers=auth)
print("listed", [f["path"] for f in json.loads(urllib.request.urlopen(listing).read())["files"]])
# mlflow.register_model("runs:/<run>/digits-mlp", "digits"), then load_model("models:/digits@prod"):
# the version by its alias, where its files are, and their listing.
call("POST", "registered-models/create", {"name": "digits"})
version = call("POST", "model-versions/create", {"name": "digits", "source": "models:/" + model["model_id"],
               "run_id": run_id, "model_id": model["model_id"]})["model_version"]
call("POST", "registered-models/alias", {"name": "digits", "alias": "prod", "version": version["version"]})
by_alias = call("GET", "registered-models/alias", query={"name": "digits", "alias": "prod"})["model_version"]
uri = call("GET", "model-versions/get-download-uri", query={"name": "digits", "version": by_alias["version"]})["artifact_uri"]
files_there = urllib.request.Request(root + "/api/2.0/mlflow-artifacts/artifacts?path=" + uri[len("mlflow-artifacts:/"):],
                                     headers=auth)
print("registered", version["version"], version["status"],
      sorted(f["path"] for f in json.loads(urllib.request.urlopen(files_there).read())["files"]))
print("model", model["model_id"])
)";
  Shell r = Trainbench("run -l top --python " + kPython + " save_model.py");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("listed ['model.pth']"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("registered 1 READY ['MLmodel', 'data']"), std::string::npos) << r.out;
  std::string model_id = r.out.substr(r.out.find("model m-") + 6, 42);
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(store->GetArtifact(run.id, "models/" + model_id + "/data/model.pth")->size, 8);
  EXPECT_EQ(store->GetArtifact(run.id, "models/" + model_id + "/MLmodel")->size, 12);
  EXPECT_NE(TagValue(run, kModelTagPrefix + model_id).find("LOGGED_MODEL_READY"), std::string::npos);
  Shell show = Trainbench("show " + run.id);
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("models\n  digits-mlp  " + model_id + "  LOGGED_MODEL_READY"), std::string::npos)
      << show.out;
  EXPECT_NE(show.out.find("datasets\n  digits  digest 9f3a  code  (training)"), std::string::npos)
      << show.out;
  EXPECT_EQ(show.out.find("trainbench.model."), std::string::npos) << show.out;
}

}  // namespace
}  // namespace tb
