// What matters in hours of samples: a run's phases (warm-up, steady state, and the segments
// that differ from it: the GPU idle while the run is alive, the GPU's activity dropping
// while the CPU is saturated, memory climbing, the script's own phases such as evaluation)
// and its steady-state figures (the means of the key metrics over the steady state only,
// energy per training sample, time per epoch).
//
// Method: the key metrics are averaged onto a grid of one-second buckets. Only the run's
// training window (training_window.h: the steps the script logged, else GPU activity)
// is analysed for the steady state; start-up and what follows training are left out. The activity
// signal is GPU utilization (else SM activity, throughput or process CPU). Its steady
// level is the median of the run's second half, the band around it the larger of 10% of
// the level and three robust standard deviations (MAD). Warm-up lasts until a rolling
// median first enters the band; afterwards, samples outside the band are idle (near zero),
// stalls (the CPU above its own band meanwhile) or dips; memory climbing is a window whose
// memory rises steadily by more than 5%. Segments shorter than 3 buckets are dropped.
// Pure functions; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyze/training_window.h"
#include "store/format/chunk_codec.h"
#include "store/store.h"

namespace tb {

struct Phase {
  std::string kind;  // warm-up, steady, idle, stall, dip, memory-climb, or a script phase ("eval")
  int64_t start_ms = 0, end_ms = 0;
  std::string detail;  // the metrics that mark it, for people
};

struct RunAnalysis {
  std::vector<Phase> phases;  // in time order (a script phase may overlap others)
  std::string activity;       // the metric the phases rest on
  double steady_level = 0;
  int steady_samples = 0;
  std::map<std::string, double, std::less<>> steady;  // key metric -> mean over the steady state
  // Key metric -> the median and 95th percentile of its one-second means over the steady
  // state (what a table of runs gives beside the mean: how much the level wanders).
  struct Spread {
    double p50 = 0, p95 = 0;
  };
  std::map<std::string, Spread, std::less<>> steady_spread;
  std::optional<double> throughput;                // samples/s, steady mean
  std::optional<double> epoch_seconds;             // median time between epoch events
  std::optional<double> energy_joules;             // whole run, its GPUs'
  std::optional<double> cpu_energy_joules;         // whole run, its share of the CPUs' RAPL domains
  std::optional<double> samples;                   // trained (see training_window.h)
  std::optional<double> energy_per_sample_joules;  // GPU and CPU energy together, over the samples
  std::vector<std::string> caveats;                // few samples, a simulated GPU
  // When the run trained (training_window.h): the steady state is found inside it.
  std::optional<TrainingWindow> training;
  // Of an analysis of a stored run: the points of its analysed series in chunks and its
  // events, when it was read. A kept copy whose run has more since is made again.
  struct Extent {
    int64_t points = 0, events = 0;
  };
  std::optional<Extent> extent;
};

// The key metrics the analysis reads (each series of them, all label sets).
const std::vector<std::string_view>& AnalyzedMetrics();

struct RunSamples {
  int64_t start_ms = 0, end_ms = 0;
  // metric -> its series (labels, points)
  std::map<std::string, std::vector<std::pair<std::string, std::vector<Point>>>, std::less<>> series;
  std::vector<EventRecord> events;
  bool simulated_gpu = false;
};

RunAnalysis AnalyzeRun(const RunSamples& run);

// The same analysis of a run in the store (a running run ends at its newest sample): its
// key metrics are summed into the one-second buckets chunk by chunk as they are decoded, so
// memory follows the run's seconds, not its points; the energy counters' first and last
// points are read from their first and last chunks only.
Result<RunAnalysis> AnalyzeStoredRun(Store& store, const RunRecord& run);

// The points in chunks of each run's analysed series (all listeners), by run id, from the
// totals kept beside the runs' series: the extent an analysis was made of.
std::map<std::string, int64_t> AnalysedPoints(const std::vector<SeriesTotals>& totals);

// The version of the method: a copy kept with a run (phases.json) that says another was
// made by an older trainbench and is analysed again. Raise it with every change to what
// the analysis finds.
inline constexpr int kAnalysisVersion = 6;

// As JSON: {"phases": [{kind, start_ms, end_ms, detail}], "steady": {metric: mean},
// "steady_p50": {metric: median}, "steady_p95": {metric: 95th percentile}, ...,
// "version": kAnalysisVersion}.
std::string AnalysisJson(const RunAnalysis& a);

// AnalysisJson read back; Corrupt when `json` is not one (of this version of the method).
Result<RunAnalysis> AnalysisFromJson(std::string_view json);

// The analysis the launcher kept with a finished run (its phases.json artifact) when this
// version of the method made it from what the run holds now (the same number of analysed
// points and events); nullopt otherwise (a running run, a run recorded or imported without
// one, one made by an older trainbench, a run given more samples since, unreadable).
std::optional<std::string> KeptAnalysisJson(Store& store, const RunRecord& run);

// The same of several runs at once, by run id (a run without one left out), given the
// totals of their series (ListSeriesTotalsOfRuns): two more store reads whatever their
// number, what a table of 10,000 runs reads.
Result<std::map<std::string, RunAnalysis>> KeptAnalyses(Store& store, const std::vector<RunRecord>& runs,
                                                        const std::vector<SeriesTotals>& totals);

// The finished run's kept analysis when it is still the run's (KeptAnalysisJson), else
// the analysis made afresh from the store (AnalyzeStoredRun): what `trainbench show`
// prints, without reading a long run's points again.
Result<RunAnalysis> KeptOrStoredAnalysis(Store& store, const RunRecord& run);

// Keeps `json` (AnalysisJson of the finished `run`) as its phases.json artifact, in place of
// an earlier analysis; an artifact of that name that is not an analysis (a file the run's
// script logged) is left as it is.
Status KeepAnalysisJson(Store& store, const RunRecord& run, const std::string& json);

// The finished `run` analysed from the store and kept with it (KeepAnalysisJson): what a
// run carries from its end on, so that tables of runs read its figures rather than its
// points. Made when a run ends (the launcher) and when one is imported.
Status AnalyseAndKeep(Store& store, const RunRecord& run);

}  // namespace tb
