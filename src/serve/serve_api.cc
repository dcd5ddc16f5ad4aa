#include "serve/serve_api.h"

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
#include "metrics/catalog.h"
#include "query/downsample.h"
#include "query/energy.h"
#include "query/export.h"

namespace tb {
namespace {

// A time in ms as int64, saturating: 1e300 is "after everything", not undefined.
int64_t SaturatedInt64(double ms) {
  if (ms >= 9.2e18) return std::numeric_limits<int64_t>::max();
  if (ms <= -9.2e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(ms);
}

// A run that has ended: its series are complete.
bool Finished(const RunRecord& r) { return r.end_ms > 0 && r.status != kRunning; }

using json = nlohmann::json;
constexpr std::string_view kPrefix = "/api/v1/";

struct HttpError {
  int status;
  std::string code;
  std::string message;
};

HttpError BadRequest(std::string message) { return {400, "INVALID_PARAMETER_VALUE", std::move(message)}; }
HttpError NotFound(std::string message) { return {404, "RESOURCE_DOES_NOT_EXIST", std::move(message)}; }

ApiResponse Json(const json& body) {
  return {200, "application/json", body.dump(-1, ' ', false, json::error_handler_t::replace), nullptr, {}};
}

void Check(const Status& s) {
  if (s.ok()) return;
  if (s.code() == Status::Code::kNotFound) throw NotFound(s.message());
  throw HttpError{500, "INTERNAL_ERROR", s.message()};
}

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

json FiniteOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

int64_t Duration(const RunRecord& r) { return (r.end_ms > 0 ? r.end_ms : WallMillis()) - r.start_ms; }

std::string TagValue(const RunRecord& r, std::string_view key) {
  for (const auto& [k, v] : r.tags) {
    if (k == key) return v;
  }
  return "";
}

json KeyValuesJson(const KeyValues& kvs) {
  json out = json::object();
  for (const auto& [k, v] : kvs) out[k] = v;
  return out;
}

std::string_view Unit(std::string_view metric) {
  const MetricInfo* info = FindMetric(metric);
  return info != nullptr ? info->unit : "";
}

enum class XAxis { kRelative, kWall, kStep };

// A JSON number in its shortest exact form; null for NaN and infinities.
void AppendNumber(std::string& out, double v, bool comma) {
  if (comma) out += ',';
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

}  // namespace

class ServeApi::Call {
 public:
  Call(ServeApi& api, const ApiRequest& request) : api_(api), store_(api.store_), request_(request) {}

  ApiResponse Dispatch() {
    if (request_.method != "GET")
      throw HttpError{405, "METHOD_NOT_ALLOWED", "the API under /api/v1 is read with GET"};
    std::vector<std::string_view> p = Split(std::string_view(request_.path).substr(kPrefix.size()), '/');
    while (!p.empty() && p.back().empty()) p.pop_back();
    if (p.size() == 1 && p[0] == "experiments") return Experiments();
    if (p.size() == 3 && p[0] == "experiments" && p[2] == "workloads") return Workloads(Experiment(p[1]));
    if (p.size() == 3 && p[0] == "experiments" && p[2] == "report") return Report(Experiment(p[1]));
    if (p.size() == 1 && p[0] == "runs") return Runs();
    if (p.size() >= 2 && p[0] == "runs") {
      RunRecord run = Run(p[1]);
      if (p.size() == 2) return RunDetail(run);
      if (p.size() == 3 && p[2] == "events") return Events(run);
      if (p.size() == 3 && p[2] == "phases") return Phases(run);
      if (p.size() == 3 && p[2] == "artifacts") return Artifacts(run);
      if (p.size() >= 4 && p[2] == "artifacts") {
        std::string name(std::string_view(request_.path).substr(request_.path.find("/artifacts/") + 11));
        return Artifact(run, name);
      }
    }
    if (p.size() == 1 && p[0] == "metrics") return Metrics();
    if (p.size() == 1 && p[0] == "series") return Series();
    if (p.size() == 1 && p[0] == "aggregate") return AggregateWorkloads();
    if (p.size() == 1 && p[0] == "export") return Export();
    throw HttpError{404, "ENDPOINT_NOT_FOUND", "no API resource at " + request_.path};
  }

 private:
  // --- parameters ---
  std::optional<std::string> Param(const char* name) {
    auto it = request_.query.find(name);
    if (it == request_.query.end()) return std::nullopt;
    return it->second;
  }

  std::optional<double> Number(const char* name) {
    std::optional<std::string> v = Param(name);
    if (!v) return std::nullopt;
    std::optional<double> d = ParseDouble(*v);
    if (!d || !std::isfinite(*d)) throw BadRequest(Concat({"'", name, "' must be a number, not '", *v, "'"}));
    return d;
  }

  size_t Budget(size_t fallback) {
    std::optional<std::string> v = Param("budget");
    if (!v) return fallback;
    std::optional<int64_t> n = ParseInt(*v);
    if (!n || *n < 4 || static_cast<size_t>(*n) > kMaxBudget) {
      throw BadRequest("'budget' must be an integer from 4 to " + std::to_string(kMaxBudget) + ", not '" +
                       *v + "'");
    }
    return static_cast<size_t>(*n);
  }

  std::string Metric(bool required) {
    std::optional<std::string> m = Param("metric");
    if (!m || m->empty()) {
      if (required) throw BadRequest("'metric' is required (GET /api/v1/metrics?runs=... lists them)");
      return "";
    }
    if (!IsMetricText(*m, 250)) throw BadRequest("'" + m->substr(0, 80) + "' is not a metric name");
    return *m;
  }

  std::optional<std::string> Labels() {
    std::optional<std::string> l = Param("labels");
    if (l && !IsMetricText(*l, 1000)) throw BadRequest("'labels' is not a label set such as gpu=0");
    return l;
  }

  XAxis Axis() {
    std::string x = Param("x").value_or("relative");
    if (x == "relative") return XAxis::kRelative;
    if (x == "wall") return XAxis::kWall;
    if (x == "step") return XAxis::kStep;
    throw BadRequest("'x' must be relative, wall or step, not '" + x + "'");
  }

  std::vector<RunRecord> RunsParam() {
    std::optional<std::string> ids = Param("runs");
    if (!ids || ids->empty()) throw BadRequest("'runs' is required: run ids separated by commas");
    std::vector<RunRecord> runs;
    std::set<std::string> seen;
    for (std::string_view id : Split(*ids, ',')) {
      if (!seen.insert(std::string(id)).second) continue;
      runs.push_back(Run(id));
      if (runs.size() > kMaxRunsPerRequest) {
        throw BadRequest("at most " + std::to_string(kMaxRunsPerRequest) + " runs per request");
      }
    }
    return runs;
  }

  // --- lookups ---
  RunRecord Run(std::string_view id) {
    if (!IsRunId(id))
      throw BadRequest("'" + std::string(id.substr(0, 40)) + "' is not a run id (32 hex digits)");
    Result<RunRecord> run = store_.FindRun(std::string(id));
    if (!run.ok() || run->id != id) throw NotFound("no run " + std::string(id));
    return std::move(run.value());
  }

  // The run's phases and steady-state figures (computed from its samples; cached while
  // nothing changes: a finished run's).
  ApiResponse Phases(const RunRecord& run) {
    bool finished = Finished(run);
    if (finished) {
      std::lock_guard lock(api_.mu_);
      if (auto it = api_.phases_.find(run.id); it != api_.phases_.end())
        return {200, "application/json", it->second, nullptr, {}};
    }
    Result<RunAnalysis> a = AnalyzeStoredRun(store_, run);
    Check(a.status());
    std::string body = AnalysisJson(*a);
    if (finished) {
      std::lock_guard lock(api_.mu_);
      if (api_.phases_.size() >= 10000) api_.phases_.clear();
      api_.phases_[run.id] = body;
    }
    return {200, "application/json", std::move(body), nullptr, {}};
  }

  // `trainbench report` for the web: ?format=html (default), csv or json (the table's rows).
  ApiResponse Report(const ExperimentInfo& e) {
    std::string format = Param("format").value_or("html");
    if (format != "html" && format != "csv" && format != "text")
      throw BadRequest("'format' must be html, csv or text");
    Result<ExperimentReport> report = BuildReport(store_, e.name);
    Check(report.status());
    if (format == "csv") return {200, "text/csv", ReportCsv(*report), nullptr, {}};
    if (format == "text") return {200, "text/plain; charset=utf-8", ReportTable(*report), nullptr, {}};
    return {200, "text/html; charset=utf-8", ReportHtml(*report), nullptr, {}};
  }

  ExperimentInfo Experiment(std::string_view key) {
    Result<std::vector<ExperimentInfo>> all = store_.ListExperiments();
    Check(all.status());
    std::optional<int64_t> id = ParseInt(key);
    for (const ExperimentInfo& e : *all) {
      if ((id && e.id == *id) || e.name == key) return e;
    }
    throw NotFound("no experiment '" + std::string(key.substr(0, 80)) + "'");
  }

  std::vector<RunRecord> RunsOf(const std::string& experiment) {
    Result<std::vector<RunRecord>> runs = store_.ListRuns(experiment);
    Check(runs.status());
    return std::move(runs.value());
  }

  // --- JSON of things ---
  json RunJson(const RunRecord& r, bool with_summary) {
    json j = {{"id", r.id},
              {"name", r.name},
              {"experiment", r.experiment},
              {"workload", r.workload},
              {"status", r.status},
              {"start_ms", r.start_ms},
              {"end_ms", r.end_ms > 0 ? json(r.end_ms) : json(nullptr)},
              {"duration_ms", Duration(r)},
              {"command", r.command},
              {"host", r.host},
              {"devices", r.devices},
              {"collocation", TagValue(r, "trainbench.collocation")},
              {"letter", TagValue(r, "trainbench.letter")},
              {"simulated_gpu", TagValue(r, kSimulatedGpuTag) == "true"},
              {"exit_code", r.exit_code ? json(*r.exit_code) : json(nullptr)},
              {"reason", r.reason},
              {"params", KeyValuesJson(r.params)},
              {"tags", KeyValuesJson(r.tags)}};
    if (with_summary) j["summary"] = Summary(r.id);
    return j;
  }

  // Per series, from the statistics kept beside each chunk (no decoding): what the run
  // table shows. Points still in the journal of a running run are not counted yet.
  json Summary(const std::string& run_id) {
    Result<std::vector<SeriesInfo>> series = store_.ListSeries(run_id);
    Check(series.status());
    json out = json::array();
    for (const SeriesInfo& s : *series) {
      Result<std::vector<ChunkRecord>> chunks = store_.ListChunkInfo(s.id);
      Check(chunks.status());
      int64_t count = 0;
      double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
      bool any = false;
      for (const ChunkRecord& c : *chunks) {
        count += c.count;
        sum += c.sum;
        if (c.min) lo = std::min(lo, *c.min), any = true;
        if (c.max) hi = std::max(hi, *c.max);
      }
      out.push_back(
          {{"metric", s.metric},
           {"labels", s.labels},
           {"unit", Unit(s.metric)},
           {"count", count},
           {"min", any ? FiniteOrNull(lo) : json(nullptr)},
           {"max", any ? FiniteOrNull(hi) : json(nullptr)},
           {"mean", any && count > 0 ? FiniteOrNull(sum / static_cast<double>(count)) : json(nullptr)}});
    }
    return out;
  }

  // --- resources ---
  ApiResponse Experiments() {
    Result<std::vector<ExperimentInfo>> all = store_.ListExperiments();
    Check(all.status());
    Result<std::vector<RunRecord>> runs = store_.ListRuns("");
    Check(runs.status());
    json list = json::array();
    for (const ExperimentInfo& e : *all) {
      int64_t count = 0, running = 0, last = 0;
      std::set<std::string> workloads;
      for (const RunRecord& r : *runs) {
        if (r.experiment != e.name) continue;
        ++count;
        running += r.status == kRunning;
        last = std::max(last, r.start_ms);
        if (!r.workload.empty()) workloads.insert(r.workload);
      }
      list.push_back({{"id", e.id},
                      {"name", e.name},
                      {"created_ms", e.created_ms},
                      {"runs", count},
                      {"running", running},
                      {"workloads", workloads.size()},
                      {"last_start_ms", last}});
    }
    return Json({{"experiments", list}});
  }

  ApiResponse Workloads(const ExperimentInfo& e) {
    std::vector<std::string> order;
    std::unordered_map<std::string, json> by_workload;
    for (const RunRecord& r : RunsOf(e.name)) {
      std::string w = r.workload.empty() ? r.id.substr(0, 8) : r.workload;  // a lone run is its own workload
      if (!by_workload.count(w)) {
        order.push_back(w);
        by_workload[w] = {{"workload", w}, {"runs", json::array()}, {"start_ms", r.start_ms}, {"end_ms", 0}};
      }
      json& entry = by_workload[w];
      entry["runs"].push_back({{"id", r.id},
                               {"name", r.name},
                               {"letter", TagValue(r, "trainbench.letter")},
                               {"status", r.status},
                               {"start_ms", r.start_ms},
                               {"duration_ms", Duration(r)}});
      entry["start_ms"] = std::min(entry["start_ms"].get<int64_t>(), r.start_ms);
      entry["end_ms"] = std::max(entry["end_ms"].get<int64_t>(), r.start_ms + Duration(r));
    }
    json list = json::array();
    for (const std::string& w : order) {
      json& entry = by_workload[w];
      entry["duration_ms"] = entry["end_ms"].get<int64_t>() - entry["start_ms"].get<int64_t>();
      list.push_back(std::move(entry));
    }
    return Json({{"experiment", e.name}, {"workloads", list}});
  }

  ApiResponse Runs() {
    std::string experiment;
    if (std::optional<std::string> e = Param("experiment")) experiment = Experiment(*e).name;
    std::optional<std::string> workload = Param("workload"), status = Param("status"), text = Param("q");
    if (status && *status != kRunning && *status != kFinished && *status != kFailed && *status != kKilled) {
      throw BadRequest("'status' must be RUNNING, FINISHED, FAILED or KILLED");
    }
    KeyValues want_params, want_tags;
    for (const auto& [k, v] : request_.query) {
      if (StartsWith(k, "param.")) want_params.emplace_back(k.substr(6), v);
      if (StartsWith(k, "tag.")) want_tags.emplace_back(k.substr(4), v);
    }
    auto has = [](const KeyValues& kvs, const std::pair<std::string, std::string>& want) {
      return std::find(kvs.begin(), kvs.end(), want) != kvs.end();
    };
    bool summaries = Param("summary").value_or("1") != "0";
    json list = json::array();
    for (const RunRecord& r : RunsOf(experiment)) {
      if (workload && r.workload != *workload) continue;
      if (status && r.status != *status) continue;
      if (text && r.name.find(*text) == std::string::npos && r.command.find(*text) == std::string::npos &&
          r.id.find(*text) == std::string::npos) {
        continue;
      }
      if (!std::all_of(want_params.begin(), want_params.end(), [&](auto& w) { return has(r.params, w); }))
        continue;
      if (!std::all_of(want_tags.begin(), want_tags.end(), [&](auto& w) { return has(r.tags, w); })) continue;
      list.push_back(RunJson(r, summaries));
    }
    return Json({{"runs", list}});
  }

  ApiResponse RunDetail(const RunRecord& r) {
    json j = RunJson(r, true);
    // The run's GPU energy as `show` and the report compute it (query/energy.h).
    Result<std::optional<GpuEnergy>> energy = RunGpuEnergy(store_, r.id);
    Check(energy.status());
    j["energy"] = nullptr;
    if (*energy) {
      const GpuEnergy& e = **energy;
      j["energy"] = {{"gpu_joules", e.joules},
                     {"run_joules", e.run_share_joules ? json(*e.run_share_joules) : json(nullptr)},
                     {"gpus", e.gpus},
                     {"integrated", e.integrated}};
    }
    return Json(j);
  }

  ApiResponse Events(const RunRecord& r) {
    Result<std::vector<EventRecord>> events = store_.ListEvents(r.id);
    Check(events.status());
    json list = json::array();
    for (const EventRecord& e : *events) {
      list.push_back({{"time_ms", e.time_ms},
                      {"relative_s", (e.time_ms - r.start_ms) / 1000.0},
                      {"kind", e.kind},
                      {"label", e.label}});
    }
    return Json({{"run", r.id}, {"events", list}});
  }

  ApiResponse Artifacts(const RunRecord& r) {
    Result<std::vector<ArtifactRecord>> list = store_.ListArtifacts(r.id);
    Check(list.status());
    json out = json::array();
    for (const ArtifactRecord& a : *list) out.push_back({{"name", a.name}, {"size", a.size}});
    return Json({{"run", r.id}, {"artifacts", out}});
  }

  // The store names the artifact and where it is: request text never becomes a path.
  ApiResponse Artifact(const RunRecord& r, const std::string& name) {
    Result<ArtifactRecord> a = store_.GetArtifact(r.id, name);
    if (!a.ok()) throw NotFound("run " + r.id + " has no artifact '" + name.substr(0, 200) + "'");
    ApiResponse out{200, "application/octet-stream", a->content, nullptr, {}};
    if (name.ends_with(".log") || name.ends_with(".txt")) out.content_type = "text/plain; charset=utf-8";
    if (name.ends_with(".json")) out.content_type = "application/json";
    if (!a->path.empty()) {
      auto file = std::make_shared<std::FILE*>(std::fopen(a->path.c_str(), "rb"));
      if (*file == nullptr) throw NotFound("the file of artifact '" + name + "' is gone");
      out.stream = [file](std::string& piece) {
        char buf[65536];
        size_t n = std::fread(buf, 1, sizeof buf, *file);
        piece.append(buf, n);
        if (n < sizeof buf) {
          std::fclose(*file);
          *file = nullptr;
          return false;
        }
        return true;
      };
    }
    std::string base = name.substr(name.rfind('/') + 1);
    out.headers.emplace_back("Content-Disposition", "inline; filename=\"" + base + "\"");
    return out;
  }

  ApiResponse Metrics() {
    std::vector<RunRecord> runs = RunsParam();
    std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>> metrics;  // labels, runs
    for (const RunRecord& r : runs) {
      Result<std::vector<SeriesInfo>> series = store_.ListSeries(r.id);
      Check(series.status());
      for (const SeriesInfo& s : *series) {
        metrics[s.metric].first.insert(s.labels);
        metrics[s.metric].second.insert(r.id);
      }
    }
    json list = json::array();
    for (const auto& [metric, seen] : metrics) {
      const MetricInfo* info = FindMetric(metric);
      std::string source = metric.substr(0, metric.find('.'));
      list.push_back({{"metric", metric},
                      {"unit", info != nullptr ? info->unit : ""},
                      {"source", source},
                      {"description", info != nullptr ? info->description : ""},
                      {"radt_name", info != nullptr ? info->radt_name : ""},
                      {"labels", seen.first},
                      {"runs", seen.second.size()}});
    }
    return Json({{"metrics", list}});
  }

  struct Selected {
    const RunRecord* run;
    SeriesInfo series;
  };

  // The series of `metric` (with `labels` when given) of each run; 404 when none has it.
  std::vector<Selected> Select(const std::vector<RunRecord>& runs, const std::string& metric,
                               const std::optional<std::string>& labels) {
    std::vector<Selected> out;
    for (const RunRecord& r : runs) {
      Result<std::shared_ptr<const std::vector<SeriesInfo>>> series = api_.SeriesOf(r);
      Check(series.status());
      for (const SeriesInfo& s : **series) {
        if ((metric.empty() || s.metric == metric) && (!labels || s.labels == *labels))
          out.push_back({&r, s});
      }
    }
    if (out.empty() && !metric.empty()) {
      throw NotFound("none of the runs has the metric '" + metric + "'" +
                     (labels ? " with labels '" + *labels + "'" : ""));
    }
    return out;
  }

  ApiResponse Series() {
    std::vector<RunRecord> runs = RunsParam();
    std::string metric = Metric(true);
    std::optional<std::string> labels = Labels();
    XAxis axis = Axis();
    std::optional<double> from = Number("from"), to = Number("to"), since = Number("since");
    if (from && to && *from > *to) throw BadRequest("'from' must not be after 'to'");
    bool full = !Param("budget");
    size_t budget = Budget(0);
    std::vector<Selected> selected = Select(runs, metric, labels);

    // Also called by the stream after this Call is gone: it holds nothing of it.
    ServeApi* api = &api_;
    auto series_json = [api, axis, from, to, since, budget, full](const Selected& s) -> std::string {
      Result<std::shared_ptr<const std::vector<Point>>> loaded = api->Points(s.series.id, Finished(*s.run));
      Check(loaded.status());
      std::shared_ptr<const std::vector<Point>> points = *loaded;
      const std::vector<Point>& p = *points;
      double start = static_cast<double>(s.run->start_ms);
      auto x_of = [&](size_t i) -> double {
        switch (axis) {
          case XAxis::kRelative:
            return (static_cast<double>(p[i].time_ms) - start) / 1000.0;
          case XAxis::kWall:
            return static_cast<double>(p[i].time_ms);
          case XAxis::kStep:
            return static_cast<double>(p[i].step);
        }
        return 0.0;
      };
      int64_t since_ms = since ? SaturatedInt64(*since) : std::numeric_limits<int64_t>::min();
      bool time_sorted = std::is_sorted(p.begin(), p.end(),
                                        [](const Point& a, const Point& b) { return a.time_ms < b.time_ms; });
      // Usually the points are in time order and are read in place; a script may log out
      // of order and steps may repeat or be absent: then an index in x order is built.
      bool in_place = time_sorted && axis != XAxis::kStep;
      size_t first = 0;
      std::vector<size_t> order;
      if (in_place) {
        first =
            static_cast<size_t>(std::upper_bound(p.begin(), p.end(), since_ms,
                                                 [](int64_t t, const Point& pt) { return t < pt.time_ms; }) -
                                p.begin());
      } else {
        for (size_t i = 0; i < p.size(); ++i) {
          if (p[i].time_ms > since_ms && !(axis == XAxis::kStep && p[i].step == kNoStep)) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x_of(a) < x_of(b); });
      }
      size_t n = in_place ? p.size() - first : order.size();
      auto index = [&](size_t k) { return in_place ? first + k : order[k]; };
      auto xs = [&](size_t k) { return x_of(index(k)); };
      auto ys = [&](size_t k) { return p[index(k)].value; };
      double lo = from.value_or(n == 0 ? 0 : xs(0));
      double hi = to.value_or(n == 0 ? 0 : xs(n - 1));
      std::vector<size_t> keep =
          DownsampleIndices(n, xs, ys, lo, hi, full ? std::numeric_limits<size_t>::max() : budget);
      int64_t last_ms = p.empty() ? 0 : p.back().time_ms;
      if (!time_sorted) {
        for (const Point& pt : p) last_ms = std::max(last_ms, pt.time_ms);
      }
      std::string out = json{{"run", s.run->id},          {"metric", s.series.metric},
                             {"labels", s.series.labels}, {"unit", Unit(s.series.metric)},
                             {"total_points", p.size()},  {"in_range", n},
                             {"last_ms", last_ms}}
                            .dump();
      out.pop_back();  // the closing brace: the arrays follow
      out.reserve(out.size() + keep.size() * 26 + 32);
      out += ", \"x\": [";
      for (size_t k = 0; k < keep.size(); ++k) AppendNumber(out, xs(keep[k]), k > 0);
      out += "], \"y\": [";
      for (size_t k = 0; k < keep.size(); ++k) AppendNumber(out, ys(keep[k]), k > 0);
      out += "]}";
      return out;
    };

    std::string x_name = axis == XAxis::kRelative ? "relative" : axis == XAxis::kWall ? "wall" : "step";
    if (!full) {
      // Series are independent: half of them on a second thread.
      std::vector<std::string> parts(selected.size());
      auto work = [&](size_t parity) {
        for (size_t i = parity; i < selected.size(); i += 2) parts[i] = series_json(selected[i]);
      };
      std::future<void> odd;
      if (selected.size() > 1) odd = std::async(std::launch::async, work, 1);
      work(0);
      if (odd.valid()) odd.get();  // rethrows what the other thread threw
      std::string body =
          "{\"x\": \"" + x_name + "\", \"budget\": " + std::to_string(budget) + ", \"series\": [";
      for (size_t i = 0; i < parts.size(); ++i) {
        if (i > 0) body += ", ";
        body += parts[i];
      }
      body += "]}";
      return {200, "application/json", std::move(body), nullptr, {}};
    }
    // Full resolution: one series at a time, streamed.
    auto state = std::make_shared<std::pair<std::vector<Selected>, size_t>>(std::move(selected), 0);
    auto keep_runs = std::make_shared<std::vector<RunRecord>>(std::move(runs));
    ApiResponse out{
        200, "application/json", "{\"x\": \"" + x_name + "\", \"budget\": null, \"series\": [", nullptr, {}};
    out.stream = [state, keep_runs, series_json](std::string& piece) mutable {
      auto& [list, next] = *state;
      if (next < list.size()) {
        if (next > 0) piece += ", ";
        try {
          piece += series_json(list[next]);
        } catch (const HttpError&) {
          return false;  // the store failed mid-answer: the client sees a truncated body
        }
        ++next;
      }
      if (next < list.size()) return true;
      piece += "]}";
      return false;
    };
    // The Selected entries point into the runs vector now owned by the stream.
    for (size_t i = 0; i < state->first.size(); ++i) {
      for (const RunRecord& r : *keep_runs) {
        if (r.id == state->first[i].series.run_id) state->first[i].run = &r;
      }
    }
    return out;
  }

  ApiResponse AggregateWorkloads() {
    std::optional<std::string> spec = Param("workloads");
    if (!spec || spec->empty())
      throw BadRequest("'workloads' is required: EXPERIMENT:WORKLOAD separated by commas");
    std::string metric = Metric(true);
    std::optional<std::string> labels = Labels();
    size_t buckets = Budget(1000);
    if (buckets > kMaxAggregateBuckets) {
      throw BadRequest("'budget' of an aggregate is at most " + std::to_string(kMaxAggregateBuckets) +
                       " buckets (a chart is narrower); zoom in with from and to for detail");
    }
    std::optional<double> from = Number("from"), to = Number("to");
    if (from && to && *from > *to) throw BadRequest("'from' must not be after 'to'");
    // Each workload once, and a bounded number of them.
    std::vector<std::string_view> wanted;
    for (std::string_view w : Split(*spec, ',')) {
      if (std::find(wanted.begin(), wanted.end(), w) == wanted.end()) wanted.push_back(w);
    }
    if (wanted.size() > kMaxAggregateWorkloads) {
      throw BadRequest("at most " + std::to_string(kMaxAggregateWorkloads) +
                       " workloads in one aggregate request; ask for the others in another");
    }
    json list = json::array();
    for (std::string_view w : wanted) {
      size_t colon = w.rfind(':');
      if (colon == std::string_view::npos)
        throw BadRequest("a workload is EXPERIMENT:WORKLOAD, not '" + std::string(w) + "'");
      ExperimentInfo e = Experiment(w.substr(0, colon));
      std::string workload(w.substr(colon + 1));
      std::vector<RunRecord> runs;
      for (RunRecord& r : RunsOf(e.name)) {
        if (r.workload == workload) runs.push_back(std::move(r));
      }
      if (runs.empty()) throw NotFound("experiment '" + e.name + "' has no workload '" + workload + "'");
      std::vector<XYSeries> aligned;
      json run_ids = json::array();
      double longest = 0;
      for (const Selected& s : Select(runs, metric, labels)) {
        if (!labels && !aligned.empty() && run_ids.back() == s.run->id) continue;  // first label set per run
        std::shared_ptr<const std::vector<Point>> points = Load(s.series.id);
        XYSeries xy;
        for (const Point& p : *points) {
          xy.x.push_back((static_cast<double>(p.time_ms) - static_cast<double>(s.run->start_ms)) / 1000.0);
          xy.y.push_back(p.value);
        }
        if (!std::is_sorted(xy.x.begin(), xy.x.end())) continue;
        if (!xy.x.empty()) longest = std::max(longest, xy.x.back());
        aligned.push_back(std::move(xy));
        run_ids.push_back(s.run->id);
      }
      Band band = Aggregate(aligned, from.value_or(0), to.value_or(longest), buckets);
      json mean = json::array(), lo = json::array(), hi = json::array();
      for (size_t i = 0; i < band.x.size(); ++i) {
        mean.push_back(FiniteOrNull(band.mean[i]));
        lo.push_back(FiniteOrNull(band.min[i]));
        hi.push_back(FiniteOrNull(band.max[i]));
      }
      list.push_back({{"experiment", e.name},
                      {"workload", workload},
                      {"runs", run_ids},
                      {"x", band.x},
                      {"mean", mean},
                      {"min", lo},
                      {"max", hi},
                      {"n", band.runs}});
    }
    return Json({{"x", "relative"}, {"metric", metric}, {"workloads", list}});
  }

  ApiResponse Export() {
    std::vector<RunRecord> runs = RunsParam();
    std::string metric = Metric(false);
    std::string format = Param("format").value_or("csv");
    if (format != "csv" && format != "json") throw BadRequest("'format' must be csv or json");
    std::vector<Selected> selected = Select(runs, metric, Labels());
    bool csv = format == "csv";
    auto state = std::make_shared<std::pair<std::vector<Selected>, size_t>>(std::move(selected), 0);
    ServeApi* api = &api_;
    ApiResponse out{200,
                    csv ? "text/csv" : "application/json",
                    csv ? "run_id,metric,labels,time_ms,step,value\n" : "{\"series\": [",
                    nullptr,
                    {}};
    out.headers.emplace_back("Content-Disposition", std::string("attachment; filename=\"trainbench-export.") +
                                                        (csv ? "csv" : "json") + "\"");
    out.stream = [state, api, csv](std::string& piece) {
      auto& [list, next] = *state;
      if (next < list.size()) {
        const SeriesInfo& s = list[next].series;
        Result<std::shared_ptr<const std::vector<Point>>> points = api->Points(s.id);
        if (points.ok()) AppendExport(piece, s, **points, csv, next > 0);
        ++next;
      }
      if (next < list.size()) return true;
      if (!csv) piece += "]}";
      return false;
    };
    return out;
  }

  static void AppendExport(std::string& out, const SeriesInfo& s, const std::vector<Point>& points, bool csv,
                           bool comma) {
    if (csv) {
      std::string prefix = s.run_id + "," + s.metric + ",\"" + s.labels + "\",";
      size_t at = out.size();
      out.resize(at + points.size() * (prefix.size() + 48));
      char* w = out.data() + at;
      for (const Point& p : points) {
        std::copy(prefix.begin(), prefix.end(), w);
        w += prefix.size();
        w = std::to_chars(w, w + 24, p.time_ms).ptr;
        *w++ = ',';
        if (p.step != kNoStep) w = std::to_chars(w, w + 24, p.step).ptr;
        *w++ = ',';
        if (std::isfinite(p.value)) {
          w = std::to_chars(w, w + 24, p.value).ptr;
        } else {
          std::string text = FormatDouble(p.value);  // nan, inf, -inf
          std::copy(text.begin(), text.end(), w);
          w += text.size();
        }
        *w++ = '\n';
      }
      out.resize(static_cast<size_t>(w - out.data()));
      return;
    }
    json points_json = json::array();
    for (const Point& p : points) {
      json v = std::isnan(p.value)   ? json("NaN")
               : std::isinf(p.value) ? json(p.value > 0 ? "Infinity" : "-Infinity")
                                     : json(p.value);
      points_json.push_back(p.step == kNoStep ? json{p.time_ms, v} : json{p.time_ms, v, p.step});
    }
    if (comma) out += ", ";
    out += json{{"run_id", s.run_id},
                {"metric", s.metric},
                {"labels", s.labels},
                {"unit", Unit(s.metric)},
                {"points", std::move(points_json)}}
               .dump();
  }

  std::shared_ptr<const std::vector<Point>> Load(int64_t series_id) {
    Result<std::shared_ptr<const std::vector<Point>>> points = api_.Points(series_id);
    Check(points.status());
    return *points;
  }

  ServeApi& api_;
  Store& store_;
  const ApiRequest& request_;
};

ServeApi::ServeApi(Store& store, size_t cache_points) : store_(store), cache_points_(cache_points) {}

ApiHandler ServeApi::Handler() {
  return [this](const ApiRequest& request) -> std::optional<ApiResponse> {
    if (!StartsWith(request.path, kPrefix)) return std::nullopt;
    return Handle(request);
  };
}

ApiResponse ServeApi::Handle(const ApiRequest& request) {
  try {
    Call call(*this, request);
    return call.Dispatch();
  } catch (const HttpError& e) {
    return JsonError(e.status, e.code, e.message);
  }
}

Result<std::shared_ptr<const std::vector<SeriesInfo>>> ServeApi::SeriesOf(const RunRecord& run) {
  bool finished = Finished(run);
  if (finished) {
    std::lock_guard lock(mu_);
    if (auto it = series_of_.find(run.id); it != series_of_.end()) return it->second;
  }
  Result<std::vector<SeriesInfo>> listed = store_.ListSeries(run.id);
  if (!listed.ok()) return listed.status();
  auto series = std::make_shared<const std::vector<SeriesInfo>>(std::move(*listed));
  if (finished) {
    std::lock_guard lock(mu_);
    if (series_of_.size() >= 100000) series_of_.clear();  // a bound, not a policy: it is cheap to refill
    series_of_[run.id] = series;
  }
  return series;
}

Result<std::shared_ptr<const std::vector<Point>>> ServeApi::Points(int64_t series_id, bool finished,
                                                                   bool retried) {
  bool known;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(series_id);
    known = it != cache_.end();
    // A finished run's series do not change: what is cached is all of it, with no query
    // (on a database server each query is a round trip).
    if (known && finished) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      return it->second.points;
    }
  }
  // Read for the first time: the chunks with their data in one query.
  Result<std::vector<ChunkRecord>> chunks =
      known ? store_.ListChunkInfo(series_id) : store_.ReadChunks(series_id);
  if (!chunks.ok()) return chunks.status();
  std::map<int64_t, const std::string*> fetched;
  for (const ChunkRecord& c : *chunks) {
    if (!c.data.empty()) fetched[c.id] = &c.data;
  }
  std::vector<int64_t> sealed;
  for (const ChunkRecord& c : *chunks) {
    if (c.sealed) sealed.push_back(c.id);
  }
  std::shared_ptr<const std::vector<Point>> base;
  size_t cached_chunks = 0;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(series_id);
    if (it != cache_.end() && it->second.chunk_ids.size() <= sealed.size() &&
        std::equal(it->second.chunk_ids.begin(), it->second.chunk_ids.end(), sealed.begin())) {
      base = it->second.points;
      cached_chunks = it->second.chunk_ids.size();
      lru_.splice(lru_.begin(), lru_, it->second.lru);
    }
  }
  bool has_newer = sealed.size() < chunks->size();
  // A finished run's journal is empty (its writer sealed everything).
  Result<std::vector<JournalEntry>> journal =
      finished ? Result<std::vector<JournalEntry>>(std::vector<JournalEntry>{})
               : store_.ReadJournal(series_id);
  if (!journal.ok()) return journal.status();
  has_newer |= !journal->empty();
  if (base && cached_chunks == sealed.size() && !has_newer) return base;

  // Sealed chunks not cached yet, decoded and cached.
  if (cached_chunks < sealed.size()) {
    // Sized once: a long run read for the first time is millions of points.
    int64_t total = base ? static_cast<int64_t>(base->size()) : 0;
    for (const ChunkRecord& c : *chunks) total += c.sealed ? c.count : 0;
    auto grown = std::make_shared<std::vector<Point>>();
    grown->reserve(static_cast<size_t>(total));
    if (base) grown->insert(grown->end(), base->begin(), base->end());
    for (size_t i = cached_chunks; i < sealed.size(); ++i) {
      if (auto f = fetched.find(sealed[i]); f != fetched.end()) {
        TB_RETURN_IF_ERROR(DecodeChunk(*f->second, *grown));
        continue;
      }
      Result<std::string> data = store_.ReadChunkData(sealed[i]);
      if (!data.ok()) return data.status();
      TB_RETURN_IF_ERROR(DecodeChunk(*data, *grown));
    }
    base = grown;
    std::lock_guard lock(mu_);
    auto it = cache_.find(series_id);
    if (it != cache_.end()) {
      cached_points_ -= it->second.points->size();
      lru_.erase(it->second.lru);
      cache_.erase(it);
    }
    lru_.push_front(series_id);
    cache_[series_id] = Cached{sealed, base, lru_.begin()};
    cached_points_ += base->size();
    while (cached_points_ > cache_points_ && lru_.size() > 1) {
      auto victim = cache_.find(lru_.back());
      cached_points_ -= victim->second.points->size();
      cache_.erase(victim);
      lru_.pop_back();
    }
  }
  if (!has_newer) return base ? base : std::make_shared<const std::vector<Point>>();
  // The provisional chunk and the journal of a running run: read fresh every time.
  auto all = base ? std::make_shared<std::vector<Point>>(*base) : std::make_shared<std::vector<Point>>();
  for (const ChunkRecord& c : *chunks) {
    if (c.sealed) continue;
    Result<std::string> data = store_.ReadChunkData(c.id);
    // The writer replaced this provisional chunk meanwhile (a checkpoint): read again.
    if (!data.ok() && data.status().code() == Status::Code::kNotFound && !retried)
      return Points(series_id, finished, true);
    if (!data.ok()) return data.status();
    TB_RETURN_IF_ERROR(DecodeChunk(*data, *all));
  }
  for (const JournalEntry& e : *journal) TB_RETURN_IF_ERROR(DecodeJournalEntry(e.data, series_id, *all));
  return std::shared_ptr<const std::vector<Point>>(all);
}

}  // namespace tb
