// The tracking API: the part of MLflow's REST API (/api/2.0/mlflow/...) that MLflow's
// Python client uses for a run, plus artifact upload and trainbench's events, on top of
// the Store. Scripts running under `trainbench run` reach it through MLFLOW_TRACKING_URI;
// `trainbench serve` mounts the same API for runs on other machines.
//
// MLflow's documented behaviour is the reference: request and response shapes, limits
// (1000 metrics, 100 params or tags per batch, 1 MB), error codes and HTTP statuses
// (INVALID_PARAMETER_VALUE 400, RESOURCE_DOES_NOT_EXIST 404, ...). A request is applied
// whole or not at all.
//
// A metric key K the script logs is stored as the series "train.K" (no labels), so that
// scripts' metrics sit apart from the listeners' in the metric namespace.
//
// Transport-free: Handle() takes a parsed request, so the API is tested without sockets
// and mounted on an HttpServer (http/http_server.h) with Handler().
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "http/http_server.h"
#include "http/route_table.h"
#include "store/series_writer.h"
#include "store/store.h"

namespace tb {

// Series name of a metric key a script logs, and back ("" when `metric` is not one).
std::string ScriptMetricSeries(std::string_view key);
std::string ScriptMetricKey(std::string_view series);

// The routes of the tracking API, from the table it dispatches by (tracking_routes.cc):
// patterns under /api/2.0/ ("mlflow/runs/get", "mlflow-artifacts/artifacts/{path}"), as
// docs/API.md's tracking table lists them (a test holds the two together). Adding an
// endpoint is a row of that table and its handler.
std::vector<Route> TrackingRoutes();

class TrackingApi {
 public:
  static constexpr size_t kMaxMetricsPerBatch = 1000;
  static constexpr size_t kMaxParamsTagsPerBatch = 100;
  static constexpr size_t kMaxRequestBytes = 1000000;
  static constexpr int kMaxJsonDepth = 32;  // MLflow's requests nest 3 levels
  static constexpr size_t kMaxKeyLength = 250;
  static constexpr size_t kMaxParamValueLength = 6000;
  static constexpr size_t kMaxTagValueLength = 8000;
  static constexpr size_t kMaxPointsRemembered = 1000000;

  explicit TrackingApi(Store& store);
  ~TrackingApi();  // writes out what runs logged
  TrackingApi(const TrackingApi&) = delete;
  TrackingApi& operator=(const TrackingApi&) = delete;

  // Routes the metrics of a run that trainbench supervises into its writer (which the
  // supervisor flushes and closes); the script may not change its status.
  void AttachRun(const std::string& run_id, SeriesWriter* writer);
  // Stops routing to the writer given by AttachRun (call before closing it).
  void DetachRun(const std::string& run_id);
  // Confines the API to what one supervised run's script may touch (`trainbench run`'s
  // port): the run, the runs created through this API, and, for changes (rename, delete,
  // tags), the experiments created through this API and those holding only the script's
  // runs (a colleague's experiment the script found by name stays theirs). Other runs are
  // refused with PERMISSION_DENIED (403) and left out of searches; experiments stay
  // readable by id and name (so that mlflow.set_experiment finds one), as their runs do not.
  //
  // The script's first top-level run is that run: trainbench gives the script no
  // MLFLOW_RUN_ID (a script logging to a server of its own would look it up there), so
  // MLflow's start_run() creates a run, in the experiment its own rules chose
  // (set_experiment, MLFLOW_EXPERIMENT_NAME, which trainbench sets to the run's unless the
  // user did). That runs/create answers with the supervised run, moved into that experiment
  // (an event says from where), with the tags and name the script gave; later ones, and
  // nested runs (mlflow.parentRunId), are runs of their own.
  void Confine(const std::string& run_id);

  static constexpr size_t kMaxArtifactBytes = size_t{1} << 30;  // checkpoints and models are large
  // The server's body limits for this API: JSON requests within kMaxRequestBytes' order,
  // artifact uploads up to kMaxArtifactBytes. Keeps options' host, port and token.
  static HttpServerOptions ServerOptions(HttpServerOptions options = {});

  // True for paths this API answers: /api/2.0/mlflow/, /api/2.0/mlflow-artifacts/,
  // /api/2.0/trainbench/, and the first two under /ajax-api/ as MLflow's server has them.
  static bool Handles(std::string_view path);
  ApiResponse Handle(const ApiRequest& request);
  // Handle() for the paths this API answers, for HttpServer.
  ApiHandler Handler();

 private:
  struct RunSlot {
    SeriesWriter* writer = nullptr;  // where metrics go
    std::unique_ptr<SeriesWriter> owned;
    bool supervised = false;
    bool deleted = false;  // runs/delete of a supervised run: refused logging until restored
    // The script points stored through this API, by PointKey: MLflow's stores keep a point
    // (key, labels, time, step, value) once however often it is sent (MLflow 3's log_model
    // re-sends the run's metrics to link them to the model). Filled from the store the first
    // time a run this process did not start logs; a run's first kMaxPointsRemembered only
    // (16 MB), past which a repeat is stored again.
    std::mutex points_mu;
    std::unordered_set<uint64_t> points;
    bool points_loaded = false;
  };
  class Call;
  friend struct TrackingRouteTable;

  // The run's slot, creating it (and a writer of its own) for a run the store knows.
  // Null with `missing` set when there is no such run.
  std::shared_ptr<RunSlot> Slot(const std::string& run_id, Status& missing);

  // Writes out what the run's writer here holds, when it has one (a read never makes one:
  // a search over thousands of finished runs would keep a writer for each).
  Status FlushRun(const std::string& run_id);

  // Whether a confined API lets requests reach the run or change the experiment.
  bool RunInScope(const std::string& run_id);
  bool ExperimentInScope(const std::string& name);
  void AddToScope(const std::string& run_id, const std::string& experiment);
  // Whether a confined API may change the registered model (its script created it).
  bool RegisteredModelInScope(const std::string& name);
  void AddRegisteredModelToScope(const std::string& name);

  // Whether this runs/create is the script's first, to be answered with the confined run
  // (Confine); true once.
  bool Adopt();
  // Moves the confined run into `experiment` (the one the script's runs/create named).
  Status MoveHomeRun(const ExperimentInfo& experiment);

  // Whether a request with this id (x-trainbench-request header: the client's retry of a
  // batch it may have sent already) or, for MLflow's clients, this exact body to the same
  // call was answered already (Remember: the last 4,096). MLflow's stores keep one copy of
  // a metric point logged twice (key, value, time and step equal), so answering a repeat
  // without storing it again is what MLflow does.
  bool Seen(const std::string& key);
  void Remember(const std::string& key);

  Store& store_;
  std::mutex mu_;  // guards slots_, the scope and the requests seen; writers are thread-safe
  std::unordered_map<std::string, std::shared_ptr<RunSlot>> slots_;
  bool confined_ = false;
  std::set<std::string> scope_runs_, scope_experiments_, scope_models_;
  std::mutex registry_mu_;  // a registered model's record is read, changed and written under it
  std::string home_run_;    // the confined run
  bool adopted_ = false;    // the script's first runs/create was answered with it
  std::deque<size_t> seen_order_;
  std::unordered_set<size_t> seen_;
  friend class Call;
};

}  // namespace tb
