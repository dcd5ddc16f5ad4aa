// Phase detection and steady-state summaries of a 3-hour run sampled at 1 Hz with 30
// metrics (the analysis reads its 10 key ones), from a SQLite store:
//   build/bench/analyze_run [hours=3] [rounds=5]
// Reports the median of `rounds` for the whole job (reading the samples from the store,
// then AnalyzeRun) and for AnalyzeRun alone on samples already in memory.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "analyze/phases.h"
#include "bench/bench_stats.h"
#include "store/series_writer.h"
#include "store/store.h"

namespace tb {
namespace {

double Ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

int Main(int argc, char** argv) {
  double hours = argc > 1 ? std::atof(argv[1]) : 3;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  auto n = static_cast<int64_t>(hours * 3600);
  std::string path = "/tmp/tb-analyze-bench-" + std::to_string(getpid()) + ".db";
  auto store = Store::Open(path).value();
  RunRecord run;
  run.id = NewRunId();
  run.experiment = "bench";
  run.name = "three-hours";
  run.command = "train.py";
  run.start_ms = 1763777000000;
  Must(store->EnsureExperiment("bench"));
  Must(store->CreateRun(run));
  std::vector<std::string> metrics(AnalyzedMetrics().begin(), AnalyzedMetrics().end());
  for (int i = 0; metrics.size() < 30; ++i) metrics.push_back("host.other.metric_" + std::to_string(i));
  {
    SeriesWriter writer(*store, run.id);
    for (int64_t i = 0; i < n; ++i) {
      for (size_t m = 0; m < metrics.size(); ++m) {
        double v = 0.8 + 0.05 * std::sin(static_cast<double>(i + static_cast<int64_t>(m)) / 40.0);
        if (i < 60 || (i % 3600 > 1800 && i % 3600 < 1830)) v *= 0.1;  // warm-up, an idle gap each hour
        if (metrics[m].find("memory") != std::string::npos) v = 2e9 + 1e6 * (i % 5);  // flat, with jitter
        writer.Append(metrics[m], metrics[m].rfind("gpu.", 0) == 0 ? "gpu=0" : "",
                      Point{run.start_ms + i * 1000, v});
      }
    }
    Must(writer.Close());
  }
  Must(store->FinishRun(run.id, run.start_ms + n * 1000, kFinished, 0, std::nullopt, ""));
  run = store->FindRun(run.id).value();

  std::vector<double> whole, analysis;
  RunAnalysis a;
  for (int r = 0; r < rounds; ++r) {
    auto t = std::chrono::steady_clock::now();
    a = AnalyzeStoredRun(*store, run).value();
    whole.push_back(Ms(t));
  }
  // The samples in memory, as AnalyzeStoredRun reads them.
  RunSamples samples;
  samples.start_ms = run.start_ms;
  samples.end_ms = run.end_ms;
  for (const SeriesInfo& s : store->ListSeries(run.id).value()) {
    samples.series[s.metric].emplace_back(s.labels, ReadSeriesPoints(*store, s.id).value());
  }
  for (int r = 0; r < rounds; ++r) {
    auto t = std::chrono::steady_clock::now();
    RunAnalysis again = AnalyzeRun(samples);
    analysis.push_back(Ms(t));
  }
  std::printf("%.1f h at 1 Hz, %zu metrics (%lld points); %zu phases, %d s steady\n", hours, metrics.size(),
              static_cast<long long>(n * static_cast<int64_t>(metrics.size())), a.phases.size(),
              a.steady_samples);
  std::printf("  read from the store and analyzed: median %.1f ms (of %d)\n", Median(whole), rounds);
  std::printf("  AnalyzeRun on samples in memory:  median %.1f ms\n", Median(analysis));
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  return 0;
}

}  // namespace
}  // namespace tb

int main(int argc, char** argv) { return tb::Main(argc, argv); }
