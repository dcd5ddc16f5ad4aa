// `trainbench report EXPERIMENT`: per workload, its runs' throughput and epoch times, the
// steady-state GPU figures and energy; for a collocated workload (several runs sharing a
// GPU) the combined throughput against the same runs alone (a workload of one run with the
// same script and params, the seed aside), i.e. the speed-up collocation gives and its cost
// in each run's time. Runs count as collocated when their training overlapped (the steps
// they logged), not when their processes did; every figure comes from inside the training. As a terminal
// table or CSV here (a sweep's workloads under their parent run); as an HTML page or a PDF with charts in
// report/report_document.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyze/phases.h"
#include "store/store.h"

namespace tb {

struct WorkloadReport {
  std::string workload, collocation;
  // The parent run its runs are nested under (a radT sweep's or group's: mlflow.parentRunId),
  // as "NAME (ID8)"; "" when none. A parent run is a group, not a workload of the report.
  std::string parent;
  // Its runs trained together: each one's training window (training_window.h) overlapped
  // the others' for at least kTogetherFraction of it. Only then are their throughputs added
  // up and compared with runs alone.
  bool together = true;
  std::vector<double> overlap;  // per run (in `runs`' order): the fraction of its training
                                // during which another of the workload's runs trained
  std::string training_source;  // how the windows were found (the weakest of the runs')
  std::vector<RunRecord> runs;
  std::vector<RunAnalysis> analyses;
  std::optional<double> run_throughput;       // mean over its runs, samples/s
  std::optional<double> combined_throughput;  // sum over its runs
  std::optional<double> epoch_seconds;        // median over its runs
  std::optional<double> gpu_util, sm_active, power_watts, energy_per_sample_joules;
  // Collocated workloads: the same runs alone.
  std::string alone;  // the workloads compared with
  std::optional<double> alone_throughput;
  std::optional<double> speedup;   // combined / alone
  std::optional<double> run_cost;  // alone / per-run throughput: how much longer each run takes
};

inline constexpr double kTogetherFraction = 0.5;

struct ExperimentReport {
  std::string experiment;
  std::vector<WorkloadReport> workloads;
  std::vector<std::string> caveats;
};

Result<ExperimentReport> BuildReport(Store& store, const std::string& experiment);

// The report's table: one row per workload; the terminal, CSV, HTML and PDF show these.
struct ReportColumn {
  const char* title;
  std::string (*get)(const WorkloadReport&);  // "-" where there is no value
};
const std::vector<ReportColumn>& ReportColumns();
// A workload's cells, one per column.
std::vector<std::string> ReportRow(const WorkloadReport& w);

// What collocation gave a collocated workload (one with a speed-up), with `open`/`close`
// around the speed-up ("<b>", "</b>" in HTML).
std::string SpeedupSentence(const WorkloadReport& w, const char* open, const char* close);

std::string ReportTable(const ExperimentReport& r);
std::string ReportCsv(const ExperimentReport& r);

}  // namespace tb
