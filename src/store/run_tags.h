// The tags trainbench itself writes on runs, by key, and the one way to read a tag. Every
// folder that writes or reads one of these names it from here.
#pragma once

#include <string>
#include <string_view>

#include "store/store.h"

namespace tb {

// The run's letter in its workload (radT's "0_A_mps", "1", ...) and its collocation
// ("-", "mps", "mig", "naive" ...), set by schedule and by import.
inline constexpr const char* kLetterTag = "trainbench.letter";
inline constexpr const char* kCollocationTag = "trainbench.collocation";
// The attempt a run belongs to: the runs one `schedule` started together as one workload
// share it (the first run's id); and, with `schedule --repeat N`, which repeat ("2/3").
// The report counts an attempt whose runs all finished as a repeat, others as retries.
inline constexpr const char* kAttemptTag = "trainbench.attempt";
inline constexpr const char* kRepeatTag = "trainbench.repeat";
// The pattern `run --progress` read the script's progress lines with (run/progress.h).
inline constexpr const char* kProgressTag = "trainbench.progress";
// MLflow's nested runs: the run this one is nested under (a radT sweep's or group's parent
// run, set by schedule and by scripts through MLflow's API).
inline constexpr const char* kParentRunTag = "mlflow.parentRunId";
// A parent run `schedule` made for a sweep or a group (its value: the file it ran).
inline constexpr const char* kGroupTag = "trainbench.group";
// A distributed run: how many nodes ran it, and each part's node (kNodeTagPrefix + index).
inline constexpr const char* kNodesTag = "trainbench.nodes";
inline constexpr const char* kNodeTagPrefix = "trainbench.node.";
// Its GPU metrics came from the simulated GPU of sim/.
inline constexpr const char* kSimulatedGpuTag = "trainbench.simulated_gpu";
// A run on partitions of a larger GPU (an MI300X's compute partitions): the GPUs' sockets
// ("0", "+"-joined) and their compute partition mode ("CPX"). Runs on separate partitions
// of one socket share its memory, power and energy: the report tells them from separate GPUs.
inline constexpr const char* kGpuSocketsTag = "trainbench.gpu_sockets";
inline constexpr const char* kGpuPartitionTag = "trainbench.gpu_partition";
// Copied whole by `import --mlflow`, by `migrate`.
inline constexpr const char* kImportedTag = "trainbench.imported";
// What MLflow held of an imported run's metrics when it was last imported (import/
// mlflow_import.cc MetricDigests): a pass reads its points again only when it changed.
inline constexpr const char* kImportedMetricsTag = "trainbench.imported.metrics";
inline constexpr const char* kMigratedTag = "trainbench.migrated";
// Deleted through the tracking API (MLflow's lifecycle stage "deleted"); not shown.
inline constexpr const char* kDeletedTag = "trainbench.deleted";
// On an experiment `import --mlflow` brought: its id in MLflow's database, which radT's
// Experiment column names (schedule/plan.h ResolveExperimentIds).
inline constexpr const char* kMlflowExperimentIdTag = "trainbench.mlflow_experiment_id";
// What a script keeps with its run through MLflow's API (track/tracking_models.cc), each a
// tag of JSON not listed among the run's tags: a logged model (+ its id), a dataset input
// (+ a hash of its name and digest), a model used as an input (+ its id).
inline const std::string kModelTagPrefix = "trainbench.model.";
inline const std::string kDatasetTagPrefix = "trainbench.dataset.";
inline const std::string kModelInputTagPrefix = "trainbench.model_input.";
inline bool IsRecordTag(std::string_view key) {
  return key.starts_with(kModelTagPrefix) || key.starts_with(kDatasetTagPrefix) ||
         key.starts_with(kModelInputTagPrefix);
}
// MLflow's tag holding a run's name, kept current with it by the tracking API.
inline constexpr const char* kRunNameTag = "mlflow.runName";
// What trainbench's listeners cost the run (run/run_cost.h): kCpuSecondsTagPrefix + part.
inline constexpr const char* kCpuSecondsTagPrefix = "trainbench.cpu_seconds.";

// The value of the run's tag `key`, "" when it has none.
inline std::string TagValue(const RunRecord& r, std::string_view key) {
  for (const auto& [k, v] : r.tags) {
    if (k == key) return v;
  }
  return "";
}
inline bool HasTag(const RunRecord& r, std::string_view key) {
  for (const auto& [k, v] : r.tags) {
    if (k == key) return true;
  }
  return false;
}

// A run or experiment deleted through the tracking API (runs/delete, MLflow's lifecycle
// stage "deleted") carries kDeletedTag; restoring removes it. Listings leave it out unless
// asked, and it is not shown among the run's tags.
inline bool IsDeleted(const RunRecord& r) { return HasTag(r, kDeletedTag); }
inline bool IsDeleted(const ExperimentInfo& e) {
  for (const auto& [k, v] : e.tags) {
    if (k == kDeletedTag) return true;
  }
  return false;
}

}  // namespace tb
