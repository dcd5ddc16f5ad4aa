#include "track/tracking_api.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "base/strings.h"
#include "base/time.h"

namespace tb {
namespace {

using json = nlohmann::json;

constexpr std::string_view kMlflow = "/api/2.0/mlflow/";
constexpr std::string_view kArtifacts = "/api/2.0/mlflow-artifacts/artifacts";
constexpr std::string_view kTrainbench = "/api/2.0/trainbench/";
constexpr std::string_view kScriptPrefix = "train.";

// An MLflow error: its code names the HTTP status.
struct ApiError {
  std::string code;
  std::string message;

  int HttpStatus() const {
    if (code == "RESOURCE_DOES_NOT_EXIST" || code == "ENDPOINT_NOT_FOUND") return 404;
    if (code == "INTERNAL_ERROR") return 500;
    return 400;
  }
};

ApiError Invalid(std::string message) { return {"INVALID_PARAMETER_VALUE", std::move(message)}; }

ApiError FromStatus(const Status& s) {
  switch (s.code()) {
    case Status::Code::kInvalidArgument:
      return Invalid(s.message());
    case Status::Code::kNotFound:
      return {"RESOURCE_DOES_NOT_EXIST", s.message()};
    default:
      return {"INTERNAL_ERROR", s.message()};
  }
}

ApiResponse Json(const json& body, int status = 200) {
  return {status, "application/json", body.dump(-1, ' ', false, json::error_handler_t::replace), nullptr, {}};
}

ApiResponse Error(const ApiError& e) {
  return Json({{"error_code", e.code}, {"message", e.message}}, e.HttpStatus());
}

// Python's json module, which MLflow's server parses requests with, accepts the bare
// tokens NaN, Infinity and -Infinity; nlohmann::json does not. Quotes them outside
// strings so that they arrive as the strings protobuf's JSON mapping also uses.
std::string QuoteNonFiniteTokens(std::string_view body) {
  if (body.find("NaN") == std::string_view::npos && body.find("Infinity") == std::string_view::npos) {
    return std::string(body);
  }
  std::string out;
  out.reserve(body.size() + 16);
  bool in_string = false;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < body.size()) {
        out += body[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    bool matched = false;
    for (std::string_view token : {"-Infinity", "Infinity", "NaN"}) {
      if (body.substr(i, token.size()) == token) {
        out += '"';
        out += token;
        out += '"';
        i += token.size() - 1;
        matched = true;
        break;
      }
    }
    if (!matched) out += c;
  }
  return out;
}

// A metric value: a JSON number, or a string as protobuf's JSON mapping writes doubles.
std::optional<double> ValueOf(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s == "Infinity") return std::numeric_limits<double>::infinity();
  if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  return ParseDouble(s);
}

json ValueJson(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

// An int64 field: protobuf's JSON mapping writes them as strings; numbers are accepted too.
// Values that do not fit an int64 (2^63, 2^64 - 1) are refused, never wrapped.
std::optional<int64_t> IntOf(const json& v) {
  if (v.is_number_unsigned()) {
    auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d == std::floor(d) && std::abs(d) < 9.2e18) return static_cast<int64_t>(d);
    return std::nullopt;
  }
  if (v.is_string()) return ParseInt(v.get_ref<const std::string&>());
  return std::nullopt;
}

// MLflow's rule for metric, param and tag names: alphanumerics, underscores, dashes,
// periods, spaces and slashes, and a name that stays the same when read as a relative
// path (no empty, "." or ".." parts, no leading or trailing slash).
std::optional<std::string> BadName(std::string_view kind, std::string_view name) {
  for (unsigned char c : name) {
    bool ok = std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == ' ' || c == '/' || c >= 0x80;
    if (!ok) {
      constexpr std::string_view kAllowed =
          "'. Names may only contain alphanumerics, underscores (_), dashes (-), periods (.), spaces ( ), "
          "and "
          "slashes (/).";
      return Concat({"Invalid ", kind, " name: '", name, kAllowed});
    }
  }
  bool bad_path = name.empty() || name.front() == '/';
  for (std::string_view part : Split(name, '/')) bad_path |= part.empty() || part == "." || part == "..";
  if (bad_path) {
    constexpr std::string_view kPathRule =
        "'. Names may be treated as files in certain cases, and must not resolve to other names when treated "
        "as such.";
    return Concat({"Invalid ", kind, " name: '", name, kPathRule});
  }
  if (name.size() > TrackingApi::kMaxKeyLength) {
    return Concat({"Invalid ", kind, " name: '", name.substr(0, 40), "...' exceeds the maximum length of ",
                   std::to_string(TrackingApi::kMaxKeyLength), " characters."});
  }
  return std::nullopt;
}

// The experiment's JSON as MLflow returns it.
json ExperimentJson(const ExperimentInfo& e) {
  return {{"experiment_id", std::to_string(e.id)},
          {"name", e.name},
          {"artifact_location", ""},
          {"lifecycle_stage", "active"},
          {"creation_time", e.created_ms},
          {"last_update_time", e.created_ms},
          {"tags", json::array()}};
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

Status MakeDirectories(const std::string& dir) {
  size_t pos = 1;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    std::string part = dir.substr(0, pos);
    if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::FromErrno("cannot create directory " + part, errno);
    }
  }
  return Status::Ok();
}

}  // namespace

std::string ScriptMetricSeries(std::string_view key) { return Concat({kScriptPrefix, key}); }

std::string ScriptMetricKey(std::string_view series) {
  return StartsWith(series, kScriptPrefix) ? std::string(series.substr(kScriptPrefix.size())) : "";
}

// One request: its parsed body and the helpers its handler needs. Handlers throw
// ApiError; Handle() turns it into MLflow's error response.
class TrackingApi::Call {
 public:
  Call(TrackingApi& api, const ApiRequest& request) : api_(api), request_(request) {}

  ApiResponse Dispatch() {
    std::string_view path = request_.path;
    if (StartsWith(path, kArtifacts)) return Artifact(path.substr(kArtifacts.size()));
    bool get = request_.method == "GET";
    bool post = request_.method == "POST";
    std::string_view name = path.substr(StartsWith(path, kMlflow) ? kMlflow.size() : 0);
    if (get && name == "experiments/get") return GetExperiment();
    if (get && name == "experiments/get-by-name") return GetExperimentByName();
    if (post && name == "experiments/create") return CreateExperiment();
    if (get && name == "runs/get") return GetRun();
    if (post && name == "runs/create") return CreateRun();
    if (post && name == "runs/update") return UpdateRun();
    if (post && name == "runs/log-metric") return LogMetric();
    if (post && name == "runs/log-batch") return LogBatch();
    if (post && name == "runs/log-parameter") return LogParameter();
    if (post && name == "runs/set-tag") return SetTag();
    if (post && name == "runs/delete-tag") return DeleteTag();
    if (get && name == "metrics/get-history") return GetMetricHistory();
    if (post && path == Concat({kTrainbench, "runs/log-events"})) return LogEvents();
    throw ApiError{"ENDPOINT_NOT_FOUND", Concat({"No API endpoint ", request_.method, " ", path})};
  }

 private:
  // --- request reading ---
  const json& Body() {
    if (!parsed_) {
      if (request_.body.size() > kMaxRequestBytes) {
        throw Invalid("The request is " + std::to_string(request_.body.size()) + " bytes; at most " +
                      std::to_string(kMaxRequestBytes) + " are accepted. Split it into several requests.");
      }
      if (JsonNestingDepth(request_.body) > kMaxJsonDepth) {
        throw ApiError{"MALFORMED_REQUEST", "The request body nests deeper than " +
                                                std::to_string(kMaxJsonDepth) +
                                                " levels; MLflow's requests nest a few"};
      }
      body_ = json::parse(QuoteNonFiniteTokens(request_.body), nullptr, false);
      if (body_.is_discarded() || !body_.is_object()) {
        if (!request_.body.empty() || body_.is_discarded()) {
          throw ApiError{"MALFORMED_REQUEST", "The request body is not a JSON object"};
        }
        body_ = json::object();
      }
      parsed_ = true;
    }
    return body_;
  }

  // A field of the body (POST) or the query string (GET).
  std::optional<std::string> Text(const char* field) {
    if (request_.method == "GET") {
      auto it = request_.query.find(field);
      if (it == request_.query.end()) return std::nullopt;
      return it->second;
    }
    const json& b = Body();
    auto it = b.find(field);
    if (it == b.end() || it->is_null()) return std::nullopt;
    if (!it->is_string())
      throw Invalid(Concat({"Invalid value for parameter '", field, "': expected a string"}));
    return it->get<std::string>();
  }

  std::string Required(const char* field) {
    std::optional<std::string> v = Text(field);
    if (!v) throw Invalid(Concat({"Missing value for required parameter '", field, "'."}));
    return *v;
  }

  std::optional<int64_t> Int(const json& object, const char* field) {
    auto it = object.find(field);
    if (it == object.end() || it->is_null()) return std::nullopt;
    std::optional<int64_t> v = IntOf(*it);
    if (!v) throw Invalid(Concat({"Invalid value for parameter '", field, "': expected an integer"}));
    return v;
  }

  // run_id, or run_uuid as older clients send it.
  std::string RunIdField() {
    std::optional<std::string> id = Text("run_id");
    if (!id || id->empty()) id = Text("run_uuid");
    if (!id || id->empty()) throw Invalid("Missing value for required parameter 'run_id'.");
    return *id;
  }

  RunRecord Run(const std::string& run_id) {
    Result<RunRecord> run = api_.store_.FindRun(run_id);
    if (!run.ok() || run->id != run_id) {
      if (!run.ok() && run.status().code() != Status::Code::kNotFound &&
          run.status().code() != Status::Code::kInvalidArgument) {
        throw FromStatus(run.status());
      }
      throw ApiError{"RESOURCE_DOES_NOT_EXIST", "Run with id=" + run_id + " not found"};
    }
    return std::move(run.value());
  }

  // That the run exists: a run this process supervises does (and needs no read of a
  // store that may be away for a moment); another is looked up.
  void Exists(const std::string& run_id) {
    {
      std::lock_guard lock(api_.mu_);
      auto it = api_.slots_.find(run_id);
      if (it != api_.slots_.end() && it->second->supervised) return;
    }
    Run(run_id);
  }

  std::shared_ptr<RunSlot> Slot(const std::string& run_id) {
    Status missing;
    std::shared_ptr<RunSlot> slot = api_.Slot(run_id, missing);
    if (slot == nullptr) throw FromStatus(missing);
    return slot;
  }

  static void Check(const Status& s) {
    if (!s.ok()) throw FromStatus(s);
  }

  // --- validation shared by the single and batch calls ---
  struct MetricIn {
    std::string key;
    Point point;
  };
  MetricIn ReadMetric(const json& m) {
    if (!m.is_object()) throw Invalid("A metric must be a JSON object");
    auto key = m.find("key");
    if (key == m.end() || !key->is_string()) throw Invalid("Missing value for required parameter 'key'.");
    MetricIn out;
    out.key = key->get<std::string>();
    if (auto bad = BadName("metric", out.key)) throw Invalid(*bad);
    auto value = m.find("value");
    if (value == m.end() || value->is_null()) {
      throw Invalid("Missing value for required parameter 'value' of metric '" + out.key + "'.");
    }
    std::optional<double> v = ValueOf(*value);
    if (!v)
      throw Invalid("Got invalid value " + value->dump() + " for metric '" + out.key +
                    "'. Expected a number.");
    std::optional<int64_t> timestamp = Int(m, "timestamp");
    if (!timestamp)
      throw Invalid("Missing value for required parameter 'timestamp' of metric '" + out.key + "'.");
    out.point.value = *v;
    out.point.time_ms = *timestamp;
    out.point.step = Int(m, "step").value_or(0);
    return out;
  }

  static KeyValues ReadKeyValues(const json& list, const char* kind, size_t max_value) {
    KeyValues out;
    if (list.is_null()) return out;
    if (!list.is_array())
      throw Invalid(Concat({"Invalid value for parameter '", kind, "s': expected a list"}));
    for (const json& kv : list) {
      if (!kv.is_object()) throw Invalid(Concat({"A ", kind, " must be a JSON object"}));
      auto k = kv.find("key");
      auto v = kv.find("value");
      if (k == kv.end() || !k->is_string())
        throw Invalid(Concat({"Missing value for required parameter 'key' of a ", kind, "."}));
      std::string key = k->get<std::string>();
      if (auto bad = BadName(kind, key)) throw Invalid(*bad);
      std::string value;
      if (v != kv.end() && !v->is_null()) value = v->is_string() ? v->get<std::string>() : v->dump();
      if (value.size() > max_value) {
        throw Invalid(Concat({kind, " value of '", key, "' is ", std::to_string(value.size()),
                              " characters long; at most ", std::to_string(max_value), " are allowed."}));
      }
      out.emplace_back(std::move(key), std::move(value));
    }
    return out;
  }

  void StoreMetrics(const std::string& run_id, const std::vector<MetricIn>& metrics) {
    std::shared_ptr<RunSlot> slot = Slot(run_id);
    for (const MetricIn& m : metrics) slot->writer->Append(ScriptMetricSeries(m.key), "", m.point);
    // A run trainbench supervises is flushed by its sampler every second; the others now.
    if (!slot->supervised) Check(slot->writer->Flush());
  }

  // --- experiments ---
  ExperimentInfo ExperimentById(const std::string& id) {
    std::optional<int64_t> n = ParseInt(id);
    Result<std::vector<ExperimentInfo>> all = api_.store_.ListExperiments();
    Check(all.status());
    for (const ExperimentInfo& e : *all) {
      if (n && e.id == *n) return e;
    }
    throw ApiError{"RESOURCE_DOES_NOT_EXIST", "No Experiment with id=" + id + " exists"};
  }

  std::optional<ExperimentInfo> ExperimentByName(const std::string& name) {
    Result<std::vector<ExperimentInfo>> all = api_.store_.ListExperiments();
    Check(all.status());
    for (const ExperimentInfo& e : *all) {
      if (e.name == name) return e;
    }
    return std::nullopt;
  }

  ApiResponse GetExperiment() {
    return Json({{"experiment", ExperimentJson(ExperimentById(Required("experiment_id")))}});
  }

  ApiResponse GetExperimentByName() {
    std::string name = Required("experiment_name");
    std::optional<ExperimentInfo> e = ExperimentByName(name);
    if (!e) throw ApiError{"RESOURCE_DOES_NOT_EXIST", "Could not find experiment with name '" + name + "'"};
    return Json({{"experiment", ExperimentJson(*e)}});
  }

  ApiResponse CreateExperiment() {
    std::string name = Required("name");
    if (name.empty()) throw Invalid("Invalid experiment name: ''. The name must not be empty.");
    if (ExperimentByName(name)) {
      throw ApiError{"RESOURCE_ALREADY_EXISTS", "Experiment '" + name + "' already exists."};
    }
    Result<int64_t> id = api_.store_.EnsureExperiment(name);
    Check(id.status());
    return Json({{"experiment_id", std::to_string(*id)}});
  }

  // --- runs ---
  json RunInfoJson(const RunRecord& r) {
    Result<std::vector<ExperimentInfo>> all = api_.store_.ListExperiments();
    Check(all.status());
    std::string experiment_id;
    for (const ExperimentInfo& e : *all) {
      if (e.name == r.experiment) experiment_id = std::to_string(e.id);
    }
    std::string user;
    for (const auto& [k, v] : r.tags) {
      if (k == "mlflow.user") user = v;
    }
    Result<std::string> dir = api_.store_.ArtifactDirectory(r.id);
    json info = {{"run_id", r.id},
                 {"run_uuid", r.id},
                 {"run_name", r.name},
                 {"experiment_id", experiment_id},
                 {"user_id", user},
                 {"status", r.status},
                 {"start_time", r.start_ms},
                 {"artifact_uri", dir.ok() ? "file://" + *dir : ""},
                 {"lifecycle_stage", "active"}};
    if (r.end_ms > 0) info["end_time"] = r.end_ms;
    return info;
  }

  json RunJson(const RunRecord& r) {
    auto kv_list = [](const KeyValues& kvs) {
      json list = json::array();
      for (const auto& [k, v] : kvs) list.push_back({{"key", k}, {"value", v}});
      return list;
    };
    json metrics = json::array();
    for (const auto& [key, points] : ScriptSeries(r.id)) {
      if (points.empty()) continue;
      // MLflow's latest value: the highest step, then the newest timestamp.
      const Point* latest = &points.front();
      for (const Point& p : points) {
        if (std::tie(p.step, p.time_ms) >= std::tie(latest->step, latest->time_ms)) latest = &p;
      }
      metrics.push_back({{"key", key},
                         {"value", ValueJson(latest->value)},
                         {"timestamp", latest->time_ms},
                         {"step", latest->step}});
    }
    return {{"info", RunInfoJson(r)},
            {"data", {{"metrics", metrics}, {"params", kv_list(r.params)}, {"tags", kv_list(r.tags)}}},
            {"inputs", json::object()}};
  }

  // The script metrics of a run, by key, with what its writer still holds written out first.
  std::vector<std::pair<std::string, std::vector<Point>>> ScriptSeries(const std::string& run_id,
                                                                       const std::string& only_key = "") {
    Check(Slot(run_id)->writer->Flush());
    Result<std::vector<SeriesInfo>> series = api_.store_.ListSeries(run_id);
    Check(series.status());
    std::vector<std::pair<std::string, std::vector<Point>>> out;
    for (const SeriesInfo& s : *series) {
      std::string key = ScriptMetricKey(s.metric);
      if (key.empty() || !s.labels.empty() || (!only_key.empty() && key != only_key)) continue;
      Result<std::vector<Point>> points = ReadSeriesPoints(api_.store_, s.id);
      Check(points.status());
      out.emplace_back(std::move(key), std::move(points.value()));
    }
    return out;
  }

  ApiResponse GetRun() { return Json({{"run", RunJson(Run(RunIdField()))}}); }

  ApiResponse CreateRun() {
    const json& b = Body();
    std::string experiment_id = Text("experiment_id").value_or("0");
    ExperimentInfo experiment = ExperimentById(experiment_id);
    RunRecord run;
    run.id = NewRunId();
    run.experiment = experiment.name;
    run.start_ms = Int(b, "start_time").value_or(WallMillis());
    run.tags = ReadKeyValues(b.value("tags", json()), "tag", kMaxTagValueLength);
    if (std::optional<std::string> user = Text("user_id"); user && !user->empty()) {
      run.tags.emplace_back("mlflow.user", *user);
    }
    run.name = Text("run_name").value_or("");
    for (const auto& [k, v] : run.tags) {
      if (k == "mlflow.runName" && run.name.empty()) run.name = v;
    }
    if (run.name.empty()) run.name = run.id.substr(0, 8);
    Check(api_.store_.CreateRun(run));
    return Json({{"run", RunJson(Run(run.id))}});
  }

  ApiResponse UpdateRun() {
    std::string run_id = RunIdField();
    RunRecord run = Run(run_id);
    std::optional<std::string> status = Text("status");
    std::optional<std::string> name = Text("run_name");
    std::optional<int64_t> end = Int(Body(), "end_time");
    static const char* const kStatuses[] = {"RUNNING", "SCHEDULED", "FINISHED", "FAILED", "KILLED"};
    if (status && std::find(std::begin(kStatuses), std::end(kStatuses), *status) == std::end(kStatuses)) {
      throw Invalid("Invalid value '" + *status + "' for parameter 'status'");
    }
    std::shared_ptr<RunSlot> slot = Slot(run_id);
    if (name && !name->empty()) Check(api_.store_.RenameRun(run_id, *name));
    // The status of a supervised run is what its process does, not what it says.
    bool terminal = status && *status != "RUNNING" && *status != "SCHEDULED";
    if (terminal && !slot->supervised) {
      Check(slot->writer->Close());
      Check(
          api_.store_.FinishRun(run_id, end.value_or(WallMillis()), *status, std::nullopt, std::nullopt, ""));
    }
    return Json({{"run_info", RunInfoJson(Run(run_id))}});
  }

  ApiResponse LogMetric() {
    std::string run_id = RunIdField();
    Exists(run_id);
    json metric = Body();
    StoreMetrics(run_id, {ReadMetric(metric)});
    return Json(json::object());
  }

  ApiResponse LogBatch() {
    const json& b = Body();
    std::string run_id = RunIdField();
    const json& metrics = b.contains("metrics") ? b["metrics"] : json::array();
    if (!metrics.is_null() && !metrics.is_array())
      throw Invalid("Invalid value for parameter 'metrics': expected a list");
    size_t n_metrics = metrics.is_array() ? metrics.size() : 0;
    KeyValues params = ReadKeyValues(b.value("params", json()), "param", kMaxParamValueLength);
    KeyValues tags = ReadKeyValues(b.value("tags", json()), "tag", kMaxTagValueLength);
    if (n_metrics > kMaxMetricsPerBatch) {
      throw Invalid("A batch logging request can contain at most " + std::to_string(kMaxMetricsPerBatch) +
                    " metrics. Got " + std::to_string(n_metrics) +
                    " metrics. Please split up metrics across multiple requests and try again.");
    }
    if (params.size() > kMaxParamsTagsPerBatch || tags.size() > kMaxParamsTagsPerBatch) {
      throw Invalid("A batch logging request can contain at most " + std::to_string(kMaxParamsTagsPerBatch) +
                    " params and " + std::to_string(kMaxParamsTagsPerBatch) + " tags. Got " +
                    std::to_string(params.size()) + " params and " + std::to_string(tags.size()) +
                    " tags. Please split up params and tags across multiple requests and try again.");
    }
    if (n_metrics + params.size() + tags.size() > kMaxMetricsPerBatch) {
      throw Invalid("A batch logging request can contain at most " + std::to_string(kMaxMetricsPerBatch) +
                    " metrics, params and tags in total. Please split the batch and try again.");
    }
    for (size_t i = 0; i < params.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (params[i].first == params[j].first && params[i].second != params[j].second) {
          throw Invalid("Duplicate parameter keys have been submitted: '" + params[i].first +
                        "' with different values.");
        }
      }
    }
    std::vector<MetricIn> parsed;
    parsed.reserve(n_metrics);
    if (metrics.is_array()) {
      for (const json& m : metrics) parsed.push_back(ReadMetric(m));
    }
    Exists(run_id);
    // Everything is validated; params can still be refused (a changed value), so they go first.
    if (!params.empty()) Check(api_.store_.LogParams(run_id, params));
    if (!tags.empty()) Check(api_.store_.SetTags(run_id, tags));
    if (!parsed.empty()) StoreMetrics(run_id, parsed);
    return Json(json::object());
  }

  ApiResponse LogParameter() {
    std::string run_id = RunIdField();
    std::string key = Required("key");
    if (auto bad = BadName("param", key)) throw Invalid(*bad);
    std::string value = Text("value").value_or("");
    if (value.size() > kMaxParamValueLength) {
      throw Invalid("Param value of '" + key + "' is " + std::to_string(value.size()) +
                    " characters long; at most " + std::to_string(kMaxParamValueLength) + " are allowed.");
    }
    Exists(run_id);
    Check(api_.store_.LogParams(run_id, {{key, value}}));
    return Json(json::object());
  }

  ApiResponse SetTag() {
    std::string run_id = RunIdField();
    std::string key = Required("key");
    if (auto bad = BadName("tag", key)) throw Invalid(*bad);
    std::string value = Text("value").value_or("");
    if (value.size() > kMaxTagValueLength) {
      throw Invalid("Tag value of '" + key + "' is " + std::to_string(value.size()) +
                    " characters long; at most " + std::to_string(kMaxTagValueLength) + " are allowed.");
    }
    Exists(run_id);
    Check(api_.store_.SetTags(run_id, {{key, value}}));
    if (key == "mlflow.runName" && !value.empty()) Check(api_.store_.RenameRun(run_id, value));
    return Json(json::object());
  }

  ApiResponse DeleteTag() {
    std::string run_id = RunIdField();
    std::string key = Required("key");
    Exists(run_id);
    Check(api_.store_.DeleteTag(run_id, key));
    return Json(json::object());
  }

  ApiResponse GetMetricHistory() {
    std::string run_id = RunIdField();
    std::string key = Required("metric_key");
    Exists(run_id);
    int64_t max_results = 25000;
    if (std::optional<std::string> m = Text("max_results")) {
      std::optional<int64_t> n = ParseInt(*m);
      if (!n || *n <= 0)
        throw Invalid("Invalid value '" + *m + "' for parameter 'max_results': a positive integer");
      max_results = *n;
    }
    int64_t offset = 0;
    if (std::optional<std::string> token = Text("page_token"); token && !token->empty()) {
      std::optional<int64_t> n = ParseInt(*token);
      if (!n || *n < 0) throw Invalid("Invalid page token '" + *token + "'");
      offset = *n;
    }
    json metrics = json::array();
    int64_t total = 0, end = 0;
    for (const auto& [k, points] : ScriptSeries(run_id, key)) {
      total = static_cast<int64_t>(points.size());
      // offset + max_results without overflow: both may be anything up to 2^63 - 1.
      end = offset >= total ? total : offset + std::min(max_results, total - offset);
      for (int64_t i = offset; i < end; ++i) {
        const Point& p = points[static_cast<size_t>(i)];
        metrics.push_back(
            {{"key", k}, {"value", ValueJson(p.value)}, {"timestamp", p.time_ms}, {"step", p.step}});
      }
    }
    json out = {{"metrics", metrics}};
    if (end < total) out["next_page_token"] = std::to_string(end);
    return Json(out);
  }

  // --- trainbench's own calls ---
  ApiResponse LogEvents() {
    const json& b = Body();
    std::string run_id = RunIdField();
    const json& events = b.contains("events") ? b["events"] : json();
    if (!events.is_array()) throw Invalid("Missing value for required parameter 'events' (a list).");
    if (events.size() > kMaxMetricsPerBatch) {
      throw Invalid("A request can contain at most " + std::to_string(kMaxMetricsPerBatch) + " events.");
    }
    std::vector<EventRecord> records;
    for (const json& e : events) {
      if (!e.is_object()) throw Invalid("An event must be a JSON object");
      std::optional<int64_t> t = Int(e, "timestamp");
      auto kind = e.find("kind");
      auto label = e.find("label");
      if (!t || kind == e.end() || !kind->is_string() || kind->get_ref<const std::string&>().empty()) {
        throw Invalid("An event needs 'timestamp' (ms) and 'kind' (a non-empty string).");
      }
      records.push_back({run_id, *t, kind->get<std::string>(),
                         label != e.end() && label->is_string() ? label->get<std::string>() : ""});
    }
    Exists(run_id);
    for (const EventRecord& r : records) Check(api_.store_.AddEvent(r));
    return Json(json::object());
  }

  // PUT and GET of <experiment id>/<run id>/artifacts/<path>, MLflow's artifact layout.
  ApiResponse Artifact(std::string_view rest) {
    if (!StartsWith(rest, "/")) throw ApiError{"ENDPOINT_NOT_FOUND", "No API endpoint " + request_.path};
    std::vector<std::string_view> parts = Split(rest.substr(1), '/');
    if (parts.size() < 4 || parts[2] != "artifacts") {
      throw Invalid("Artifact paths look like <experiment id>/<run id>/artifacts/<file>");
    }
    std::string run_id(parts[1]);
    std::string relative(rest.substr(1 + parts[0].size() + 1 + parts[1].size() + 1 + parts[2].size() + 1));
    if (auto bad = BadName("artifact", relative)) throw Invalid(*bad);
    Exists(run_id);
    if (request_.method == "GET") {
      Result<ArtifactRecord> a = api_.store_.GetArtifact(run_id, relative);
      if (!a.ok()) throw FromStatus(a.status());
      ApiResponse out{200, "application/octet-stream", a->content, nullptr, {}};
      if (!a->path.empty()) {
        std::ifstream in(a->path, std::ios::binary);
        if (!in) throw ApiError{"RESOURCE_DOES_NOT_EXIST", "The file of artifact " + relative + " is gone"};
        out.body.assign(std::istreambuf_iterator<char>(in), {});
      }
      return out;
    }
    if (request_.method != "PUT") throw ApiError{"ENDPOINT_NOT_FOUND", "Artifacts are uploaded with PUT"};
    if (IsRunRecordArtifact(relative)) {
      throw Invalid("'" + relative +
                    "' is where trainbench keeps the run's own record; upload the file under "
                    "another name or in a folder (mlflow.log_artifact(path, artifact_path=\"outputs\"))");
    }
    Result<std::string> dir = api_.store_.ArtifactDirectory(run_id);
    Check(dir.status());
    std::string file = *dir + "/" + relative;
    Check(MakeDirectories(DirName(file)));
    std::string partial = file + ".partial";
    {
      std::ofstream out(partial, std::ios::binary | std::ios::trunc);
      out.write(request_.body.data(), static_cast<std::streamsize>(request_.body.size()));
      out.flush();
      if (!out) {
        std::remove(partial.c_str());  // a full disk leaves nothing half-written behind
        throw ApiError{"INTERNAL_ERROR", "cannot write " + partial + " (is the disk full?)"};
      }
    }
    if (std::rename(partial.c_str(), file.c_str()) != 0) {
      std::remove(partial.c_str());
      throw ApiError{"INTERNAL_ERROR", "cannot write " + file};
    }
    Check(api_.store_.PutArtifact({run_id, relative, static_cast<int64_t>(request_.body.size()), "", file}));
    return Json(json::object());
  }

  TrackingApi& api_;
  const ApiRequest& request_;
  json body_;
  bool parsed_ = false;
};

HttpServerOptions TrackingApi::ServerOptions(HttpServerOptions options) {
  // Beyond kMaxRequestBytes the API answers with MLflow's error; far beyond it, the server
  // refuses without reading.
  options.max_body_bytes = 4 * kMaxRequestBytes;
  options.large_bodies.emplace_back(std::string(kArtifacts), kMaxArtifactBytes);
  return options;
}

TrackingApi::TrackingApi(Store& store) : store_(store) {}

TrackingApi::~TrackingApi() {
  for (auto& [id, slot] : slots_) {
    if (slot->owned) slot->owned->Close();
  }
}

void TrackingApi::AttachRun(const std::string& run_id, SeriesWriter* writer) {
  std::lock_guard lock(mu_);
  auto slot = std::make_shared<RunSlot>();
  slot->writer = writer;
  slot->supervised = true;
  slots_[run_id] = std::move(slot);
}

void TrackingApi::DetachRun(const std::string& run_id) {
  std::lock_guard lock(mu_);
  slots_.erase(run_id);
}

std::shared_ptr<TrackingApi::RunSlot> TrackingApi::Slot(const std::string& run_id, Status& missing) {
  std::lock_guard lock(mu_);
  auto it = slots_.find(run_id);
  if (it != slots_.end()) return it->second;
  Result<RunRecord> run = store_.FindRun(run_id);
  if (!run.ok() || run->id != run_id) {
    missing = Status::NotFound("Run with id=" + run_id + " not found");
    return nullptr;
  }
  auto slot = std::make_shared<RunSlot>();
  slot->owned = std::make_unique<SeriesWriter>(store_, run_id);
  slot->writer = slot->owned.get();
  slots_[run_id] = slot;
  return slot;
}

ApiHandler TrackingApi::Handler() {
  return [this](const ApiRequest& request) -> std::optional<ApiResponse> {
    if (!Handles(request.path)) return std::nullopt;
    return Handle(request);
  };
}

bool TrackingApi::Handles(std::string_view path) {
  return StartsWith(path, kMlflow) || StartsWith(path, kArtifacts) || StartsWith(path, kTrainbench);
}

ApiResponse TrackingApi::Handle(const ApiRequest& request) {
  try {
    Call call(*this, request);
    return call.Dispatch();
  } catch (const ApiError& e) {
    return Error(e);
  } catch (const json::exception& e) {
    return Error(Invalid(std::string("Invalid request: ") + e.what()));
  }
}

}  // namespace tb
