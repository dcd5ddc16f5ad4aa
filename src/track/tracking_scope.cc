// TrackingApi's scope and memory: what a confined API lets its script reach (Confine), the
// run the script's first runs/create adopts, and the requests answered already (Seen,
// Remember).
#include <algorithm>
#include <functional>
#include <utility>

#include "base/time.h"
#include "track/tracking_api.h"

namespace tb {

void TrackingApi::Confine(const std::string& run_id) {
  std::lock_guard lock(mu_);
  confined_ = true;
  home_run_ = run_id;
  scope_runs_.insert(run_id);
}

bool TrackingApi::Adopt() {
  std::lock_guard lock(mu_);
  if (!confined_ || adopted_) return false;
  adopted_ = true;
  return true;
}

Status TrackingApi::MoveHomeRun(const ExperimentInfo& experiment) {
  Result<RunRecord> run = store_.FindRun(home_run_);
  if (!run.ok()) return run.status();
  if (run->experiment == experiment.name) return Status::Ok();
  TB_RETURN_IF_ERROR(store_.MoveRun(home_run_, experiment.id));
  return store_.AddEvent({home_run_, WallMillis(), "experiment",
                          "moved from experiment '" + run->experiment + "' to '" + experiment.name +
                              "', the script's (mlflow.set_experiment or MLFLOW_EXPERIMENT_NAME)"});
}

bool TrackingApi::RunInScope(const std::string& run_id) {
  std::lock_guard lock(mu_);
  return !confined_ || scope_runs_.contains(run_id);
}

bool TrackingApi::RegisteredModelInScope(const std::string& name) {
  std::lock_guard lock(mu_);
  return !confined_ || scope_models_.contains(name);
}

void TrackingApi::AddRegisteredModelToScope(const std::string& name) {
  std::lock_guard lock(mu_);
  if (confined_) scope_models_.insert(name);
}

bool TrackingApi::ExperimentInScope(const std::string& name) {
  {
    std::lock_guard lock(mu_);
    if (!confined_ || scope_experiments_.contains(name)) return true;
  }
  // One the script did not create (its run's own, one it set by name): its only while every
  // run in it is the script's, so a colleague's experiment found by name stays theirs.
  Result<std::vector<RunRecord>> runs = store_.ListRuns(name);
  if (!runs.ok() || runs->empty()) return false;
  std::lock_guard lock(mu_);
  return std::all_of(runs->begin(), runs->end(),
                     [&](const RunRecord& r) { return scope_runs_.contains(r.id); });
}

void TrackingApi::AddToScope(const std::string& run_id, const std::string& experiment) {
  std::lock_guard lock(mu_);
  if (!confined_) return;
  if (!run_id.empty()) scope_runs_.insert(run_id);
  if (!experiment.empty()) scope_experiments_.insert(experiment);
}

bool TrackingApi::Seen(const std::string& key) {
  size_t h = std::hash<std::string>()(key);
  std::lock_guard lock(mu_);
  return seen_.contains(h);
}

void TrackingApi::Remember(const std::string& key) {
  constexpr size_t kRemembered = 4096;
  size_t h = std::hash<std::string>()(key);
  std::lock_guard lock(mu_);
  if (!seen_.insert(h).second) return;
  seen_order_.push_back(h);
  if (seen_order_.size() > kRemembered) {
    seen_.erase(seen_order_.front());
    seen_order_.pop_front();
  }
}

}  // namespace tb
