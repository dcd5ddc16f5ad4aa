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

namespace tb {

// A run's outcome waiting to be written into the experiment file.
struct Unwritten {
  const PlannedRun* run;
  std::string status, run_id;
};

// Writes the outcomes in `pending` into the experiment file as it is now and removes those
// written from `pending`; what cannot be written stays, with a warning saying where it is.
void WriteBack(const std::string& path, std::vector<Unwritten>& pending);

// The whole file, or why not.
Result<std::string> ReadFile(const std::string& path);
// Writes `text` to a temporary file beside `path` and renames it over `path`; a failed
// write leaves no temporary file.
Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace tb
