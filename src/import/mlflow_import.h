// `trainbench import --mlflow SOURCE`: the runs of an MLflow tracking database (a SQLite
// file or a PostgreSQL URI; MLflow's documented tables experiments, runs, params, tags and
// metrics) copied into the store, so that a lab's history sits beside its new runs.
//
// Runs keep their MLflow run id, name, status, times, params and tags. Runs radT started
// (params `workload` and `letter`) become a workload's runs with their letter, devices and
// collocation, and radT's listener metrics ("SMI - Power Draw", "DCGMI - SN Active",
// "TOP - CPU Utilization", ...) become trainbench's catalog series in its units; any other
// metric is the script's own (`train.<key>`). Deleted runs (lifecycle_stage deleted) stay
// behind, as are runs whose record trainbench cannot keep (an id not of MLflow's shape,
// text where MLflow writes numbers, timestamps that are no time), each said by id and why.
//
// Importing again brings the store up to date and is idempotent: a run imported before
// gets the points MLflow got since, its new tags and params, its name, status and end (a
// run that was RUNNING when imported ends as MLflow ended it); one whose copy matches
// (ended, same end, tags and params) is not read again. A pass cut short writes again onto
// the same chunk ids, so nothing doubles. `import --follow` repeats it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace tb {

struct ImportResult {
  int imported = 0;
  int skipped = 0;                   // imported before, and MLflow holds nothing newer
  int updated = 0;                   // imported before, brought up to date: each said in `updates`
  std::vector<std::string> updates;  // "a0a0a0a0  name: 1200 more points, RUNNING -> FINISHED"
  int deleted = 0;                   // deleted in MLflow, left behind
  int64_t points = 0;
  std::vector<std::string> changed;  // the ids of the runs imported or brought up to date
  // Runs left behind because trainbench cannot keep them, each said with its id and why:
  // an id not of MLflow's shape, an experiment name the store refuses.
  std::vector<std::string> refused;
};

// Where one of radT's metrics goes: a catalog series with its labels, its values times
// `scale` (radT logged MiB, mJ, percent of a core; trainbench keeps bytes, J, cores).
struct RadtSeries {
  std::string_view metric;
  // "smi", "dcgmi" (a label, with the GPU), "free" (a label alone) or "" for host metrics
  std::string_view listener;
  double scale = 1;
};
// nullopt for a name radT's listeners do not log; radT 0.2.21+'s "system/" prefix is read
// past ("system/SMI - Power Draw" is "SMI - Power Draw").
std::optional<RadtSeries> RadtMetric(std::string_view name);

// radT's run letter: the devices, a number when several runs share them, the collocation
// ("0", "0_A", "1_B_mps", "0_3g.20gb").
struct RadtLetter {
  std::string devices;
  std::string collocation;  // "" when none
};
RadtLetter ParseRadtLetter(std::string_view letter);

// Whether `source` opens as an MLflow tracking database, without importing: the import
// command asks before it opens (and so creates) the store, so a wrong source leaves no
// empty store behind.
Status CheckMlflowSource(const std::string& source);

Result<ImportResult> ImportMlflow(const std::string& source, Store& to,
                                  const std::function<void(const RunRecord&)>& progress = nullptr);

}  // namespace tb
