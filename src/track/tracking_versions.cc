// MLflow's model registry, its versions (/api/2.0/mlflow/model-versions/*), as MLflow's
// server answers them: register_model's new version, load_model's lookups, stages, tags.
// The record they change is a registered model's (tracking_registry.cc says its shape), read,
// changed and written under the API's registry lock (the route table takes it).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "base/time.h"
#include "http/api_toolkit.h"
#include "track/registry_records.h"
#include "track/search_filter.h"
#include "track/tracking_call.h"

namespace tb {

using namespace tracking;  // NOLINT(google-build-using-namespace): this API's own helpers

namespace {
constexpr size_t kMaxVersionPage = 200000;
}  // namespace

// POST model-versions/create: a new version of any model, as register_model() adds one.
ApiResponse TrackingApi::Call::CreateModelVersion() {
  std::string name = RegisteredName();
  json m = ExistingModel(name);
  int64_t now = WallMillis();
  int64_t number = m["next"].get<int64_t>();
  m["versions"].push_back({{"version", number},
                           {"created", now},
                           {"updated", now},
                           {"stage", "None"},
                           {"description", Text("description").value_or("")},
                           {"source", Required("source")},
                           {"run_id", Text("run_id").value_or("")},
                           {"run_link", Text("run_link").value_or("")},
                           {"model_id", Text("model_id").value_or("")},
                           {"user_id", Text("user_id").value_or("")},
                           {"tags", TagsOf(Body().value("tags", json::array()))}});
  m["next"] = number + 1;
  PutRegisteredModel(m);
  return VersionAnswer(m["name"], std::to_string(number));
}

ApiResponse TrackingApi::Call::VersionAnswer(const std::string& name, const std::string& version) {
  json saved = *RegisteredModel(name);
  return JsonAnswer({{"model_version", VersionJson(saved, FindVersion(saved, version))}});
}

// GET model-versions/get.
ApiResponse TrackingApi::Call::GetModelVersion() {
  json m = ExistingModel(RegisteredName());
  return JsonAnswer({{"model_version", VersionJson(m, FindVersion(m, Required("version")))}});
}

// GET model-versions/get-download-uri: where the files are: a logged model's own folder for
// an MLflow 3 source ("models:/<id>"), else the source as registered.
ApiResponse TrackingApi::Call::GetModelVersionDownloadUri() {
  json m = ExistingModel(RegisteredName());
  json& v = FindVersion(m, Required("version"));
  std::string source = v.value("source", "");
  if (StartsWith(source, "models:/")) {
    std::string id = v.value("model_id", "").empty() ? source.substr(8) : v["model_id"].get<std::string>();
    auto [run, record] = Model(id);
    return JsonAnswer({{"artifact_uri", ModelJson(run, id, record)["info"]["artifact_uri"]}});
  }
  return JsonAnswer({{"artifact_uri", source}});
}

// PATCH model-versions/update: its description.
ApiResponse TrackingApi::Call::UpdateModelVersion() {
  json m = ChangeableModel(RegisteredName());
  std::string version = Required("version");
  json& v = FindVersion(m, version);
  if (std::optional<std::string> d = Text("description")) v["description"] = *d;
  v["updated"] = WallMillis();
  PutRegisteredModel(m);
  return VersionAnswer(m["name"], version);
}

// POST model-versions/transition-stage: with archive_existing_versions, the stage's other
// versions are archived (Staging and Production only).
ApiResponse TrackingApi::Call::TransitionModelVersionStage() {
  json m = ChangeableModel(RegisteredName());
  std::string version = Required("version");
  int64_t number = FindVersion(m, version)["version"];
  std::string stage = Stage(Required("stage"));
  bool archive = Body().value("archive_existing_versions", false);
  if (archive && stage != "Staging" && stage != "Production")
    throw InvalidParameter("Model version transition cannot archive existing model versions because '" +
                           stage + "' is not an Active stage. Valid stages are Staging, Production");
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
  return VersionAnswer(m["name"], version);
}

// DELETE model-versions/delete: the version and the aliases naming it.
ApiResponse TrackingApi::Call::DeleteModelVersion() {
  json m = ChangeableModel(RegisteredName());
  int64_t number = FindVersion(m, Required("version"))["version"];
  json& versions = m["versions"];
  versions.erase(
      std::remove_if(versions.begin(), versions.end(), [&](const json& x) { return x["version"] == number; }),
      versions.end());
  for (auto it = m["aliases"].begin(); it != m["aliases"].end();) {
    if (*it == number) {
      it = m["aliases"].erase(it);
    } else {
      ++it;
    }
  }
  PutRegisteredModel(m);
  return JsonAnswer(json::object());
}

// POST model-versions/set-tag.
ApiResponse TrackingApi::Call::SetModelVersionTag() {
  json m = ChangeableModel(RegisteredName());
  json& v = FindVersion(m, Required("version"));
  std::string key = Required("key");
  if (auto bad = BadName("tag", key)) throw InvalidParameter(*bad);
  v["tags"][key] = Text("value").value_or("");
  PutRegisteredModel(m);
  return JsonAnswer(json::object());
}

// DELETE model-versions/delete-tag.
ApiResponse TrackingApi::Call::DeleteModelVersionTag() {
  json m = ChangeableModel(RegisteredName());
  json& v = FindVersion(m, Required("version"));
  std::string key = Required("key");
  if (v["tags"].erase(key) == 0)
    throw ApiError{"RESOURCE_DOES_NOT_EXIST", "Model version tag with name=" + key + " not found"};
  PutRegisteredModel(m);
  return JsonAnswer(json::object());
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
