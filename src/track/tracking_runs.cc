#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <vector>

#include "base/spare_thread.h"
#include "base/strings.h"
#include "base/time.h"
#include "http/api_toolkit.h"
#include "track/tracking_call.h"

namespace tb {

using namespace tracking;  // NOLINT(google-build-using-namespace): this API's own helpers

ExperimentInfo TrackingApi::Call::ExperimentById(const std::string& id) {
  if (id == "0") {  // MLflow's Default experiment, made on first use
    ThrowIfError(api_.store_.EnsureExperiment(std::string(kDefaultExperiment)).status());
    if (std::optional<ExperimentInfo> e = ExperimentByName(std::string(kDefaultExperiment))) return *e;
  }
  std::optional<int64_t> n = ParseInt(id);
  Result<std::vector<ExperimentInfo>> all = api_.store_.ListExperiments();
  ThrowIfError(all.status());
  for (const ExperimentInfo& e : *all) {
    if (n && e.id == *n) return e;
  }
  throw ApiError{"RESOURCE_DOES_NOT_EXIST", "No Experiment with id=" + id + " exists"};
}

std::optional<ExperimentInfo> TrackingApi::Call::ExperimentByName(const std::string& name) {
  Result<std::vector<ExperimentInfo>> all = api_.store_.ListExperiments();
  ThrowIfError(all.status());
  for (const ExperimentInfo& e : *all) {
    if (e.name == name) return e;
  }
  return std::nullopt;
}

ApiResponse TrackingApi::Call::GetExperiment() {
  return JsonAnswer({{"experiment", ExperimentJson(ExperimentById(Required("experiment_id")))}});
}

ApiResponse TrackingApi::Call::GetExperimentByName() {
  std::string name = Required("experiment_name");
  // Every MLflow store has its Default experiment (mlflow.search_runs(experiment_names=
  // ["Default"]) looks it up by name).
  if (name == kDefaultExperiment) ThrowIfError(api_.store_.EnsureExperiment(name).status());
  std::optional<ExperimentInfo> e = ExperimentByName(name);
  if (!e) throw ApiError{"RESOURCE_DOES_NOT_EXIST", "Could not find experiment with name '" + name + "'"};
  return JsonAnswer({{"experiment", ExperimentJson(*e)}});
}

ApiResponse TrackingApi::Call::CreateExperiment() {
  std::string name = Required("name");
  if (name.empty()) throw InvalidParameter("Invalid experiment name: ''. The name must not be empty.");
  if (ExperimentByName(name)) {
    throw ApiError{"RESOURCE_ALREADY_EXISTS", "Experiment '" + name + "' already exists."};
  }
  KeyValues tags = ReadKeyValues(Body().value("tags", json()), "tag", kMaxTagValueLength);
  Result<int64_t> id = api_.store_.EnsureExperiment(name);
  ThrowIfError(id.status());
  if (!tags.empty()) {
    ThrowIfError(
        api_.store_.ChangeExperiment(*id, {.name = std::nullopt, .set_tags = tags, .delete_tags = {}}));
  }
  api_.AddToScope("", name);
  return JsonAnswer({{"experiment_id", ApiExperimentId({*id, name, 0, {}})}});
}

json TrackingApi::Call::RunInfoJson(const RunRecord& r) {
  Result<std::vector<ExperimentInfo>> all = api_.store_.ListExperiments();
  ThrowIfError(all.status());
  std::string experiment_id;
  bool deleted = IsDeleted(r);
  for (const ExperimentInfo& e : *all) {
    if (e.name != r.experiment) continue;
    experiment_id = ApiExperimentId(e);
    deleted |= IsDeleted(e);  // a deleted experiment's runs are deleted with it
  }
  std::string user;
  for (const auto& [k, v] : r.tags) {
    if (k == "mlflow.user") user = v;
  }
  json info = {{"run_id", r.id},
               {"run_uuid", r.id},
               {"run_name", r.name},
               {"experiment_id", experiment_id},
               {"user_id", user},
               {"status", r.status},
               {"start_time", r.start_ms},
               {"artifact_uri", MlflowArtifactUri(experiment_id, r.id)},
               {"lifecycle_stage", deleted ? "deleted" : "active"}};
  if (r.end_ms > 0) info["end_time"] = r.end_ms;
  return info;
}

json TrackingApi::Call::RunJson(const RunRecord& r) {
  auto kv_list = [](const KeyValues& kvs) {
    json list = json::array();
    for (const auto& [k, v] : kvs) {
      if (k != kDeletedTag && k != kRunNameTag && !IsRecordTag(k)) list.push_back({{"key", k}, {"value", v}});
    }
    return list;
  };
  // The run's name as MLflow's stores keep it beside run_name: the mlflow.runName tag, set
  // however the run was named (create_run(run_name=...), a rename) and current.
  json tags = kv_list(r.tags);
  tags.push_back({{"key", kRunNameTag}, {"value", r.name}});
  // MLflow's latest value of each metric: the highest step, then the newest timestamp.
  // Each series read a chunk at a time (one of millions of steps is never held whole), the
  // series shared with the spare thread.
  std::vector<std::pair<std::string, int64_t>> script = ScriptSeriesIds(r.id);
  std::vector<std::optional<Point>> latest(script.size());
  SpareThread::OfProcess().ForEachItem(script.size(), [&](size_t i, int) {
    std::optional<Point>& best = latest[i];
    ThrowIfError(ForEachSeriesPart(api_.store_, script[i].second, [&](std::span<const Point> part) {
      for (const Point& p : part) {
        if (!best || std::tie(p.step, p.time_ms) >= std::tie(best->step, best->time_ms)) best = p;
      }
    }));
  });
  json metrics = json::array();
  for (size_t i = 0; i < script.size(); ++i) {
    if (!latest[i]) continue;
    metrics.push_back({{"key", script[i].first},
                       {"value", ValueJson(latest[i]->value)},
                       {"timestamp", latest[i]->time_ms},
                       {"step", latest[i]->step}});
  }
  return {{"info", RunInfoJson(r)},
          {"data", {{"metrics", metrics}, {"params", kv_list(r.params)}, {"tags", tags}}},
          {"inputs", RunInputsOutputs(r, false)},
          {"outputs", RunInputsOutputs(r, true)}};
}

std::vector<std::pair<std::string, int64_t>> TrackingApi::Call::ScriptSeriesIds(const std::string& run_id,
                                                                                const std::string& only_key) {
  ThrowIfError(api_.FlushRun(run_id));
  Result<std::vector<SeriesInfo>> series = api_.store_.ListSeries(run_id);
  ThrowIfError(series.status());
  std::vector<std::pair<std::string, int64_t>> out;
  for (const SeriesInfo& s : *series) {
    std::string key = ScriptMetricKey(s.metric);
    if (key.empty() || !s.labels.empty() || (!only_key.empty() && key != only_key)) continue;
    out.emplace_back(std::move(key), s.id);
  }
  return out;
}

std::vector<std::pair<std::string, std::vector<Point>>> TrackingApi::Call::ScriptSeries(
    const std::string& run_id, const std::string& only_key) {
  std::vector<std::pair<std::string, std::vector<Point>>> out;
  for (auto& [key, id] : ScriptSeriesIds(run_id, only_key)) {
    Result<std::vector<Point>> points = ReadSeriesPoints(api_.store_, id);
    ThrowIfError(points.status());
    out.emplace_back(std::move(key), std::move(points.value()));
  }
  return out;
}

ApiResponse TrackingApi::Call::GetRun() {
  std::string run_id = RunIdField();
  json run = RunJson(Run(run_id));
  // A single run's page lists its host and GPU series too, under MLflow's system-metric
  // names (searches list the script's metrics only: reading every run's series would cost
  // a table of many runs its speed).
  for (json& m : SystemMetricsLatest(run_id)) run["data"]["metrics"].push_back(std::move(m));
  return JsonAnswer({{"run", std::move(run)}});
}

ApiResponse TrackingApi::Call::CreateRun() {
  const json& b = Body();
  std::string experiment_id = Text("experiment_id").value_or("0");
  ExperimentInfo experiment = ExperimentById(experiment_id);
  if (IsDeleted(experiment)) {
    throw InvalidParameter("The experiment " + experiment_id +
                           " must be in the 'active' state; restore it (experiments/restore) first");
  }
  RunRecord run;
  run.id = NewRunId();
  run.experiment = experiment.name;
  run.start_ms = Int(b, "start_time").value_or(WallMillis());
  run.tags = ReadKeyValues(b.value("tags", json()), "tag", kMaxTagValueLength);
  if (std::optional<std::string> user = Text("user_id"); user && !user->empty()) {
    run.tags.emplace_back("mlflow.user", *user);
  }
  run.name = Text("run_name").value_or("");
  bool nested = false;
  for (const auto& [k, v] : run.tags) {
    if (k == kRunNameTag && run.name.empty()) run.name = v;
    nested |= k == "mlflow.parentRunId";
  }
  // The script's first run is the one trainbench started for it (TrackingApi::Confine).
  if (!nested && api_.Adopt()) {
    const std::string& home = api_.home_run_;
    ThrowIfError(api_.MoveHomeRun(experiment));
    if (!run.tags.empty()) ThrowIfError(api_.store_.SetTags(home, run.tags));
    if (!run.name.empty()) ThrowIfError(api_.store_.RenameRun(home, run.name));
    return JsonAnswer({{"run", RunJson(Run(home))}});
  }
  if (run.name.empty()) run.name = run.id.substr(0, 8);
  ThrowIfError(api_.store_.CreateRun(run));
  api_.AddToScope(run.id, "");
  return JsonAnswer({{"run", RunJson(Run(run.id))}});
}

ApiResponse TrackingApi::Call::UpdateRun() {
  std::string run_id = RunIdField();
  Writable(run_id);
  std::optional<std::string> status = Text("status");
  std::optional<std::string> name = Text("run_name");
  std::optional<int64_t> end = Int(Body(), "end_time");
  static const char* const kStatuses[] = {"RUNNING", "SCHEDULED", "FINISHED", "FAILED", "KILLED"};
  if (status && std::find(std::begin(kStatuses), std::end(kStatuses), *status) == std::end(kStatuses)) {
    throw InvalidParameter("Invalid value '" + *status + "' for parameter 'status'");
  }
  std::shared_ptr<RunSlot> slot = Slot(run_id);
  if (name && !name->empty()) ThrowIfError(api_.store_.RenameRun(run_id, *name));
  // The status of a supervised run is what its process does, not what it says.
  bool terminal = status && *status != "RUNNING" && *status != "SCHEDULED";
  if (terminal && !slot->supervised) {
    ThrowIfError(slot->writer->Close());
    ThrowIfError(
        api_.store_.FinishRun(run_id, end.value_or(WallMillis()), *status, std::nullopt, std::nullopt, ""));
  }
  return JsonAnswer({{"run_info", RunInfoJson(Run(run_id))}});
}

ApiResponse TrackingApi::Call::LogMetric() {
  std::string run_id = RunIdField();
  Writable(run_id);
  json metric = Body();
  StoreMetrics(run_id, {ReadMetric(metric)});
  return JsonAnswer(json::object());
}

ApiResponse TrackingApi::Call::LogBatch() {
  const json& b = Body();
  std::string run_id = RunIdField();
  const json& metrics = b.contains("metrics") ? b["metrics"] : json::array();
  if (!metrics.is_null() && !metrics.is_array())
    throw InvalidParameter("Invalid value for parameter 'metrics': expected a list");
  size_t n_metrics = metrics.is_array() ? metrics.size() : 0;
  KeyValues params = ReadKeyValues(b.value("params", json()), "param", kMaxParamValueLength);
  KeyValues tags = ReadKeyValues(b.value("tags", json()), "tag", kMaxTagValueLength);
  if (n_metrics > kMaxMetricsPerBatch) {
    throw InvalidParameter("A batch logging request can contain at most " +
                           std::to_string(kMaxMetricsPerBatch) + " metrics. Got " +
                           std::to_string(n_metrics) +
                           " metrics. Please split up metrics across multiple requests and try again.");
  }
  if (params.size() > kMaxParamsTagsPerBatch || tags.size() > kMaxParamsTagsPerBatch) {
    throw InvalidParameter("A batch logging request can contain at most " +
                           std::to_string(kMaxParamsTagsPerBatch) + " params and " +
                           std::to_string(kMaxParamsTagsPerBatch) + " tags. Got " +
                           std::to_string(params.size()) + " params and " + std::to_string(tags.size()) +
                           " tags. Please split up params and tags across multiple requests and try again.");
  }
  if (n_metrics + params.size() + tags.size() > kMaxMetricsPerBatch) {
    throw InvalidParameter("A batch logging request can contain at most " +
                           std::to_string(kMaxMetricsPerBatch) +
                           " metrics, params and tags in total. Please split the batch and try again.");
  }
  for (size_t i = 0; i < params.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (params[i].first == params[j].first && params[i].second != params[j].second) {
        throw InvalidParameter("Duplicate parameter keys have been submitted: '" + params[i].first +
                               "' with different values.");
      }
    }
  }
  std::vector<MetricIn> parsed;
  parsed.reserve(n_metrics);
  if (metrics.is_array()) {
    for (const json& m : metrics) parsed.push_back(ReadMetric(m));
  }
  // trainbench's own field (MLflow's clients never send it): labels for this batch's
  // metrics, as the Python client's per-rank logging sends {"rank": "3"}.
  Labels labels;
  if (auto l = b.find("trainbench_labels"); l != b.end() && !l->is_null()) {
    if (!l->is_object())
      throw InvalidParameter("Invalid value for parameter 'trainbench_labels': expected an object");
    for (const auto& [key, value] : l->items()) {
      if (!value.is_string() || key.empty())
        throw InvalidParameter("trainbench_labels: each label needs a name and a string value");
      labels.Add(key, value.get<std::string>());
    }
  }
  Writable(run_id);
  // Everything is validated; params can still be refused (a changed value), so they go first.
  if (!params.empty()) ThrowIfError(api_.store_.LogParams(run_id, params));
  if (!tags.empty()) ThrowIfError(api_.store_.SetTags(run_id, tags));
  if (!parsed.empty()) StoreMetrics(run_id, parsed, labels);
  return JsonAnswer(json::object());
}

ApiResponse TrackingApi::Call::LogParameter() {
  std::string run_id = RunIdField();
  std::string key = Required("key");
  if (auto bad = BadName("param", key)) throw InvalidParameter(*bad);
  std::string value = Text("value").value_or("");
  if (value.size() > kMaxParamValueLength) {
    throw InvalidParameter("Param value of '" + key + "' is " + std::to_string(value.size()) +
                           " characters long; at most " + std::to_string(kMaxParamValueLength) +
                           " are allowed.");
  }
  Writable(run_id);
  ThrowIfError(api_.store_.LogParams(run_id, {{key, value}}));
  return JsonAnswer(json::object());
}

ApiResponse TrackingApi::Call::SetTag() {
  std::string run_id = RunIdField();
  std::string key = Required("key");
  if (auto bad = BadName("tag", key)) throw InvalidParameter(*bad);
  std::string value = Text("value").value_or("");
  if (value.size() > kMaxTagValueLength) {
    throw InvalidParameter("Tag value of '" + key + "' is " + std::to_string(value.size()) +
                           " characters long; at most " + std::to_string(kMaxTagValueLength) +
                           " are allowed.");
  }
  Writable(run_id);
  ThrowIfError(api_.store_.SetTags(run_id, {{key, value}}));
  if (key == kRunNameTag && !value.empty()) ThrowIfError(api_.store_.RenameRun(run_id, value));
  return JsonAnswer(json::object());
}

ApiResponse TrackingApi::Call::DeleteTag() {
  std::string run_id = RunIdField();
  std::string key = Required("key");
  Writable(run_id);
  ThrowIfError(api_.store_.DeleteTag(run_id, key));
  return JsonAnswer(json::object());
}

ApiResponse TrackingApi::Call::DeleteRun() {
  std::string run_id = RunIdField();
  Exists(run_id);
  ThrowIfError(api_.store_.SetTags(run_id, {{std::string(kDeletedTag), "true"}}));
  MarkDeleted(run_id, true);
  return JsonAnswer(json::object());
}

ApiResponse TrackingApi::Call::RestoreRun() {
  std::string run_id = RunIdField();
  if (IsDeleted(Run(run_id))) ThrowIfError(api_.store_.DeleteTag(run_id, std::string(kDeletedTag)));
  MarkDeleted(run_id, false);
  return JsonAnswer(json::object());
}

}  // namespace tb
