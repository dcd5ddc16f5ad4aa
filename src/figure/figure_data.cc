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
#include "metrics/catalog.h"
#include "query/downsample.h"
#include "query/export.h"
#include "query/workload_mean.h"
#include "store/run_tags.h"

namespace tb {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kMaxRunsMarked = 12;  // events and phases of at most this many runs

std::string Param(const RunRecord& r, std::string_view key) {
  for (const auto& [k, v] : r.params) {
    if (k == key) return v;
  }
  return "";
}

// An exponential moving average as the screen draws it (TensorBoard's: debiased, gaps kept).
void Smooth(std::vector<double>& y, int weight) {
  if (weight <= 0) return;
  double w = weight / 100.0, last = 0, debias = 0;
  bool started = false;
  for (double& v : y) {
    if (!std::isfinite(v)) continue;
    last = started ? last * w + (1 - w) * v : v * (1 - w);
    started = true;
    debias = debias * w + (1 - w);
    v = last / debias;
  }
}

struct Source {
  const RunRecord* run = nullptr;  // nullptr for a workload mean
  std::string labels;
  std::string workload;  // "EXP:W" for a workload mean
  size_t run_count = 0;
};

// Each line's colour and dash, as the web page gives them: by the place of its workload
// (means first) or its run in what the figure was asked for, so that a run keeps its colour
// in every figure of the same runs whichever runs before it have the metric; where a run
// has several lines (a line per GPU), by the line's place, every line its own.
std::vector<size_t> StylesBySpec(const std::vector<Source>& sources,
                                 const std::vector<std::string>& workloads,
                                 const std::vector<RunRecord>& runs) {
  std::vector<size_t> styles(sources.size());
  std::set<std::string> seen;
  bool repeated = false;
  for (const Source& s : sources) repeated = repeated || (s.run != nullptr && !seen.insert(s.run->id).second);
  for (size_t i = 0; i < sources.size(); ++i) {
    const Source& s = sources[i];
    size_t at =
        s.run == nullptr
            ? std::find(workloads.begin(), workloads.end(), s.workload) - workloads.begin()
            : workloads.size() + (std::find_if(runs.begin(), runs.end(),
                                               [&](const RunRecord& r) { return r.id == s.run->id; }) -
                                  runs.begin());
    bool known = s.run == nullptr ? at < workloads.size() : at < workloads.size() + runs.size();
    styles[i] = repeated || !known ? i : at;
  }
  return styles;
}

// The legend's name for a line from a template: {param}, {name}, {letter}, {workload},
// {experiment}, {labels}, {id}, {runs} (a workload's run count).
std::string FillLegend(std::string_view pattern, const Source& s) {
  std::string out;
  size_t i = 0;
  while (i < pattern.size()) {
    size_t open = pattern.find('{', i);
    size_t close = open == std::string_view::npos ? open : pattern.find('}', open);
    if (close == std::string_view::npos) {
      out.append(pattern.substr(i));
      break;
    }
    out.append(pattern.substr(i, open - i));
    std::string key(pattern.substr(open + 1, close - open - 1));
    std::string value;
    if (s.run == nullptr) {
      std::string_view w = s.workload;
      size_t colon = w.rfind(':');
      if (key == "workload") value = std::string(w.substr(colon + 1));
      if (key == "experiment") value = std::string(w.substr(0, colon));
      if (key == "runs") value = std::to_string(s.run_count);
      if (key == "name") value = std::string(w.substr(colon + 1)) + " mean";
    } else {
      const RunRecord& r = *s.run;
      if (key == "name")
        value = r.name;
      else if (key == "letter")
        value = TagValue(r, kLetterTag);
      else if (key == "workload")
        value = r.workload;
      else if (key == "experiment")
        value = r.experiment;
      else if (key == "labels")
        value = s.labels;
      else if (key == "id")
        value = r.id.substr(0, 8);
      else
        value = Param(r, key);
    }
    out += value;
    i = close + 1;
  }
  return out;
}

// Legend names when none is asked for: what tells the lines apart (the params that differ
// between the runs, the labels when a run has several series), else the run's name.
std::vector<std::string> DefaultLegend(const std::vector<Source>& sources) {
  std::vector<const RunRecord*> runs;
  std::set<std::string> labels;
  for (const Source& s : sources) {
    if (s.run == nullptr) continue;
    if (std::find(runs.begin(), runs.end(), s.run) == runs.end()) runs.push_back(s.run);
    labels.insert(s.labels);
  }
  std::vector<std::string> differing;
  if (runs.size() > 1) {
    std::set<std::string> keys;
    for (const RunRecord* r : runs) {
      for (const auto& [k, v] : r->params) keys.insert(k);
    }
    for (const std::string& k : keys) {
      std::set<std::string> values;
      for (const RunRecord* r : runs) values.insert(Param(*r, k));
      if (values.size() > 1) differing.push_back(k);
    }
  }
  std::set<std::string> names;
  for (const RunRecord* r : runs) names.insert(r->name);
  std::vector<std::string> out;
  for (const Source& s : sources) {
    if (s.run == nullptr) {
      std::string_view w = std::string_view(s.workload).substr(s.workload.rfind(':') + 1);
      bool number = !w.empty() && w.find_first_not_of("0123456789") == std::string_view::npos;
      out.push_back(FillLegend(Concat({number ? "workload " : "", "{workload}, ",
                                       s.run_count == 1 ? "1 run" : "mean of {runs} runs"}),
                               s));
      continue;
    }
    std::string name;
    for (const std::string& k : differing) {
      if (!name.empty()) name += ", ";
      name += k + "=" + Param(*s.run, k);
    }
    if (name.empty())
      name = names.size() == runs.size() ? s.run->name : s.run->name + " " + s.run->id.substr(0, 6);
    if (labels.size() > 1 && !s.labels.empty()) name += " [" + s.labels + "]";
    out.push_back(name);
  }
  // Names that still collide (runs with the same params) take the run's letter or name.
  for (size_t i = 0; i < out.size(); ++i) {
    if (sources[i].run == nullptr || std::count(out.begin(), out.end(), out[i]) < 2) continue;
    std::string same = out[i];
    for (size_t k = i; k < out.size(); ++k) {
      if (out[k] != same || sources[k].run == nullptr) continue;
      std::string who = TagValue(*sources[k].run, kLetterTag);
      if (who.empty() || who == "-") who = sources[k].run->name;
      out[k] = Concat({same, " (", who, ")"});
    }
  }
  return out;
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
    if (first_only) break;
  }
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

}  // namespace

Result<Figure> CollectFigure(Store& store, SeriesReader& reader, const FigureSpec& spec) {
  Figure f;
  f.x = spec.x;
  std::vector<FigureLine> lines;
  std::vector<Source> sources;
  std::vector<std::string> units;  // the catalog unit of each line's series
  const double from = spec.from.value_or(-std::numeric_limits<double>::infinity());
  const double to = spec.to.value_or(std::numeric_limits<double>::infinity());
  const size_t budget = std::max<size_t>(400, static_cast<size_t>(spec.width_pt / 72 * 600));
  // A workload mean's buckets as wide as a line's (budget / 4, as on screen).
  const size_t mean_buckets = std::max<size_t>(1, budget / 4);

  // Workload means first, as on screen: each workload's runs and their series, then what
  // all of them read in a few queries, then each mean.
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
  if (!asked.empty()) {
    TB_RETURN_IF_ERROR(
        ReadAheadForWorkloadMeans(reader, every_mean_series, spec.x, spec.from.has_value(), mean_buckets));
  }
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
    lines.push_back(std::move(line));
    sources.push_back({nullptr, "", a.key, aligned.size()});
    units.emplace_back(MetricUnit(spec.metric));
  }

  std::vector<RunRecord> runs;
  runs.reserve(spec.runs.size());
  for (const std::string& key : spec.runs) {
    Result<RunRecord> r = store.FindRun(key);
    if (!r.ok()) return r.status();
    runs.push_back(*r);
  }
  // Each run's series, then what all of them read in a few queries, then each line.
  std::vector<std::vector<SeriesInfo>> shown_series;
  std::vector<std::pair<SeriesInfo, bool>> every_series;
  for (const RunRecord& r : runs) {
    Result<std::vector<SeriesInfo>> series = SeriesToPlot(reader, r, spec, false);
    if (!series.ok()) return series.status();
    for (const SeriesInfo& s : *series) every_series.emplace_back(s, Finished(r));
    shown_series.push_back(std::move(*series));
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
      double lo = std::isfinite(from) ? from : (xy.x.empty() ? 0 : xy.x.front());
      double hi = std::isfinite(to) ? to : (xy.x.empty() ? 0 : xy.x.back());
      XYSeries kept = Downsample(xy, lo, hi, budget);
      FigureLine line;
      line.key = r.id + "|" + s.labels;
      line.run_id = r.id;
      line.x = std::move(kept.x);
      line.y = std::move(kept.y);
      lines.push_back(std::move(line));
      sources.push_back({&r, s.labels, "", 0});
      units.emplace_back(MetricUnit(s.metric));
    }
  }
  if (lines.empty()) {
    return Status::NotFound(Concat({"none of the runs has the metric '", spec.metric, "'",
                                    spec.labels ? Concat({" with labels '", *spec.labels, "'"}) : "",
                                    " (trainbench show RUN lists a run's metrics)"}));
  }

  // Names, styles (hiding a line keeps the others' colours), what is hidden.
  std::vector<std::string> names = DefaultLegend(sources);
  std::vector<size_t> styles = StylesBySpec(sources, spec.workloads, runs);
  for (size_t i = 0; i < lines.size(); ++i) {
    lines[i].style = styles[i];
    lines[i].name = spec.legend.empty() ? names[i] : FillLegend(spec.legend, sources[i]);
  }
  std::vector<FigureLine> shown;
  for (FigureLine& l : lines) {
    if (std::find(spec.hidden.begin(), spec.hidden.end(), l.key) == spec.hidden.end())
      shown.push_back(std::move(l));
  }
  if (shown.empty()) return Status::InvalidArgument("every line of the figure is hidden: show at least one");

  // The range shown, and the unit the values read best in.
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, largest = 0;
  for (const FigureLine& l : shown) {
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
  std::string unit = units.empty() ? "" : units[0];
  DisplayUnit display = ChooseDisplayUnit(unit, largest, spec.percent);
  for (FigureLine& l : shown) {
    for (std::vector<double>* v : {&l.y, &l.lo, &l.hi}) {
      for (double& y : *v) y *= display.factor;
    }
    Smooth(l.y, spec.smoothing);
  }
  f.unit = display.unit;
  f.lines = std::move(shown);
  f.title = spec.title;
  f.y_title = spec.y_title.value_or(AxisTitle(MetricTitle(spec.metric), display.unit));
  f.x_title = spec.x_title.value_or(XAxisTitle(
      spec.x, spec.x == XAxis::kWall ? (f.x_max - f.x_min) / 1000 : f.x_max - f.x_min, spec.utc_offset_min));

  // Events and phases of the runs shown (on a time axis).
  std::vector<const RunRecord*> marked;
  for (const RunRecord& r : runs) {
    if (marked.size() < kMaxRunsMarked) marked.push_back(&r);
  }
  if (spec.x != XAxis::kStep && spec.events) f.events = Events(store, marked, spec.x);
  if (spec.x != XAxis::kStep && spec.phases) {
    for (const RunRecord* r : marked) {
      Result<RunAnalysis> a = KeptOrStoredAnalysis(store, *r);
      if (!a.ok()) continue;
      for (const Phase& p : a->phases) {
        if (p.kind == "steady") continue;
        auto at = [&](int64_t ms) {
          return spec.x == XAxis::kWall ? static_cast<double>(ms)
                                        : static_cast<double>(ms - r->start_ms) / 1000;
        };
        f.phases.push_back({at(p.start_ms), at(p.end_ms), p.kind});
      }
    }
  }
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
    columns.push_back({l.name, &l.x, &l.y});
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
