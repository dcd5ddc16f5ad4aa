// The call behind one request to the tracking API (tracking_api.h): its body and fields,
// validation, and the handlers the route table (tracking_routes.cc) dispatches to, one a
// route, each in the file of its resource. Private to track/. A handler answers or throws
// ApiError (http/api_toolkit.h), which the API turns into MLflow's error JSON.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/http_server.h"
#include "metrics/names.h"
#include "metrics/sample.h"
#include "store/run_tags.h"
#include "store/store.h"
#include "track/search_filter.h"
#include "track/tracking_api.h"

namespace tb {
namespace tracking {

using json = nlohmann::json;

inline constexpr std::string_view kMlflow = "/api/2.0/mlflow/";
inline constexpr std::string_view kArtifacts = "/api/2.0/mlflow-artifacts/artifacts";
inline constexpr std::string_view kTrainbench = "/api/2.0/trainbench/";
inline constexpr std::string_view kAjaxApi = "/ajax-api/";  // then 2.0/mlflow/... as under /api/
inline constexpr std::string_view kScriptPrefix = metric::kScriptPrefix;

// Python's json module, which MLflow's server parses requests with, accepts the bare
// tokens NaN, Infinity and -Infinity; nlohmann::json does not. Quotes them outside
// strings so that they arrive as the strings protobuf's JSON mapping also uses.
std::string QuoteNonFiniteTokens(std::string_view body);

// A metric value: a JSON number, or a string as protobuf's JSON mapping writes doubles.
std::optional<double> ValueOf(const json& v);

json ValueJson(double v);

// An int64 field: protobuf's JSON mapping writes them as strings; numbers are accepted too.
// Values that do not fit an int64 (2^63, 2^64 - 1) are refused, never wrapped.
std::optional<int64_t> IntOf(const json& v);

// MLflow's rule for metric, param and tag names: alphanumerics, underscores, dashes,
// periods, spaces and slashes, and a name that stays the same when read as a relative
// path (no empty, "." or ".." parts, no leading or trailing slash).
std::optional<std::string> BadName(std::string_view kind, std::string_view name);

// Whether something deleted or not is shown in MLflow's view type ACTIVE_ONLY (the
// default), DELETED_ONLY or ALL; throws on another view type.
bool InView(const std::string& view_type, bool deleted);
inline std::string ApiExperimentId(const ExperimentInfo& e) { return MlflowExperimentId(e); }

// A JSON record trainbench keeps in a run's tag (a logged model's, a dataset's) as read
// back: nullopt when it is not a JSON object; otherwise the object without the fields whose
// type is not the one trainbench writes (texts, integers, lists). A tag forged with
// another shape then hides only itself, never its run or the search it is in.
std::optional<json> StoredRecord(std::string_view text);

// The experiment's JSON as MLflow returns it.
json ExperimentJson(const ExperimentInfo& e);

// A run's artifact URI as an MLflow server that serves artifacts gives it: MLflow's clients
// resolve it against the tracking URI and upload, list and download through this API.
std::string MlflowArtifactUri(const std::string& experiment_id, const std::string& run_id);

Status MakeDirectories(const std::string& dir);

// What a search found, sorted by `order` (search_filter.h): the page from `start`, `count`
// long, under `field`, with the token of the next page when there is one.
json SortedPage(std::vector<std::pair<Searchable, json>>& found, const std::vector<OrderKey>& order,
                const std::vector<std::string>& numbers, size_t start, size_t count, const char* field);

}  // namespace tracking

class TrackingApi::Call {
 public:
  using json = nlohmann::json;

  Call(TrackingApi& api, const ApiRequest& request) : api_(api), request_(request) {}

  // Answers by the route table's row for the request's method and path; ENDPOINT_NOT_FOUND
  // (404) when none matches.
  ApiResponse Dispatch();

 private:
  friend struct TrackingRouteTable;
  // --- request reading ---
  const json& Body();

  // A field of the body (POST) or the query string (GET).
  std::optional<std::string> Text(const char* field);

  std::string Required(const char* field);

  std::optional<int64_t> Int(const json& object, const char* field);

  // run_id, or run_uuid as older clients send it.
  std::string RunIdField();

  RunRecord Run(const std::string& run_id);

  // Throws PERMISSION_DENIED when a confined API (TrackingApi::Confine) may not reach the
  // run, or change the experiment.
  void InScope(const std::string& run_id);
  void ExperimentInScope(const ExperimentInfo& e);

  // That the run exists: a run this process supervises does (and needs no read of a
  // store that may be away for a moment); another is looked up.
  void Exists(const std::string& run_id);
  // Exists, and not deleted: what logging to a run needs (INVALID_PARAMETER_VALUE, as MLflow
  // answers, for a deleted run).
  void Writable(const std::string& run_id);
  // A deleted run (runs/delete) refused for logging until restored.
  void MarkDeleted(const std::string& run_id, bool deleted);

  std::shared_ptr<RunSlot> Slot(const std::string& run_id);

  // --- validation shared by the single and batch calls ---
  struct MetricIn {
    std::string key;
    Point point;
    // MLflow 3: the logged model the point is also a metric of, and the dataset it was
    // measured on ("" none).
    std::string model_id, dataset_name, dataset_digest;
  };
  MetricIn ReadMetric(const json& m);

  static KeyValues ReadKeyValues(const json& list, const char* kind, size_t max_value);

  // Stores each point the run does not hold yet (RunSlot::points) and links those that name
  // a logged model to it.
  void StoreMetrics(const std::string& run_id, const std::vector<MetricIn>& metrics,
                    const Labels& labels = Labels());
  // The metrics among `metrics` that the run's slot has not stored yet, now counted as stored.
  std::vector<const MetricIn*> NewPoints(const std::string& run_id, RunSlot& slot,
                                         const std::vector<MetricIn>& metrics, const Labels& labels);
  // Adds points to the metrics of the logged models they name (each point once).
  void LinkModelMetrics(const std::string& run_id, const std::vector<MetricIn>& metrics);

  // --- experiments ---
  ExperimentInfo ExperimentById(const std::string& id);

  std::optional<ExperimentInfo> ExperimentByName(const std::string& name);

  ApiResponse GetExperiment();

  ApiResponse GetExperimentByName();

  ApiResponse CreateExperiment();

  // The lifecycle (tracking_experiments.cc).
  ApiResponse DeleteExperiment();
  ApiResponse RestoreExperiment();
  ApiResponse UpdateExperiment();
  ApiResponse SetExperimentTag();
  ApiResponse DeleteExperimentTag();
  ApiResponse ListExperimentsV1();

  // experiments/search and runs/search (tracking_search.cc): MLflow's filter grammar,
  // order_by, max_results and page_token.
  ApiResponse SearchExperiments();
  ApiResponse SearchRuns();
  ApiResponse DeleteRun();
  ApiResponse RestoreRun();
  // Where a page starts (page_token) and how long it is (max_results, at most `limit`).
  // (GET: query parameters; else the body), `fallback` long unless asked.
  std::pair<size_t, size_t> Page(size_t limit, size_t fallback = 1000);

  // --- runs ---
  json RunInfoJson(const RunRecord& r);

  json RunJson(const RunRecord& r);

  // The script metrics of a run (key and series id), with what its writer still holds
  // written out first.
  std::vector<std::pair<std::string, int64_t>> ScriptSeriesIds(const std::string& run_id,
                                                               const std::string& only_key = "");
  // The run's host and GPU series under MLflow's system-metric names (system/gpu_0_
  // utilization_percentage ...; tracking_system_metrics.cc): key, series, MLflow's unit per
  // the series'. `only_key` keeps that name's alone.
  struct SystemSeries {
    std::string key;
    int64_t id = 0;
    double scale = 1;
  };
  std::vector<SystemSeries> SystemSeriesIds(const std::string& run_id, const std::string& only_key = "");
  // Their latest values, as runs/get lists a run's metrics (step: the point's index).
  json SystemMetricsLatest(const std::string& run_id);
  // Their points, by key.
  std::vector<std::pair<std::string, std::vector<Point>>> ScriptSeries(const std::string& run_id,
                                                                       const std::string& only_key = "");

  ApiResponse GetRun();

  ApiResponse CreateRun();

  ApiResponse UpdateRun();

  ApiResponse LogMetric();

  ApiResponse LogBatch();

  ApiResponse LogParameter();

  ApiResponse SetTag();

  ApiResponse DeleteTag();

  ApiResponse GetMetricHistory();
  ApiResponse GetMetricHistoryBulkInterval();

  // --- what a run keeps beside its metrics (tracking_models.cc) ---
  // A logged model's record and the run holding it.
  std::pair<RunRecord, json> Model(const std::string& model_id);
  json ModelJson(const RunRecord& run, const std::string& model_id, const json& record);
  void PutModel(const std::string& run_id, const std::string& model_id, json record);
  ApiResponse CreateLoggedModel();
  ApiResponse GetLoggedModel(const std::string& model_id);
  ApiResponse FinalizeLoggedModel(const std::string& model_id);
  ApiResponse DeleteLoggedModel(const std::string& model_id);
  ApiResponse SetLoggedModelTags(const std::string& model_id);
  ApiResponse DeleteLoggedModelTag(const std::string& model_id, const std::string& key);
  ApiResponse LogLoggedModelParams(const std::string& model_id);
  // Model(), for a change: the run holding it must be writable.
  std::pair<RunRecord, json> ChangeableLoggedModel(const std::string& model_id);
  ApiResponse SearchLoggedModels();
  ApiResponse LogOutputs();
  ApiResponse LogInputs();
  ApiResponse LogModel();
  // --- the model registry: registered-models/* (tracking_registry.cc) and
  // model-versions/* (tracking_versions.cc), each under the API's registry lock ---
  ApiResponse CreateRegisteredModel();
  ApiResponse GetRegisteredModel();
  ApiResponse UpdateRegisteredModel();
  ApiResponse RenameRegisteredModel();
  ApiResponse DeleteRegisteredModel();
  ApiResponse SetRegisteredModelTag();
  ApiResponse DeleteRegisteredModelTag();
  ApiResponse GetRegisteredModelAlias();
  ApiResponse SetRegisteredModelAlias();
  ApiResponse DeleteRegisteredModelAlias();
  ApiResponse GetLatestVersions();
  ApiResponse CreateModelVersion();
  ApiResponse GetModelVersion();
  ApiResponse GetModelVersionDownloadUri();
  ApiResponse UpdateModelVersion();
  ApiResponse TransitionModelVersionStage();
  ApiResponse DeleteModelVersion();
  ApiResponse SetModelVersionTag();
  ApiResponse DeleteModelVersionTag();
  // The version of the registered model as stored now, as model-versions/get answers it.
  ApiResponse VersionAnswer(const std::string& name, const std::string& version);
  // The request's registered model name (`field`), not empty.
  std::string RegisteredName(const char* field = "name");
  // The model's record: RESOURCE_DOES_NOT_EXIST when there is none; for a change, also
  // PERMISSION_DENIED when a confined API's script did not create it.
  json ExistingModel(const std::string& name);
  json ChangeableModel(const std::string& name);
  ApiResponse SearchRegisteredModels();
  ApiResponse SearchModelVersions();
  // A registered model's record (tracking_registry.cc says its shape); nullopt: none.
  std::optional<json> RegisteredModel(const std::string& name);
  void PutRegisteredModel(json record);
  // A list field: the repeated query parameter of a GET, the array of a body.
  std::vector<std::string> Repeated(const char* field);

  // A run's "inputs" (datasets, models) or "outputs" (models) as MLflow's runs/get gives them.
  json RunInputsOutputs(const RunRecord& r, bool outputs);

  // --- trainbench's own calls ---
  ApiResponse LogEvents();

  // PUT and GET of <experiment id>/<run id>/artifacts/<path>, MLflow's artifact layout.
  ApiResponse Artifact(const std::string& where);
  // GET of the artifacts folder with ?path=: what one folder of a run holds.
  ApiResponse ListArtifacts();

  TrackingApi& api_;
  const ApiRequest& request_;
  json body_;
  bool parsed_ = false;
};

}  // namespace tb
