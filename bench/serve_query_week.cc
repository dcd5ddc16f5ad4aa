// serve_query's week-long run (its sixth argument): a finished run at 10 Hz for a week with
// N series (300: the issue's), written once, then what the web page asks when it is opened
// on a server just started, each cold and the median of 3, against reading the points
// whole; then the phase analysis afresh (with the server's peak memory) and kept.
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "analyze/phases.h"
#include "base/time.h"
#include "bench/bench_stats.h"
#include "bench/serve_bench.h"
#include "bench/training_series.h"
#include "store/series_writer.h"
#include "store/store.h"

namespace {

using namespace tb;  // NOLINT(google-build-using-namespace): a benchmark of tb's calls

constexpr int kHz = 10;
constexpr int64_t kTicks = int64_t{7} * 24 * 3600 * kHz;

// The week's run written through SeriesWriter, as the sampler writes it; seconds taken.
double WriteWeek(Store& store, const RunRecord& run, int week_series) {
  int64_t t0 = MonotonicNanos();
  SeriesWriter writer(store, run.id);
  std::vector<std::pair<std::string, std::string>> names = TrainingSeriesNames(week_series);
  for (size_t s = 0; s < names.size(); ++s) {
    SeriesWriter::SeriesHandle h = writer.Handle(names[s].first, names[s].second);
    for (int64_t tick = 0; tick < kTicks; ++tick) {
      writer.Append(
          h, Point{run.start_ms + tick * 1000 / kHz, TrainingValue(static_cast<int>(s), tick, kHz), kNoStep});
      if (tick % 1000000 == 999999) Must(writer.Flush());
    }
  }
  Must(writer.Close());
  Must(store.FinishRun(run.id, run.start_ms + kTicks * 1000 / kHz, kFinished, 0, std::nullopt, ""));
  return static_cast<double>(MonotonicNanos() - t0) / 1e9;
}

// The baselines: one GPU's points read whole, and the run's figures as they were computed
// before schema 6 (every chunk row of every series, every point of each energy counter).
void WeekBaselines(Store& store, const RunRecord& run) {
  int64_t series0 = 0;
  for (const SeriesInfo& si : store.ListSeries(run.id).value()) {
    if (si.metric == "gpu.utilization.gpu_ratio" && si.labels == "gpu=0") series0 = si.id;
  }
  int64_t t0 = MonotonicNanos();
  if (static_cast<int64_t>(ReadSeriesPoints(store, series0).value().size()) != kTicks) std::exit(1);
  std::printf("  %-66s %10.1f\n", "baseline: one GPU's raw points read and decoded", MillisSince(t0));
  t0 = MonotonicNanos();
  double check = 0;
  for (const SeriesInfo& si : store.ListSeries(run.id).value()) {
    for (const ChunkRecord& c : store.ReadChunks({.series = {si.id}, .part = ChunkPart::kInfo}).value())
      check += c.sum;
    if (si.metric == "gpu.energy.consumed_joules") {
      std::vector<Point> counter = ReadSeriesPoints(store, si.id).value();
      check += counter.back().value - counter.front().value;
    }
  }
  std::printf("  %-66s %10.1f\n", "baseline: its figures from every chunk row and counter point",
              MillisSince(t0));
  if (check == 0) std::exit(1);
}

// The phase shading the page asks beside a chart: analysed once a server (its peak memory
// above what it held before), then kept with the run as `trainbench run` leaves it; against
// the analysed series' points read whole, as the analysis held them before.
void WeekPhases(Store& store, const std::string& db, const RunRecord& run) {
  std::string phases = "/api/v1/runs/" + run.id + "/phases";
  double rss_before = StatusMiB("VmRSS");
  ResetPeakRss();
  std::printf("  %-66s %10.1f\n", "its phases, analysed afresh (once a server; kept after)",
              ColdGet(db, phases));
  std::printf("  %-66s %10.0f MiB\n", "  the server's peak memory above what it held before",
              StatusMiB("VmHWM") - rss_before);
  int64_t t0 = MonotonicNanos();
  std::string kept = AnalysisJson(AnalyzeStoredRun(store, store.FindRun(run.id).value()).value());
  double analysis_ms = MillisSince(t0);
  Must(store.PutArtifact({run.id, "phases.json", static_cast<int64_t>(kept.size()), kept, ""}));
  std::vector<double> kept_ms;
  for (int round = 0; round < 3; ++round) kept_ms.push_back(ColdGet(db, phases));
  std::printf("  %-66s %10.1f   (the analysis in-process: %.1f)\n",
              "its phases kept with it at its end (as `trainbench run` does)", Median(kept_ms), analysis_ms);
  t0 = MonotonicNanos();
  size_t held = 0;
  const std::vector<std::string_view>& analysed = AnalyzedMetrics();
  for (const SeriesInfo& si : store.ListSeries(run.id).value()) {
    if (std::find(analysed.begin(), analysed.end(), si.metric) != analysed.end())
      held += ReadSeriesPoints(store, si.id).value().size();
  }
  std::printf("  %-66s %10.1f   (%zu points, %.0f MiB)\n", "baseline: the analysed series' points read whole",
              MillisSince(t0), held, static_cast<double>(held * sizeof(Point)) / (1 << 20));
}

}  // namespace

void WeekRun(const std::filesystem::path& dir, int week_series) {
  std::string db = (dir / "week.db").string();
  auto store = Store::Open(db).value();
  RunRecord run = NewBenchRun(*store, "week");
  double write_s = WriteWeek(*store, run, week_series);
  std::string chart = "/api/v1/series?runs=" + run.id + "&metric=gpu.utilization.gpu_ratio&x=relative";
  std::vector<std::pair<std::string, std::string>> requests = {
      {"the run selected: runs/{id}, its summary and GPU energy", "/api/v1/runs/" + run.id},
      {"its metrics: metrics?runs={id}", "/api/v1/metrics?runs=" + run.id},
      {"first chart: GPU activity of its 8 GPUs, budget 1,000 a line", chart + "&budget=1000"},
      {"one GPU's activity, budget 2,000", chart + "&labels=gpu%3D0&budget=2000"},
      {"a figure (SVG, one column) of its 8 GPUs' activity", FigureOf("\"runs\": [\"" + run.id + "\"]")}};
  std::printf(
      "a week-long run at 10 Hz: %d series of %lld points (%.0f s to write, store %.0f MiB), cold, "
      "median of 3:\n",
      week_series, static_cast<long long>(kTicks), write_s,
      static_cast<double>(std::filesystem::file_size(db)) / (1 << 20));
  for (const auto& [what, path] : requests) {
    std::vector<double> ms;
    for (int round = 0; round < 3; ++round) ms.push_back(ColdGet(db, path));
    std::printf("  %-66s %10.1f\n", what.c_str(), Median(ms));
  }
  WeekBaselines(*store, run);
  WeekPhases(*store, db, run);
}
