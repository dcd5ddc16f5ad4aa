// POST logged-models/search, as MLflow 3's server answers it (its SQL store is the
// reference): the models of `experiment_ids` that match `filter`, MLflow's logged-model
// grammar (clauses joined by AND over the attributes name, model_id, model_type, status,
// source_run_id, experiment_id, creation_timestamp (creation_time), last_updated_timestamp,
// and metrics.K, params.K, tags.K), restricted by `datasets` (a metric counts only when it
// was logged on one of them; with no metric clause, a model needs a metric on one), sorted by
// `order_by` (attributes or metrics.K, the latest value; missing ones last) then newest
// first and by id, `max_results` a page (default 100) and `page_token` for the next.
//
// MLflow 3's clients depend on it for everyday calls: list_artifacts(run, "dir") and
// load_model("runs:/<run>/<name>") look up a model named after the path's first part, and
// set_active_model(name=) the model of that name.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "http/api_toolkit.h"
#include "track/search_filter.h"
#include "track/tracking_call.h"

namespace tb {

using namespace tracking;  // NOLINT(google-build-using-namespace): this API's own helpers

namespace {

constexpr size_t kDefaultPage = 100;  // MLflow's SEARCH_LOGGED_MODEL_MAX_RESULTS_DEFAULT
constexpr size_t kLargestPage = 50000;

const std::vector<std::string> kModelAttributes = {"name",
                                                   "model_id",
                                                   "model_type",
                                                   "status",
                                                   "source_run_id",
                                                   "experiment_id",
                                                   "creation_timestamp",
                                                   "creation_time",
                                                   "creation_timestamp_ms",
                                                   "last_updated_timestamp",
                                                   "last_updated_timestamp_ms"};
const std::vector<std::string> kModelNumbers = {"creation_timestamp", "creation_time",
                                                "creation_timestamp_ms", "last_updated_timestamp",
                                                "last_updated_timestamp_ms"};

struct DatasetFilter {
  std::string name, digest;  // digest "" matches any
  bool Holds(const json& metric) const {
    return metric.value("dataset_name", "") == name &&
           (digest.empty() || metric.value("dataset_digest", "") == digest);
  }
};

std::vector<DatasetFilter> DatasetsOf(const json& body) {
  std::vector<DatasetFilter> out;
  const json& list =
      body.contains("datasets") && body["datasets"].is_array() ? body["datasets"] : json::array();
  for (const json& d : list) {
    std::string name = d.is_object() ? d.value("dataset_name", "") : "";
    if (name.empty()) throw InvalidParameter("`dataset_name` in the `datasets` clause must be specified.");
    out.push_back({name, d.value("dataset_digest", "")});
  }
  return out;
}

// The latest value of each of the model's metrics (by timestamp, then step) among those
// `keep` accepts.
template <typename Keep>
std::map<std::string, double> LatestMetrics(const json& metrics, Keep keep) {
  std::map<std::string, std::pair<std::pair<int64_t, int64_t>, double>> latest;
  for (const json& m : metrics) {
    if (!keep(m)) continue;
    std::optional<double> v = ValueOf(m.value("value", json()));
    if (!v) continue;
    std::pair<int64_t, int64_t> when{IntOf(m.value("timestamp", json())).value_or(0),
                                     IntOf(m.value("step", json())).value_or(0)};
    std::string key = m.value("key", "");
    auto it = latest.find(key);
    if (it == latest.end() || it->second.first <= when) latest[key] = {when, *v};
  }
  std::map<std::string, double> out;
  for (auto& [k, v] : latest) out[k] = v.second;
  return out;
}

std::string ShortStatus(const std::string& status) {
  constexpr std::string_view kPrefix = "LOGGED_MODEL_";
  if (status == "LOGGED_MODEL_STATUS_UNSPECIFIED") return "UNSPECIFIED";
  if (status == "LOGGED_MODEL_UPLOAD_FAILED") return "FAILED";
  return StartsWith(status, kPrefix) ? status.substr(kPrefix.size()) : status;
}

// The model's JSON (ModelJson) as the filter sees it.
Searchable ModelSearchable(const json& model, const std::vector<DatasetFilter>& datasets) {
  const json& info = model["info"];
  Searchable s;
  for (const char* key : {"name", "model_id", "model_type", "source_run_id", "experiment_id"})
    s.attributes[key] = info.value(key, "");
  s.attributes["status"] = ShortStatus(info.value("status", ""));
  std::string created = std::to_string(info.value("creation_timestamp_ms", int64_t{0}));
  std::string updated = std::to_string(info.value("last_updated_timestamp_ms", int64_t{0}));
  for (const char* key : {"creation_timestamp", "creation_time", "creation_timestamp_ms"})
    s.attributes[key] = created;
  for (const char* key : {"last_updated_timestamp", "last_updated_timestamp_ms"}) s.attributes[key] = updated;
  for (const json& kv : info.value("tags", json::array()))
    s.tags[kv.value("key", "")] = kv.value("value", "");
  for (const json& kv : model["data"].value("params", json::array()))
    s.params[kv.value("key", "")] = kv.value("value", "");
  s.metrics = LatestMetrics(model["data"].value("metrics", json::array()), [&](const json& m) {
    return datasets.empty() ||
           std::any_of(datasets.begin(), datasets.end(), [&](const auto& d) { return d.Holds(m); });
  });
  return s;
}

// One order_by item as MLflow 3's client sends it: {field_name, ascending, dataset_name,
// dataset_digest}.
OrderKey OrderItem(const json& item) {
  if (!item.is_object()) throw InvalidParameter("`order_by` must be a list of dictionaries.");
  std::string field = item.value("field_name", "");
  if (field.empty()) throw InvalidParameter("`field_name` in the `order_by` clause must be specified.");
  if (!item.value("ascending", json(true)).is_boolean())
    throw InvalidParameter("Value of `ascending` in the `order_by` clause must be a boolean, for field " +
                           field + ".");
  OrderKey key{Entity::kAttribute, field, item.value("ascending", true)};
  if (size_t dot = field.find('.'); dot != std::string::npos) {
    if (field.substr(0, dot) != "metrics")
      throw InvalidParameter("Invalid order by field name: " + field.substr(0, dot) +
                             ", only `metrics.<name>` is allowed.");
    key = {Entity::kMetric, field.substr(dot + 1), key.ascending};
  } else if (std::find(kModelAttributes.begin(), kModelAttributes.end(), field) == kModelAttributes.end()) {
    throw InvalidParameter("Invalid order by field name: " + field + ".");
  }
  if (!item.value("dataset_digest", "").empty() && item.value("dataset_name", "").empty())
    throw InvalidParameter("`dataset_digest` can only be specified if `dataset_name` is also specified.");
  return key;
}

}  // namespace

ApiResponse TrackingApi::Call::SearchLoggedModels() {
  const json& b = Body();
  Result<std::vector<Clause>> parsed =
      ParseFilter(Text("filter").value_or(""), kModelAttributes, kModelNumbers);
  if (!parsed.ok()) throw InvalidParameter(parsed.status().message());
  const std::vector<Clause>& filter = *parsed;
  std::vector<DatasetFilter> datasets = DatasetsOf(b);
  bool metric_clause =
      std::any_of(filter.begin(), filter.end(), [](const Clause& c) { return c.entity == Entity::kMetric; });

  std::vector<OrderKey> order;
  bool by_creation = false, by_id = false;
  for (const json& item : b.value("order_by", json::array())) {
    order.push_back(OrderItem(item));
    by_creation |= order.back().entity == Entity::kAttribute && StartsWith(order.back().key, "creation_time");
    by_id |= order.back().entity == Entity::kAttribute && order.back().key == "model_id";
  }
  if (!by_creation) order.push_back({Entity::kAttribute, "creation_timestamp", false});
  if (!by_id) order.push_back({Entity::kAttribute, "model_id", true});

  auto [start, count] = Page(kLargestPage, kDefaultPage);

  std::vector<std::pair<Searchable, json>> found;
  for (const json& id : b.value("experiment_ids", json::array())) {
    if (!id.is_string()) throw InvalidParameter("experiment_ids holds strings");
    ExperimentInfo e = ExperimentById(id.get<std::string>());
    Result<std::vector<RunRecord>> runs = api_.store_.ListRuns(e.name);
    ThrowIfError(runs.status());
    for (const RunRecord& r : *runs) {
      if (!api_.RunInScope(r.id)) continue;  // not this script's (TrackingApi::Confine)
      for (const auto& [k, v] : r.tags) {
        if (!StartsWith(k, kModelTagPrefix)) continue;
        std::optional<json> stored = StoredRecord(v);
        if (!stored) continue;  // forged: not a model trainbench wrote
        json model = ModelJson(r, k.substr(kModelTagPrefix.size()), *stored);
        Searchable s = ModelSearchable(model, datasets);
        if (!datasets.empty() && !metric_clause && s.metrics.empty()) continue;
        if (Matches(filter, s, kModelNumbers)) found.emplace_back(std::move(s), std::move(model));
      }
    }
  }
  return JsonAnswer(SortedPage(found, order, kModelNumbers, start, count, "models"));
}

}  // namespace tb
