// radT's YAML sweeps (radT 0.2.26): one file names a script and the values of its
// parameters, and every combination of them is a workload of one run.
//
//   name: Sweep name            the parent run's name (radT's group)
//   experiment: 0               radT's experiment number or trainbench's name
//   collocation: "-"            devices: 0             listeners: smi+top
//   file: ../pytorch/train.py   from the working directory, as radT reads it
//   method: grid                grid: in order (the last parameter fastest); random: shuffled
//   parameters:
//     batch-size: {values: [8, 16]}      each value given to the script as --batch-size 8
//   parent: RUN_ID              written back: the parent run every run is nested under
//   status: {1: "FINISHED RUN_ID (--batch-size 8)"}   written back: each workload's outcome
//
// As radT does, the workloads are numbered on from the highest in `status` (001, 002, ...),
// and a combination whose params a FINISHED status names is done. Writing back keeps the
// user's text and replaces only the top-level `parent` and `status` entries (radT rewrites
// the file with PyYAML, which reads what is written here). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"
#include "schedule/experiment_file.h"

namespace tb {

struct SweepFile {
  std::string name;                       // the sweep's name: its parent run's
  std::string parent;                     // the parent run radT or trainbench wrote back; "" before
  std::map<int64_t, std::string> status;  // workload number -> outcome, as written back
  ExperimentFile rows;                    // a row per combination, numbered as radT numbers them
};

// Parses a sweep; errors name `path` and say which field is missing or wrong. The
// combinations of `method: random` are shuffled (radT means to; its own shuffle fails).
Result<SweepFile> ParseSweep(std::string_view text, const std::string& path);

// True for the paths `schedule` reads as sweeps (.yaml, .yml).
bool IsSweepPath(std::string_view path);

// `text` with its top-level `parent` and `status` replaced by these (appended at its end);
// everything else as the user wrote it.
std::string SweepWithOutcomes(std::string_view text, const std::string& parent,
                              const std::map<int64_t, std::string>& status);

// radT's outcome line: "FINISHED RUN_ID (--batch-size 8)".
std::string SweepOutcome(const std::string& status, const std::string& run_id, const std::string& params);

}  // namespace tb
