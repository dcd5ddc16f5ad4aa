// Experiments on a Slurm cluster (`trainbench schedule FILE --slurm`). Each workload becomes
// one batch job. Its script runs `trainbench schedule` on a file holding only that
// workload's rows, on the node the job lands on, so the runs start together there exactly
// as they do locally (start gate, letters, listeners, logs) and write to the shared store
// (PostgreSQL: every node reaches it). No daemon of our own runs on the nodes.
//
// The submitting trainbench follows its jobs with `scontrol show job` (sacct once Slurm has
// forgotten a job), writes each row's Status and Run back into the experiment file as its
// job ends: the runs' own outcomes (FINISHED, FAILED, KILLED, read from the job's file),
// or Slurm's where the runs could not say (cancelled, time limit, node failure, out of
// memory), with the reason. A submitted row's Status reads "SLURM <job id>": run the same
// command again after an interruption and the jobs still queued or running are followed,
// not submitted again. Ctrl-C cancels the jobs (scancel) and waits for their runs to stop.
//
// The job files sit beside the experiment file (`.NAME.EXPERIMENT.WORKLOAD.slurm.csv` and
// `.sh`, removed once the job completed; `.out`, the job's output, kept), so that the File
// cells, relative to it, resolve on the node as here: the directory must be on a file
// system the nodes share, as home directories on clusters are.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "schedule/experiment_file.h"
#include "schedule/plan.h"
#include "schedule/scheduler.h"

namespace tb {

// What Slurm says of a job (`scontrol show job -o`): its state, the reason, where it runs.
struct SlurmJobState {
  std::string state;   // PENDING, RUNNING, COMPLETED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, FAILED...
  std::string reason;  // "None", "Priority", "TimeLimit", ...
  std::string nodes;   // the node list, "(null)" while pending
  std::string run_time, time_limit;
  bool Active() const;        // PENDING, CONFIGURING, RUNNING, COMPLETING, SUSPENDED, REQUEUED...
  bool EndedBySlurm() const;  // CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED, DEADLINE...
};

// The state in one line of `scontrol show job -o ID`; InvalidArgument when it has none.
Result<SlurmJobState> ParseScontrolJob(std::string_view line);

// A row's Status when its job ended without the runs writing one: KILLED when Slurm ended
// it ("KILLED (Slurm: TIMEOUT, TimeLimit)"), else FAILED ("FAILED (Slurm: FAILED,
// NonZeroExitCode)": the job's command did not start on the node, say).
std::string SlurmOutcome(const SlurmJobState& job);

// How many GPUs a workload's job asks for (--gres=gpu:N). Inside the job a row's GPU k is
// the job's k-th (DevicesOnThisNode), so the job needs the highest index of its Devices
// cells plus one ("1+2": 3), plus one for each distinct GPU or MIG UUID.
int GpusOfWorkload(const Workload& w);

// The batch script of a workload's job.
struct SlurmJob {
  std::string name;    // --job-name
  std::string output;  // --output
  int gpus = 0;        // --gres=gpu:N
  std::string partition, account, time_limit;
  std::vector<std::string> command;  // what the job runs
};
std::string SlurmBatchScript(const SlurmJob& job);

// Runs the plan's workloads as Slurm jobs; returns the exit code as RunSchedule does.
Result<int> RunOnSlurm(const ScheduleOptions& o, const ExperimentFile& file,
                       const std::vector<Workload>& plan);

}  // namespace tb
