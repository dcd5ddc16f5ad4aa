// A script under `trainbench run` saving its model and naming its data as MLflow 3's
// log_model and log_input do (the requests of MLflow's RestStore, in its order; the client
// itself cannot be installed here): the model's files and record, and the dataset, stay
// with the run, and `trainbench show` lists them.
#include <string>

#include "store/run_tags.h"
#include "tests/helpers/cli_fixture.h"

namespace tb {
namespace {

const std::string kPython = "/usr/bin/python3";

TEST_F(CliTest, AModelAndDatasetLoggedAsMlflow3DoesStayWithTheRun) {
  std::ofstream(dir_ / "save_model.py") << R"(
import json, os, urllib.request, urllib.parse
root = os.environ["MLFLOW_TRACKING_URI"]
auth = {"Authorization": "Bearer " + os.environ["MLFLOW_TRACKING_TOKEN"], "Content-Type": "application/json"}
def call(method, endpoint, body=None, query=None):
    url = root + "/api/2.0/mlflow/" + endpoint + ("?" + urllib.parse.urlencode(query) if query else "")
    data = json.dumps(body).encode() if body is not None else None
    with urllib.request.urlopen(urllib.request.Request(url, data=data, method=method, headers=auth)) as r:
        return json.loads(r.read())
run_id = os.environ["MLFLOW_RUN_ID"]
experiment_id = os.environ["MLFLOW_EXPERIMENT_ID"]
call("POST", "runs/log-inputs", {"run_id": run_id, "datasets": [{"tags": [{"key": "mlflow.data.context", "value": "training"}],
     "dataset": {"name": "digits", "digest": "9f3a", "source_type": "code", "source": "{}"}}]})
model = call("POST", "logged-models", {"experiment_id": experiment_id, "name": "digits-mlp", "source_run_id": run_id,
             "model_type": "pytorch", "params": [], "tags": []})["model"]["info"]
model = call("GET", "logged-models/" + model["model_id"])["model"]["info"]
files = root + "/api/2.0/mlflow-artifacts/artifacts/" + model["artifact_uri"][len("mlflow-artifacts:/"):]
for name, data in [("MLmodel", b"flavors: {}\n"), ("data/model.pth", b"\x00weights")]:
    urllib.request.urlopen(urllib.request.Request(files + "/" + name, data=data, method="PUT", headers=auth)).read()
call("PATCH", "logged-models/" + model["model_id"], {"model_id": model["model_id"], "status": "LOGGED_MODEL_READY"})
call("POST", "runs/outputs", {"run_id": run_id, "models": [{"model_id": model["model_id"], "step": 0}]})
print("model", model["model_id"])
)";
  Shell r = Trainbench("run -l top --python " + kPython + " save_model.py");
  ASSERT_EQ(r.code, 0) << r.err;
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
