#include "analyze/phases.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "metrics/names.h"
#include "metrics/sample.h"

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

// The series of one listener only (nvml and smi both report power; counting both doubles it).
std::vector<const std::vector<Point>*> OneListener(
    const std::vector<std::pair<std::string, std::vector<Point>>>& series) {
  std::vector<const std::vector<Point>*> out;
  bool plain = std::any_of(series.begin(), series.end(),
                           [](const auto& s) { return !Labels::Parse(s.first).Has("listener"); });
  std::string listener;
  for (const auto& [text, points] : series) {
    Labels labels = Labels::Parse(text);
    if (plain && labels.Has("listener")) continue;
    if (!plain) {
      std::string_view l = labels.Get("listener");
      if (listener.empty()) listener = l;
      if (l != listener) continue;
    }
    out.push_back(&points);
  }
  return out;
}

// A metric on the one-second grid: the mean of each series per bucket, then the mean (or
// sum) across series; gaps up to `fill` buckets take the last value.
std::vector<double> OnGrid(const RunSamples& run, std::string_view metric, size_t n, int fill) {
  auto it = run.series.find(metric);
  if (it == run.series.end()) return {};
  std::vector<double> total(n, 0.0);
  std::vector<int> have(n, 0);
  for (const std::vector<Point>* points : OneListener(it->second)) {
    std::vector<double> sum(n, 0.0);
    std::vector<int> count(n, 0);
    for (const Point& p : *points) {
      if (std::isnan(p.value) || p.time_ms < run.start_ms) continue;
      auto b = static_cast<size_t>((p.time_ms - run.start_ms) / kStepMs);
      if (b >= n) continue;
      sum[b] += p.value;
      ++count[b];
    }
    for (size_t i = 0; i < n; ++i) {
      if (count[i] == 0) continue;
      total[i] += sum[i] / count[i];
      ++have[i];
    }
  }
  std::vector<double> out(n, kNaN);
  bool summed = Summed(metric);
  int since = fill + 1;
  for (size_t i = 0; i < n; ++i) {
    if (have[i] > 0) {
      out[i] = summed ? total[i] : total[i] / have[i];
      since = 0;
    } else if (i > 0 && ++since <= fill) {
      out[i] = out[i - 1];
    }
  }
  bool any = std::any_of(out.begin(), out.end(), [](double v) { return !std::isnan(v); });
  return any ? out : std::vector<double>{};
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
void Segments(const std::vector<std::string>& label, const RunSamples& run, std::vector<Phase>& out,
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

RunAnalysis AnalyzeRun(const RunSamples& run) {
  RunAnalysis a;
  if (run.end_ms <= run.start_ms) return a;
  auto n = static_cast<size_t>((run.end_ms - run.start_ms + kStepMs - 1) / kStepMs);
  std::map<std::string, std::vector<double>, std::less<>> grid;
  for (std::string_view m : AnalyzedMetrics()) {
    std::vector<double> g = OnGrid(run, m, n, m == metric::kTrainThroughputSamplesPerSecond ? 30 : 5);
    if (!g.empty()) grid[std::string(m)] = std::move(g);
  }
  for (std::string_view m : {metric::kGpuUtilizationGpuRatio, metric::kGpuSmActiveRatio,
                             metric::kTrainThroughputSamplesPerSecond, metric::kProcCpuUtilizationRatio}) {
    if (grid.count(m) != 0) {
      a.activity = m;
      break;
    }
  }
  std::vector<bool> excluded(n, false);
  size_t warm = 0;
  if (!a.activity.empty()) {
    const std::vector<double>& act = grid[a.activity];
    Band band = SteadyBand(act, 0);
    a.steady_level = band.level;
    // Warm-up: until a rolling median first enters the band.
    size_t w = std::clamp<size_t>(n / 20, 3, 30);
    warm = n;
    for (size_t i = 0; i + 1 <= n; ++i) {
      std::vector<double> window(act.begin() + static_cast<std::ptrdiff_t>(i),
                                 act.begin() + static_cast<std::ptrdiff_t>(std::min(n, i + w)));
      double m = Median(window);
      if (!std::isnan(m) && band.Inside(m) && !std::isnan(act[i]) && band.Inside(act[i])) {
        warm = i;
        break;
      }
    }
    if (warm == n) warm = 0;  // never steady: no warm-up to speak of
    if (warm >= static_cast<size_t>(kMinSegment)) {
      a.phases.push_back(
          {"warm-up", run.start_ms, run.start_ms + static_cast<int64_t>(warm) * kStepMs,
           a.activity + " reaches " + Fmt(band.level) + " after " + std::to_string(warm) + " s"});
    }
    for (size_t i = 0; i < warm; ++i) excluded[i] = true;
    // Departures from the steady state.
    const std::vector<double>* cpu =
        grid.count(metric::kProcCpuUtilizationRatio) != 0 && a.activity != metric::kProcCpuUtilizationRatio
            ? &grid.find(metric::kProcCpuUtilizationRatio)->second
            : nullptr;
    Band cpu_band = cpu != nullptr ? SteadyBand(*cpu, warm) : Band{};
    std::vector<std::string> label(n);
    for (size_t i = warm; i < n; ++i) {
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
    for (size_t i = warm; i + w <= n; i += std::max<size_t>(1, w / 4)) {
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
    if (p.kind == "warm-up") continue;
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
    if (metric == metric::kGpuEnergyConsumedJoules || metric == metric::kProcGpuEnergyJoules) continue;
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
  if (auto it = run.series.find(metric::kProcGpuEnergyJoules); it != run.series.end()) {
    double joules = 0;
    for (const std::vector<Point>* points : OneListener(it->second)) {
      if (points->size() >= 2) joules += points->back().value - points->front().value;
    }
    if (joules > 0) a.energy_joules = joules;
  }
  if (auto it = run.series.find(metric::kGpuEnergyConsumedJoules);
      !a.energy_joules && it != run.series.end()) {
    double joules = 0;
    for (const std::vector<Point>* points : OneListener(it->second)) {
      if (points->size() >= 2) joules += points->back().value - points->front().value;
    }
    if (joules > 0) a.energy_joules = joules;
  }
  if (!a.energy_joules && grid.count(metric::kGpuPowerDrawWatts) != 0) {
    double joules = 0;
    for (double w : grid.find(metric::kGpuPowerDrawWatts)->second)
      joules += std::isnan(w) ? 0 : w * kStepMs / 1000.0;
    if (joules > 0) a.energy_joules = joules;
  }
  if (grid.count(metric::kTrainThroughputSamplesPerSecond) != 0) {
    double samples = 0;
    for (double s : grid.find(metric::kTrainThroughputSamplesPerSecond)->second)
      samples += std::isnan(s) ? 0 : s * kStepMs / 1000.0;
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

Result<RunAnalysis> AnalyzeStoredRun(Store& store, const RunRecord& run) {
  RunSamples samples;
  samples.start_ms = run.start_ms;
  samples.end_ms = run.end_ms > 0 ? run.end_ms : run.start_ms;
  samples.simulated_gpu = std::any_of(run.tags.begin(), run.tags.end(),
                                      [](const auto& kv) { return kv.first == kSimulatedGpuTag; });
  Result<std::vector<SeriesInfo>> series = store.ListSeries(run.id);
  if (!series.ok()) return series.status();
  const std::vector<std::string_view>& wanted = AnalyzedMetrics();
  for (const SeriesInfo& s : *series) {
    if (std::find(wanted.begin(), wanted.end(), s.metric) == wanted.end()) continue;
    Result<std::vector<Point>> points = ReadSeriesPoints(store, s.id);
    if (!points.ok()) return points.status();
    // A running run ends at its newest sample.
    if (run.end_ms == 0 && !points->empty())
      samples.end_ms = std::max(samples.end_ms, points->back().time_ms + 1);
    samples.series[s.metric].emplace_back(s.labels, std::move(*points));
  }
  Result<std::vector<EventRecord>> events = store.ListEvents(run.id);
  if (!events.ok()) return events.status();
  samples.events = std::move(*events);
  return AnalyzeRun(samples);
}

std::string AnalysisJson(const RunAnalysis& a) {
  nlohmann::json phases = nlohmann::json::array();
  for (const Phase& p : a.phases)
    phases.push_back(
        {{"kind", p.kind}, {"start_ms", p.start_ms}, {"end_ms", p.end_ms}, {"detail", p.detail}});
  nlohmann::json j = {{"phases", phases},
                      {"activity", a.activity},
                      {"steady_level", a.steady_level},
                      {"steady_samples", a.steady_samples},
                      {"steady", a.steady},
                      {"caveats", a.caveats}};
  auto opt = [&](const char* k, const std::optional<double>& v) {
    j[k] = v ? nlohmann::json(*v) : nlohmann::json();
  };
  opt("throughput", a.throughput);
  opt("epoch_seconds", a.epoch_seconds);
  opt("energy_joules", a.energy_joules);
  opt("samples", a.samples);
  opt("energy_per_sample_joules", a.energy_per_sample_joules);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tb
