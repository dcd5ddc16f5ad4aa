// CollectFigure and FigureCsv: what a figure shows, read from the store.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "analyze/phases.h"
#include "base/strings.h"
#include "figure/axis.h"
#include "figure/figure.h"
#include "figure/legend.h"
#include "figure/shared_devices.h"
#include "figure/sweep.h"
#include "metrics/catalog.h"
#include "query/downsample.h"
#include "query/export.h"
#include "query/workload_mean.h"
#include "store/run_tags.h"

namespace tb {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kMaxRunsMarked = 12;  // events and phases of at most this many runs

// Smoothing as the screen draws it (web/src/lines.ts): an exponential moving average,
// debiased at the start (TensorBoard's), gaps kept, and weighted by time: a point `dx` after
// the one before keeps weight^(dx / step) of the average, so a loss logged every 10 s among
// GPU samples every 0.5 s is not dragged behind its own values. `step`: smoothingStep below.
void Smooth(const std::vector<double>& x, std::vector<double>& y, int weight, double step) {
  if (weight <= 0) return;
  double w = weight / 100.0, last = 0, debias = 0, prev = kNan;
  for (size_t i = 0; i < y.size(); ++i) {
    double& v = y[i];
    if (!std::isfinite(v)) continue;
    double keep = std::isfinite(prev) && step > 0 ? std::pow(w, (x[i] - prev) / step) : w;
    prev = x[i];
    last = last * keep + (1 - keep) * v;
    debias = debias * keep + (1 - keep);
    v = last / debias;
  }
}

// One step of smoothing on x: the lines' x span over their densest line's points, at most
// 400 of them (the fewest points a chart draws a line with, so screen and export agree).
double SmoothingStep(const std::vector<FigureLine>& lines) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  size_t densest = 0;
  for (const FigureLine& l : lines) {
    if (l.x.empty()) continue;
    lo = std::min(lo, l.x.front());
    hi = std::max(hi, l.x.back());
    densest = std::max(densest, l.x.size());
  }
  return densest > 1 && hi > lo ? (hi - lo) / static_cast<double>(std::min<size_t>(densest, 400)) : 0;
}

std::vector<FigureMark> Events(Store& store, const std::vector<const RunRecord*>& runs, XAxis axis) {
  struct Seen {
    double x;
    std::string label;
    std::vector<std::string> runs;
  };
  std::map<std::string, Seen> seen;
  std::vector<std::string> order;
  for (const RunRecord* r : runs) {
    Result<std::vector<EventRecord>> events = store.ListEvents(r->id);
    if (!events.ok()) continue;
    std::string letter = TagValue(*r, kLetterTag);
    if (letter.empty()) letter = r->id.substr(0, 4);
    for (const EventRecord& e : *events) {
      if (e.kind == "listener" || e.kind == "tracking") continue;
      double x = axis == XAxis::kWall ? static_cast<double>(e.time_ms)
                                      : static_cast<double>(e.time_ms - r->start_ms) / 1000;
      std::string key = e.label + "@" + std::to_string(std::llround(axis == XAxis::kWall ? x / 1000 : x));
      auto [it, added] = seen.try_emplace(key, Seen{x, e.label, {}});
      if (added) order.push_back(key);
      it->second.runs.push_back(letter);
    }
  }
  std::vector<FigureMark> out;
  for (const std::string& key : order) {
    const Seen& s = seen[key];
    std::string label = s.label;
    if (runs.size() > 1 && s.runs.size() < runs.size()) {
      std::string who;
      for (const std::string& l : s.runs) who.append(who.empty() ? "" : ",").append(l);
      label = Concat({who, " ", label});
    }
    out.push_back({s.x, label});
  }
  return out;
}

// Where nvml, nvidia-smi and dcgmi each measured a quantity, the one a reader should see:
// nvml's (the driver's own, no label `listener`), else smi's, else dcgmi's; the screen picks
// the same (web/src/fetch_lines.ts). The others stay a labels option away
// (`--labels gpu=0,listener=smi`).
std::vector<SeriesInfo> OneSourcePerQuantity(std::vector<SeriesInfo> series) {
  auto split = [](const std::string& labels) {  // (the labels but the listener, its rank)
    std::string rest;
    int rank = 0;
    for (std::string_view part : Split(labels, ',')) {
      if (StartsWith(part, "listener="))
        rank = SourceRank(part);
      else
        rest.append(rest.empty() ? "" : ",").append(part);
    }
    return std::pair{rest, rank};
  };
  std::map<std::string, int> best;
  for (const SeriesInfo& s : series) {
    auto [rest, rank] = split(s.labels);
    auto [it, added] = best.try_emplace(rest, rank);
    if (!added) it->second = std::min(it->second, rank);
  }
  std::erase_if(series, [&](const SeriesInfo& s) {
    auto [rest, rank] = split(s.labels);
    return rank != best[rest];
  });
  return series;
}

// The series of `run` that show `spec`'s metric (with its labels, when given); only the
// first such series with `first_only` (a workload mean takes one per run).
Result<std::vector<SeriesInfo>> SeriesToPlot(SeriesReader& reader, const RunRecord& run,
                                             const FigureSpec& spec, bool first_only) {
  Result<std::shared_ptr<const std::vector<SeriesInfo>>> series = reader.SeriesOf(run);
  if (!series.ok()) return series.status();
  std::vector<SeriesInfo> out;
  for (const SeriesInfo& s : **series) {
    if (s.metric != spec.metric || (spec.labels && s.labels != *spec.labels)) continue;
    out.push_back(s);
  }
  if (!spec.labels) out = OneSourcePerQuantity(std::move(out));
  if (first_only && out.size() > 1) out.resize(1);
  return out;
}

// A run's series as a figure draws it: over time, what its buckets need (the summaries of a
// wide range, the chunks in range of a narrow one: SeriesReader::PointsForChart); by step,
// every point.
Result<std::shared_ptr<const std::vector<Point>>> PointsToDraw(SeriesReader& reader, const RunRecord& run,
                                                               int64_t series_id, const FigureSpec& spec,
                                                               size_t budget) {
  if (spec.x == XAxis::kStep) return reader.Points(series_id, Finished(run));
  ChartWindow window;
  window.axis = spec.x;
  window.from = spec.from;
  window.to = spec.to;
  auto [from_ms, to_ms] = WindowMillis(window, run.start_ms);
  Result<SeriesReader::Window> part =
      reader.PointsForChart(series_id, Finished(run), from_ms, to_ms, std::max<size_t>(1, budget / 4));
  if (!part.ok()) return part.status();
  return part->points;
}

// What a figure collects before it is named and scaled: its lines, what each shows, the
// catalog unit of each line's series.
struct Collected {
  std::vector<FigureLine> lines;
  std::vector<Source> sources;
  std::vector<std::string> units;
};

// A workload mean's buckets as wide as a line's (budget / 4, as on screen).
size_t LineBudget(const FigureSpec& spec) {
  return std::max<size_t>(400, static_cast<size_t>(spec.width_pt / 72 * 600));
}

// The workload means asked for, first, as on screen: each workload's runs and their
// series, then what all of them read in a few queries, then each mean.
Status CollectWorkloadMeans(Store& store, SeriesReader& reader, const FigureSpec& spec, Collected& c) {
  const size_t mean_buckets = std::max<size_t>(1, LineBudget(spec) / 4);
  struct Asked {
    std::string key;
    std::vector<std::pair<RunRecord, SeriesInfo>> series;  // the first of each run
  };
  std::vector<Asked> asked;
  std::vector<std::pair<SeriesInfo, bool>> every_mean_series;
  std::map<std::string, std::vector<RunRecord>> runs_of;  // each experiment listed once
  for (const std::string& w : spec.workloads) {
    size_t colon = w.rfind(':');
    if (colon == std::string::npos)
      return Status::InvalidArgument(Concat({"a workload is EXPERIMENT:WORKLOAD, not '", w, "'"}));
    if (spec.x == XAxis::kWall)
      return Status::InvalidArgument(
          "a workload mean aligns its runs by time since start or by step: use x relative or step");
    std::string experiment = w.substr(0, colon), workload = w.substr(colon + 1);
    auto listed = runs_of.find(experiment);
    if (listed == runs_of.end()) {
      Result<std::vector<RunRecord>> runs = store.ListRuns(experiment);
      if (!runs.ok()) return runs.status();
      listed = runs_of.emplace(experiment, std::move(*runs)).first;
    }
    Asked& a = asked.emplace_back(Asked{w, {}});
    size_t with_runs = 0;
    for (const RunRecord& r : listed->second) {
      if (r.workload != workload) continue;
      if (!spec.workload_runs.empty() && !spec.workload_runs.contains(r.id)) continue;
      ++with_runs;
      // The first label set of each run, as on screen.
      Result<std::vector<SeriesInfo>> series = SeriesToPlot(reader, r, spec, true);
      if (!series.ok()) return series.status();
      for (const SeriesInfo& s : *series) {
        a.series.emplace_back(r, s);
        every_mean_series.emplace_back(s, Finished(r));
      }
    }
    if (with_runs == 0)
      return Status::NotFound(Concat({"experiment '", experiment, "' has no workload '", workload,
                                      "' (trainbench ls ", experiment, " lists them)"}));
    if (a.series.empty())
      return Status::NotFound(Concat({"the runs of workload '", w, "' have no metric '", spec.metric, "'"}));
  }
  if (asked.empty()) return Status::Ok();
  TB_RETURN_IF_ERROR(
      ReadAheadForWorkloadMeans(reader, every_mean_series, spec.x, spec.from.has_value(), mean_buckets));
  for (const Asked& a : asked) {
    std::vector<XYSeries> aligned;
    double longest = 0;
    for (const auto& [r, s] : a.series) {
      Result<MeanPart> part = RunForMean(reader, r, s.id, spec.x, spec.from, spec.to, mean_buckets);
      if (!part.ok()) return part.status();
      longest = std::max(longest, part->length);
      aligned.push_back(std::move(part->xy));
    }
    double lo = spec.from.value_or(0), hi = spec.to.value_or(longest);
    Band band = Aggregate(aligned, lo, hi, mean_buckets);
    FigureLine line;
    line.key = a.key;
    line.x = band.x;
    line.y = band.mean;
    line.lo = band.min;
    line.hi = band.max;
    line.runs = band.runs;
    c.lines.push_back(std::move(line));
    c.sources.push_back({nullptr, "", a.key, aligned.size(), {}});
    c.units.emplace_back(MetricUnit(spec.metric));
  }
  return Status::Ok();
}

// A line per series of each run asked for: each run's series, then what all of them read in
// a few queries, then each line, thinned to the figure's budget.
Status CollectRunLines(SeriesReader& reader, const FigureSpec& spec, const std::vector<RunRecord>& runs,
                       Collected& c) {
  const size_t budget = LineBudget(spec);
  std::vector<std::vector<SeriesInfo>> shown_series;
  std::vector<std::pair<SeriesInfo, bool>> every_series;
  for (const RunRecord& r : runs) {
    Result<std::vector<SeriesInfo>> series = SeriesToPlot(reader, r, spec, false);
    if (!series.ok()) return series.status();
    shown_series.push_back(std::move(*series));
  }
  std::map<std::pair<size_t, std::string>, std::vector<const RunRecord*>> sharing;
  DrawEachDeviceOnce(runs, shown_series, sharing);
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const SeriesInfo& s : shown_series[i]) every_series.emplace_back(s, Finished(runs[i]));
  }
  if (spec.x == XAxis::kStep) {
    TB_RETURN_IF_ERROR(reader.ReadAheadWhole(every_series));
  } else if (!every_series.empty()) {
    TB_RETURN_IF_ERROR(
        reader.ReadAheadForCharts(every_series, std::max<size_t>(1, budget / 4), !spec.from && !spec.to));
    TB_RETURN_IF_ERROR(reader.ReadJournalsAhead(every_series));
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunRecord& r = runs[i];
    for (const SeriesInfo& s : shown_series[i]) {
      Result<std::shared_ptr<const std::vector<Point>>> points = PointsToDraw(reader, r, s.id, spec, budget);
      if (!points.ok()) return points.status();
      XYSeries xy =
          AlignedRun(**points, r.start_ms, spec.x == XAxis::kStep ? XAxis::kStep : XAxis::kRelative);
      if (spec.x == XAxis::kWall) {
        for (double& x : xy.x) x = x * 1000 + static_cast<double>(r.start_ms);
      }
      double lo = spec.from.value_or(xy.x.empty() ? 0 : xy.x.front());
      double hi = spec.to.value_or(xy.x.empty() ? 0 : xy.x.back());
      XYSeries kept = Downsample(xy, lo, hi, budget);
      FigureLine line;
      line.key = r.id + "|" + s.labels;
      line.run_id = r.id;
      line.x = std::move(kept.x);
      line.y = std::move(kept.y);
      c.lines.push_back(std::move(line));
      c.sources.push_back({&r, s.labels, "", 0, sharing[{i, s.labels}]});
      c.units.emplace_back(MetricUnit(s.metric));
    }
  }
  return Status::Ok();
}

// Names and styles (hiding a line keeps the others' colours); the lines not hidden.
Result<std::vector<FigureLine>> NameAndHide(const FigureSpec& spec, const std::vector<RunRecord>& runs,
                                            Collected& c) {
  std::vector<std::string> names = DefaultLegend(c.sources);
  std::vector<size_t> styles = StylesBySpec(c.sources, spec.workloads, runs);
  for (size_t i = 0; i < c.lines.size(); ++i) {
    c.lines[i].style = styles[i];
    c.lines[i].name = spec.legend.empty() ? names[i] : FillLegend(spec.legend, c.sources[i]);
  }
  std::vector<FigureLine> shown;
  for (FigureLine& l : c.lines) {
    if (std::find(spec.hidden.begin(), spec.hidden.end(), l.key) == spec.hidden.end())
      shown.push_back(std::move(l));
  }
  if (shown.empty()) return Status::InvalidArgument("every line of the figure is hidden: show at least one");
  return shown;
}

// The range shown, the unit the values read best in (the values scaled to it, then
// smoothed), and the axes' titles.
void FitAxes(const FigureSpec& spec, const std::vector<std::string>& units, Figure& f) {
  const double from = spec.from.value_or(-std::numeric_limits<double>::infinity());
  const double to = spec.to.value_or(std::numeric_limits<double>::infinity());
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, largest = 0;
  for (const FigureLine& l : f.lines) {
    for (size_t i = 0; i < l.x.size(); ++i) {
      if (l.x[i] < from || l.x[i] > to) continue;
      x0 = std::min(x0, l.x[i]);
      x1 = std::max(x1, l.x[i]);
      for (double v : {l.y[i], l.hi.empty() ? kNan : l.hi[i], l.lo.empty() ? kNan : l.lo[i]}) {
        if (std::isfinite(v)) largest = std::max(largest, std::fabs(v));
      }
    }
  }
  if (!std::isfinite(x0)) x0 = 0, x1 = 1;
  // Time since start begins at 0 (a workload mean's first point is its first bucket's centre).
  if (spec.x == XAxis::kRelative && x0 > 0 && x0 < (x1 - x0) * 0.05) x0 = 0;
  f.x_min = std::isfinite(from) ? from : x0;
  f.x_max = std::isfinite(to) ? to : x1;
  if (f.x_max <= f.x_min) f.x_max = f.x_min + 1;
  DisplayUnit display = ChooseDisplayUnit(units.empty() ? "" : units[0], largest, spec.percent);
  double step = SmoothingStep(f.lines);
  for (FigureLine& l : f.lines) {
    for (std::vector<double>* v : {&l.y, &l.lo, &l.hi}) {
      for (double& y : *v) y *= display.factor;
    }
    if (spec.smoothing > 0) l.raw = l.y;  // drawn faint behind the smoothed line
    Smooth(l.x, l.y, spec.smoothing, step);
  }
  f.unit = display.unit;
  f.y_title = spec.y_title.value_or(AxisTitle(MetricTitle(spec.metric), display.unit));
  f.x_title = spec.x_title.value_or(XAxisTitle(spec.x, f.x_min, f.x_max, spec.utc_offset_min));
}

// Events of the runs shown (on a time axis), of the first kMaxRunsMarked; the phases of one.
Status MarkEventsAndPhases(Store& store, const FigureSpec& spec, const std::vector<RunRecord>& runs,
                           Figure& f) {
  if (spec.x == XAxis::kStep) return Status::Ok();
  std::vector<const RunRecord*> marked;
  for (const RunRecord& r : runs) {
    if (marked.size() < kMaxRunsMarked) marked.push_back(&r);
  }
  if (spec.events) f.events = Events(store, marked, spec.x);
  if (!spec.phases) return Status::Ok();
  // Phases are one run's: shaded for several, they tint the whole figure and say nobody's.
  const RunRecord* r = runs.size() == 1 && spec.phases_of.empty() ? &runs[0] : nullptr;
  std::string ids;
  for (const RunRecord& run : runs) {
    ids += Concat({ids.empty() ? "" : ", ", run.id.substr(0, 8)});
    if (!spec.phases_of.empty() && (run.id.rfind(spec.phases_of, 0) == 0 || run.name == spec.phases_of))
      r = &run;
  }
  if (r == nullptr) {
    return Status::InvalidArgument(Concat(
        {"figure: phases are one run's: ",
         spec.phases_of.empty() ? "name the run whose phases to shade with --phases-of RUN ('phases_of')"
                                : Concat({"'", spec.phases_of, "' is not a run of the figure"}),
         " (its runs: ", ids, ")"}));
  }
  Result<RunAnalysis> a = KeptOrStoredAnalysis(store, *r);
  if (!a.ok()) return Status::Ok();  // no analysis: nothing to shade
  auto at = [&](int64_t ms) {
    return spec.x == XAxis::kWall ? static_cast<double>(ms) : static_cast<double>(ms - r->start_ms) / 1000;
  };
  for (const Phase& p : a->phases) {
    if (p.kind != "steady") f.phases.push_back({at(p.start_ms), at(p.end_ms), p.kind});
  }
  return Status::Ok();
}

}  // namespace

Result<Figure> CollectFigure(Store& store, SeriesReader& reader, const FigureSpec& spec) {
  Collected c;
  TB_RETURN_IF_ERROR(CollectWorkloadMeans(store, reader, spec, c));
  std::vector<RunRecord> runs;
  runs.reserve(spec.runs.size());
  for (const std::string& key : spec.runs) {
    Result<RunRecord> r = store.FindRun(key);
    if (!r.ok()) return r.status();
    runs.push_back(*r);
  }
  TB_RETURN_IF_ERROR(CollectRunLines(reader, spec, runs, c));
  if (c.lines.empty()) {
    return Status::NotFound(Concat({"none of the runs has the metric '", spec.metric, "'",
                                    spec.labels ? Concat({" with labels '", *spec.labels, "'"}) : "",
                                    " (trainbench show RUN lists a run's metrics)"}));
  }
  Result<std::vector<FigureLine>> shown = NameAndHide(spec, runs, c);
  if (!shown.ok()) return shown.status();
  Figure f;
  f.x = spec.x;
  f.title = spec.title;
  f.lines = std::move(*shown);
  if (!spec.color_by.empty()) TB_RETURN_IF_ERROR(ShadeBySweep(spec.color_by, runs, f));
  FitAxes(spec, c.units, f);
  TB_RETURN_IF_ERROR(MarkEventsAndPhases(store, spec, runs, f));
  return f;
}

std::string FigureCsv(const Figure& figure) {
  struct Column {
    std::string name;
    const std::vector<double>* x;
    const std::vector<double>* y;
  };
  std::vector<Column> columns;
  for (const FigureLine& l : figure.lines) {
    // A run's column says which run it is: its id's start beside its legend name.
    columns.push_back(
        {l.run_id.empty() ? l.name : Concat({l.name, " (", l.run_id.substr(0, 8), ")"}), &l.x, &l.y});
    if (!l.lo.empty()) {
      columns.push_back({l.name + " min", &l.x, &l.lo});
      columns.push_back({l.name + " max", &l.x, &l.hi});
    }
  }
  std::set<double> xs;
  std::vector<std::map<double, double>> index(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    for (size_t i = 0; i < columns[c].x->size(); ++i) {
      double x = (*columns[c].x)[i];
      if (x < figure.x_min || x > figure.x_max) continue;
      xs.insert(x);
      index[c][x] = (*columns[c].y)[i];
    }
  }
  std::string out = figure.x == XAxis::kRelative ? "seconds_since_start"
                    : figure.x == XAxis::kWall   ? "time_ms"
                                                 : "step";
  for (const Column& c : columns)
    out += "," + CsvField(c.name + (figure.unit.empty() ? "" : " (" + figure.unit + ")"));
  out += "\n";
  for (double x : xs) {
    out += FormatDouble(x);
    for (const auto& m : index) {
      out += ",";
      auto it = m.find(x);
      if (it != m.end() && std::isfinite(it->second)) out += FormatDouble(it->second);
    }
    out += "\n";
  }
  return out;
}

}  // namespace tb
