// `trainbench report EXPERIMENT`: per workload, its runs' throughput, training time and
// epoch times, the steady-state GPU figures and energy; for a collocated workload (several
// runs sharing a GPU) the combined throughput against the same runs alone (a workload of
// one run with the same command and params, the seed aside), i.e. the speed-up collocation
// gives and its cost in each run's time. Scripts that log no steps are compared by the
// training time of the same command. Every figure is the mean over the workload's repeats
// (its attempts that finished) with a 95 % interval where there are two or more. Runs count as collocated
// when their training overlapped (the steps they logged), not when their processes did; every figure comes
// from inside the training. As a terminal table or CSV here (a sweep's workloads under their parent run); as
// an HTML page or a PDF with charts in report/report_document.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyze/estimate.h"
#include "analyze/phases.h"
#include "store/store.h"

namespace tb {

// One attempt at a workload: the runs one `schedule` started together (kAttemptTag), or,
// for runs recorded without that tag, each letter once in start order. An attempt whose
// runs all finished is a repeat and counts; one interrupted or failed is a retry and is
// left out (unless no attempt finished: then the latest counts, as it is).
struct AttemptReport {
  int repeat = 0;               // 1, 2, ... in start order among the counted attempts
  std::vector<size_t> members;  // its runs, as indexes into the workload's `runs`
  // Its runs trained together: each one's training window (training_window.h) overlapped
  // the others' for at least kTogetherFraction of it. Only then are their throughputs added
  // up and compared with runs alone.
  bool together = true;
  std::vector<double> overlap;  // per member: the fraction of its training another trained alongside
  std::string training_source;  // how the windows were found (the weakest of the runs')
  std::optional<double> run_throughput, combined_throughput;  // samples/s: mean and sum over its runs
  std::optional<double> run_seconds;                          // mean training time of its runs
  std::optional<double> run_rate, combined_rate;  // runs per second (1 / training time): mean, sum
  std::optional<double> epoch_seconds, gpu_util, sm_active, power_watts;
  std::optional<double> energy_per_run, cpu_energy_per_run, energy_per_sample_joules;
};

struct WorkloadReport {
  std::string workload, collocation;
  // The parent run its runs are nested under (a radT sweep's or group's: mlflow.parentRunId),
  // as "NAME (ID8)"; "" when none. A parent run is a group, not a workload of the report.
  std::string parent;
  std::vector<RunRecord> runs;  // every counted run, of every repeat, in start order
  std::vector<RunAnalysis> analyses;
  std::vector<AttemptReport> attempts;  // the repeats
  bool together = true;                 // every repeat's runs trained together
  std::vector<double> overlap;          // per run of a repeat: the lowest over the repeats
  std::string training_source;          // the weakest of the runs'
  // Each figure over the repeats (estimate.h): the mean of the repeats' figures, with their
  // spread; nullopt when some repeat lacks it.
  std::optional<Estimate> run_throughput, combined_throughput, run_seconds, epoch_seconds;
  std::optional<Estimate> gpu_util, sm_active, power_watts, energy_per_run, cpu_energy_per_run,
      energy_per_sample_joules;
  // Collocated workloads: the same runs alone, by the samples the scripts logged
  // (basis "samples") or, where some logged none, by the training time of the same
  // command, each run one unit of work (basis "time").
  std::string alone;  // the workloads compared with
  std::string basis;
  std::optional<Estimate> alone_throughput;  // samples/s (basis samples) or s per run (basis time)
  std::optional<Estimate> speedup;           // combined rate / the rate alone
  std::optional<Estimate> run_cost;          // how much longer each run takes than alone
  int repeats() const { return static_cast<int>(attempts.size()); }
};

inline constexpr double kTogetherFraction = 0.5;

struct ExperimentReport {
  std::string experiment;
  std::vector<WorkloadReport> workloads;
  std::vector<std::string> caveats;
};

Result<ExperimentReport> BuildReport(Store& store, const std::string& experiment);

// The report's table: one row per workload; the terminal, CSV, HTML and PDF show these. A
// figure over repeats reads "1.20x" for one attempt and "1.20x ±0.05" (its 95 % interval's
// half-width) for more; the CSV gives the mean and, in a column "TITLE ±95%" beside it,
// the half-width.
struct ReportColumn {
  const char* title;
  std::string (*get)(const WorkloadReport&);  // "-" where there is no value
  // A figure over repeats: its estimate and how a number prints ("%.2f"); nullptr for text.
  std::optional<Estimate> (*estimate)(const WorkloadReport&) = nullptr;
  const char* format = nullptr;
};
const std::vector<ReportColumn>& ReportColumns();
// A workload's cells, one per column.
std::vector<std::string> ReportRow(const WorkloadReport& w);
// "90%/95%": overlaps as whole percentages.
std::string Percents(const std::vector<double>& fractions);

// What collocation gave a collocated workload (one with a speed-up), with `open`/`close`
// around the speed-up ("<b>", "</b>" in HTML), and its verdict: beyond the noise of its
// repeats or not.
std::string SpeedupSentence(const WorkloadReport& w, const char* open, const char* close);
// The verdict alone: "paid off", "cost", "no difference the repeats can tell apart", or
// "one attempt: no interval".
std::string Verdict(const Estimate& speedup);

std::string ReportTable(const ExperimentReport& r);
std::string ReportCsv(const ExperimentReport& r);

}  // namespace tb
