#include <algorithm>
#include <charconv>
#include <cmath>
#include <future>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "analyze/phases.h"
#include "analyze/report.h"
#include "base/strings.h"
#include "base/time.h"
#include "http/api_toolkit.h"
#include "metrics/catalog.h"
#include "query/chart_series.h"
#include "query/downsample.h"
#include "query/energy.h"
#include "query/export.h"
#include "query/series_reader.h"
#include "serve/serve_call.h"

namespace tb {
namespace {

using json = nlohmann::json;

constexpr std::string_view kPrefix = "/api/v1/";

bool IsRunId(std::string_view s) {
  return s.size() == 32 &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// Metric names and label sets as trainbench writes them.
bool IsMetricText(std::string_view s, size_t max) {
  if (s.size() > max) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '.' || c == '-' || c == '/' || c == ' ' || c == '=' ||
           c == ',' || c == ':' || c >= 0x80;
  });
}

}  // namespace

// The routes of /api/v1 and their handlers: one row an endpoint. `at` holds the path's
// values for the pattern's {…}, in order.
using Captures = RouteCaptures;
struct ServeRouteTable {
  struct Row {
    Route route;
    ApiResponse (*handle)(ServeApi::Call& c, const Captures& at);
  };
  static const std::vector<Row>& Rows() {
    using Call = ServeApi::Call;
    static const std::vector<Row> rows = {
        {{"GET", "experiments", "read"}, [](Call& c, const Captures&) { return c.Experiments(); }},
        {{"GET", "experiments/{id or name}/workloads", "read"},
         [](Call& c, const Captures& at) { return c.Workloads(c.Experiment(at[0])); }},
        {{"GET", "experiments/{id or name}/report", "read"},
         [](Call& c, const Captures& at) { return c.Report(c.Experiment(at[0])); }},
        {{"GET", "experiments/{id or name}/bars", "read"},
         [](Call& c, const Captures& at) { return c.Bars(c.Experiment(at[0])); }},
        {{"GET", "runs", "read"}, [](Call& c, const Captures&) { return c.Runs(); }},
        {{"GET", "runs/{id}", "read"}, [](Call& c, const Captures& at) { return c.RunDetail(c.Run(at[0])); }},
        {{"GET", "runs/{id}/events", "read"},
         [](Call& c, const Captures& at) { return c.Events(c.Run(at[0])); }},
        {{"GET", "runs/{id}/phases", "read"},
         [](Call& c, const Captures& at) { return c.Phases(c.Run(at[0])); }},
        {{"GET", "runs/{id}/artifacts", "read"},
         [](Call& c, const Captures& at) { return c.Artifacts(c.Run(at[0])); }},
        {{"GET", "runs/{id}/artifacts/{name}", "read", true},
         [](Call& c, const Captures& at) { return c.Artifact(c.Run(at[0]), at[1]); }},
        {{"GET", "events", "read"}, [](Call& c, const Captures&) { return c.ManyEvents(); }},
        {{"GET", "metrics", "read"}, [](Call& c, const Captures&) { return c.Metrics(); }},
        {{"GET", "series", "read"}, [](Call& c, const Captures&) { return c.Series(); }},
        {{"GET", "aggregate", "read"}, [](Call& c, const Captures&) { return c.AggregateWorkloads(); }},
        {{"GET", "export", "read"}, [](Call& c, const Captures&) { return c.Export(); }},
        {{"GET", "figure", "read"}, [](Call& c, const Captures&) { return c.FigureFile(); }},
    };
    return rows;
  }
};

std::vector<Route> ServeRoutes() {
  std::vector<Route> out;
  for (const ServeRouteTable::Row& row : ServeRouteTable::Rows()) out.push_back(row.route);
  return out;
}

ApiResponse ServeApi::Call::Dispatch() {
  if (request_.method != "GET")
    throw ApiError(405, "METHOD_NOT_ALLOWED", "the API under /api/v1 is read with GET");
  std::string_view path = std::string_view(request_.path).substr(kPrefix.size());
  Captures at;
  for (const ServeRouteTable::Row& row : ServeRouteTable::Rows()) {
    if (row.route.method == request_.method && MatchRoute(row.route, path, at)) return row.handle(*this, at);
  }
  throw ApiError("ENDPOINT_NOT_FOUND", "no API resource at " + request_.path);
}

std::optional<std::string> ServeApi::Call::Param(const char* name) { return QueryParam(request_, name); }

std::optional<double> ServeApi::Call::Number(const char* name) {
  std::optional<std::string> v = Param(name);
  if (!v) return std::nullopt;
  std::optional<double> d = ParseDouble(*v);
  if (!d || !std::isfinite(*d))
    throw InvalidParameter(Concat({"'", name, "' must be a number, not '", *v, "'"}));
  return d;
}

size_t ServeApi::Call::Budget(size_t fallback) {
  std::optional<std::string> v = Param("budget");
  if (!v) return fallback;
  std::optional<int64_t> n = ParseInt(*v);
  if (!n || *n < 4 || static_cast<size_t>(*n) > kMaxBudget) {
    throw InvalidParameter("'budget' must be an integer from 4 to " + std::to_string(kMaxBudget) + ", not '" +
                           *v + "'");
  }
  return static_cast<size_t>(*n);
}

std::string ServeApi::Call::Metric(bool required) {
  std::optional<std::string> m = Param("metric");
  if (!m || m->empty()) {
    if (required) throw InvalidParameter("'metric' is required (GET /api/v1/metrics?runs=... lists them)");
    return "";
  }
  if (!IsMetricText(*m, 250)) throw InvalidParameter("'" + m->substr(0, 80) + "' is not a metric name");
  return *m;
}

std::optional<std::string> ServeApi::Call::Labels() {
  std::optional<std::string> l = Param("labels");
  if (l && !IsMetricText(*l, 1000)) throw InvalidParameter("'labels' is not a label set such as gpu=0");
  return l;
}

XAxis ServeApi::Call::Axis() {
  std::string x = Param("x").value_or("relative");
  std::optional<XAxis> axis = ParseXAxis(x);
  if (!axis) throw InvalidParameter("'x' must be relative, wall or step, not '" + x + "'");
  return *axis;
}

bool ServeApi::Call::XAsPlaces() {
  std::string form = Param("x_form").value_or("numbers");
  if (form != "numbers" && form != "places")
    throw InvalidParameter("'x_form' must be numbers or places, not '" + form.substr(0, 40) + "'");
  return form == "places";
}

std::vector<RunRecord> ServeApi::Call::RunsParam(const char* name, bool known_only) {
  std::optional<std::string> param = Param(name);
  if (!param || param->empty())
    throw InvalidParameter("'" + std::string(name) + "' is required: run ids separated by commas");
  std::vector<std::string> ids;
  std::set<std::string_view> seen;
  for (std::string_view id : Split(*param, ',')) {
    if (!seen.insert(id).second) continue;
    if (!IsRunId(id))
      throw InvalidParameter("'" + std::string(id.substr(0, 40)) + "' is not a run id (32 hex digits)");
    ids.emplace_back(id);
    if (ids.size() > kMaxRunsPerRequest) {
      throw InvalidParameter("at most " + std::to_string(kMaxRunsPerRequest) + " runs per request");
    }
  }
  Result<std::vector<RunRecord>> runs = store_.FindRunsById(ids);  // one read, not one a run
  ThrowIfError(runs.status());
  if (runs->size() < ids.size() && !known_only) {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i >= runs->size() || (*runs)[i].id != ids[i]) throw ResourceNotFound("no run " + ids[i]);
    }
  }
  return std::move(runs.value());
}

RunRecord ServeApi::Call::Run(std::string_view id) {
  if (!IsRunId(id))
    throw InvalidParameter("'" + std::string(id.substr(0, 40)) + "' is not a run id (32 hex digits)");
  Result<RunRecord> run = store_.FindRun(std::string(id));
  if (!run.ok() || run->id != id) throw ResourceNotFound("no run " + std::string(id));
  return std::move(run.value());
}

ExperimentInfo ServeApi::Call::Experiment(std::string_view key) {
  Result<std::vector<ExperimentInfo>> all = store_.ListExperiments();
  ThrowIfError(all.status());
  std::optional<int64_t> id = ParseInt(key);
  for (const ExperimentInfo& e : *all) {
    if ((id && e.id == *id) || e.name == key) return e;
  }
  throw ResourceNotFound("no experiment '" + std::string(key.substr(0, 80)) + "'");
}

std::vector<RunRecord> ServeApi::Call::RunsOf(const std::string& experiment) {
  Result<std::vector<RunRecord>> runs = store_.ListRuns(experiment);
  ThrowIfError(runs.status());
  return std::move(runs.value());
}

ServeApi::ServeApi(Store& store, size_t cache_points) : store_(store), reader_(store, cache_points) {}

ApiHandler ServeApi::Handler() {
  return [this](const ApiRequest& request) -> std::optional<ApiResponse> {
    if (!StartsWith(request.path, kPrefix)) return std::nullopt;
    return Handle(request);
  };
}

ApiResponse ServeApi::Handle(const ApiRequest& request) {
  return AnswerCall([&] {
    Call call(*this, request);
    return call.Dispatch();
  });
}

}  // namespace tb
