// MLflow's model registry (/api/2.0/mlflow/registered-models/* and model-versions/*), as
// MLflow's server answers it: what mlflow.register_model, log_model(registered_model_name=),
// MlflowClient's registry calls and load_model("models:/name/1" | "models:/name@alias" |
// "models:/name/Production" | "models:/name/latest") send.
//
// A registered model is one record in the store (Store::PutRegisteredModel), JSON:
//   {"name", "created", "updated", "description", "user_id", "tags": {k: v},
//    "aliases": {alias: version}, "next": next version number,
//    "versions": [{"version", "created", "updated", "stage", "description", "source",
//                  "run_id", "run_link", "model_id", "user_id", "tags": {k: v}}]}
// Version numbers count up from 1 and are never reused, as in MLflow. Every change reads,
// changes and writes the record under the API's registry lock. A confined API (`trainbench
// run`'s port) may read every registered model and add versions to any, and change or
// delete only those its script created.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "base/strings.h"
#include "base/time.h"
#include "http/api_toolkit.h"
#include "track/search_filter.h"
#include "track/tracking_call.h"

namespace tb {

using namespace tracking;  // NOLINT(google-build-using-namespace): this API's own helpers

namespace {

const char* const kStages[] = {"None", "Staging", "Production", "Archived"};
constexpr size_t kMaxRegisteredPage = 1000;
constexpr size_t kMaxVersionPage = 200000;

ApiError NoModel(const std::string& name) {
  return {"RESOURCE_DOES_NOT_EXIST", "Registered Model with name=" + name + " not found"};
}

ApiError NoVersion(const std::string& name, const std::string& version) {
  return {"RESOURCE_DOES_NOT_EXIST", "Model Version (name=" + name + ", version=" + version + ") not found"};
}

// A stage as MLflow spells it, whatever the case it was given in ("production").
std::string Stage(const std::string& given) {
  for (const char* s : kStages) {
    if (ToLower(given) == ToLower(s)) return s;
  }
  throw InvalidParameter("Invalid Model Version stage: " + given +
                         ". Value must be one of None, Staging, Production, Archived.");
}

json KeyValueList(const json& tags) {
  json out = json::array();
  for (const auto& [k, v] : tags.items()) out.push_back({{"key", k}, {"value", v}});
  return out;
}

json VersionJson(const json& model, const json& v) {
  json aliases = json::array();
  for (const auto& [alias, version] : model["aliases"].items()) {
    if (version == v["version"]) aliases.push_back(alias);
  }
  json out = {{"name", model["name"]},
              {"version", std::to_string(v["version"].get<int64_t>())},
              {"creation_timestamp", v["created"]},
              {"last_updated_timestamp", v["updated"]},
              {"user_id", v.value("user_id", "")},
              {"current_stage", v["stage"]},
              {"description", v.value("description", "")},
              {"source", v.value("source", "")},
              {"run_id", v.value("run_id", "")},
              {"status", "READY"},
              {"status_message", ""},
              {"tags", KeyValueList(v["tags"])},
              {"run_link", v.value("run_link", "")},
              {"aliases", aliases}};
  if (!v.value("model_id", "").empty()) out["model_id"] = v["model_id"];
  return out;
}

// MLflow's latest_versions: of each stage, the version with the highest number.
json LatestVersions(const json& model, const std::vector<std::string>& stages = {}) {
  json out = json::array();
  for (const char* stage : kStages) {
    if (!stages.empty() && std::find(stages.begin(), stages.end(), stage) == stages.end()) continue;
    const json* latest = nullptr;
    for (const json& v : model["versions"]) {
      if (v["stage"] == stage && (latest == nullptr || v["version"] > (*latest)["version"])) latest = &v;
    }
    if (latest != nullptr) out.push_back(VersionJson(model, *latest));
  }
  return out;
}

json RegisteredJson(const json& model) {
  json aliases = json::array();
  for (const auto& [alias, version] : model["aliases"].items())
    aliases.push_back({{"alias", alias}, {"version", std::to_string(version.get<int64_t>())}});
  return {{"name", model["name"]},
          {"creation_timestamp", model["created"]},
          {"last_updated_timestamp", model["updated"]},
          {"user_id", model.value("user_id", "")},
          {"description", model.value("description", "")},
          {"latest_versions", LatestVersions(model)},
          {"tags", KeyValueList(model["tags"])},
          {"aliases", aliases}};
}

int64_t VersionNumber(const std::string& text) {
  std::optional<int64_t> n = ParseInt(text);
  if (!n || *n < 1)
    throw InvalidParameter("Parameter 'version' must be a positive integer, got '" + text + "'");
  return *n;
}

json& FindVersion(json& model, const std::string& version) {
  int64_t n = VersionNumber(version);
  for (json& v : model["versions"]) {
    if (v["version"] == n) return v;
  }
  throw NoVersion(model["name"], version);
}

// The tags of a create call ([{key, value}]) as the record keeps them.
json TagsOf(const json& list) {
  json out = json::object();
  if (!list.is_array()) return out;
  for (const json& kv : list) {
    if (!kv.is_object() || !kv.contains("key") || !kv["key"].is_string())
      throw InvalidParameter("Each tag needs a string 'key'");
    out[kv["key"].get<std::string>()] = kv.value("value", "");
  }
  return out;
}

template <typename T>
T OrThrow(Result<T> r) {
  if (!r.ok()) throw InvalidParameter(r.status().message());
  return std::move(*r);
}

}  // namespace

std::optional<json> TrackingApi::Call::RegisteredModel(const std::string& name) {
  Result<std::vector<std::pair<std::string, std::string>>> all = api_.store_.ListRegisteredModels();
  ThrowIfError(all.status());
  for (const auto& [n, record] : *all) {
    if (n == name) return json::parse(record);
  }
  return std::nullopt;
}

void TrackingApi::Call::PutRegisteredModel(json model) {
  model["updated"] = WallMillis();
  ThrowIfError(api_.store_.PutRegisteredModel(model["name"].get<std::string>(), model.dump()));
}

std::vector<std::string> TrackingApi::Call::Repeated(const char* field) {
  std::vector<std::string> out;
  if (request_.method == "GET") {
    auto [from, to] = request_.query.equal_range(field);
    for (auto it = from; it != to; ++it) out.push_back(it->second);
    return out;
  }
  const json& list = Body().contains(field) ? Body()[field] : json::array();
  if (!list.is_array())
    throw InvalidParameter(Concat({"Invalid value for parameter '", field, "': expected a list"}));
  for (const json& v : list) {
    if (!v.is_string()) throw InvalidParameter(Concat({"Invalid value in '", field, "': expected a string"}));
    out.push_back(v.get<std::string>());
  }
  return out;
}

ApiResponse TrackingApi::Call::Registry(std::string_view endpoint) {
  std::lock_guard lock(api_.registry_mu_);
  return StartsWith(endpoint, "registered-models/") ? RegisteredModels(endpoint) : ModelVersions(endpoint);
}

std::string TrackingApi::Call::RegisteredName(const char* field) {
  std::string name = Required(field);
  if (name.empty()) throw InvalidParameter("Registered model name cannot be empty.");
  return name;
}

json TrackingApi::Call::ExistingModel(const std::string& name) {
  std::optional<json> m = RegisteredModel(name);
  if (!m) throw NoModel(name);
  return *m;
}

json TrackingApi::Call::ChangeableModel(const std::string& name) {
  json m = ExistingModel(name);
  if (!api_.RegisteredModelInScope(name))
    throw ApiError{"PERMISSION_DENIED",
                   "The registered model " + name +
                       " was not created by this run's script; change it through trainbench "
                       "serve or MLflow's own client on the store"};
  return m;
}

// registered-models/*.
ApiResponse TrackingApi::Call::RegisteredModels(std::string_view endpoint) {
  const std::string& method = request_.method;
  auto is = [&](const char* m, std::string_view e) { return method == m && endpoint == e; };

  if (is("POST", "registered-models/create")) {
    std::string name = RegisteredName();
    if (RegisteredModel(name))
      throw ApiError{"RESOURCE_ALREADY_EXISTS", "Registered Model (name=" + name + ") already exists."};
    int64_t now = WallMillis();
    json m = {{"name", name},
              {"created", now},
              {"updated", now},
              {"description", Text("description").value_or("")},
              {"tags", TagsOf(Body().value("tags", json::array()))},
              {"aliases", json::object()},
              {"next", 1},
              {"versions", json::array()}};
    PutRegisteredModel(m);
    api_.AddRegisteredModelToScope(name);
    return JsonAnswer({{"registered_model", RegisteredJson(*RegisteredModel(name))}});
  }
  if (is("GET", "registered-models/get"))
    return JsonAnswer({{"registered_model", RegisteredJson(ExistingModel(RegisteredName()))}});
  if (is("PATCH", "registered-models/update")) {
    json m = ChangeableModel(RegisteredName());
    if (std::optional<std::string> d = Text("description")) m["description"] = *d;
    PutRegisteredModel(m);
    return JsonAnswer({{"registered_model", RegisteredJson(*RegisteredModel(m["name"]))}});
  }
  if (is("POST", "registered-models/rename")) {
    std::string name = RegisteredName();
    json m = ChangeableModel(name);
    std::string to = RegisteredName("new_name");
    if (RegisteredModel(to))
      throw ApiError{"RESOURCE_ALREADY_EXISTS", "Registered Model (name=" + to + ") already exists."};
    m["name"] = to;
    PutRegisteredModel(m);
    ThrowIfError(api_.store_.PutRegisteredModel(name, std::nullopt));
    api_.AddRegisteredModelToScope(to);
    return JsonAnswer({{"registered_model", RegisteredJson(*RegisteredModel(to))}});
  }
  if (is("DELETE", "registered-models/delete")) {
    std::string name = RegisteredName();
    ChangeableModel(name);
    ThrowIfError(api_.store_.PutRegisteredModel(name, std::nullopt));
    return JsonAnswer(json::object());
  }
  if (is("POST", "registered-models/set-tag") || is("DELETE", "registered-models/delete-tag")) {
    json m = ChangeableModel(RegisteredName());
    std::string key = Required("key");
    if (method == "POST") {
      if (auto bad = BadName("tag", key)) throw InvalidParameter(*bad);
      m["tags"][key] = Text("value").value_or("");
    } else if (m["tags"].erase(key) == 0) {
      throw ApiError{"RESOURCE_DOES_NOT_EXIST", "Registered model tag with name=" + key + " not found"};
    }
    PutRegisteredModel(m);
    return JsonAnswer(json::object());
  }
  if (endpoint == "registered-models/alias") {
    std::string name = RegisteredName();
    std::string alias = Required("alias");
    if (method == "GET") {
      json m = ExistingModel(name);
      if (!m["aliases"].contains(alias))
        throw ApiError{"INVALID_PARAMETER_VALUE", "Registered model alias " + alias + " not found."};
      return JsonAnswer(
          {{"model_version",
            VersionJson(m, FindVersion(m, std::to_string(m["aliases"][alias].get<int64_t>())))}});
    }
    json m = ChangeableModel(name);
    if (method == "POST") {
      if (alias.empty() || ToLower(alias) == "latest" || (alias[0] == 'v' && ParseInt(alias.substr(1))))
        throw InvalidParameter("Invalid alias name: '" + alias +
                               "'. Aliases cannot be 'latest' or of the form v<N>.");
      m["aliases"][alias] = FindVersion(m, Required("version"))["version"];
    } else if (method == "DELETE") {
      m["aliases"].erase(alias);
    } else {
      throw ApiError{"ENDPOINT_NOT_FOUND", Concat({"No API endpoint ", method, " ", request_.path})};
    }
    PutRegisteredModel(m);
    return JsonAnswer(json::object());
  }
  if ((is("POST", "registered-models/get-latest-versions") ||
       is("GET", "registered-models/get-latest-versions"))) {
    json m = ExistingModel(RegisteredName());
    std::vector<std::string> stages;
    for (const std::string& s : Repeated("stages")) stages.push_back(Stage(s));
    return JsonAnswer({{"model_versions", LatestVersions(m, stages)}});
  }
  if (is("GET", "registered-models/search")) return SearchRegisteredModels();
  throw ApiError{"ENDPOINT_NOT_FOUND", Concat({"No API endpoint ", method, " ", request_.path})};
}

// model-versions/*.
ApiResponse TrackingApi::Call::ModelVersions(std::string_view endpoint) {
  const std::string& method = request_.method;
  auto is = [&](const char* m, std::string_view e) { return method == m && endpoint == e; };
  if (is("POST", "model-versions/create")) {
    std::string name = RegisteredName();
    json m = ExistingModel(name);  // a new version of any model, as register_model() adds one
    int64_t now = WallMillis();
    int64_t number = m["next"].get<int64_t>();
    std::string user = Text("user_id").value_or("");
    m["versions"].push_back({{"version", number},
                             {"created", now},
                             {"updated", now},
                             {"stage", "None"},
                             {"description", Text("description").value_or("")},
                             {"source", Required("source")},
                             {"run_id", Text("run_id").value_or("")},
                             {"run_link", Text("run_link").value_or("")},
                             {"model_id", Text("model_id").value_or("")},
                             {"user_id", user},
                             {"tags", TagsOf(Body().value("tags", json::array()))}});
    m["next"] = number + 1;
    PutRegisteredModel(m);
    json saved = *RegisteredModel(name);
    return JsonAnswer({{"model_version", VersionJson(saved, FindVersion(saved, std::to_string(number)))}});
  }
  if (is("GET", "model-versions/get") || is("GET", "model-versions/get-download-uri")) {
    json m = ExistingModel(RegisteredName());
    json& v = FindVersion(m, Required("version"));
    if (endpoint == "model-versions/get") return JsonAnswer({{"model_version", VersionJson(m, v)}});
    // Where the files are: a logged model's own folder for an MLflow 3 source
    // ("models:/<id>"), else the source as registered.
    std::string source = v.value("source", "");
    if (StartsWith(source, "models:/")) {
      std::string id = v.value("model_id", "").empty() ? source.substr(8) : v["model_id"].get<std::string>();
      auto [run, record] = Model(id);
      return JsonAnswer({{"artifact_uri", ModelJson(run, id, record)["info"]["artifact_uri"]}});
    }
    return JsonAnswer({{"artifact_uri", source}});
  }
  if (is("PATCH", "model-versions/update") || is("POST", "model-versions/transition-stage") ||
      is("DELETE", "model-versions/delete") || is("POST", "model-versions/set-tag") ||
      is("DELETE", "model-versions/delete-tag")) {
    json m = ChangeableModel(RegisteredName());
    std::string version = Required("version");
    json& v = FindVersion(m, version);
    if (endpoint == "model-versions/update") {
      if (std::optional<std::string> d = Text("description")) v["description"] = *d;
      v["updated"] = WallMillis();
    } else if (endpoint == "model-versions/transition-stage") {
      std::string stage = Stage(Required("stage"));
      bool archive = Body().value("archive_existing_versions", false);
      if (archive && stage != "Staging" && stage != "Production")
        throw InvalidParameter("Model version transition cannot archive existing model versions because '" +
                               stage + "' is not an Active stage. Valid stages are Staging, Production");
      int64_t number = v["version"];
      for (json& other : m["versions"]) {
        if (archive && other["version"] != number && other["stage"] == stage) {
          other["stage"] = "Archived";
          other["updated"] = WallMillis();
        }
      }
      json& moved = FindVersion(m, version);
      moved["stage"] = stage;
      moved["updated"] = WallMillis();
      PutRegisteredModel(m);
      json saved = *RegisteredModel(m["name"]);
      return JsonAnswer({{"model_version", VersionJson(saved, FindVersion(saved, version))}});
    } else if (endpoint == "model-versions/delete") {
      int64_t number = v["version"];
      json& versions = m["versions"];
      versions.erase(std::remove_if(versions.begin(), versions.end(),
                                    [&](const json& x) { return x["version"] == number; }),
                     versions.end());
      for (auto it = m["aliases"].begin(); it != m["aliases"].end();) {
        if (*it == number) {
          it = m["aliases"].erase(it);
        } else {
          ++it;
        }
      }
    } else if (endpoint == "model-versions/set-tag") {
      std::string key = Required("key");
      if (auto bad = BadName("tag", key)) throw InvalidParameter(*bad);
      v["tags"][key] = Text("value").value_or("");
    } else if (v["tags"].erase(Required("key")) == 0) {
      throw ApiError{"RESOURCE_DOES_NOT_EXIST",
                     "Model version tag with name=" + Required("key") + " not found"};
    }
    PutRegisteredModel(m);
    if (endpoint == "model-versions/update") {
      json saved = *RegisteredModel(m["name"]);
      return JsonAnswer({{"model_version", VersionJson(saved, FindVersion(saved, version))}});
    }
    return JsonAnswer(json::object());
  }
  if (is("GET", "model-versions/search")) return SearchModelVersions();
  throw ApiError{"ENDPOINT_NOT_FOUND", Concat({"No API endpoint ", method, " ", request_.path})};
}

// GET registered-models/search: MLflow's grammar over name and tags.K; order_by name,
// last_updated_timestamp (default: name ascending); 100 a page unless asked.
ApiResponse TrackingApi::Call::SearchRegisteredModels() {
  static const std::vector<std::string> kAttributes = {"name", "creation_timestamp",
                                                       "last_updated_timestamp"};
  static const std::vector<std::string> kNumbers = {"creation_timestamp", "last_updated_timestamp"};
  std::vector<Clause> filter = OrThrow(ParseFilter(Text("filter").value_or(""), kAttributes, kNumbers));
  std::vector<OrderKey> order;
  for (const std::string& item : Repeated("order_by"))
    order.push_back(OrThrow(ParseOrderBy(item, kAttributes)));
  order.push_back({Entity::kAttribute, "name", true});
  auto [start, count] = Page(kMaxRegisteredPage, 100);
  Result<std::vector<std::pair<std::string, std::string>>> all = api_.store_.ListRegisteredModels();
  ThrowIfError(all.status());
  std::vector<std::pair<Searchable, json>> found;
  for (const auto& [name, record] : *all) {
    json m = json::parse(record);
    Searchable s;
    s.attributes = {{"name", name},
                    {"creation_timestamp", std::to_string(m["created"].get<int64_t>())},
                    {"last_updated_timestamp", std::to_string(m["updated"].get<int64_t>())}};
    for (const auto& [k, v] : m["tags"].items()) s.tags[k] = v;
    if (Matches(filter, s, kNumbers)) found.emplace_back(std::move(s), RegisteredJson(m));
  }
  return JsonAnswer(SortedPage(found, order, kNumbers, start, count, "registered_models"));
}

// GET model-versions/search: over name, version_number, run_id, source_path, current_stage
// and tags.K; newest version first unless ordered.
ApiResponse TrackingApi::Call::SearchModelVersions() {
  static const std::vector<std::string> kAttributes = {
      "name",          "version_number",     "run_id",   "source_path",
      "current_stage", "creation_timestamp", "model_id", "last_updated_timestamp"};
  static const std::vector<std::string> kNumbers = {"version_number", "creation_timestamp",
                                                    "last_updated_timestamp"};
  std::vector<Clause> filter = OrThrow(ParseFilter(Text("filter").value_or(""), kAttributes, kNumbers));
  std::vector<OrderKey> order;
  for (const std::string& item : Repeated("order_by"))
    order.push_back(OrThrow(ParseOrderBy(item, kAttributes)));
  order.push_back({Entity::kAttribute, "name", true});
  order.push_back({Entity::kAttribute, "version_number", false});
  auto [start, count] = Page(kMaxVersionPage, 10000);
  Result<std::vector<std::pair<std::string, std::string>>> all = api_.store_.ListRegisteredModels();
  ThrowIfError(all.status());
  std::vector<std::pair<Searchable, json>> found;
  for (const auto& [name, record] : *all) {
    json m = json::parse(record);
    for (const json& v : m["versions"]) {
      Searchable s;
      s.attributes = {{"name", name},
                      {"version_number", std::to_string(v["version"].get<int64_t>())},
                      {"run_id", v.value("run_id", "")},
                      {"source_path", v.value("source", "")},
                      {"current_stage", v.value("stage", "None")},
                      {"model_id", v.value("model_id", "")},
                      {"creation_timestamp", std::to_string(v["created"].get<int64_t>())},
                      {"last_updated_timestamp", std::to_string(v["updated"].get<int64_t>())}};
      for (const auto& [k, value] : v["tags"].items()) s.tags[k] = value;
      if (Matches(filter, s, kNumbers)) found.emplace_back(std::move(s), VersionJson(m, v));
    }
  }
  return JsonAnswer(SortedPage(found, order, kNumbers, start, count, "model_versions"));
}

}  // namespace tb
