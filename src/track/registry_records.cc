#include "track/registry_records.h"

#include <algorithm>
#include <optional>

#include "base/strings.h"

namespace tb::tracking {

namespace {
const char* const kStages[] = {"None", "Staging", "Production", "Archived"};
}  // namespace

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
json LatestVersions(const json& model, const std::vector<std::string>& stages) {
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

namespace {
int64_t VersionNumber(const std::string& text) {
  std::optional<int64_t> n = ParseInt(text);
  if (!n || *n < 1)
    throw InvalidParameter("Parameter 'version' must be a positive integer, got '" + text + "'");
  return *n;
}
}  // namespace

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

}  // namespace tb::tracking
