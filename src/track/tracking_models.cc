// What MLflow's clients send to keep a model and the data it was trained on with the run:
// MLflow 3's logged models (logged-models: create, get, finalize, tags, params, delete,
// search; runs/outputs), MLflow 2's runs/log-model (the mlflow.log-model.history tag), and
// runs/log-inputs (mlflow.log_input's datasets).
//
// trainbench keeps a logged model with the run that made it: its record is the run's tag
// kModelTagPrefix + id (JSON), its files the run's artifacts under models/<id>/ (the model's
// artifact URI points there), and its id holds the run's ("m-" + run id + 8 hex digits), so
// a model is found without a search. A model logged outside any run belongs to the run of
// `trainbench run` whose script logs it; `trainbench serve` refuses one with no run. Each
// dataset input is the tag kDatasetTagPrefix + a hash of its name and digest (JSON).
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/secret.h"
#include "base/strings.h"
#include "base/time.h"
#include "http/api_toolkit.h"
#include "track/tracking_call.h"

namespace tb {

std::optional<nlohmann::json> tracking::StoredRecord(std::string_view text) {
  json record = json::parse(text, nullptr, false);
  if (!record.is_object()) return std::nullopt;
  // The fields trainbench writes, by the type it writes them with.
  static const std::vector<std::pair<const char*, json::value_t>> kShapes = {
      {"name", json::value_t::string},
      {"status", json::value_t::string},
      {"model_type", json::value_t::string},
      {"status_message", json::value_t::string},
      {"experiment_id", json::value_t::string},
      {"digest", json::value_t::string},
      {"source_type", json::value_t::string},
      {"source", json::value_t::string},
      {"schema", json::value_t::string},
      {"profile", json::value_t::string},
      {"created", json::value_t::number_integer},
      {"updated", json::value_t::number_integer},
      {"tags", json::value_t::array},
      {"params", json::value_t::array},
      {"metrics", json::value_t::array}};
  for (const auto& [key, type] : kShapes) {
    auto it = record.find(key);
    if (it == record.end()) continue;
    bool integer = type == json::value_t::number_integer && it->is_number_integer();
    if (!integer && it->type() != type) record.erase(it);
  }
  // Their items: {key, value} pairs of texts; a metric's value a number, its timestamp and
  // step integers.
  auto is_text = [](const json& o, const char* k) { return o.contains(k) && o[k].is_string(); };
  for (const char* list : {"tags", "params", "metrics"}) {
    if (!record.contains(list)) continue;
    bool metric = std::string_view(list) == "metrics";
    json kept = json::array();
    for (const json& item : record[list]) {
      if (!item.is_object() || !is_text(item, "key")) continue;
      if (!metric && !is_text(item, "value")) continue;
      if (metric && !(item.contains("value") && item["value"].is_number())) continue;
      bool whole = true;
      for (const char* k : {"timestamp", "step"}) whole &= !item.contains(k) || item[k].is_number_integer();
      if (metric && !whole) continue;
      kept.push_back(item);
    }
    record[list] = std::move(kept);
  }
  return record;
}

using namespace tracking;  // NOLINT(google-build-using-namespace): this API's own helpers

namespace {

constexpr std::string_view kModelIdPrefix = "m-";
constexpr size_t kRunIdLength = 32;
constexpr const char* kLogModelHistoryTag = "mlflow.log-model.history";
const char* const kModelStatuses[] = {"LOGGED_MODEL_STATUS_UNSPECIFIED", "LOGGED_MODEL_PENDING",
                                      "LOGGED_MODEL_READY", "LOGGED_MODEL_UPLOAD_FAILED"};

// The run a model id names, "" when it is not one trainbench made.
std::string RunOfModel(std::string_view model_id) {
  if (!StartsWith(model_id, kModelIdPrefix) || model_id.size() != kModelIdPrefix.size() + kRunIdLength + 8)
    return "";
  return std::string(model_id.substr(kModelIdPrefix.size(), kRunIdLength));
}

// A status as MLflow's clients send it: the enum's name or its number.
std::string ModelStatus(const nlohmann::json& v) {
  if (v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < 4)
    return kModelStatuses[v.get<int64_t>()];
  if (v.is_string()) {
    for (const char* s : kModelStatuses) {
      if (v.get<std::string>() == s) return s;
    }
  }
  throw InvalidParameter("Invalid value for parameter 'status': " + v.dump() + " (LOGGED_MODEL_READY, ...)");
}

// [{key, value}] as a list MLflow reads, each key once (the last given wins).
nlohmann::json MergeKeyValues(nlohmann::json into, const nlohmann::json& more) {
  if (!into.is_array()) into = nlohmann::json::array();
  for (const auto& kv : more) {
    if (!kv.is_object() || !kv.contains("key") || !kv["key"].is_string())
      throw InvalidParameter("Each tag and param needs a string 'key'");
    auto same = std::find_if(into.begin(), into.end(), [&](const auto& e) { return e["key"] == kv["key"]; });
    nlohmann::json entry = {{"key", kv["key"]}, {"value", kv.value("value", "")}};
    if (same != into.end()) {
      *same = entry;
    } else {
      into.push_back(entry);
    }
  }
  return into;
}

}  // namespace

// The model `model_id`'s record, with the run that holds it; RESOURCE_DOES_NOT_EXIST, as
// MLflow answers, for an id that names none.
std::pair<RunRecord, nlohmann::json> TrackingApi::Call::Model(const std::string& model_id) {
  std::string run_id = RunOfModel(model_id);
  ApiError missing{"RESOURCE_DOES_NOT_EXIST", "Logged model with ID '" + model_id + "' not found."};
  if (run_id.empty()) throw missing;
  RunRecord run = Run(run_id);
  std::string record = TagValue(run, kModelTagPrefix + model_id);
  if (record.empty()) throw missing;
  std::optional<json> m = StoredRecord(record);
  if (!m) throw missing;
  return {std::move(run), std::move(*m)};
}

json TrackingApi::Call::ModelJson(const RunRecord& run, const std::string& model_id, const json& m) {
  std::string experiment_id = m.value("experiment_id", "0");
  return {{"info",
           {{"model_id", model_id},
            {"experiment_id", experiment_id},
            {"name", m.value("name", "")},
            {"creation_timestamp_ms", m.value("created", int64_t{0})},
            {"last_updated_timestamp_ms", m.value("updated", int64_t{0})},
            {"artifact_uri", MlflowArtifactUri(experiment_id, run.id) + "/models/" + model_id},
            {"status", m.value("status", kModelStatuses[1])},
            {"model_type", m.value("model_type", "")},
            {"source_run_id", run.id},
            {"status_message", m.value("status_message", "")},
            {"tags", m.value("tags", json::array())}}},
          {"data",
           {{"params", m.value("params", json::array())}, {"metrics", m.value("metrics", json::array())}}}};
}

void TrackingApi::Call::PutModel(const std::string& run_id, const std::string& model_id, json m) {
  m["updated"] = WallMillis();
  ThrowIfError(api_.store_.SetTags(run_id, {{kModelTagPrefix + model_id, m.dump()}}));
}

// POST logged-models: a model of the run `source_run_id` (under `trainbench run`, the
// script's run when it names none), PENDING until its files are up.
ApiResponse TrackingApi::Call::CreateLoggedModel() {
  const json& b = Body();
  std::string experiment_id = Required("experiment_id");
  ExperimentById(experiment_id);
  std::string run_id = Text("source_run_id").value_or("");
  if (run_id.empty() && api_.confined_) run_id = api_.home_run_;
  if (run_id.empty()) {
    throw InvalidParameter(
        "trainbench keeps a model with the run that made it: log it inside mlflow.start_run(), or give "
        "source_run_id");
  }
  Writable(run_id);
  std::string model_id = Concat({kModelIdPrefix, run_id, RandomHex(4)});
  std::string name = Text("name").value_or("");
  if (name.empty()) name = "model-" + model_id.substr(model_id.size() - 8);
  if (auto bad = BadName("model", name)) throw InvalidParameter(*bad);
  json m = {{"experiment_id", experiment_id},
            {"name", name},
            {"model_type", Text("model_type").value_or("")},
            {"status", kModelStatuses[1]},
            {"created", WallMillis()},
            {"tags", MergeKeyValues(json::array(), b.value("tags", json::array()))},
            {"params", MergeKeyValues(json::array(), b.value("params", json::array()))}};
  PutModel(run_id, model_id, m);
  return JsonAnswer({{"model", ModelJson(Run(run_id), model_id, Model(model_id).second)}});
}

// GET logged-models/{model_id}.
ApiResponse TrackingApi::Call::GetLoggedModel(const std::string& model_id) {
  auto [run, m] = Model(model_id);
  return JsonAnswer({{"model", ModelJson(run, model_id, m)}});
}

// The model's record for a change: its run must be writable.
std::pair<RunRecord, nlohmann::json> TrackingApi::Call::ChangeableLoggedModel(const std::string& model_id) {
  std::pair<RunRecord, json> found = Model(model_id);
  Writable(found.first.id);
  return found;
}

// PATCH logged-models/{model_id}: finalize (its status, READY or FAILED).
ApiResponse TrackingApi::Call::FinalizeLoggedModel(const std::string& model_id) {
  auto [run, m] = ChangeableLoggedModel(model_id);
  m["status"] = ModelStatus(Body().value("status", json()));
  PutModel(run.id, model_id, m);
  return GetLoggedModel(model_id);
}

// DELETE logged-models/{model_id}.
ApiResponse TrackingApi::Call::DeleteLoggedModel(const std::string& model_id) {
  auto [run, m] = ChangeableLoggedModel(model_id);
  ThrowIfError(api_.store_.DeleteTag(run.id, kModelTagPrefix + model_id));
  return JsonAnswer(json::object());
}

// PATCH logged-models/{model_id}/tags.
ApiResponse TrackingApi::Call::SetLoggedModelTags(const std::string& model_id) {
  auto [run, m] = ChangeableLoggedModel(model_id);
  m["tags"] = MergeKeyValues(m["tags"], Body().value("tags", json::array()));
  PutModel(run.id, model_id, m);
  return JsonAnswer(json::object());
}

// DELETE logged-models/{model_id}/tags/{key}.
ApiResponse TrackingApi::Call::DeleteLoggedModelTag(const std::string& model_id, const std::string& key) {
  auto [run, m] = ChangeableLoggedModel(model_id);
  json& tags = m["tags"];
  tags.erase(std::remove_if(tags.begin(), tags.end(), [&](const json& t) { return t["key"] == key; }),
             tags.end());
  PutModel(run.id, model_id, m);
  return JsonAnswer(json::object());
}

// POST logged-models/{model_id}/params.
ApiResponse TrackingApi::Call::LogLoggedModelParams(const std::string& model_id) {
  auto [run, m] = ChangeableLoggedModel(model_id);
  m["params"] = MergeKeyValues(m["params"], Body().value("params", json::array()));
  PutModel(run.id, model_id, m);
  return JsonAnswer(json::object());
}

// POST runs/outputs: the run's models, each with the step it was logged at.
ApiResponse TrackingApi::Call::LogOutputs() {
  std::string run_id = RunIdField();
  Writable(run_id);
  for (const json& out : Body().value("models", json::array())) {
    std::string model_id = out.value("model_id", "");
    auto [run, m] = Model(model_id);
    if (run.id != run_id) throw InvalidParameter("Model " + model_id + " was logged by run " + run.id);
    m["step"] = out.value("step", json(0));
    PutModel(run_id, model_id, m);
  }
  return JsonAnswer(json::object());
}

// POST runs/log-inputs: datasets (mlflow.log_input), each kept once per name and digest with
// its tags (mlflow.data.context: training, eval); models used as inputs.
ApiResponse TrackingApi::Call::LogInputs() {
  std::string run_id = RunIdField();
  Writable(run_id);
  KeyValues tags;
  for (const json& input : Body().value("datasets", json::array())) {
    const json& d = input.value("dataset", json::object());
    for (const char* field : {"name", "digest", "source_type", "source"}) {
      if (!d.contains(field) || !d[field].is_string())
        throw InvalidParameter(Concat({"Missing value for required parameter 'dataset.", field, "'"}));
    }
    std::string key =
        Concat({kDatasetTagPrefix, d["name"].get<std::string>(), "\n", d["digest"].get<std::string>()});
    json kept = {{"tags", MergeKeyValues(json::array(), input.value("tags", json::array()))}, {"dataset", d}};
    tags.emplace_back(Concat({kDatasetTagPrefix, std::to_string(Fnv1a64(key))}), kept.dump());
  }
  for (const json& model : Body().value("models", json::array())) {
    std::string model_id = model.value("model_id", "");
    Model(model_id);
    tags.emplace_back(kModelInputTagPrefix + model_id, "");
  }
  if (!tags.empty()) ThrowIfError(api_.store_.SetTags(run_id, tags));
  return JsonAnswer(json::object());
}

// POST runs/log-model (MLflow 2's log_model after the files are up): the model's metadata
// appended to the run's mlflow.log-model.history tag, as MLflow's server keeps it.
ApiResponse TrackingApi::Call::LogModel() {
  std::string run_id = RunIdField();
  Writable(run_id);
  std::string text = Required("model_json");
  json model = json::parse(text, nullptr, false);
  if (model.is_discarded() || !model.is_object())
    throw InvalidParameter("Value '" + text.substr(0, 100) +
                           "' for parameter 'model_json' is not a valid JSON");
  std::vector<std::string> missing;
  for (const char* field : {"artifact_path", "flavors", "run_id", "utc_time_created"}) {
    if (!model.contains(field)) missing.push_back(Concat({"'", field, "'"}));
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw InvalidParameter("Model json is missing mandatory fields: {" + list + "}");
  }
  if (model["flavors"].is_object()) {
    for (auto& [name, flavor] : model["flavors"].items()) {
      if (flavor.is_object()) flavor.erase("config");
    }
  }
  json history = json::parse(TagValue(Run(run_id), kLogModelHistoryTag), nullptr, false);
  if (!history.is_array()) history = json::array();
  history.push_back(std::move(model));
  ThrowIfError(api_.store_.SetTags(run_id, {{kLogModelHistoryTag, history.dump()}}));
  return JsonAnswer(json::object());
}

json TrackingApi::Call::RunInputsOutputs(const RunRecord& r, bool outputs) {
  json list = json::array();
  json models = json::array();
  for (const auto& [k, v] : r.tags) {
    if (!outputs && StartsWith(k, kDatasetTagPrefix)) {
      if (std::optional<json> d = StoredRecord(v)) list.push_back(std::move(*d));
    }
    if (!outputs && StartsWith(k, kModelInputTagPrefix))
      models.push_back({{"model_id", k.substr(kModelInputTagPrefix.size())}});
    if (outputs && StartsWith(k, kModelTagPrefix)) {
      json m = StoredRecord(v).value_or(json::object());
      if (m.contains("step"))
        models.push_back({{"model_id", k.substr(kModelTagPrefix.size())}, {"step", m["step"]}});
    }
  }
  if (outputs) return {{"model_outputs", std::move(models)}};
  return {{"dataset_inputs", std::move(list)}, {"model_inputs", std::move(models)}};
}

}  // namespace tb
