// One run across several nodes (distributed training): `trainbench run --distributed` on
// every node (one task per node, as `srun --ntasks-per-node=1` starts it) makes each one a
// part of the same run. Part 0 records the run; the others attach to it once it exists.
// Each part samples its own node, its series labelled node=NAME, and keeps its own logs.
// Each part records its end as an event; the part that finds every part ended finishes
// the run: FAILED when a part failed, else KILLED when one was killed, else FINISHED.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "store/store.h"

namespace tb {

struct RunPart {
  int count = 0;     // parts in the run; 0: an ordinary run of one machine
  int index = 0;     // this part's; part 0 creates the run
  std::string node;  // the name on this part's series (node=NAME), events and files

  bool distributed() const { return count > 0; }
  // Where this part's own files go among the run's artifacts: "" for part 0 (its
  // stdout.log is the run's), "node-NAME/" for the others.
  std::string ArtifactPrefix() const { return index == 0 ? "" : "node-" + node + "/"; }
};

// What `--distributed` resolves to. Inside a Slurm step the parts are its tasks
// (SLURM_STEP_NUM_TASKS, SLURM_PROCID), the node is SLURMD_NODENAME and the run id comes
// from the cluster, job and step, so every node finds the same run without being told.
// `nodes`, `rank`, `node` and `run_id` given by the user win (torchrun without Slurm).
// `env` is the process environment (a map for tests).
struct DistributedRequest {
  int nodes = 0;  // 0: from Slurm
  int rank = -1;  // -1: from Slurm
  std::string node;
  std::string run_id;
};
struct DistributedRun {
  RunPart part;
  std::string run_id;
};
Result<DistributedRun> ResolveDistributed(const DistributedRequest& request,
                                          const std::map<std::string, std::string>& env,
                                          const std::string& host);
// The environment of this process, for ResolveDistributed.
std::map<std::string, std::string> ProcessEnvironment();

// The same 32-hex-digit run id on every node of one Slurm step.
std::string SlurmStepRunId(const std::string& cluster, const std::string& job, const std::string& step);

// For parts other than 0: waits until the run exists (part 0 creates it).
Result<RunRecord> AwaitRun(Store& store, const std::string& run_id, int64_t timeout_ms);

// How one part ended, and how the whole run ended.
struct PartEnding {
  std::string status;
  std::optional<int> exit_code, signal;
  std::string reason;
  int64_t end_ms = 0;
};
// Records `mine` as this part's end ("part.end" event) and, when every part has ended,
// returns how the whole run ended (the caller finishes the run); nullopt while parts run.
Result<std::optional<PartEnding>> EndPart(Store& store, const std::string& run_id, const RunPart& part,
                                          const PartEnding& mine);
// The event a part records when it starts.
EventRecord PartStartEvent(const std::string& run_id, const RunPart& part, int64_t time_ms);

}  // namespace tb
