#include "analyze/phases.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "metrics/names.h"
#include "metrics/sample.h"
#include "store/run_tags.h"

namespace tb {
namespace {

constexpr int64_t kStepMs = 1000;
constexpr int kMinSegment = 3;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Metrics summed over GPUs (absolute amounts) rather than averaged (ratios).
bool Summed(std::string_view metric) {
  return metric == metric::kGpuPowerDrawWatts || metric == metric::kGpuEnergyConsumedJoules ||
         metric == metric::kGpuMemoryUsedBytes;
}

double Median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty()) return kNaN;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// Of a metric's series (their label sets), the indices of one listener's only (nvml and
// smi both report power; counting both doubles it).
std::vector<size_t> OneListener(const std::vector<std::string_view>& labels) {
  std::vector<size_t> out;
  bool plain = std::any_of(labels.begin(), labels.end(),
                           [](std::string_view l) { return !Labels::Parse(std::string(l)).Has("listener"); });
  std::string listener;
  for (size_t i = 0; i < labels.size(); ++i) {
    Labels parsed = Labels::Parse(std::string(labels[i]));
    if (plain && parsed.Has("listener")) continue;
    if (!plain) {
      std::string_view l = parsed.Get("listener");
      if (listener.empty()) listener = l;
      if (l != listener) continue;
    }
    out.push_back(i);
  }
  return out;
}

// Counters whose increase over the run is what counts (their first and last points only).
bool Counter(std::string_view metric) {
  return metric == metric::kGpuEnergyConsumedJoules || metric == metric::kProcGpuEnergyJoules;
}

// How many buckets a gap on a metric's grid may fill with the last value.
int Fill(std::string_view metric) { return metric == metric::kTrainThroughputSamplesPerSecond ? 30 : 5; }

// One series' points summed per one-second bucket from `start_ms`, fed a span at a time
// (a chunk's worth), up to `limit` buckets (a finished run's length).
class SeriesBuckets {
 public:
  SeriesBuckets(int64_t start_ms, size_t limit) : start_ms_(start_ms), limit_(limit) {}
  void Add(std::span<const Point> points) {
    for (const Point& p : points) {
      if (std::isnan(p.value) || p.time_ms < start_ms_) continue;
      auto b = static_cast<size_t>((p.time_ms - start_ms_) / kStepMs);
      if (b >= limit_) continue;
      if (b >= sum_.size()) {
        size_t size = std::min(limit_, std::max(b + 1, sum_.size() * 3 / 2));
        sum_.resize(size, 0.0);
        count_.resize(size, 0);
      }
      sum_[b] += p.value;
      ++count_[b];
    }
  }
  const std::vector<double>& sum() const { return sum_; }
  const std::vector<uint32_t>& count() const { return count_; }

 private:
  int64_t start_ms_;
  size_t limit_;
  std::vector<double> sum_;
  std::vector<uint32_t> count_;
};

// A metric on the one-second grid: the mean of each of its series per bucket, then the
// mean (or sum) across series; gaps up to `fill` buckets take the last value. Series are
// folded in one at a time, so only one series' buckets are held beside the grid.
class MetricGrid {
 public:
  void Fold(const SeriesBuckets& series) {
    const std::vector<double>& sum = series.sum();
    const std::vector<uint32_t>& count = series.count();
    if (total_.size() < sum.size()) {
      total_.resize(sum.size(), 0.0);
      have_.resize(sum.size(), 0);
    }
    for (size_t i = 0; i < sum.size(); ++i) {
      if (count[i] == 0) continue;
      total_[i] += sum[i] / count[i];
      ++have_[i];
    }
  }
  // The grid of `n` buckets; empty when no bucket has a value.
  std::vector<double> Finish(size_t n, bool summed, int fill) const {
    std::vector<double> out(n, kNaN);
    int since = fill + 1;
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
      if (i < have_.size() && have_[i] > 0) {
        out[i] = summed ? total_[i] : total_[i] / have_[i];
        since = 0;
        any = true;
      } else if (i > 0 && ++since <= fill) {
        out[i] = out[i - 1];
      }
    }
    return any ? out : std::vector<double>{};
  }

 private:
  std::vector<double> total_;
  std::vector<uint32_t> have_;
};

// What the analysis works on: the key metrics on the grid, the counters' increases, the
// script's events.
struct RunGrids {
  int64_t start_ms = 0, end_ms = 0;
  size_t n = 0;
  std::map<std::string, std::vector<double>, std::less<>> grid;
  std::map<std::string, double, std::less<>> counters;  // increase over the run, one listener
  std::vector<EventRecord> events;
  bool simulated_gpu = false;
  std::optional<TrainingWindow> script_window;  // from the script's series and events
  std::optional<double> step_samples;           // counted from its steps
};

// Slices [from, to) of a grid.
std::vector<double> Slice(const std::vector<double>& v, size_t from, size_t to) {
  return {v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(to)};
}

size_t BucketCount(int64_t start_ms, int64_t end_ms) {
  return end_ms > start_ms ? static_cast<size_t>((end_ms - start_ms + kStepMs - 1) / kStepMs) : 0;
}

struct Band {
  double level = kNaN, width = 0;
  bool Inside(double v) const { return std::abs(v - level) <= width; }
};

Band SteadyBand(const std::vector<double>& v, size_t from) {
  std::vector<double> tail(v.begin() + static_cast<std::ptrdiff_t>(std::max(from, v.size() / 2)), v.end());
  Band b;
  b.level = Median(tail);
  std::vector<double> dev;
  for (double x : tail) {
    if (!std::isnan(x)) dev.push_back(std::abs(x - b.level));
  }
  double mad = Median(dev);
  b.width = std::max({0.1 * std::abs(b.level), 3 * 1.4826 * (std::isnan(mad) ? 0 : mad), 0.02});
  return b;
}

// Turns per-bucket labels into segments of at least kMinSegment buckets (gaps of one bucket
// inside a segment are bridged).
void Segments(const std::vector<std::string>& label, const RunGrids& run, std::vector<Phase>& out,
              const std::map<std::string, std::string>& details) {
  size_t n = label.size();
  size_t i = 0;
  while (i < n) {
    if (label[i].empty()) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < n && (label[j] == label[i] || (j + 1 < n && label[j + 1] == label[i] && label[j] != label[i])))
      ++j;
    if (j - i >= static_cast<size_t>(kMinSegment)) {
      auto d = details.find(label[i]);
      out.push_back({label[i], run.start_ms + static_cast<int64_t>(i) * kStepMs,
                     std::min(run.end_ms, run.start_ms + static_cast<int64_t>(j) * kStepMs),
                     d != details.end() ? d->second : ""});
    }
    i = j;
  }
}

std::string Fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

const std::vector<std::string_view>& AnalyzedMetrics() {
  static const std::vector<std::string_view> metrics = {metric::kGpuUtilizationGpuRatio,
                                                        metric::kGpuSmActiveRatio,
                                                        metric::kGpuPipeTensorActiveRatio,
                                                        metric::kGpuDramActiveRatio,
                                                        metric::kGpuPowerDrawWatts,
                                                        metric::kGpuEnergyConsumedJoules,
                                                        metric::kProcGpuEnergyJoules,
                                                        metric::kGpuMemoryUsedBytes,
                                                        metric::kProcCpuUtilizationRatio,
                                                        metric::kProcMemoryRssBytes,
                                                        metric::kTrainThroughputSamplesPerSecond};
  return metrics;
}

// The points in chunks of a run's analysed series (all listeners), from the totals kept
// beside each series.
Result<int64_t> AnalysedPoints(Store& store, const RunRecord& run, const std::vector<SeriesInfo>& series) {
  Result<std::vector<SeriesTotals>> totals = store.ListSeriesTotals(run.id);
  if (!totals.ok()) return totals.status();
  std::map<int64_t, int64_t> count;
  for (const SeriesTotals& t : *totals) count[t.series_id] = t.count;
  int64_t points = 0;
  for (const SeriesInfo& s : series) {
    if (std::find(AnalyzedMetrics().begin(), AnalyzedMetrics().end(), s.metric) != AnalyzedMetrics().end())
      points += count[s.id];
  }
  return points;
}

namespace {

RunAnalysis AnalyzeGrids(RunGrids& run) {
  RunAnalysis a;
  if (run.n == 0) return a;
  size_t n = run.n;
  std::map<std::string, std::vector<double>, std::less<>>& grid = run.grid;
  for (std::string_view m : {metric::kGpuUtilizationGpuRatio, metric::kGpuSmActiveRatio,
                             metric::kTrainThroughputSamplesPerSecond, metric::kProcCpuUtilizationRatio}) {
    if (grid.count(m) != 0) {
      a.activity = m;
      break;
    }
  }
  // The training window, and the buckets [w0, w1) it covers: nothing outside is steady.
  a.training = run.script_window;
  if (!a.training) {
    for (std::string_view m : {metric::kGpuUtilizationGpuRatio, metric::kGpuSmActiveRatio}) {
      if (auto g = grid.find(m); !a.training && g != grid.end())
        a.training = GpuActivityWindow(g->second, run.start_ms, run.end_ms);
    }
  }
  if (!a.training) a.training = TrainingWindow{run.start_ms, run.end_ms, "process"};
  size_t w0 = std::min(
      n - 1, static_cast<size_t>(std::max<int64_t>(0, a.training->start_ms - run.start_ms) / kStepMs));
  size_t w1 = std::clamp(BucketCount(run.start_ms, a.training->end_ms), w0 + 1, n);
  std::vector<bool> excluded(n, false);
  for (size_t i = 0; i < n; ++i) excluded[i] = i < w0 || i >= w1;
  if (a.training->source != "process") {
    if (a.training->start_ms - run.start_ms >= kStepMs)
      a.phases.push_back({"start-up", run.start_ms, a.training->start_ms,
                          "before training began (by " + TrainingWindowSource(a.training->source) + ")"});
    if (run.end_ms - a.training->end_ms >= kStepMs)
      a.phases.push_back({"after", a.training->end_ms, run.end_ms,
                          "after training ended (by " + TrainingWindowSource(a.training->source) + ")"});
  }
  size_t warm = w0;
  if (!a.activity.empty()) {
    const std::vector<double>& act = grid[a.activity];
    Band band = SteadyBand(Slice(act, w0, w1), 0);
    a.steady_level = band.level;
    // Warm-up: until a rolling median first enters the band.
    size_t w = std::clamp<size_t>((w1 - w0) / 20, 3, 30);
    warm = w1;
    for (size_t i = w0; i < w1; ++i) {
      double m = Median(Slice(act, i, std::min(w1, i + w)));
      if (!std::isnan(m) && band.Inside(m) && !std::isnan(act[i]) && band.Inside(act[i])) {
        warm = i;
        break;
      }
    }
    if (warm == w1) warm = w0;  // never steady: no warm-up to speak of
    if (warm - w0 >= static_cast<size_t>(kMinSegment)) {
      a.phases.push_back({"warm-up", run.start_ms + static_cast<int64_t>(w0) * kStepMs,
                          run.start_ms + static_cast<int64_t>(warm) * kStepMs,
                          a.activity + " reaches " + Fmt(band.level) + " after " + std::to_string(warm - w0) +
                              " s of training"});
    }
    for (size_t i = w0; i < warm; ++i) excluded[i] = true;
    // Departures from the steady state.
    const std::vector<double>* cpu =
        grid.count(metric::kProcCpuUtilizationRatio) != 0 && a.activity != metric::kProcCpuUtilizationRatio
            ? &grid.find(metric::kProcCpuUtilizationRatio)->second
            : nullptr;
    Band cpu_band = cpu != nullptr ? SteadyBand(Slice(*cpu, warm, w1), 0) : Band{};
    std::vector<std::string> label(n);
    for (size_t i = warm; i < w1; ++i) {
      double v = act[i];
      if (std::isnan(v) || band.Inside(v)) continue;
      bool idle = v <= std::max(0.05 * std::abs(band.level), 0.02) && band.level > 0.1;
      bool cpu_high = cpu != nullptr && !std::isnan((*cpu)[i]) && (*cpu)[i] > cpu_band.level + cpu_band.width;
      label[i] = idle ? "idle" : (v < band.level && cpu_high) ? "stall" : "dip";
    }
    std::string unit = a.activity;
    Segments(label, run, a.phases,
             {{"idle", unit + " near 0 (steady " + Fmt(band.level) + ") while the run is alive"},
              {"stall", unit + " below " + Fmt(band.level - band.width) +
                            " while proc.cpu.utilization_ratio is above " +
                            Fmt(cpu_band.level + cpu_band.width) + ": waiting for the CPU (data loading?)"},
              {"dip", unit + " outside " + Fmt(band.level) + " +- " + Fmt(band.width)}});
  }
  // Memory climbing: a window in which memory rises steadily by more than 5%.
  for (std::string_view m : {metric::kProcMemoryRssBytes, metric::kGpuMemoryUsedBytes}) {
    if (grid.count(m) == 0) continue;
    const std::vector<double>& mem = grid.find(m)->second;
    size_t w = std::clamp<size_t>(n / 10, 10, 120);
    std::vector<std::string> label(n);
    double level = Median(mem);
    for (size_t i = warm; i + w <= w1; i += std::max<size_t>(1, w / 4)) {
      double first = mem[i], last = mem[i + w - 1];
      if (std::isnan(first) || std::isnan(last) || level <= 0) continue;
      size_t up = 0;  // buckets that rose (flat ones do not count)
      for (size_t j = i + 1; j < i + w; ++j) up += !std::isnan(mem[j]) && mem[j] > mem[j - 1];
      if (last - first > 0.05 * level && up >= (w - 1) * 8 / 10) {
        for (size_t j = i; j < i + w; ++j) label[j] = "memory-climb";
      }
    }
    // Windows overhang the climb: trim each segment to where memory actually rises.
    for (size_t i = 0; i < n;) {
      if (label[i].empty()) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < n && !label[j].empty()) ++j;
      size_t b = i, e = j;
      while (b + 1 < e && !(mem[b + 1] > mem[b])) label[b++].clear();
      while (e > b + 1 && !(mem[e - 1] > mem[e - 2])) label[--e].clear();
      i = j;
    }
    Segments(label, run, a.phases, {{"memory-climb", std::string(m) + " rising steadily"}});
  }
  // The script's own phases (run.phase("eval")) and epochs.
  std::map<std::string, int64_t> open;
  std::vector<int64_t> epochs;
  for (const EventRecord& e : run.events) {
    if (e.kind == "phase.start") open[e.label] = e.time_ms;
    if (e.kind == "phase.end" && open.count(e.label) != 0) {
      a.phases.push_back({e.label, open[e.label], e.time_ms, "the script's phase"});
      open.erase(e.label);
    }
    if (e.kind == "epoch") epochs.push_back(e.time_ms);
  }
  // A phase claims the buckets it covers for the most part (a 10 ms evaluation pass does
  // not take a whole second out of the steady state).
  for (const Phase& p : a.phases) {
    if (p.kind == "warm-up" || p.kind == "start-up" || p.kind == "after") continue;
    for (int64_t t = p.start_ms - (p.start_ms - run.start_ms) % kStepMs; t < p.end_ms; t += kStepMs) {
      int64_t overlap = std::min(p.end_ms, t + kStepMs) - std::max(p.start_ms, t);
      auto b = static_cast<size_t>((t - run.start_ms) / kStepMs);
      if (b < n && overlap * 2 >= kStepMs) excluded[b] = true;
    }
  }
  std::sort(a.phases.begin(), a.phases.end(),
            [](const Phase& x, const Phase& y) { return x.start_ms < y.start_ms; });
  // Steady state: what no phase claims after the warm-up.
  size_t first = n, last = 0;
  for (size_t i = 0; i < n; ++i) {
    if (excluded[i]) continue;
    ++a.steady_samples;
    first = std::min(first, i);
    last = i;
  }
  if (a.steady_samples > 0) {
    a.phases.push_back({"steady", run.start_ms + static_cast<int64_t>(first) * kStepMs,
                        std::min(run.end_ms, run.start_ms + static_cast<int64_t>(last + 1) * kStepMs),
                        std::to_string(a.steady_samples) + " s of steady state (the other phases left out)"});
    std::sort(a.phases.begin(), a.phases.end(),
              [](const Phase& x, const Phase& y) { return x.start_ms < y.start_ms; });
  }
  for (const auto& [metric, g] : grid) {
    double sum = 0;
    int count = 0;
    for (size_t i = 0; i < n; ++i) {
      if (excluded[i] || std::isnan(g[i])) continue;
      sum += g[i];
      ++count;
    }
    if (count > 0) a.steady[metric] = sum / count;
  }
  if (a.steady.count(metric::kTrainThroughputSamplesPerSecond) != 0)
    a.throughput = a.steady.find(metric::kTrainThroughputSamplesPerSecond)->second;
  if (epochs.size() >= 2) {
    std::vector<double> gaps;
    for (size_t i = 1; i < epochs.size(); ++i)
      gaps.push_back(static_cast<double>(epochs[i] - epochs[i - 1]) / 1000);
    a.epoch_seconds = Median(gaps);
  }
  // Energy: the run's attributed share of its GPUs (runs sharing a GPU split its energy, so
  // none is counted twice); else the GPUs' counters (last minus first); else power integrated.
  for (std::string_view counter : {metric::kProcGpuEnergyJoules, metric::kGpuEnergyConsumedJoules}) {
    if (auto it = run.counters.find(counter); !a.energy_joules && it != run.counters.end() && it->second > 0)
      a.energy_joules = it->second;
  }
  if (!a.energy_joules && grid.count(metric::kGpuPowerDrawWatts) != 0) {
    double joules = 0;
    for (double w : grid.find(metric::kGpuPowerDrawWatts)->second)
      joules += std::isnan(w) ? 0 : w * kStepMs / 1000.0;
    if (joules > 0) a.energy_joules = joules;
  }
  // Samples: counted step by step where the script timed its steps; else its throughput
  // over the training window (not carried past its end).
  if (run.step_samples) {
    a.samples = run.step_samples;
  } else if (auto t = grid.find(metric::kTrainThroughputSamplesPerSecond); t != grid.end()) {
    double samples = 0;
    for (size_t i = w0; i < w1; ++i) {
      int64_t from = std::max(a.training->start_ms, run.start_ms + static_cast<int64_t>(i) * kStepMs);
      int64_t to = std::min(a.training->end_ms, run.start_ms + static_cast<int64_t>(i + 1) * kStepMs);
      if (!std::isnan(t->second[i]) && to > from)
        samples += t->second[i] * static_cast<double>(to - from) / 1000.0;
    }
    if (samples > 0) a.samples = samples;
  }
  if (a.energy_joules && a.samples) a.energy_per_sample_joules = *a.energy_joules / *a.samples;
  if (a.activity.empty()) a.caveats.push_back("no GPU, throughput or CPU series to find phases in");
  if (a.steady_samples > 0 && a.steady_samples < 30)
    a.caveats.push_back("the steady state rests on " + std::to_string(a.steady_samples) + " second" +
                        (a.steady_samples == 1 ? "" : "s") + " of samples only");
  if (run.simulated_gpu) a.caveats.push_back("GPU figures come from the simulated GPU, not hardware");
  return a;
}

}  // namespace

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
  Result<int64_t> extent_points = AnalysedPoints(store, run, *series);
  if (!extent_points.ok()) return extent_points.status();
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
  analysis.extent = RunAnalysis::Extent{*extent_points, static_cast<int64_t>(grids.events.size())};
  return analysis;
}

}  // namespace tb
