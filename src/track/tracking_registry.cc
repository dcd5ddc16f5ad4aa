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
// Version numbers count up from 1 and are never reused, as in MLflow. Every call reads,
// changes and writes the record under the API's registry lock (the route table takes it).
// This file answers registered-models/*; tracking_versions.cc model-versions/*. A confined API (`trainbench
// run`'s port) may read every registered model and add versions to any, and change or
// delete only those its script created.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "base/strings.h"
#include "base/time.h"
#include "http/api_toolkit.h"
#include "track/registry_records.h"
#include "track/search_filter.h"
#include "track/tracking_call.h"

namespace tb {

using namespace tracking;  // NOLINT(google-build-using-namespace): this API's own helpers

namespace {
constexpr size_t kMaxRegisteredPage = 1000;
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

// POST registered-models/create.
ApiResponse TrackingApi::Call::CreateRegisteredModel() {
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

// GET registered-models/get.
ApiResponse TrackingApi::Call::GetRegisteredModel() {
  return JsonAnswer({{"registered_model", RegisteredJson(ExistingModel(RegisteredName()))}});
}

// PATCH registered-models/update: its description.
ApiResponse TrackingApi::Call::UpdateRegisteredModel() {
  json m = ChangeableModel(RegisteredName());
  if (std::optional<std::string> d = Text("description")) m["description"] = *d;
  PutRegisteredModel(m);
  return JsonAnswer({{"registered_model", RegisteredJson(*RegisteredModel(m["name"]))}});
}

// POST registered-models/rename: to new_name, which must be free.
ApiResponse TrackingApi::Call::RenameRegisteredModel() {
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

// DELETE registered-models/delete: the model and its versions.
ApiResponse TrackingApi::Call::DeleteRegisteredModel() {
  std::string name = RegisteredName();
  ChangeableModel(name);
  ThrowIfError(api_.store_.PutRegisteredModel(name, std::nullopt));
  return JsonAnswer(json::object());
}

// POST registered-models/set-tag.
ApiResponse TrackingApi::Call::SetRegisteredModelTag() {
  json m = ChangeableModel(RegisteredName());
  std::string key = Required("key");
  if (auto bad = BadName("tag", key)) throw InvalidParameter(*bad);
  m["tags"][key] = Text("value").value_or("");
  PutRegisteredModel(m);
  return JsonAnswer(json::object());
}

// DELETE registered-models/delete-tag.
ApiResponse TrackingApi::Call::DeleteRegisteredModelTag() {
  json m = ChangeableModel(RegisteredName());
  std::string key = Required("key");
  if (m["tags"].erase(key) == 0)
    throw ApiError{"RESOURCE_DOES_NOT_EXIST", "Registered model tag with name=" + key + " not found"};
  PutRegisteredModel(m);
  return JsonAnswer(json::object());
}

// GET registered-models/alias: the version the alias names.
ApiResponse TrackingApi::Call::GetRegisteredModelAlias() {
  json m = ExistingModel(RegisteredName());
  std::string alias = Required("alias");
  if (!m["aliases"].contains(alias))
    throw ApiError{"INVALID_PARAMETER_VALUE", "Registered model alias " + alias + " not found."};
  return JsonAnswer({{"model_version",
                      VersionJson(m, FindVersion(m, std::to_string(m["aliases"][alias].get<int64_t>())))}});
}

// POST registered-models/alias: points the alias at a version (not "latest" nor v<N>).
ApiResponse TrackingApi::Call::SetRegisteredModelAlias() {
  json m = ChangeableModel(RegisteredName());
  std::string alias = Required("alias");
  if (alias.empty() || ToLower(alias) == "latest" || (alias[0] == 'v' && ParseInt(alias.substr(1))))
    throw InvalidParameter("Invalid alias name: '" + alias +
                           "'. Aliases cannot be 'latest' or of the form v<N>.");
  m["aliases"][alias] = FindVersion(m, Required("version"))["version"];
  PutRegisteredModel(m);
  return JsonAnswer(json::object());
}

// DELETE registered-models/alias.
ApiResponse TrackingApi::Call::DeleteRegisteredModelAlias() {
  json m = ChangeableModel(RegisteredName());
  m["aliases"].erase(Required("alias"));
  PutRegisteredModel(m);
  return JsonAnswer(json::object());
}

// GET or POST registered-models/get-latest-versions: of each stage asked, the newest.
ApiResponse TrackingApi::Call::GetLatestVersions() {
  json m = ExistingModel(RegisteredName());
  std::vector<std::string> stages;
  for (const std::string& s : Repeated("stages")) stages.push_back(Stage(s));
  return JsonAnswer({{"model_versions", LatestVersions(m, stages)}});
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

}  // namespace tb
