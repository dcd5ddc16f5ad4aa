// The experiment lifecycle of MLflow's REST API: experiments/delete and restore (a deleted
// experiment's runs are deleted with it, as in MLflow's stores), update (a new name),
// set-experiment-tag and delete-experiment-tag, and MLflow 1.x's experiments/list, which
// older clients (the npm `mlflow` package) still call.
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "http/api_toolkit.h"
#include "track/tracking_call.h"

namespace tb {

using namespace tracking;  // NOLINT(google-build-using-namespace): this API's own helpers

namespace {

void Change(Store& store, const ExperimentInfo& e, const ExperimentChange& change) {
  ThrowIfError(store.ChangeExperiment(e.id, change));
}

}  // namespace

ApiResponse TrackingApi::Call::DeleteExperiment() {
  ExperimentInfo e = ExperimentById(Required("experiment_id"));
  ExperimentInScope(e);
  if (e.name == kDefaultExperiment) {
    throw InvalidParameter(
        "Cannot delete the default experiment '0': runs started without an experiment go there");
  }
  Change(api_.store_, e,
         {.name = std::nullopt, .set_tags = {{std::string(kDeletedTag), "true"}}, .delete_tags = {}});
  return JsonAnswer(json::object());
}

ApiResponse TrackingApi::Call::RestoreExperiment() {
  ExperimentInfo e = ExperimentById(Required("experiment_id"));
  ExperimentInScope(e);
  if (IsDeleted(e))
    Change(api_.store_, e, {.name = std::nullopt, .set_tags = {}, .delete_tags = {std::string(kDeletedTag)}});
  return JsonAnswer(json::object());
}

ApiResponse TrackingApi::Call::UpdateExperiment() {
  ExperimentInfo e = ExperimentById(Required("experiment_id"));
  ExperimentInScope(e);
  std::optional<std::string> name = Text("new_name");
  if (!name || *name == e.name) return JsonAnswer(json::object());
  if (name->empty()) throw InvalidParameter("Invalid experiment name: ''. The name must not be empty.");
  if (IsDeleted(e)) throw InvalidParameter("Cannot rename a non-active experiment; restore it first");
  if (e.name == kDefaultExperiment) {
    throw InvalidParameter("Cannot rename the default experiment '0': MLflow's clients find it by that name");
  }
  if (ExperimentByName(*name)) {
    throw ApiError{"RESOURCE_ALREADY_EXISTS", "Experiment '" + *name + "' already exists."};
  }
  Change(api_.store_, e, {.name = name, .set_tags = {}, .delete_tags = {}});
  api_.AddToScope("", *name);  // the script's experiment stays its own under its new name
  return JsonAnswer(json::object());
}

ApiResponse TrackingApi::Call::SetExperimentTag() {
  ExperimentInfo e = ExperimentById(Required("experiment_id"));
  ExperimentInScope(e);
  std::string key = Required("key");
  if (auto bad = BadName("tag", key)) throw InvalidParameter(*bad);
  if (key == kDeletedTag) throw InvalidParameter("'" + key + "' is trainbench's own; use experiments/delete");
  std::string value = Text("value").value_or("");
  if (value.size() > kMaxTagValueLength) {
    throw InvalidParameter("tag value of '" + key + "' is " + std::to_string(value.size()) +
                           " characters long; at most " + std::to_string(kMaxTagValueLength) +
                           " are allowed.");
  }
  Change(api_.store_, e, {.name = std::nullopt, .set_tags = {{key, value}}, .delete_tags = {}});
  return JsonAnswer(json::object());
}

ApiResponse TrackingApi::Call::DeleteExperimentTag() {
  ExperimentInfo e = ExperimentById(Required("experiment_id"));
  ExperimentInScope(e);
  std::string key = Required("key");
  bool has = false;
  for (const auto& [k, v] : e.tags) has |= k == key && k != kDeletedTag;
  if (!has) {
    throw ApiError{"RESOURCE_DOES_NOT_EXIST",
                   "No tag with name: " + key + " in experiment with id " + ApiExperimentId(e)};
  }
  Change(api_.store_, e, {.name = std::nullopt, .set_tags = {}, .delete_tags = {key}});
  return JsonAnswer(json::object());
}

ApiResponse TrackingApi::Call::ListExperimentsV1() {
  std::string view = Text("view_type").value_or("ACTIVE_ONLY");
  ThrowIfError(api_.store_.EnsureExperiment(std::string(kDefaultExperiment)).status());
  Result<std::vector<ExperimentInfo>> all = api_.store_.ListExperiments();
  ThrowIfError(all.status());
  json out = json::array();
  for (const ExperimentInfo& e : *all) {
    if (InView(view, IsDeleted(e))) out.push_back(ExperimentJson(e));
  }
  return JsonAnswer({{"experiments", std::move(out)}});
}

}  // namespace tb
