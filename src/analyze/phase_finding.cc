// AnalyzeGrids: the phases and steady-state figures of a run on its one-second grid, the
// method phases.h states.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analyze/run_grids.h"
#include "base/percentile.h"
#include "base/strings.h"
#include "metrics/catalog.h"
#include "metrics/names.h"

namespace tb {
namespace {

constexpr int kMinSegment = 3;

// Slices [from, to) of a grid.
std::vector<double> Slice(const std::vector<double>& v, size_t from, size_t to) {
  return {v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(to)};
}

struct Band {
  double level = kNaN, width = 0;
  bool Inside(double v) const { return std::abs(v - level) <= width; }
};

Band SteadyBand(const std::vector<double>& v, size_t from) {
  std::vector<double> tail(v.begin() + static_cast<std::ptrdiff_t>(std::max(from, v.size() / 2)), v.end());
  Band b;
  b.level = Median(tail);
  if (std::isnan(b.level)) {  // a sparse run, nothing sampled in its second half: all it has
    tail.assign(v.begin() + static_cast<std::ptrdiff_t>(std::min(from, v.size())), v.end());
    b.level = Median(tail);
  }
  std::vector<double> dev;
  for (double x : tail) {
    if (!std::isnan(x)) dev.push_back(std::abs(x - b.level));
  }
  double mad = Median(dev);
  b.width = std::max({0.1 * std::abs(b.level), 3 * 1.4826 * (std::isnan(mad) ? 0 : mad), 0.02});
  return b;
}

int64_t BucketStart(const RunGrids& run, size_t i) {
  return run.start_ms + static_cast<int64_t>(i) * kStepMs;
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
      out.push_back({label[i], BucketStart(run, i), std::min(run.end_ms, BucketStart(run, j)),
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

// A level of `metric` as people read it: "85 %" for a ratio, "1.2 cores", "250 W".
std::string Level(std::string_view metric, double v) {
  std::string_view unit = MetricUnit(metric);
  if (unit == "ratio") return Fmt(std::round(v * 1000) / 10) + " %";
  return unit.empty() || unit == "1" ? Fmt(v) : Concat({Fmt(v), " ", unit});
}

// The analysis as it is worked out: the buckets [w0, w1) of the training window, the
// warm-up's end, and the buckets no steady state may use.
struct Work {
  size_t w0 = 0, w1 = 0, warm = 0;
  std::vector<bool> excluded;
};

// The metric the phases rest on: GPU utilization, else SM activity, throughput or CPU.
std::string ActivityMetric(const RunGrids& run) {
  for (std::string_view m : {metric::kGpuUtilizationGpuRatio, metric::kGpuSmActiveRatio,
                             metric::kTrainThroughputSamplesPerSecond, metric::kProcCpuUtilizationRatio}) {
    if (run.grid.count(m) != 0) return std::string(m);
  }
  return "";
}

// The training window (the script's, else the GPU's or the CPU's activity, else the whole process), its
// buckets, and the start-up and after phases outside it: nothing outside is steady.
Work FindTraining(const RunGrids& run, RunAnalysis& a) {
  a.training = run.script_window;
  for (std::string_view m : {metric::kGpuUtilizationGpuRatio, metric::kGpuSmActiveRatio}) {
    if (auto g = run.grid.find(m); !a.training && g != run.grid.end())
      a.training = ActivityWindow(g->second, run.start_ms, run.end_ms, "gpu");
  }
  if (auto c = run.grid.find(metric::kProcCpuUtilizationRatio); !a.training && c != run.grid.end())
    a.training = ActivityWindow(c->second, run.start_ms, run.end_ms, "cpu");
  if (!a.training) a.training = TrainingWindow{run.start_ms, run.end_ms, "process"};
  Work w;
  size_t n = run.n;
  w.w0 = std::min(n - 1,
                  static_cast<size_t>(std::max<int64_t>(0, a.training->start_ms - run.start_ms) / kStepMs));
  w.w1 = std::clamp(BucketCount(run.start_ms, a.training->end_ms), w.w0 + 1, n);
  w.warm = w.w0;
  w.excluded.assign(n, false);
  for (size_t i = 0; i < n; ++i) w.excluded[i] = i < w.w0 || i >= w.w1;
  if (a.training->source != "process") {
    std::string by = " (by " + TrainingWindowSource(a.training->source) + ")";
    if (a.training->start_ms - run.start_ms >= kStepMs)
      a.phases.push_back({"start-up", run.start_ms, a.training->start_ms, "before training began" + by});
    if (run.end_ms - a.training->end_ms >= kStepMs)
      a.phases.push_back({"after", a.training->end_ms, run.end_ms, "after training ended" + by});
  }
  return w;
}

// Warm-up: until a rolling median of the activity first enters its steady band. Then the
// departures from the band: idle (near zero), stalls (the CPU above its own band
// meanwhile) and dips.
void FindWarmUpAndDepartures(const RunGrids& run, Work& w, RunAnalysis& a) {
  const std::vector<double>& act = run.grid.find(a.activity)->second;
  Band band = SteadyBand(Slice(act, w.w0, w.w1), 0);
  a.steady_level = band.level;
  size_t width = std::clamp<size_t>((w.w1 - w.w0) / 20, 3, 30);
  w.warm = w.w1;
  for (size_t i = w.w0; i < w.w1; ++i) {
    double m = Median(Slice(act, i, std::min(w.w1, i + width)));
    if (!std::isnan(m) && band.Inside(m) && !std::isnan(act[i]) && band.Inside(act[i])) {
      w.warm = i;
      break;
    }
  }
  if (w.warm == w.w1) w.warm = w.w0;  // never steady: no warm-up to speak of
  if (w.warm - w.w0 >= static_cast<size_t>(kMinSegment)) {
    a.phases.push_back(
        {"warm-up", BucketStart(run, w.w0), BucketStart(run, w.warm),
         Concat({MetricTitle(a.activity), " settles at its steady ", Level(a.activity, band.level), " after ",
                 std::to_string(w.warm - w.w0), " s of training"})});
  }
  for (size_t i = w.w0; i < w.warm; ++i) w.excluded[i] = true;
  auto cpu_grid = run.grid.find(metric::kProcCpuUtilizationRatio);
  const std::vector<double>* cpu =
      cpu_grid != run.grid.end() && a.activity != metric::kProcCpuUtilizationRatio ? &cpu_grid->second
                                                                                   : nullptr;
  Band cpu_band = cpu != nullptr ? SteadyBand(Slice(*cpu, w.warm, w.w1), 0) : Band{};
  std::vector<std::string> label(run.n);
  for (size_t i = w.warm; i < w.w1; ++i) {
    double v = act[i];
    if (std::isnan(v) || band.Inside(v)) continue;
    bool idle = v <= std::max(0.05 * std::abs(band.level), 0.02) && band.level > 0.1;
    bool cpu_high = cpu != nullptr && !std::isnan((*cpu)[i]) && (*cpu)[i] > cpu_band.level + cpu_band.width;
    label[i] = idle ? "idle" : (v < band.level && cpu_high) ? "stall" : "dip";
  }
  const std::string title = MetricTitle(a.activity);
  const std::string_view cpu_metric = metric::kProcCpuUtilizationRatio;
  Segments(
      label, run, a.phases,
      {{"idle",
        Concat({title, " near 0 while the run is alive (steady: ", Level(a.activity, band.level), ")"})},
       {"stall", Concat({title, " below ", Level(a.activity, band.level - band.width),
                         " while the run's CPU is above ", Level(cpu_metric, cpu_band.level + cpu_band.width),
                         ": training waits for the CPU (data loading?)"})},
       {"dip", Concat({title, " left its steady ", Level(a.activity, band.level), " (normally within ",
                       Level(a.activity, band.level - band.width), " to ",
                       Level(a.activity, band.level + band.width), ")"})}});
}

// Memory climbing: a window in which memory rises steadily by more than 5%.
void FindMemoryClimbs(const RunGrids& run, const Work& w, RunAnalysis& a) {
  size_t n = run.n;
  for (std::string_view m : {metric::kProcMemoryRssBytes, metric::kGpuMemoryUsedBytes}) {
    auto found = run.grid.find(m);
    if (found == run.grid.end()) continue;
    const std::vector<double>& mem = found->second;
    size_t width = std::clamp<size_t>(n / 10, 10, 120);
    std::vector<std::string> label(n);
    double level = Median(mem);
    for (size_t i = w.warm; i + width <= w.w1; i += std::max<size_t>(1, width / 4)) {
      double first = mem[i], last = mem[i + width - 1];
      if (std::isnan(first) || std::isnan(last) || level <= 0) continue;
      size_t up = 0;  // buckets that rose (flat ones do not count)
      for (size_t j = i + 1; j < i + width; ++j) up += !std::isnan(mem[j]) && mem[j] > mem[j - 1];
      if (last - first > 0.05 * level && up >= (width - 1) * 8 / 10) {
        for (size_t j = i; j < i + width; ++j) label[j] = "memory-climb";
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
}

// The script's own phases (run.phase("eval")); returns its epochs' times.
std::vector<int64_t> AddScriptPhases(const RunGrids& run, RunAnalysis& a) {
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
  return epochs;
}

void SortPhases(RunAnalysis& a) {
  std::sort(a.phases.begin(), a.phases.end(),
            [](const Phase& x, const Phase& y) { return x.start_ms < y.start_ms; });
}

// Steady state: what no phase claims after the warm-up. A phase claims the buckets it
// covers for the most part (a 10 ms evaluation pass does not take a whole second out).
void FindSteadyState(const RunGrids& run, Work& w, RunAnalysis& a) {
  size_t n = run.n;
  for (const Phase& p : a.phases) {
    if (p.kind == "warm-up" || p.kind == "start-up" || p.kind == "after") continue;
    for (int64_t t = p.start_ms - (p.start_ms - run.start_ms) % kStepMs; t < p.end_ms; t += kStepMs) {
      int64_t overlap = std::min(p.end_ms, t + kStepMs) - std::max(p.start_ms, t);
      auto b = static_cast<size_t>((t - run.start_ms) / kStepMs);
      if (b < n && overlap * 2 >= kStepMs) w.excluded[b] = true;
    }
  }
  size_t first = n, last = 0;
  for (size_t i = 0; i < n; ++i) {
    if (w.excluded[i]) continue;
    ++a.steady_samples;
    first = std::min(first, i);
    last = i;
  }
  if (a.steady_samples > 0) {
    a.phases.push_back({"steady", BucketStart(run, first), std::min(run.end_ms, BucketStart(run, last + 1)),
                        std::to_string(a.steady_samples) + " s of steady state (the other phases left out)"});
  }
  std::vector<double> kept;
  for (const auto& [metric, g] : run.grid) {
    kept.clear();
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      if (w.excluded[i] || std::isnan(g[i])) continue;
      sum += g[i];
      kept.push_back(g[i]);
    }
    if (kept.empty()) continue;
    a.steady[metric] = sum / static_cast<double>(kept.size());
    double p50 = SelectPercentile(kept, 0.5);
    a.steady_spread[metric] = {p50, SelectPercentileFrom(kept, PercentileRank(kept.size(), 0.5), 0.95)};
  }
  if (a.steady.count(metric::kTrainThroughputSamplesPerSecond) != 0)
    a.throughput = a.steady.find(metric::kTrainThroughputSamplesPerSecond)->second;
}

// Energy: the run's attributed share of its GPUs (runs sharing a GPU split its energy, so
// none is counted twice); else the GPUs' counters (last minus first); else power integrated.
std::optional<double> EnergyJoules(const RunGrids& run) {
  for (std::string_view counter : {metric::kProcGpuEnergyJoules, metric::kGpuEnergyConsumedJoules}) {
    if (auto it = run.counters.find(counter); it != run.counters.end() && it->second > 0) return it->second;
  }
  auto power = run.grid.find(metric::kGpuPowerDrawWatts);
  if (power == run.grid.end()) return std::nullopt;
  double joules = 0;
  for (double w : power->second) joules += std::isnan(w) ? 0 : w * kStepMs / 1000.0;
  return joules > 0 ? std::optional<double>(joules) : std::nullopt;
}

// Samples: counted step by step where the script timed its steps; else its throughput over
// the training window (not carried past its end).
std::optional<double> SamplesTrained(const RunGrids& run, const Work& w, const TrainingWindow& training) {
  if (run.step_samples) return run.step_samples;
  auto t = run.grid.find(metric::kTrainThroughputSamplesPerSecond);
  if (t == run.grid.end()) return std::nullopt;
  double samples = 0;
  for (size_t i = w.w0; i < w.w1; ++i) {
    int64_t from = std::max(training.start_ms, BucketStart(run, i));
    int64_t to = std::min(training.end_ms, BucketStart(run, i + 1));
    if (!std::isnan(t->second[i]) && to > from)
      samples += t->second[i] * static_cast<double>(to - from) / 1000.0;
  }
  return samples > 0 ? std::optional<double>(samples) : std::nullopt;
}

}  // namespace

RunAnalysis AnalyzeGrids(const RunGrids& run) {
  RunAnalysis a;
  if (run.n == 0) return a;
  a.activity = ActivityMetric(run);
  Work w = FindTraining(run, a);
  if (!a.activity.empty()) FindWarmUpAndDepartures(run, w, a);
  FindMemoryClimbs(run, w, a);
  std::vector<int64_t> epochs = AddScriptPhases(run, a);
  SortPhases(a);
  FindSteadyState(run, w, a);
  SortPhases(a);
  if (epochs.size() >= 2) {
    std::vector<double> gaps;
    for (size_t i = 1; i < epochs.size(); ++i)
      gaps.push_back(static_cast<double>(epochs[i] - epochs[i - 1]) / 1000);
    a.epoch_seconds = Median(gaps);
  }
  a.energy_joules = EnergyJoules(run);
  if (auto cpu = run.counters.find(metric::kProcCpuEnergyJoules);
      cpu != run.counters.end() && cpu->second > 0)
    a.cpu_energy_joules = cpu->second;
  a.samples = SamplesTrained(run, w, *a.training);
  if (a.energy_joules && a.samples)
    a.energy_per_sample_joules = (*a.energy_joules + a.cpu_energy_joules.value_or(0)) / *a.samples;
  if (a.activity.empty()) a.caveats.push_back("no GPU, throughput or CPU series to find phases in");
  if (a.steady_samples > 0 && a.steady_samples < 30)
    a.caveats.push_back("the steady state rests on " + std::to_string(a.steady_samples) + " second" +
                        (a.steady_samples == 1 ? "" : "s") + " of samples only");
  if (run.simulated_gpu) a.caveats.push_back("GPU figures come from the simulated GPU, not hardware");
  return a;
}

}  // namespace tb
