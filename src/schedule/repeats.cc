#include "schedule/repeats.h"

#include <map>

#include "store/run_tags.h"
#include "store/store.h"

namespace tb {

Workload AttemptOf(const Workload& w, int k, int of) {
  Workload out = w;
  for (PlannedRun& r : out.runs) {
    if (k > 1) r.id = NewRunId();
    r.attempt = out.runs.front().id;
    r.repeat = of > 1 ? std::to_string(k) + "/" + std::to_string(of) : "";
  }
  return out;
}

Result<std::set<RepeatKey>> RepeatsDone(Store& store, const std::vector<Workload>& plan, int of) {
  std::set<RepeatKey> done;
  if (of <= 1) return done;
  std::set<std::string> experiments;
  for (const Workload& w : plan) {
    for (const PlannedRun& r : w.runs)
      experiments.insert(r.experiment.empty() ? r.row.experiment : r.experiment);
  }
  // (experiment, workload, k) -> the letters that finished
  std::map<RepeatKey, std::set<std::string>> finished;
  for (const std::string& e : experiments) {
    Result<std::vector<RunRecord>> runs = store.ListRuns(e);
    if (!runs.ok()) {
      if (runs.status().code() == Status::Code::kNotFound) continue;  // nothing ran there yet
      return runs.status();
    }
    for (const RunRecord& r : *runs) {
      std::string repeat = TagValue(r, kRepeatTag);
      if (r.status != kFinished || repeat.empty()) continue;
      int k = std::atoi(repeat.c_str());
      finished[{e, r.workload, k}].insert(TagValue(r, kLetterTag));
    }
  }
  for (const Workload& w : plan) {
    const PlannedRun& first = w.runs.front();
    std::string e = first.experiment.empty() ? first.row.experiment : first.experiment;
    for (int k = 1; k <= of; ++k) {
      auto it = finished.find({e, w.workload, k});
      if (it == finished.end()) continue;
      bool all = true;
      for (const PlannedRun& r : w.runs) all = all && it->second.count(r.letter) != 0;
      if (all) done.insert({e, w.workload, k});
    }
  }
  return done;
}

std::string RepeatStatus(const std::string& status, const std::string& name, int k, int of) {
  if (status == kFinished && k < of)
    return "REPEAT " + std::to_string(k) + "/" + std::to_string(of) + " " + name;
  return status + " " + name;
}

}  // namespace tb
