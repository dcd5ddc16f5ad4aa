// The tracking API's route table: one row an endpoint (method, path under /api/2.0/, the
// scope it needs, the handler), grouped by resource as the handlers' files are. docs/API.md's
// tracking table lists the same rows (TrackingRoutesTest holds the two together).
#include <mutex>

#include "base/strings.h"
#include "http/api_toolkit.h"
#include "track/tracking_call.h"

namespace tb {

namespace {
constexpr std::string_view kApiRoot = "/api/2.0/";
}  // namespace

struct TrackingRouteTable {
  using Call = TrackingApi::Call;
  using Handle = ApiResponse (*)(Call& c, const RouteCaptures& at);
  struct Row {
    Route route;
    Handle handle;
  };

  // A handler that needs nothing from the path.
  template <ApiResponse (Call::*H)()>
  static ApiResponse Plain(Call& c, const RouteCaptures&) {
    return (c.*H)();
  }
  // A model registry handler: the registered model's record is read, changed and written
  // under the API's registry lock.
  template <ApiResponse (Call::*H)()>
  static ApiResponse Registry(Call& c, const RouteCaptures&) {
    std::lock_guard lock(c.api_.registry_mu_);
    return (c.*H)();
  }
  template <ApiResponse (Call::*H)(const std::string&)>
  static ApiResponse First(Call& c, const RouteCaptures& at) {
    return (c.*H)(at[0]);
  }

  static const std::vector<Row>& Rows() {
    static const std::vector<Row> rows = {
        // experiments (tracking_experiments.cc, tracking_runs.cc, tracking_search.cc)
        {{"GET", "mlflow/experiments/get", "read"}, Plain<&Call::GetExperiment>},
        {{"GET", "mlflow/experiments/get-by-name", "read"}, Plain<&Call::GetExperimentByName>},
        {{"GET", "mlflow/experiments/list", "read"}, Plain<&Call::ListExperimentsV1>},
        {{"POST", "mlflow/experiments/search", "read"}, Plain<&Call::SearchExperiments>},
        {{"POST", "mlflow/experiments/create", "write"}, Plain<&Call::CreateExperiment>},
        {{"POST", "mlflow/experiments/delete", "write"}, Plain<&Call::DeleteExperiment>},
        {{"POST", "mlflow/experiments/restore", "write"}, Plain<&Call::RestoreExperiment>},
        {{"POST", "mlflow/experiments/update", "write"}, Plain<&Call::UpdateExperiment>},
        {{"POST", "mlflow/experiments/set-experiment-tag", "write"}, Plain<&Call::SetExperimentTag>},
        {{"POST", "mlflow/experiments/delete-experiment-tag", "write"}, Plain<&Call::DeleteExperimentTag>},
        // runs (tracking_runs.cc, tracking_search.cc)
        {{"GET", "mlflow/runs/get", "read"}, Plain<&Call::GetRun>},
        {{"POST", "mlflow/runs/search", "read"}, Plain<&Call::SearchRuns>},
        {{"POST", "mlflow/runs/create", "write"}, Plain<&Call::CreateRun>},
        {{"POST", "mlflow/runs/update", "write"}, Plain<&Call::UpdateRun>},
        {{"POST", "mlflow/runs/delete", "write"}, Plain<&Call::DeleteRun>},
        {{"POST", "mlflow/runs/restore", "write"}, Plain<&Call::RestoreRun>},
        {{"POST", "mlflow/runs/log-parameter", "write"}, Plain<&Call::LogParameter>},
        {{"POST", "mlflow/runs/set-tag", "write"}, Plain<&Call::SetTag>},
        {{"POST", "mlflow/runs/delete-tag", "write"}, Plain<&Call::DeleteTag>},
        {{"POST", "mlflow/runs/log-inputs", "write"}, Plain<&Call::LogInputs>},
        {{"POST", "mlflow/runs/outputs", "write"}, Plain<&Call::LogOutputs>},
        {{"POST", "mlflow/runs/log-model", "write"}, Plain<&Call::LogModel>},
        // metrics (tracking_points.cc, tracking_history.cc)
        {{"POST", "mlflow/runs/log-metric", "write"}, Plain<&Call::LogMetric>},
        {{"POST", "mlflow/runs/log-batch", "write"}, Plain<&Call::LogBatch>},
        {{"GET", "mlflow/metrics/get-history", "read"}, Plain<&Call::GetMetricHistory>},
        {{"GET", "mlflow/metrics/get-history-bulk-interval", "read"},
         Plain<&Call::GetMetricHistoryBulkInterval>},
        // artifacts and events (tracking_files.cc)
        {{"GET", "mlflow-artifacts/artifacts", "read"}, Plain<&Call::ListArtifacts>},
        {{"GET", "mlflow-artifacts/artifacts/{path}", "read", true}, First<&Call::Artifact>},
        {{"PUT", "mlflow-artifacts/artifacts/{path}", "write", true}, First<&Call::Artifact>},
        {{"POST", "trainbench/runs/log-events", "write"}, Plain<&Call::LogEvents>},
        // logged models (tracking_models.cc, tracking_model_search.cc)
        {{"POST", "mlflow/logged-models", "write"}, Plain<&Call::CreateLoggedModel>},
        {{"POST", "mlflow/logged-models/search", "read"}, Plain<&Call::SearchLoggedModels>},
        {{"GET", "mlflow/logged-models/{model_id}", "read"}, First<&Call::GetLoggedModel>},
        {{"PATCH", "mlflow/logged-models/{model_id}", "write"}, First<&Call::FinalizeLoggedModel>},
        {{"DELETE", "mlflow/logged-models/{model_id}", "write"}, First<&Call::DeleteLoggedModel>},
        {{"PATCH", "mlflow/logged-models/{model_id}/tags", "write"}, First<&Call::SetLoggedModelTags>},
        {{"DELETE", "mlflow/logged-models/{model_id}/tags/{key}", "write", true},
         [](Call& c, const RouteCaptures& at) { return c.DeleteLoggedModelTag(at[0], at[1]); }},
        {{"POST", "mlflow/logged-models/{model_id}/params", "write"}, First<&Call::LogLoggedModelParams>},
        // the model registry: registered models (tracking_registry.cc)
        {{"POST", "mlflow/registered-models/create", "write"}, Registry<&Call::CreateRegisteredModel>},
        {{"GET", "mlflow/registered-models/get", "read"}, Registry<&Call::GetRegisteredModel>},
        {{"GET", "mlflow/registered-models/search", "read"}, Registry<&Call::SearchRegisteredModels>},
        {{"GET", "mlflow/registered-models/get-latest-versions", "read"}, Registry<&Call::GetLatestVersions>},
        {{"POST", "mlflow/registered-models/get-latest-versions", "read"},
         Registry<&Call::GetLatestVersions>},
        {{"PATCH", "mlflow/registered-models/update", "write"}, Registry<&Call::UpdateRegisteredModel>},
        {{"POST", "mlflow/registered-models/rename", "write"}, Registry<&Call::RenameRegisteredModel>},
        {{"DELETE", "mlflow/registered-models/delete", "write"}, Registry<&Call::DeleteRegisteredModel>},
        {{"POST", "mlflow/registered-models/set-tag", "write"}, Registry<&Call::SetRegisteredModelTag>},
        {{"DELETE", "mlflow/registered-models/delete-tag", "write"},
         Registry<&Call::DeleteRegisteredModelTag>},
        {{"GET", "mlflow/registered-models/alias", "read"}, Registry<&Call::GetRegisteredModelAlias>},
        {{"POST", "mlflow/registered-models/alias", "write"}, Registry<&Call::SetRegisteredModelAlias>},
        {{"DELETE", "mlflow/registered-models/alias", "write"}, Registry<&Call::DeleteRegisteredModelAlias>},
        // the model registry: versions (tracking_versions.cc)
        {{"POST", "mlflow/model-versions/create", "write"}, Registry<&Call::CreateModelVersion>},
        {{"GET", "mlflow/model-versions/get", "read"}, Registry<&Call::GetModelVersion>},
        {{"GET", "mlflow/model-versions/get-download-uri", "read"},
         Registry<&Call::GetModelVersionDownloadUri>},
        {{"GET", "mlflow/model-versions/search", "read"}, Registry<&Call::SearchModelVersions>},
        {{"PATCH", "mlflow/model-versions/update", "write"}, Registry<&Call::UpdateModelVersion>},
        {{"POST", "mlflow/model-versions/transition-stage", "write"},
         Registry<&Call::TransitionModelVersionStage>},
        {{"DELETE", "mlflow/model-versions/delete", "write"}, Registry<&Call::DeleteModelVersion>},
        {{"POST", "mlflow/model-versions/set-tag", "write"}, Registry<&Call::SetModelVersionTag>},
        {{"DELETE", "mlflow/model-versions/delete-tag", "write"}, Registry<&Call::DeleteModelVersionTag>},
    };
    return rows;
  }
};

std::vector<Route> TrackingRoutes() {
  std::vector<Route> out;
  for (const TrackingRouteTable::Row& row : TrackingRouteTable::Rows()) out.push_back(row.route);
  return out;
}

ApiResponse TrackingApi::Call::Dispatch() {
  std::string_view path = request_.path;
  if (StartsWith(path, kApiRoot)) {
    path.remove_prefix(kApiRoot.size());
    RouteCaptures at;
    for (const TrackingRouteTable::Row& row : TrackingRouteTable::Rows()) {
      if (row.route.method == request_.method && MatchRoute(row.route, path, at))
        return row.handle(*this, at);
    }
  }
  throw ApiError{"ENDPOINT_NOT_FOUND", Concat({"No API endpoint ", request_.method, " ", request_.path})};
}

}  // namespace tb
