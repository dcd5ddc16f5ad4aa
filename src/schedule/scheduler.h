// `trainbench schedule FILE.csv` (or radT's YAML sweep FILE.yaml, schedule/sweep_file.h): the workloads of an
// experiment file one after another, the runs of a workload started together, each run a `trainbench run`
// child process (so a run is supervised, sampled and stored exactly as on its own). After each workload the
// Status and Run cells of its rows are written back into the file (write and rename). As in radT, a workload
// runs whole or not at all: it is skipped when every row is FINISHED (or FAILED, unless --rerun), so an
// interrupted workload and, with --rerun, one with a failed run, run again with all their runs together.
//
// With --repeat N every workload runs N times, round by round (schedule/repeats.h).
//
// Collocation: "-" (or empty) shares the device naively. "MPS" (or "MPS:PERCENT") starts an
// MPS control daemon for the workload with its own pipe and log directories, points the
// runs at it (CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY, and
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE) and quits it after the workload, also when runs fail
// or are interrupted. A MIG profile ("2g.10gb") creates one GPU and compute instance per
// run on the row's GPU (which must be in MIG mode; root), gives each run its instance's
// MIG UUID, and destroys the instances afterwards. The Listeners nsys, nsysraw, ncu,
// ncuraw and ncuattach wrap the run's command in Nsight Systems or Compute (radT's options), with the
// report written into the run's artifacts and DCGM's profiling paused meanwhile.
// Devices and MIG mode are checked with nvidia-smi before anything runs.
//
// Each workload's interleaved output is stored as workload.log with each of its runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace tb {

struct ScheduleOptions {
  std::string file;
  // The experiment's text when it is not read from `file` (radT's `trainbench train.py`
  // form): `file` then only names it in messages, and no statuses are written back.
  std::string text;
  std::string store;
  std::string python;  // interpreter for the File column's scripts
  bool dry_run = false;
  bool rerun = false;        // workloads with a FAILED row run again, all their rows
  bool color = false;        // colour each run's output prefix
  bool drop_caches = false;  // drop the page cache before each workload (root)
  int max_epochs = 0;        // each run ends after this many epochs (0: no limit)
  // radT's group: a run of this name (or this run id, when one has it) that every run is
  // nested under (tag mlflow.parentRunId); a sweep's is its name, or the parent it wrote back.
  std::string group;
  std::string parent_run;  // the group's run id, once it is made (set by RunSchedule)
  std::string max_time;    // each run's time limit unless its MaxTime cell says otherwise
  // --repeat N: each workload N times, interleaved (every workload's first attempt, then
  // every second, ...) so that drift over the hours does not fall on one configuration.
  // Each attempt's runs carry their repeat ("2/3"); a row reads "REPEAT k/N ..." until its
  // last repeat is done, and a start runs only the repeats the store lacks (whatever the
  // Status cells say: schedule/repeats.h).
  int repeat = 1;

  // --slurm: each workload a Slurm batch job (schedule/slurm.h).
  bool slurm = false;
  std::string slurm_partition, slurm_account, slurm_time;  // sbatch's --partition, --account, --time
  std::vector<std::string> sbatch_args;                    // more sbatch arguments, as given
  int slurm_max_jobs = 1;                                  // workloads queued or running at once
  int slurm_poll_ms = 1000;                                // how often the jobs are looked at
};

// Runs the experiment; returns trainbench's exit code (0 when every run finished, 1 when
// some failed, 130 when interrupted). Bad files fail before anything runs.
Result<int> RunSchedule(const ScheduleOptions& options);

// How a schedule ends, locally or on Slurm: says where statuses wait that are not in the
// file (`unwritten` of them), prints the closing line (runs finished and failed, the time
// since `started_ms`), and gives the exit code: 130 when interrupted, 1 when a run failed.
int EndSchedule(const std::string& file, size_t unwritten, int finished, int failed, int64_t started_ms,
                bool interrupted);

}  // namespace tb
