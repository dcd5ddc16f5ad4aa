#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"
#include "http/api_toolkit.h"
#include "track/tracking_call.h"

namespace tb {

using namespace tracking;  // NOLINT(google-build-using-namespace): this API's own helpers

namespace tracking {

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
    bool ok =
        std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == ' ' || c == '/' || c == ':' || c >= 0x80;
    if (!ok) {
      constexpr std::string_view kAllowed =
          "'. Names may only contain alphanumerics, underscores (_), dashes (-), periods (.), spaces ( ), "
          "colons (:) and slashes (/).";
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
  json tags = json::array();
  for (const auto& [k, v] : e.tags) {
    if (k != kDeletedTag) tags.push_back({{"key", k}, {"value", v}});
  }
  return {{"experiment_id", ApiExperimentId(e)},
          {"name", e.name},
          {"artifact_location", "mlflow-artifacts:/" + ApiExperimentId(e)},
          {"lifecycle_stage", IsDeleted(e) ? "deleted" : "active"},
          {"creation_time", e.created_ms},
          {"last_update_time", e.created_ms},
          {"tags", std::move(tags)}};
}

bool InView(const std::string& view_type, bool deleted) {
  if (view_type != "ACTIVE_ONLY" && view_type != "DELETED_ONLY" && view_type != "ALL") {
    throw InvalidParameter("Invalid view type '" + view_type + "' (ACTIVE_ONLY, DELETED_ONLY or ALL)");
  }
  return view_type == "ALL" || deleted == (view_type == "DELETED_ONLY");
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

}  // namespace tracking

std::string ScriptMetricSeries(std::string_view key) { return Concat({kScriptPrefix, key}); }

std::string ScriptMetricKey(std::string_view series) {
  return StartsWith(series, kScriptPrefix) ? std::string(series.substr(kScriptPrefix.size())) : "";
}

const json& TrackingApi::Call::Body() {
  if (!parsed_) {
    if (request_.body.size() > kMaxRequestBytes) {
      throw InvalidParameter("The request is " + std::to_string(request_.body.size()) + " bytes; at most " +
                             std::to_string(kMaxRequestBytes) +
                             " are accepted. Split it into several requests.");
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

std::optional<std::string> TrackingApi::Call::Text(const char* field) {
  if (request_.method == "GET") return QueryParam(request_, field);
  const json& b = Body();
  auto it = b.find(field);
  if (it == b.end() || it->is_null()) return std::nullopt;
  if (!it->is_string())
    throw InvalidParameter(Concat({"Invalid value for parameter '", field, "': expected a string"}));
  return it->get<std::string>();
}

std::string TrackingApi::Call::Required(const char* field) {
  std::optional<std::string> v = Text(field);
  if (!v) throw InvalidParameter(Concat({"Missing value for required parameter '", field, "'."}));
  return *v;
}

std::optional<int64_t> TrackingApi::Call::Int(const json& object, const char* field) {
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::nullopt;
  std::optional<int64_t> v = IntOf(*it);
  if (!v) throw InvalidParameter(Concat({"Invalid value for parameter '", field, "': expected an integer"}));
  return v;
}

std::string TrackingApi::Call::RunIdField() {
  std::optional<std::string> id = Text("run_id");
  if (!id || id->empty()) id = Text("run_uuid");
  if (!id || id->empty()) throw InvalidParameter("Missing value for required parameter 'run_id'.");
  return *id;
}

void TrackingApi::Call::InScope(const std::string& run_id) {
  if (!api_.RunInScope(run_id)) {
    // A run the store does not hold is not there, as MLflow says, rather than someone else's.
    Result<RunRecord> run = api_.store_.FindRun(run_id);
    if (!run.ok() || run->id != run_id)
      throw ApiError{"RESOURCE_DOES_NOT_EXIST", "Run with id=" + run_id + " not found"};
    throw ApiError{
        "PERMISSION_DENIED",
        "Run " + run_id +
            " is not this script's: trainbench run's tracking port serves the run it supervises and "
            "the runs the script creates; read other runs with trainbench serve"};
  }
}

void TrackingApi::Call::ExperimentInScope(const ExperimentInfo& e) {
  if (!api_.ExperimentInScope(e.name)) {
    throw ApiError{
        "PERMISSION_DENIED",
        "Experiment '" + e.name +
            "' is not this script's to change: trainbench run's tracking port changes the run's own "
            "experiment and those the script creates"};
  }
}

RunRecord TrackingApi::Call::Run(const std::string& run_id) {
  InScope(run_id);
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

void TrackingApi::Call::Exists(const std::string& run_id) {
  InScope(run_id);
  {
    std::lock_guard lock(api_.mu_);
    auto it = api_.slots_.find(run_id);
    if (it != api_.slots_.end() && it->second->supervised) return;
  }
  Run(run_id);
}

void TrackingApi::Call::Writable(const std::string& run_id) {
  InScope(run_id);
  {
    std::lock_guard lock(api_.mu_);
    auto it = api_.slots_.find(run_id);
    if (it != api_.slots_.end() && it->second->supervised && !it->second->deleted) return;
  }
  if (IsDeleted(Run(run_id)))
    throw InvalidParameter("The run " + run_id + " must be in the 'active' state. Current state is deleted.");
}

void TrackingApi::Call::MarkDeleted(const std::string& run_id, bool deleted) {
  std::lock_guard lock(api_.mu_);
  if (auto it = api_.slots_.find(run_id); it != api_.slots_.end()) it->second->deleted = deleted;
}

std::shared_ptr<TrackingApi::RunSlot> TrackingApi::Call::Slot(const std::string& run_id) {
  InScope(run_id);
  Status missing;
  std::shared_ptr<RunSlot> slot = api_.Slot(run_id, missing);
  if (slot == nullptr) throw FromStatus(missing);
  return slot;
}

TrackingApi::Call::MetricIn TrackingApi::Call::ReadMetric(const json& m) {
  if (!m.is_object()) throw InvalidParameter("A metric must be a JSON object");
  auto key = m.find("key");
  if (key == m.end() || !key->is_string())
    throw InvalidParameter("Missing value for required parameter 'key'.");
  MetricIn out;
  out.key = key->get<std::string>();
  if (auto bad = BadName("metric", out.key)) throw InvalidParameter(*bad);
  auto value = m.find("value");
  if (value == m.end() || value->is_null()) {
    throw InvalidParameter("Missing value for required parameter 'value' of metric '" + out.key + "'.");
  }
  std::optional<double> v = ValueOf(*value);
  if (!v)
    throw InvalidParameter("Got invalid value " + value->dump() + " for metric '" + out.key +
                           "'. Expected a number.");
  std::optional<int64_t> timestamp = Int(m, "timestamp");
  if (!timestamp)
    throw InvalidParameter("Missing value for required parameter 'timestamp' of metric '" + out.key + "'.");
  out.point.value = *v;
  out.point.time_ms = *timestamp;
  out.point.step = Int(m, "step").value_or(0);
  for (auto [field, into] :
       {std::pair{"model_id", &out.model_id}, std::pair{"dataset_name", &out.dataset_name},
        std::pair{"dataset_digest", &out.dataset_digest}}) {
    if (auto f = m.find(field); f != m.end() && f->is_string()) *into = f->get<std::string>();
  }
  return out;
}

KeyValues TrackingApi::Call::ReadKeyValues(const json& list, const char* kind, size_t max_value) {
  KeyValues out;
  if (list.is_null()) return out;
  if (!list.is_array())
    throw InvalidParameter(Concat({"Invalid value for parameter '", kind, "s': expected a list"}));
  for (const json& kv : list) {
    if (!kv.is_object()) throw InvalidParameter(Concat({"A ", kind, " must be a JSON object"}));
    auto k = kv.find("key");
    auto v = kv.find("value");
    if (k == kv.end() || !k->is_string())
      throw InvalidParameter(Concat({"Missing value for required parameter 'key' of a ", kind, "."}));
    std::string key = k->get<std::string>();
    if (auto bad = BadName(kind, key)) throw InvalidParameter(*bad);
    std::string value;
    if (v != kv.end() && !v->is_null()) value = v->is_string() ? v->get<std::string>() : v->dump();
    if (value.size() > max_value) {
      throw InvalidParameter(
          Concat({kind, " value of '", key, "' is ", std::to_string(value.size()),
                  " characters long; at most ", std::to_string(max_value), " are allowed."}));
    }
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

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
    if (slot->owned) WarnIfFailed(slot->owned->Close(), "write out the metrics of run " + id);
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

Status TrackingApi::FlushRun(const std::string& run_id) {
  std::shared_ptr<RunSlot> slot;
  {
    std::lock_guard lock(mu_);
    auto it = slots_.find(run_id);
    if (it == slots_.end()) return Status::Ok();
    slot = it->second;
  }
  return slot->writer->Flush();
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
  if (StartsWith(path, kAjaxApi)) return Handles(Concat({"/api/", path.substr(kAjaxApi.size())}));
  return StartsWith(path, kMlflow) || StartsWith(path, kArtifacts) || StartsWith(path, kTrainbench);
}

ApiResponse TrackingApi::Handle(const ApiRequest& asked) {
  // MLflow's server answers its REST API under /ajax-api/ too (its web UI's prefix).
  ApiRequest ajax;
  if (StartsWith(asked.path, kAjaxApi)) {
    ajax = asked;
    ajax.path = Concat({"/api/", std::string_view(asked.path).substr(kAjaxApi.size())});
  }
  const ApiRequest& request = ajax.path.empty() ? asked : ajax;
  // A repeat of a call that logs (a client's retry after a broken connection) is answered
  // without being stored again: by the id trainbench's client gives each request, else,
  // for MLflow's clients, by the whole body of a log-metric or log-batch.
  std::string repeat_key;
  if (request.method == "POST") {
    for (const auto& [k, v] : request.headers) {
      if (k == "x-trainbench-request" && !v.empty()) repeat_key = "id\n" + v;
    }
    if (repeat_key.empty() && (request.path == Concat({kMlflow, "runs/log-metric"}) ||
                               request.path == Concat({kMlflow, "runs/log-batch"})))
      repeat_key = request.path + "\n" + request.body;
  }
  if (!repeat_key.empty() && Seen(repeat_key)) return JsonAnswer(json::object());
  ApiResponse answer = AnswerCall([&] {
    Call call(*this, request);
    return call.Dispatch();
  });
  if (!repeat_key.empty() && answer.status == 200) Remember(repeat_key);
  return answer;
}

}  // namespace tb
