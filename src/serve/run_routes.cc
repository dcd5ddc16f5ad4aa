#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <future>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <unordered_map>

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
#include "report/collocation_figure.h"
#include "report/report_document.h"
#include "serve/serve_call.h"
#include "store/run_tags.h"

namespace tb {
namespace {

using json = nlohmann::json;

// The freshest a running run's phases are kept (see Phases).
constexpr int64_t kLiveAnalysisMinMs = 30000;

int64_t Duration(const RunRecord& r) { return (r.end_ms > 0 ? r.end_ms : WallMillis()) - r.start_ms; }

json KeyValuesJson(const KeyValues& kvs) {
  json out = json::object();
  for (const auto& [k, v] : kvs) out[k] = v;
  return out;
}

}  // namespace

ApiResponse ServeApi::Call::Phases(const RunRecord& run) {
  Result<std::string> body = AnalysisText(run);
  ThrowIfError(body.status());
  return {200, "application/json", std::move(*body), nullptr, {}};
}

Result<std::string> ServeApi::Call::AnalysisText(const RunRecord& run) {
  bool finished = Finished(run);
  int64_t now = WallMillis();
  std::promise<Result<std::string>> promise;
  std::shared_future<Result<std::string>> pending;
  bool mine = false;
  {
    std::lock_guard lock(api_.mu_);
    if (finished) {
      if (auto it = api_.phases_.find(run.id); it != api_.phases_.end()) return it->second;
    } else if (auto it = api_.live_phases_.find(run.id); it != api_.live_phases_.end()) {
      // A running run is analysed again once it has grown by a fiftieth of its length (at
      // least 30 s) since the last analysis, which reads all of it: live charts refreshing
      // every few seconds then cost the server in proportion to what is new, not to the
      // run's length.
      int64_t age = now - it->second.at_ms;
      if (age < std::max<int64_t>(kLiveAnalysisMinMs, (it->second.at_ms - run.start_ms) / 50))
        return it->second.json;
    }
    if (auto it = api_.analysing_.find(run.id); it != api_.analysing_.end()) {
      pending = it->second;
    } else {
      pending = promise.get_future().share();
      api_.analysing_.emplace(run.id, pending);
      mine = true;
    }
  }
  if (mine) {
    auto analyse = [&]() -> Result<std::string> {
      // A finished run's own copy, kept when it ended, is read rather than made again.
      if (std::optional<std::string> kept = finished ? KeptAnalysisJson(store_, run) : std::nullopt)
        return std::move(*kept);
      Result<RunAnalysis> a = AnalyzeStoredRun(store_, run);
      if (!a.ok()) return a.status();
      std::string made = AnalysisJson(*a);
      // Kept with the run, as the launcher keeps it when a run ends: the next server reads
      // this copy rather than every point again (runs imported, or analysed by an older
      // trainbench). Not kept is only slower next time.
      if (finished) (void)KeepAnalysisJson(store_, run, made);
      return made;
    };
    Result<std::string> body = analyse();
    {
      std::lock_guard lock(api_.mu_);
      api_.analysing_.erase(run.id);
      if (body.ok() && finished) {
        api_.live_phases_.erase(run.id);
        if (api_.phases_.size() >= 10000) api_.phases_.clear();
        api_.phases_[run.id] = *body;
      } else if (body.ok()) {
        if (api_.live_phases_.size() >= 10000) api_.live_phases_.clear();
        api_.live_phases_[run.id] = {*body, now};
      }
    }
    promise.set_value(std::move(body));
  }
  return pending.get();
}

ApiResponse ServeApi::Call::Report(const ExperimentInfo& e) {
  std::string format = Param("format").value_or("html");
  if (format != "html" && format != "csv" && format != "text" && format != "pdf")
    throw InvalidParameter("'format' must be html, pdf, csv or text");
  Result<ExperimentReport> report = BuildReport(store_, e.name);
  ThrowIfError(report.status());
  if (format == "csv") return {200, "text/csv", ReportCsv(*report), nullptr, {}};
  if (format == "text") return {200, "text/plain; charset=utf-8", ReportTable(*report), nullptr, {}};
  Result<std::vector<ReportFigure>> figures = CollectReportFigures(store_, api_.reader_, *report);
  ThrowIfError(figures.status());
  if (format == "html") return {200, "text/html; charset=utf-8", ReportHtml(*report, *figures), nullptr, {}};
  Result<std::string> pdf = ReportPdf(*report, *figures);
  ThrowIfError(pdf.status());
  return {200, "application/pdf", std::move(*pdf), nullptr, {}};
}

// The report's collocation bars as one figure, as `trainbench plot --bars` draws them.
ApiResponse ServeApi::Call::Bars(const ExperimentInfo& e) {
  HeavySlot slot(api_);
  std::string format = Param("format").value_or("svg");
  Result<FigureSpec> look = BarFigureLook({{"width", Param("width").value_or("")},
                                           {"font_size", Param("font_size").value_or("")},
                                           {"font", Param("font").value_or("")},
                                           {"title", Param("title").value_or("")},
                                           {"mono", Param("mono").value_or("")},
                                           {"dpi", Param("dpi").value_or("")}});
  if (!look.ok()) throw InvalidParameter(look.status().message());
  std::vector<std::string> panels;
  for (std::string_view k : Split(Param("panels").value_or(""), ',')) {
    if (!Trim(k).empty()) panels.emplace_back(Trim(k));
  }
  Result<ExperimentReport> report = BuildReport(store_, e.name);
  ThrowIfError(report.status());
  Result<std::vector<BarChart>> charts = CollocationPanels(*report, panels);
  ThrowIfError(charts.status());
  return FigureAnswer(
      format, e.name + "-bars", true, [&] { return CollocationBarsCsv(*charts); },
      [&](FigureFormat kind) { return RenderCollocationBars(*charts, *look, kind); });
}

json ServeApi::Call::RunJson(const RunRecord& r, bool with_summary) {
  json j = {{"id", r.id},
            {"name", r.name},
            {"experiment", r.experiment},
            {"workload", r.workload},
            {"status", ShownStatus(r)},
            {"start_ms", r.start_ms},
            {"end_ms", r.end_ms > 0 ? json(r.end_ms) : json(nullptr)},
            {"duration_ms", Duration(r)},
            {"command", r.command},
            {"host", r.host},
            {"devices", r.devices},
            {"collocation", TagValue(r, kCollocationTag)},
            {"letter", TagValue(r, kLetterTag)},
            {"simulated_gpu", TagValue(r, kSimulatedGpuTag) == "true"},
            {"exit_code", r.exit_code ? json(*r.exit_code) : json(nullptr)},
            {"reason", r.reason},
            {"params", KeyValuesJson(r.params)},
            {"tags", KeyValuesJson(r.tags)}};
  if (with_summary) j["summary"] = json::parse("[" + Summaries({r.id})[r.id] + "]");
  return j;
}

std::map<std::string, std::string> ServeApi::Call::Summaries(const std::vector<std::string>& run_ids) {
  std::map<std::string, std::string> out;
  for (const std::string& id : run_ids) out[id] = "";
  if (run_ids.empty()) return out;
  // One row per series, however long the run: the totals kept beside its chunks.
  Result<std::vector<SeriesTotals>> totals = store_.ListSeriesTotalsOfRuns(run_ids);
  ThrowIfError(totals.status());
  // Written as text, not built as JSON objects: 10,000 runs of 30 series made 300,000
  // objects, and building and freeing them took most of 2 s.
  std::unordered_map<std::string, std::string> heads;  // a metric's text before its labels
  for (const SeriesTotals& t : *totals) {
    const SeriesInfo& s = t.series;
    std::string& head = heads[s.metric];
    if (head.empty())
      head = "{\"metric\":" + JsonQuote(s.metric) + ",\"unit\":" + JsonQuote(MetricUnit(s.metric)) +
             ",\"labels\":";
    std::string& to = out[s.run_id];
    if (!to.empty()) to += ",";
    to += head + JsonQuote(s.labels) + ",\"count\":";
    AppendJsonNumber(to, static_cast<double>(t.count));
    to += ",\"min\":";
    AppendJsonNumber(to, t.min);
    to += ",\"max\":";
    AppendJsonNumber(to, t.max);
    to += ",\"mean\":";
    AppendJsonNumber(
        to, t.min && t.count > 0 ? std::optional(t.sum / static_cast<double>(t.count)) : std::nullopt);
    to += "}";
  }
  return out;
}

// A run's JSON object with its summary list (JSON text) spliced in before its closing brace.
static std::string WithSummary(const json& run, const std::string& summary) {
  std::string text = run.dump(-1, ' ', false, json::error_handler_t::replace);
  text.pop_back();
  return text + ",\"summary\":[" + summary + "]}";
}

ApiResponse ServeApi::Call::Experiments() {
  Result<std::vector<ExperimentInfo>> all = store_.ListExperiments();
  ThrowIfError(all.status());
  Result<std::vector<RunRecord>> runs = store_.ListRuns("");
  ThrowIfError(runs.status());
  json list = json::array();
  for (const ExperimentInfo& e : *all) {
    int64_t count = 0, running = 0, failed = 0, last = 0, first = 0, end = 0;
    std::set<std::string> workloads;
    for (const RunRecord& r : *runs) {
      if (r.experiment != e.name) continue;
      ++count;
      running += r.status == kRunning;
      failed += r.status == kFailed || r.status == kKilled;
      last = std::max(last, r.start_ms);
      first = first == 0 ? r.start_ms : std::min(first, r.start_ms);
      end = std::max(end, r.status == kRunning ? WallMillis() : r.end_ms);
      if (!r.workload.empty()) workloads.insert(r.workload);
    }
    list.push_back({{"id", e.id},
                    {"name", e.name},
                    {"created_ms", e.created_ms},
                    {"runs", count},
                    {"running", running},
                    {"failed", failed},
                    {"workloads", workloads.size()},
                    {"first_start_ms", first},
                    {"last_start_ms", last},
                    {"duration_ms", first > 0 && end > first ? end - first : 0}});
  }
  return JsonAnswer({{"experiments", list}});
}

ApiResponse ServeApi::Call::Workloads(const ExperimentInfo& e) {
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
                             {"letter", TagValue(r, kLetterTag)},
                             {"status", ShownStatus(r)},
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
  return JsonAnswer({{"experiment", e.name}, {"workloads", list}});
}

ApiResponse ServeApi::Call::Runs() {
  std::string experiment;
  if (std::optional<std::string> e = Param("experiment")) experiment = Experiment(*e).name;
  std::optional<std::string> workload = Param("workload"), status = Param("status"), text = Param("q");
  if (status && *status != kRunning && *status != kFinished && *status != kFailed && *status != kKilled) {
    throw InvalidParameter("'status' must be RUNNING, FINISHED, FAILED or KILLED");
  }
  KeyValues want_params, want_tags;
  for (const auto& [k, v] : request_.query) {
    if (StartsWith(k, "param.")) want_params.emplace_back(k.substr(6), v);
    if (StartsWith(k, "tag.")) want_tags.emplace_back(k.substr(4), v);
  }
  auto has = [](const KeyValues& kvs, const std::pair<std::string, std::string>& want) {
    return std::find(kvs.begin(), kvs.end(), want) != kvs.end();
  };
  std::string summary = Param("summary").value_or("1");
  if (summary != "0" && summary != "1") throw InvalidParameter("'summary' must be 0 or 1");
  bool summaries = summary != "0";
  std::string energy = Param("energy").value_or("0");
  if (energy != "0" && energy != "1") throw InvalidParameter("'energy' must be 0 or 1");
  // MLflow's view types: runs deleted through its API (runs/delete) are listed too unless
  // lifecycle=active; lifecycle=deleted lists only them.
  std::string lifecycle = Param("lifecycle").value_or("all");
  if (lifecycle != "all" && lifecycle != "active" && lifecycle != "deleted")
    throw InvalidParameter("'lifecycle' must be active, deleted or all");
  std::string format = Param("format").value_or("runs");
  if (format != "runs" && format != "columns" && format != "columnar")
    throw InvalidParameter("'format' must be runs, columns or columnar");
  // ids=A,B: those runs (one read), in that order; ids the store does not hold are left out.
  std::vector<RunRecord> runs = Param("ids") ? RunsParam("ids", true) : RunsOf(experiment);
  std::vector<RunRecord> kept;
  for (RunRecord& r : runs) {
    if (!experiment.empty() && r.experiment != experiment) continue;
    // A workload's name, or a pattern of them ("bs*", "bs[0-9]?").
    if (workload && fnmatch(workload->c_str(), r.workload.c_str(), 0) != 0) continue;
    if (status && r.status != *status) continue;
    if (lifecycle != "all" && IsDeleted(r) != (lifecycle == "deleted")) continue;
    if (text && r.name.find(*text) == std::string::npos && r.command.find(*text) == std::string::npos &&
        r.id.find(*text) == std::string::npos) {
      continue;
    }
    if (!std::all_of(want_params.begin(), want_params.end(), [&](auto& w) { return has(r.params, w); }))
      continue;
    if (!std::all_of(want_tags.begin(), want_tags.end(), [&](auto& w) { return has(r.tags, w); })) continue;
    kept.push_back(std::move(r));
  }
  if (format != "runs") return RunTable(kept, format == "columnar");
  json list = json::array();
  for (const RunRecord& r : kept) {
    list.push_back(RunJson(r, false));
    if (energy == "1") list.back()["energy"] = Energy(r.id);
  }
  if (!summaries) return JsonAnswer({{"runs", list}});
  // Every listed run's summary in two store reads, not two a run, written as text.
  std::vector<std::string> ids;
  for (const json& r : list) ids.push_back(r["id"].get<std::string>());
  std::map<std::string, std::string> all = Summaries(ids);
  std::string body = "{\"runs\":[";
  for (const json& r : list) {
    if (body.back() != '[') body += ",";
    body += WithSummary(r, all[r["id"].get<std::string>()]);
  }
  return {200, "application/json", body + "]}", nullptr, {}};
}

json ServeApi::Call::Energy(const std::string& run_id) {
  Result<std::optional<GpuEnergy>> energy = RunGpuEnergy(store_, run_id);
  ThrowIfError(energy.status());
  Result<std::optional<double>> cpu = RunCpuEnergy(store_, run_id);
  ThrowIfError(cpu.status());
  if (!*energy && !*cpu) return nullptr;
  const GpuEnergy e = energy->value_or(GpuEnergy{});
  return {{"gpu_joules", *energy ? json(e.joules) : json(nullptr)},
          {"run_joules", e.run_share_joules ? json(*e.run_share_joules) : json(nullptr)},
          {"gpus", e.gpus},
          {"integrated", e.integrated},
          {"cpu_joules", *cpu ? json(**cpu) : json(nullptr)}};
}

ApiResponse ServeApi::Call::RunDetail(const RunRecord& r) {
  json j = RunJson(r, true);
  j["energy"] = Energy(r.id);
  return JsonAnswer(j);
}

json ServeApi::Call::EventsJson(const RunRecord& r) {
  Result<std::vector<EventRecord>> events = store_.ListEvents(r.id);
  ThrowIfError(events.status());
  json list = json::array();
  for (const EventRecord& e : *events) {
    list.push_back({{"time_ms", e.time_ms},
                    {"relative_s", (e.time_ms - r.start_ms) / 1000.0},
                    {"kind", e.kind},
                    {"label", e.label}});
  }
  return {{"run", r.id}, {"events", list}};
}

ApiResponse ServeApi::Call::Events(const RunRecord& r) { return JsonAnswer(EventsJson(r)); }

ApiResponse ServeApi::Call::ManyEvents() {
  json runs = json::array();
  for (const RunRecord& r : RunsParam()) runs.push_back(EventsJson(r));
  return JsonAnswer({{"runs", runs}});
}

ApiResponse ServeApi::Call::Artifacts(const RunRecord& r) {
  Result<std::vector<ArtifactRecord>> list = store_.ListArtifacts(r.id);
  ThrowIfError(list.status());
  json out = json::array();
  for (const ArtifactRecord& a : *list) out.push_back({{"name", a.name}, {"size", a.size}});
  return JsonAnswer({{"run", r.id}, {"artifacts", out}});
}

ApiResponse ServeApi::Call::Artifact(const RunRecord& r, const std::string& name) {
  Result<ArtifactRecord> a = store_.GetArtifact(r.id, name);
  if (!a.ok()) throw ResourceNotFound("run " + r.id + " has no artifact '" + name.substr(0, 200) + "'");
  ApiResponse out{200, "application/octet-stream", a->content, nullptr, {}};
  if (name.ends_with(".log") || name.ends_with(".txt")) out.content_type = "text/plain; charset=utf-8";
  if (name.ends_with(".json")) out.content_type = "application/json";
  if (!a->path.empty()) {
    auto file = std::make_shared<std::FILE*>(std::fopen(a->path.c_str(), "rb"));
    if (*file == nullptr) throw ResourceNotFound("the file of artifact '" + name + "' is gone");
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

}  // namespace tb
