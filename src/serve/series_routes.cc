#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "analyze/phases.h"
#include "analyze/report.h"
#include "base/strings.h"
#include "base/time.h"
#include "figure/figure.h"
#include "http/api_toolkit.h"
#include "metrics/catalog.h"
#include "metrics/names.h"
#include "query/chart_series.h"
#include "query/downsample.h"
#include "query/energy.h"
#include "query/export.h"
#include "query/series_reader.h"
#include "query/workload_mean.h"
#include "serve/serve_call.h"

namespace tb {
namespace {

using json = nlohmann::json;

// The buckets the series of one chart share: budget / 4 of them over the requested range,
// else over the runs' times (seconds since each start, or the wall clock from the first
// start to the last end; a running run's end is now). Points outside fall into further
// buckets of the same width.
std::optional<Buckets> SharedBuckets(const std::vector<const RunRecord*>& runs, const ChartWindow& window) {
  bool relative = window.axis == XAxis::kRelative;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const RunRecord* r : runs) {
    double end = static_cast<double>(r->end_ms > 0 ? r->end_ms : std::max(WallMillis(), r->start_ms));
    double start = static_cast<double>(r->start_ms);
    lo = std::min(lo, relative ? 0.0 : start);
    hi = std::max(hi, relative ? (end - start) / 1000.0 : end);
  }
  double from = window.from.value_or(lo), to = window.to.value_or(hi);
  double width = (to - from) / static_cast<double>(std::max<size_t>(1, window.budget / 4));
  if (!(width > 0) || !std::isfinite(width)) return std::nullopt;
  return Buckets{from, width};
}

}  // namespace

ApiResponse ServeApi::Call::Metrics() {
  std::vector<RunRecord> runs = RunsParam();
  std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>> metrics;  // labels, runs
  for (const RunRecord& r : runs) {
    Result<std::vector<SeriesInfo>> series = store_.ListSeries(r.id);
    ThrowIfError(series.status());
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
                    {"unit", MetricUnit(metric)},  // a script's from its name's suffix
                    {"source", source},
                    {"title", MetricTitle(metric)},
                    {"description", info != nullptr ? info->description : ""},
                    {"radt_name", info != nullptr ? info->radt_name : ""},
                    {"labels", seen.first},
                    {"runs", seen.second.size()}});
  }
  return JsonAnswer({{"metrics", list}});
}

std::vector<std::pair<SeriesInfo, bool>> ServeApi::Call::WithRuns(const std::vector<Selected>& selected) {
  std::vector<std::pair<SeriesInfo, bool>> series;
  series.reserve(selected.size());
  for (const Selected& s : selected) series.emplace_back(s.series, Finished(*s.run));
  return series;
}

std::vector<ServeApi::Call::Selected> ServeApi::Call::Select(const std::vector<RunRecord>& runs,
                                                             const std::string& metric,
                                                             const std::optional<std::string>& labels) {
  std::vector<Selected> out;
  Result<std::vector<std::shared_ptr<const std::vector<SeriesInfo>>>> series =
      api_.reader_.SeriesOfRuns(runs);
  ThrowIfError(series.status());
  auto pick = [&](const std::string& name) {
    for (size_t i = 0; i < runs.size(); ++i) {
      for (const SeriesInfo& s : *(*series)[i]) {
        if ((name.empty() || s.metric == name) && (!labels || s.labels == *labels))
          out.push_back({&runs[i], s});
      }
    }
  };
  pick(metric);
  // A script's metric by the name the script logged ("loss" for train.loss).
  if (out.empty() && !metric.empty()) pick(Concat({metric::kScriptPrefix, metric}));
  if (out.empty() && !metric.empty()) {
    throw ResourceNotFound("none of the runs has the metric '" + metric + "'" +
                           (labels ? " with labels '" + *labels + "'" : ""));
  }
  return out;
}

ApiResponse ServeApi::Call::Series() {
  std::vector<RunRecord> runs = RunsParam();
  std::string metric = Metric(true);
  std::optional<std::string> labels = Labels();
  ChartWindow window;
  window.axis = Axis();
  window.from = Number("from");
  window.to = Number("to");
  window.since = Number("since");
  window.place_steps = XAsPlaces();
  std::string exact = Param("exact").value_or("0");
  if (exact != "0" && exact != "1") throw InvalidParameter("'exact' must be 0 or 1");
  window.exact = exact == "1";
  if (window.from && window.to && *window.from > *window.to)
    throw InvalidParameter("'from' must not be after 'to'");
  bool full = !Param("budget");
  size_t budget = Budget(0);
  window.budget = full ? std::numeric_limits<size_t>::max() : budget;
  std::vector<Selected> selected = Select(runs, metric, labels);

  if (!full && !window.exact && window.axis != XAxis::kStep && !window.since && selected.size() > 1) {
    std::vector<const RunRecord*> shown;
    shown.reserve(selected.size());
    for (const Selected& s : selected) shown.push_back(s.run);
    window.grid = SharedBuckets(shown, window);
    // Every series writes the same x on these places: their texts are made once.
    if (window.grid && !window.place_steps)
      window.grid_texts = GridPlaceTexts(*window.grid, window.budget / 4 * 4);
  }

  // A budgeted chart of finished runs reads their overviews in one query, and the series
  // it draws point by point in one more: over time, those too short for an overview when
  // it spans each run; by step, all of them.
  if (!full && !window.since) {
    std::vector<std::pair<SeriesInfo, bool>> listed = WithRuns(selected);
    ThrowIfError(window.axis == XAxis::kStep
                     ? api_.reader_.ReadAheadWhole(listed)
                     : api_.reader_.ReadAheadForCharts(listed, std::max<size_t>(1, window.budget / 4),
                                                       !window.from && !window.to));
    // The running runs' journals, in one query too.
    if (window.axis != XAxis::kStep) ThrowIfError(api_.reader_.ReadJournalsAhead(listed));
  } else if (window.since) {
    // A live chart's refresh: what is new in every series, in three queries for all.
    ThrowIfError(api_.reader_.ReadAheadSince(WithRuns(selected), SaturatedInt64(*window.since)));
  }

  // Also called by the stream after this Call is gone: it holds nothing of it.
  ServeApi* api = &api_;
  auto series_json = [api, window](const Selected& s) -> std::string {
    // A budgeted chart over time reads what its pixels need: summaries of wide ranges, the
    // chunks in range of narrow ones.
    if (window.budget != std::numeric_limits<size_t>::max() && window.axis != XAxis::kStep && !window.since) {
      auto [from_ms, to_ms] = WindowMillis(window, s.run->start_ms);
      Result<SeriesReader::Window> part = api->reader_.PointsForChart(
          s.series.id, Finished(*s.run), from_ms, to_ms, std::max<size_t>(1, window.budget / 4));
      ThrowIfError(part.status());
      return ChartSeriesJson(*s.run, s.series, *part->points, window, part->total_points);
    }
    // What is new for a live chart: the chunks that reach past `since` and the journal.
    if (window.since) {
      Result<SeriesReader::Window> part =
          api->reader_.PointsSince(s.series.id, Finished(*s.run), SaturatedInt64(*window.since));
      ThrowIfError(part.status());
      return ChartSeriesJson(*s.run, s.series, *part->points, window, part->total_points);
    }
    Result<std::shared_ptr<const std::vector<Point>>> loaded =
        api->reader_.Points(s.series.id, Finished(*s.run));
    ThrowIfError(loaded.status());
    return ChartSeriesJson(*s.run, s.series, **loaded, window);
  };

  std::string x_name(XAxisName(window.axis));
  if (!full) {
    // Series are independent: each taken by whichever of this thread and the spare one is
    // free next, read, answered and let go before the next (memory freed is reused rather
    // than faulted in afresh).
    std::vector<std::string> parts(selected.size());
    api_.spare_.ForEachItem(selected.size(), [&](size_t i, int) { parts[i] = series_json(selected[i]); });
    std::string body = "{\"x\": \"" + x_name + "\", \"budget\": " + std::to_string(budget);
    if (window.grid) {
      body += ", \"grid\": " +
              json{{"origin", window.grid->origin}, {"place_width", window.grid->width / 4}}.dump();
    }
    body += ", \"series\": [";
    size_t size = body.size() + 2;
    for (const std::string& part : parts) size += part.size() + 2;
    body.reserve(size);  // grown piece by piece, a chart's megabyte was copied again and again
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i > 0) body += ", ";
      body += parts[i];
    }
    body += "]}";
    return {200, "application/json", std::move(body), nullptr, {}};
  }
  // Full resolution: one series at a time, streamed, holding a place while it streams.
  auto slot = std::make_shared<HeavySlot>(api_, true);
  auto state = std::make_shared<std::pair<std::vector<Selected>, size_t>>(std::move(selected), 0);
  auto keep_runs = std::make_shared<std::vector<RunRecord>>(std::move(runs));
  ApiResponse out{
      200, "application/json", "{\"x\": \"" + x_name + "\", \"budget\": null, \"series\": [", nullptr, {}};
  out.stream = [slot, state, keep_runs, series_json](std::string& piece) mutable {
    auto& [list, next] = *state;
    if (next < list.size()) {
      if (next > 0) piece += ", ";
      piece += series_json(list[next]);  // throws when the store fails: the transfer ends unfinished
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

ServeApi::HeavySlot::HeavySlot(ServeApi& api, bool full_read)
    : taken_(full_read ? api.full_reads_ : api.heavy_) {
  int most = full_read ? kMaxFullReads : kMaxHeavyRequests;
  if (taken_.fetch_add(1) >= most) {
    taken_.fetch_sub(1);
    throw ApiError{
        429, "TOO_MANY_REQUESTS",
        std::to_string(most) +
            (full_read ? " full-resolution reads (a series without a budget, an export) are streaming"
                       : " figures and aggregates are being made") +
            ", the most at once; ask again in a moment"};
  }
}

ApiResponse ServeApi::Call::AggregateWorkloads() {
  HeavySlot slot(api_);
  std::optional<std::string> spec = Param("workloads");
  if (!spec || spec->empty())
    throw InvalidParameter("'workloads' is required: EXPERIMENT:WORKLOAD separated by commas");
  std::string metric = Metric(true);
  std::optional<std::string> labels = Labels();
  size_t buckets = Budget(1000);
  if (buckets > kMaxAggregateBuckets) {
    throw InvalidParameter("'budget' of an aggregate is at most " + std::to_string(kMaxAggregateBuckets) +
                           " buckets (a chart is narrower); zoom in with from and to for detail");
  }
  std::optional<double> from = Number("from"), to = Number("to");
  if (from && to && *from > *to) throw InvalidParameter("'from' must not be after 'to'");
  XAxis axis = Axis();
  if (axis == XAxis::kWall)
    throw InvalidParameter("workload means align runs by time since start (x=relative) or by step (x=step)");
  // Each workload once, and a bounded number of them.
  std::vector<std::string_view> wanted;
  for (std::string_view w : Split(*spec, ',')) {
    if (std::find(wanted.begin(), wanted.end(), w) == wanted.end()) wanted.push_back(w);
  }
  if (wanted.size() > kMaxAggregateWorkloads) {
    throw InvalidParameter("at most " + std::to_string(kMaxAggregateWorkloads) +
                           " workloads in one aggregate request; ask for the others in another");
  }
  // First each workload's runs and series (an experiment's runs listed once however many
  // of its workloads are asked for), then what the means read of every finished run, in one
  // go for all of them, then each workload's mean.
  struct Asked {
    std::string experiment, workload;
    std::vector<RunRecord> runs;
    std::vector<Selected> selected;
  };
  std::vector<Asked> asked;
  asked.reserve(wanted.size());                    // `selected` points into `runs`: never moved
  std::map<std::string, std::string> experiments;  // as asked (a name or an id) to its name
  std::map<std::string, std::vector<RunRecord>> runs_of;
  std::vector<Selected> everything;
  for (std::string_view w : wanted) {
    size_t colon = w.rfind(':');
    if (colon == std::string_view::npos)
      throw InvalidParameter("a workload is EXPERIMENT:WORKLOAD, not '" + std::string(w) + "'");
    std::string key(w.substr(0, colon));
    auto known = experiments.find(key);
    if (known == experiments.end()) known = experiments.emplace(key, Experiment(key).name).first;
    const std::string& name = known->second;
    Asked& a = asked.emplace_back(Asked{name, std::string(w.substr(colon + 1)), {}, {}});
    auto listed = runs_of.find(name);
    if (listed == runs_of.end()) listed = runs_of.emplace(name, RunsOf(name)).first;
    for (const RunRecord& r : listed->second) {
      if (r.workload == a.workload) a.runs.push_back(r);
    }
    if (a.runs.empty())
      throw ResourceNotFound("experiment '" + name + "' has no workload '" + a.workload + "'");
    for (const Selected& s : Select(a.runs, metric, labels)) {
      if (!labels && !a.selected.empty() && a.selected.back().run == s.run)
        continue;  // first label set per run
      a.selected.push_back(s);
    }
    everything.insert(everything.end(), a.selected.begin(), a.selected.end());
  }
  ThrowIfError(
      ReadAheadForWorkloadMeans(api_.reader_, WithRuns(everything), axis, from.has_value(), buckets));
  json list = json::array();
  for (const Asked& a : asked) {
    std::vector<XYSeries> aligned;
    json run_ids = json::array();
    double longest = 0;
    for (const Selected& s : a.selected) {
      Result<MeanPart> part = RunForMean(api_.reader_, *s.run, s.series.id, axis, from, to, buckets);
      ThrowIfError(part.status());
      longest = std::max(longest, part->length);
      aligned.push_back(std::move(part->xy));
      run_ids.push_back(s.run->id);
    }
    Band band = Aggregate(aligned, from.value_or(0), to.value_or(longest), buckets);
    json mean = json::array(), lo = json::array(), hi = json::array();
    for (size_t i = 0; i < band.x.size(); ++i) {
      mean.push_back(FiniteOrNull(band.mean[i]));
      lo.push_back(FiniteOrNull(band.min[i]));
      hi.push_back(FiniteOrNull(band.max[i]));
    }
    double first = from.value_or(0), last = to.value_or(longest);
    list.push_back({{"experiment", a.experiment},
                    {"workload", a.workload},
                    {"runs", run_ids},
                    {"from", first},
                    {"bucket_width", buckets > 0 ? (last - first) / static_cast<double>(buckets) : 0.0},
                    {"x", band.x},
                    {"mean", mean},
                    {"min", lo},
                    {"max", hi},
                    {"n", band.runs}});
  }
  return JsonAnswer({{"x", std::string(XAxisName(axis))}, {"metric", metric}, {"workloads", list}});
}

ApiResponse ServeApi::Call::Export() {
  std::vector<RunRecord> runs = RunsParam();
  std::string metric = Metric(false);
  Result<ExportFormat> format = ParseExportFormat(Param("format").value_or("csv"));
  if (!format.ok()) throw InvalidParameter(format.status().message());
  std::vector<Selected> selected = Select(runs, metric, Labels());
  auto slot = std::make_shared<HeavySlot>(api_, true);  // held while the export streams
  auto exporter = std::make_shared<SeriesExport>(*format);
  for (const RunRecord& r : runs) exporter->SetRunStart(r.id, r.start_ms);
  auto state = std::make_shared<std::pair<std::vector<Selected>, size_t>>(std::move(selected), 0);
  SeriesReader* reader = &api_.reader_;
  ApiResponse out{200, std::string(exporter->ContentType()), exporter->Header(), nullptr, {}};
  out.headers.emplace_back("Content-Disposition", Concat({"attachment; filename=\"trainbench-export.",
                                                          exporter->FileExtension(), "\""}));
  // A series that cannot be read throws: the server then ends the transfer unfinished.
  out.stream = [slot, state, reader, exporter](std::string& piece) {
    auto& [list, next] = *state;
    if (next < list.size()) {
      const SeriesInfo& s = list[next].series;
      Result<std::shared_ptr<const std::vector<Point>>> points = reader->Points(s.id);
      ThrowIfError(points.status());
      exporter->Append(piece, s, **points);
      ++next;
    }
    if (next < list.size()) return true;
    piece += exporter->Footer();
    return false;
  };
  return out;
}

ApiResponse ServeApi::Call::FigureFile() {
  HeavySlot slot(api_);
  std::optional<std::string> text = Param("spec");
  if (!text) throw InvalidParameter("'spec' is required: the figure's description as JSON (docs/API.md)");
  Result<FigureSpec> spec = ParseFigureSpec(*text);
  if (!spec.ok()) throw InvalidParameter(spec.status().message());
  std::string format = Param("format").value_or("pdf");
  Result<Figure> figure = CollectFigure(store_, api_.reader_, *spec);
  ThrowIfError(figure.status());
  return FigureAnswer(
      format, "trainbench-" + spec->metric, false, [&] { return FigureCsv(*figure); },
      [&](FigureFormat kind) { return RenderFigure(*figure, *spec, kind); });
}

ApiResponse ServeApi::Call::FigureAnswer(const std::string& format, const std::string& name, bool svg_inline,
                                         const std::function<std::string()>& csv,
                                         const std::function<Result<std::string>(FigureFormat)>& draw) {
  ApiResponse out;
  if (format == "csv") {
    out = {200, "text/csv; charset=utf-8", csv(), nullptr, {}};
  } else {
    Result<FigureFormat> kind = ParseFigureFormat(format);
    if (!kind.ok()) throw InvalidParameter("'format' must be pdf, svg, png or csv");
    Result<std::string> drawn = draw(*kind);
    if (!drawn.ok()) throw InvalidParameter(drawn.status().message());
    out = {200, std::string(FigureContentType(*kind)), std::move(*drawn), nullptr, {}};
  }
  if (format == "svg" && svg_inline) return out;  // opens in the browser's tab
  std::string file = name;
  for (char& c : file) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '_';
  }
  out.headers.emplace_back("Content-Disposition", "attachment; filename=\"" + file + "." + format + "\"");
  return out;
}

std::shared_ptr<const std::vector<Point>> ServeApi::Call::Load(int64_t series_id, bool finished) {
  Result<std::shared_ptr<const std::vector<Point>>> points = api_.reader_.Points(series_id, finished);
  ThrowIfError(points.status());
  return *points;
}

}  // namespace tb
