// An experiment file made into a plan, before anything runs: rows checked (collocation,
// File, Devices against nvidia-smi's listing, MIG mode and permission, Nsight tools,
// MaxTime, Env, listeners), grouped into workloads in file order, each run given its
// letter, id, interpreter, arguments and environment, and the `trainbench run` command
// line that starts it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "schedule/experiment_file.h"
#include "schedule/scheduler.h"

namespace tb {

class Store;

struct PlannedRun {
  ExperimentRow row;
  std::string letter;  // devices, A/B/..., collocation: "0A-"
  std::string id;
  std::string experiment;           // the experiment's name a number in the row means ("": the cell)
  std::string script;               // the File, resolved
  std::string python;               // its interpreter ("" : trainbench run's default)
  std::string listeners;            // the run's listeners (without the workload listener)
  std::string profiler;             // nsys, nsysraw, ncu, ncuraw or ""
  std::optional<unsigned> mig_gpu;  // a MIG collocation: the GPU its instance is made on
  std::vector<std::string> params;  // the script's arguments
  std::vector<std::string> env;     // KEY=VALUE the run's environment gains (Env column)
  // The GPUs the run gets, "+"-joined ("" for none): the Devices cell, its indices counted
  // within the Slurm job's GPUs when trainbench runs inside one (DevicesOnThisNode).
  std::string devices;
  // The attempt it belongs to (the first run's id of its workload's start) and, with
  // --repeat N, which repeat ("2/3"): tags the report tells repeats from retries by.
  std::string attempt, repeat;
};

struct Workload {
  std::string experiment, workload;
  std::vector<PlannedRun> runs;
};

// "MPS" or "MPS:PERCENT": the runs share their GPUs through one MPS control daemon.
bool IsMps(const std::string& collocation);
// This trainbench, which starts each run.
std::string SelfExecutable();

// A Status cell's outcome, its first word upper-cased ("FINISHED w.py 0A-" is FINISHED).
std::string StatusWord(std::string_view cell);
// A row is done when FINISHED, or FAILED unless `rerun`.
bool Done(const ExperimentRow& row, bool rerun);
// As radT: a workload runs, all of its rows together, unless every row is done (the runs
// of a workload are measured side by side, so one of them never runs alone).
bool Runnable(const Workload& workload, bool rerun);
// The workloads of `file`, in order; InvalidArgument naming the line and cell of the first
// row that cannot run.
Result<std::vector<Workload>> Plan(const ExperimentFile& file, const ScheduleOptions& o);
// A Devices cell's GPUs on this machine ("-" and "" are none). Inside a Slurm job whose GPUs
// are `job_gpus` (SLURM_JOB_GPUS, "2,3"), index k is the job's k-th GPU, as in any job
// script; UUIDs stay as they are. InvalidArgument names an index past the job's GPUs.
Result<std::string> DevicesOnThisNode(std::string_view cell, std::string_view job_gpus);
// What --dry-run prints.
void PrintPlan(const std::vector<Workload>& plan, const ScheduleOptions& o);
// The Nsight command that wraps a run (nsys, nsysraw, ncu, ncuraw), writing `report`;
// nullopt for any other name.
std::optional<std::vector<std::string>> ProfilerCommand(const std::string& name, const std::string& report);
// The `trainbench run` command of a run, started in RunDirectory. `devices` replaces the row's Devices (a MIG
// instance's UUID); `report` is where the profiler's report goes.
// Where the run starts, as radT starts it: its script's folder, so that the script's
// relative paths (./data) mean what they mean beside it.
std::string RunDirectory(const PlannedRun& r);
std::vector<std::string> RunArgv(const PlannedRun& r, const ScheduleOptions& o, const std::string& devices,
                                 const std::string& report);

}  // namespace tb
