// Writing a workload's outcomes into the experiment file (its Status and Run cells), which
// the user may be editing while the experiment runs: the file is read again first, rows
// are found by their cells wherever they moved (MatchRow), the user's lines are kept, and
// the file is replaced by rename. When it does not parse, it is not touched: the outcomes
// wait, are listed in FILE.trainbench-status, and are written in after a later workload.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "schedule/plan.h"
#include "schedule/scheduler.h"

namespace tb {

class Store;

// A run's outcome waiting to be written into the experiment file.
struct Unwritten {
  const PlannedRun* run;
  std::string status, run_id;
};

// Writes the outcomes in `pending` into the experiment file as it is now and removes those
// written from `pending`; what cannot be written stays, with a warning saying where it is.
void WriteBack(const std::string& path, std::vector<Unwritten>& pending);

// The same for a YAML sweep (schedule/sweep_file.h): each outcome under its workload's
// number in `status`, and `parent` the sweep's parent run.
void WriteSweepBack(const std::string& path, const std::string& parent, std::vector<Unwritten>& pending);

// The parent run every run of the schedule is nested under: the run whose id is o.group
// when the store has it (a sweep resumed), else a new run named o.group in `experiment`,
// said either way. RUNNING until the schedule ends.
Result<std::string> OpenParentRun(Store& store, const ScheduleOptions& o, const std::string& experiment);

// The whole file, or why not.
Result<std::string> ReadFile(const std::string& path);
// Writes `text` to a temporary file beside `path` and renames it over `path`; a failed
// write leaves no temporary file.
Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace tb
