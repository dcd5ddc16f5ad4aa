// The model registry's records (tracking_registry.cc says their shape) and their JSON as
// MLflow's server answers: shared by the registered-model and model-version handlers.
// Private to track/. Each function throws ApiError (http/api_toolkit.h) on a request it
// must refuse, naming what was asked.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "http/api_toolkit.h"

namespace tb::tracking {

using json = nlohmann::json;

ApiError NoModel(const std::string& name);
ApiError NoVersion(const std::string& name, const std::string& version);
// A stage as MLflow spells it, whatever the case it was given in ("production").
std::string Stage(const std::string& given);
json KeyValueList(const json& tags);
json VersionJson(const json& model, const json& v);
// MLflow's latest_versions: of each stage (of `stages`, all when empty), the version with
// the highest number.
json LatestVersions(const json& model, const std::vector<std::string>& stages = {});
json RegisteredJson(const json& model);
// The version `version` (a positive integer's text) of the record; RESOURCE_DOES_NOT_EXIST
// when it has none.
json& FindVersion(json& model, const std::string& version);
// The tags of a create call ([{key, value}]) as the record keeps them.
json TagsOf(const json& list);

// A search's parse result, or INVALID_PARAMETER_VALUE with its message.
template <typename T>
T OrThrow(Result<T> r) {
  if (!r.ok()) throw InvalidParameter(r.status().message());
  return std::move(*r);
}

}  // namespace tb::tracking
