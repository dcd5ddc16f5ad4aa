#include "analyze/phases.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "analyze/run_grids.h"
#include "base/strings.h"
#include "metrics/names.h"
#include "metrics/sample.h"
#include "store/run_tags.h"

namespace tb {

const std::vector<std::string_view>& AnalyzedMetrics() {
  static const std::vector<std::string_view> metrics = {
      metric::kGpuUtilizationGpuRatio,   metric::kGpuSmActiveRatio,
      metric::kGpuPipeTensorActiveRatio, metric::kGpuDramActiveRatio,
      metric::kGpuPowerDrawWatts,        metric::kGpuEnergyConsumedJoules,
      metric::kProcGpuEnergyJoules,      metric::kProcCpuEnergyJoules,
      metric::kGpuMemoryUsedBytes,       metric::kProcCpuUtilizationRatio,
      metric::kProcMemoryRssBytes,       metric::kTrainThroughputSamplesPerSecond};
  return metrics;
}

// The points in chunks of a run's analysed series (all listeners), from the totals kept
// beside each series.
std::map<std::string, int64_t> AnalysedPoints(const std::vector<SeriesTotals>& totals) {
  std::map<std::string, int64_t> points;
  int64_t* of_run = nullptr;
  const std::string* run = nullptr;
  for (const SeriesTotals& t : totals) {
    if (run == nullptr || *run != t.series.run_id) {  // a run's series come together
      run = &t.series.run_id;
      of_run = &points[*run];
    }
    if (std::find(AnalyzedMetrics().begin(), AnalyzedMetrics().end(), t.series.metric) !=
        AnalyzedMetrics().end())
      if (__builtin_add_overflow(*of_run, t.count, of_run)) *of_run = std::numeric_limits<int64_t>::max();
  }
  return points;
}

namespace {

// The script's epochs and phases mark its training too.
void AddScriptEvents(const std::vector<EventRecord>& events, ScriptSpan& span) {
  for (const EventRecord& e : events) {
    if (e.kind == "epoch" || e.kind == "phase.start" || e.kind == "phase.end") span.AddEvent(e.time_ms);
  }
}

bool StepTiming(std::string_view metric) {
  return metric == metric::kTrainStepComputeSeconds || metric == metric::kTrainStepDataWaitSeconds;
}

}  // namespace

RunAnalysis AnalyzeRun(const RunSamples& run) {
  RunGrids grids;
  grids.start_ms = run.start_ms;
  grids.end_ms = run.end_ms;
  grids.n = BucketCount(run.start_ms, run.end_ms);
  grids.events = run.events;
  grids.simulated_gpu = run.simulated_gpu;
  for (const auto& [metric, series] : run.series) {
    if (std::find(AnalyzedMetrics().begin(), AnalyzedMetrics().end(), metric) == AnalyzedMetrics().end())
      continue;
    std::vector<std::string_view> labels;
    for (const auto& s : series) labels.push_back(s.first);
    MetricGrid grid;
    double increase = 0;
    for (size_t i : OneListener(labels)) {
      const std::vector<Point>& points = series[i].second;
      if (Counter(metric)) {
        if (!points.empty()) increase += points.back().value - points.front().value;
        continue;
      }
      SeriesBuckets buckets(run.start_ms, grids.n);
      buckets.Add(points);
      grid.Fold(buckets);
    }
    if (Counter(metric)) {
      grids.counters[metric] = increase;
    } else if (std::vector<double> g = grid.Finish(grids.n, Summed(metric), Fill(metric)); !g.empty()) {
      grids.grid[metric] = std::move(g);
    }
  }
  ScriptSpan span;
  StepSamples steps;
  for (const auto& [metric, series] : run.series) {
    if (!metric.starts_with(metric::kScriptPrefix)) continue;
    for (const auto& [labels, points] : series) {
      if (!points.empty()) span.Add(metric, points.front(), points.back());
      if (StepTiming(metric)) steps.AddStepSeconds(points);
    }
  }
  if (auto t = run.series.find(metric::kTrainThroughputSamplesPerSecond); t != run.series.end()) {
    for (const auto& [labels, points] : t->second) steps.AddThroughput(points);
  }
  AddScriptEvents(run.events, span);
  grids.script_window = span.Window();
  grids.step_samples = steps.Samples();
  return AnalyzeGrids(grids);
}

Result<RunAnalysis> AnalyzeStoredRun(Store& store, const RunRecord& run) {
  RunGrids grids;
  grids.start_ms = run.start_ms;
  grids.end_ms = run.end_ms > 0 ? run.end_ms : run.start_ms;
  grids.simulated_gpu = HasTag(run, kSimulatedGpuTag);
  // What the run holds before it is read (were more to arrive meanwhile, a kept copy is
  // made again rather than trusted).
  Result<std::vector<SeriesInfo>> series = store.ListSeries(run.id);
  if (!series.ok()) return series.status();
  Result<std::vector<SeriesTotals>> totals = store.ListSeriesTotals(run.id);
  if (!totals.ok()) return totals.status();
  int64_t extent_points = AnalysedPoints(*totals)[run.id];
  // A finished run's grid ends with it; a running run's at its newest sample.
  size_t limit = run.end_ms > 0 ? BucketCount(run.start_ms, run.end_ms) : std::numeric_limits<size_t>::max();
  auto newest = [&](const Point& p) {
    if (run.end_ms == 0) grids.end_ms = std::max(grids.end_ms, p.time_ms + 1);
  };
  // The script's span (its series' ends) and its steps' times, before its throughput.
  ScriptSpan span;
  StepSamples steps;
  for (const SeriesInfo& s : *series) {
    if (!s.metric.starts_with(metric::kScriptPrefix)) continue;
    Result<std::optional<std::pair<Point, Point>>> ends = ReadSeriesEnds(store, s.id);
    if (!ends.ok()) return ends.status();
    if (ends->has_value()) span.Add(s.metric, (*ends)->first, (*ends)->second);
    if (StepTiming(s.metric))
      TB_RETURN_IF_ERROR(
          ForEachSeriesPart(store, s.id, [&](std::span<const Point> part) { steps.AddStepSeconds(part); }));
  }
  std::map<std::string, MetricGrid, std::less<>> metric_grids;
  for (std::string_view metric : AnalyzedMetrics()) {
    std::vector<const SeriesInfo*> of_metric;
    std::vector<std::string_view> labels;
    for (const SeriesInfo& s : *series) {
      if (s.metric != metric) continue;
      of_metric.push_back(&s);
      labels.push_back(s.labels);
    }
    if (of_metric.empty()) continue;
    double increase = 0;
    for (size_t i : OneListener(labels)) {
      int64_t id = of_metric[i]->id;
      if (Counter(metric)) {
        Result<std::optional<std::pair<Point, Point>>> ends = ReadSeriesEnds(store, id);
        if (!ends.ok()) return ends.status();
        if (!ends->has_value()) continue;
        increase += (*ends)->second.value - (*ends)->first.value;
        newest((*ends)->second);
        continue;
      }
      // Chunk by chunk, then the journal: the points are summed into buckets as they are
      // decoded, never all held at once.
      SeriesBuckets buckets(run.start_ms, limit);
      TB_RETURN_IF_ERROR(ForEachSeriesPart(store, id, [&](std::span<const Point> part) {
        buckets.Add(part);
        if (metric == metric::kTrainThroughputSamplesPerSecond) steps.AddThroughput(part);
        if (!part.empty()) newest(part.back());
      }));
      metric_grids[std::string(metric)].Fold(buckets);
    }
    if (Counter(metric)) grids.counters[std::string(metric)] = increase;
  }
  grids.n = BucketCount(grids.start_ms, grids.end_ms);
  for (const auto& [metric, grid] : metric_grids) {
    if (std::vector<double> g = grid.Finish(grids.n, Summed(metric), Fill(metric)); !g.empty())
      grids.grid[metric] = std::move(g);
  }
  Result<std::vector<EventRecord>> events = store.ListEvents(run.id);
  if (!events.ok()) return events.status();
  grids.events = std::move(*events);
  AddScriptEvents(grids.events, span);
  grids.script_window = span.Window();
  grids.step_samples = steps.Samples();
  RunAnalysis analysis = AnalyzeGrids(grids);
  analysis.extent = RunAnalysis::Extent{extent_points, static_cast<int64_t>(grids.events.size())};
  return analysis;
}

}  // namespace tb
