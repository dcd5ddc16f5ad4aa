#include "schedule/experiment_numbers.h"

#include <cstdio>
#include <optional>
#include <set>
#include <string>

#include "base/strings.h"
#include "store/run_tags.h"
#include "store/store.h"

namespace tb {

namespace {

// The experiment whose MLflow id is `number`: one `import --mlflow` brought with that id,
// else the one the tracking API calls so; nullptr when none.
const ExperimentInfo* ExperimentNumbered(const std::vector<ExperimentInfo>& experiments,
                                         const std::string& number) {
  for (const ExperimentInfo& e : experiments) {
    for (const auto& [k, v] : e.tags) {
      if (k == kMlflowExperimentIdTag && v == number) return &e;
    }
  }
  for (const ExperimentInfo& e : experiments) {
    if (MlflowExperimentId(e) == number) return &e;
  }
  return nullptr;
}

// The name of the experiment radT's number `number` means, made when the store has none:
// 0 is Default; another number a new experiment of that name and that id, so that the
// number names it every time after.
Result<std::string> ExperimentForNumber(Store& store, std::vector<ExperimentInfo>& experiments,
                                        const std::string& number) {
  if (std::stoull(number) == 0) {
    TB_RETURN_IF_ERROR(store.EnsureExperiment(std::string(kDefaultExperiment)).status());
    return std::string(kDefaultExperiment);
  }
  if (const ExperimentInfo* found = ExperimentNumbered(experiments, number)) return found->name;
  std::string name = std::to_string(std::stoull(number));
  Status made = store.CreateExperimentWithId(static_cast<int64_t>(std::stoull(number)), name);
  if (!made.ok()) {
    return Status::InvalidArgument(
        Concat({"Experiment ", number, " is an MLflow experiment id, as in radT, and no experiment has it; ",
                "it cannot be made (", made.message(), "): write an experiment's name in the cell instead"}));
  }
  Result<std::vector<ExperimentInfo>> listed = store.ListExperiments();
  if (!listed.ok()) return listed.status();
  experiments = std::move(*listed);
  std::printf("trainbench: Experiment %s: made experiment '%s' with MLflow id %s\n", number.c_str(),
              name.c_str(), number.c_str());
  return name;
}

}  // namespace

Status ResolveExperimentIds(Store& store, std::vector<Workload>& plan) {
  std::optional<std::vector<ExperimentInfo>> experiments;  // listed once, when a cell is a number
  std::set<std::string> said;
  for (Workload& w : plan) {
    std::optional<uint64_t> number = ParseUint(w.experiment);
    if (!number || w.experiment.size() > 18) continue;
    if (!experiments) {
      Result<std::vector<ExperimentInfo>> listed = store.ListExperiments();
      if (!listed.ok()) return listed.status();
      experiments = std::move(*listed);
    }
    Result<std::string> name = ExperimentForNumber(store, *experiments, w.experiment);
    if (!name.ok()) return name.status();
    if (*name != w.experiment && said.insert(w.experiment).second) {
      std::printf("trainbench: Experiment %s is MLflow's id of experiment '%s'\n", w.experiment.c_str(),
                  name->c_str());
    }
    for (PlannedRun& r : w.runs) r.experiment = *name;  // the row keeps its cell, to be found by it
    w.experiment = *name;
  }
  return Status::Ok();
}

}  // namespace tb
