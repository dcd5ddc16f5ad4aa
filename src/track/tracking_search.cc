// experiments/search and runs/search, as MLflow's clients call them (mlflow.search_runs,
// MlflowClient.search_runs and search_experiments): a filter in MLflow's grammar
// (track/search_filter.h), order_by, max_results and an opaque page_token.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "http/api_toolkit.h"
#include "track/search_filter.h"
#include "track/tracking_call.h"

namespace tb {

using namespace tracking;  // NOLINT(google-build-using-namespace): this API's own helpers

namespace {

const std::vector<std::string> kRunAttributes = {"run_id",       "run_name",   "status",  "user_id",
                                                 "artifact_uri", "start_time", "end_time"};
const std::vector<std::string> kRunNumbers = {"start_time", "end_time"};
const std::vector<std::string> kExperimentAttributes = {"name", "experiment_id", "creation_time",
                                                        "last_update_time"};
const std::vector<std::string> kExperimentNumbers = {"creation_time", "last_update_time"};

std::vector<std::string> StringList(const json& body, const char* field) {
  std::vector<std::string> out;
  if (!body.contains(field) || body[field].is_null()) return out;
  if (!body[field].is_array()) {
    throw InvalidParameter(Concat({"Invalid value for parameter '", field, "': expected a list of strings"}));
  }
  for (const json& v : body[field]) {
    if (!v.is_string()) throw InvalidParameter(Concat({"Invalid value in '", field, "': expected a string"}));
    out.push_back(v.get<std::string>());
  }
  return out;
}

template <typename T>
T OrThrow(Result<T> r) {
  if (!r.ok()) throw InvalidParameter(r.status().message());
  return std::move(*r);
}

// The request's order_by items, then MLflow's default order and a tie-breaker.
std::vector<OrderKey> OrderOf(const json& body, const std::vector<std::string>& attributes,
                              const OrderKey& fallback, const OrderKey& tie) {
  std::vector<OrderKey> order;
  for (const std::string& item : StringList(body, "order_by"))
    order.push_back(OrThrow(ParseOrderBy(item, attributes)));
  order.push_back(fallback);
  order.push_back(tie);
  return order;
}

}  // namespace

namespace tracking {

json SortedPage(std::vector<std::pair<Searchable, json>>& found, const std::vector<OrderKey>& order,
                const std::vector<std::string>& numbers, size_t start, size_t count, const char* field) {
  std::stable_sort(found.begin(), found.end(),
                   [&](const auto& x, const auto& y) { return Before(x.first, y.first, order, numbers); });
  json out = {{field, json::array()}};
  for (size_t i = start; i < found.size() && i < start + count; ++i)
    out[field].push_back(std::move(found[i].second));
  if (start + count < found.size()) out["next_page_token"] = std::to_string(start + count);
  return out;
}

}  // namespace tracking

std::pair<size_t, size_t> TrackingApi::Call::Page(size_t limit, size_t fallback) {
  std::optional<int64_t> max;
  if (request_.method == "GET") {
    if (std::optional<std::string> text = Text("max_results")) {
      max = ParseInt(*text);
      if (!max) throw InvalidParameter("Invalid value for max_results: '" + *text + "' is not a number");
    }
  } else {
    max = Int(Body(), "max_results");
  }
  if (max && (*max < 1 || static_cast<size_t>(*max) > limit)) {
    throw InvalidParameter("Invalid value for parameter 'max_results' supplied. It must be at most " +
                           std::to_string(limit) + ", and at least 1");
  }
  size_t start = 0;
  if (std::optional<std::string> token = Text("page_token"); token && !token->empty()) {
    std::optional<uint64_t> n = ParseUint(*token);
    if (!n)
      throw InvalidParameter("Invalid page token '" + *token + "': pass the next_page_token of an answer");
    start = *n;
  }
  return {start, max ? static_cast<size_t>(*max) : fallback};
}

ApiResponse TrackingApi::Call::SearchExperiments() {
  const json& b = Body();
  std::vector<Clause> filter =
      OrThrow(ParseFilter(Text("filter").value_or(""), kExperimentAttributes, kExperimentNumbers));
  std::vector<OrderKey> order =
      OrderOf(b, kExperimentAttributes, {Entity::kAttribute, "last_update_time", false},
              {Entity::kAttribute, "experiment_id", true});
  auto [start, count] = Page(50000);
  // Every MLflow store has its Default experiment.
  ThrowIfError(api_.store_.EnsureExperiment(std::string(kDefaultExperiment)).status());
  Result<std::vector<ExperimentInfo>> all = api_.store_.ListExperiments();
  ThrowIfError(all.status());
  std::string view = Text("view_type").value_or("ACTIVE_ONLY");
  std::vector<std::pair<Searchable, json>> found;
  for (const ExperimentInfo& e : *all) {
    if (!InView(view, IsDeleted(e))) continue;
    Searchable s;
    for (const auto& [k, v] : e.tags) s.tags[k] = v;
    s.attributes = {{"name", e.name},
                    {"experiment_id", ApiExperimentId(e)},
                    {"creation_time", std::to_string(e.created_ms)},
                    {"last_update_time", std::to_string(e.created_ms)}};
    if (Matches(filter, s, kExperimentNumbers)) found.emplace_back(std::move(s), ExperimentJson(e));
  }
  return JsonAnswer(SortedPage(found, order, kExperimentNumbers, start, count, "experiments"));
}

ApiResponse TrackingApi::Call::SearchRuns() {
  const json& b = Body();
  std::vector<std::string> experiment_ids = StringList(b, "experiment_ids");
  std::vector<Clause> filter = OrThrow(ParseFilter(Text("filter").value_or(""), kRunAttributes, kRunNumbers));
  std::vector<OrderKey> order = OrderOf(b, kRunAttributes, {Entity::kAttribute, "start_time", false},
                                        {Entity::kAttribute, "run_id", true});
  auto [start, count] = Page(50000);
  // ACTIVE_ONLY (the default), DELETED_ONLY or ALL, as MLflow's ViewType.
  std::string view = Text("run_view_type").value_or("ACTIVE_ONLY");
  InView(view, false);  // refuses an unknown view type before any work
  std::vector<ExperimentInfo> experiments;
  experiments.reserve(experiment_ids.size());
  for (const std::string& id : experiment_ids) experiments.push_back(ExperimentById(id));

  std::vector<std::pair<Searchable, json>> found;
  for (const ExperimentInfo& e : experiments) {
    Result<std::vector<RunRecord>> runs = api_.store_.ListRuns(e.name);
    ThrowIfError(runs.status());
    for (const RunRecord& r : *runs) {
      if (!api_.RunInScope(r.id)) continue;  // not this script's (TrackingApi::Confine)
      // A deleted experiment's runs are deleted with it.
      if (!InView(view, IsDeleted(r) || IsDeleted(e))) continue;
      json run = RunJson(r);
      Searchable s;
      for (const std::string& key : kRunAttributes) {
        const json& v = run["info"].contains(key) ? run["info"][key] : json();
        if (v.is_string()) s.attributes[key] = v.get<std::string>();
        if (v.is_number()) s.attributes[key] = std::to_string(v.get<int64_t>());
      }
      for (const json& m : run["data"]["metrics"]) {
        std::optional<double> v = ValueOf(m["value"]);
        if (v) s.metrics[m["key"].get<std::string>()] = *v;
      }
      for (const auto& [k, v] : r.params) s.params[k] = v;
      for (const auto& [k, v] : r.tags) s.tags[k] = v;
      s.tags[kRunNameTag] = r.name;  // current after a rename, as MLflow keeps it
      for (const json& input : run["inputs"]["dataset_inputs"]) {
        std::map<std::string, std::string> d = {{"name", input["dataset"].value("name", "")},
                                                {"digest", input["dataset"].value("digest", "")}};
        for (const json& t : input.value("tags", json::array())) {
          if (t.value("key", "") == "mlflow.data.context") d["context"] = t.value("value", "");
        }
        s.datasets.push_back(std::move(d));
      }
      if (Matches(filter, s, kRunNumbers)) found.emplace_back(std::move(s), std::move(run));
    }
  }
  return JsonAnswer(SortedPage(found, order, kRunNumbers, start, count, "runs"));
}

}  // namespace tb
