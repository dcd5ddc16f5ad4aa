// `trainbench schedule FILE.csv`, and radT's form without a subcommand
// (`trainbench [-r] exp.csv`, `trainbench [-e N -c mps ...] train.py ARGS`).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "base/log.h"
#include "cli/cli.h"
#include "cli/radt_form.h"
#include "schedule/gpu_sharing.h"
#include "schedule/scheduler.h"

namespace tb::cli {

int CommandSchedule(ScheduleOptions o) {
  if (o.python.empty()) {
    const char* python_env = std::getenv("TRAINBENCH_PYTHON");
    o.python = python_env != nullptr ? python_env : "";
  }
  if (o.store.empty()) o.store = StoreFromEnvironment();
  o.color = isatty(STDOUT_FILENO) != 0;
  Result<int> code = RunSchedule(o);
  if (!code.ok()) return Fail(code.status());
  return *code;
}

int CommandRadt(const RadtCommand& c) {
  for (const std::string& note : c.notes) LogInfo("radT's " + note);
  // Python buffers its output unless PYTHONUNBUFFERED is non-empty; trainbench sets it to 1
  // for scripts unless it is set already, as radT does without --buffered.
  if (c.buffered) setenv("PYTHONUNBUFFERED", "", 1);
  if (!c.is_script() && !c.name.empty())
    LogInfo("radT's -n names the run of a script; an experiment file's rows are named by its Name column");
  // A script without -d runs on GPU 0 as in radT, where nvidia-smi lists one.
  bool has_gpu = false;
  if (c.is_script() && c.devices.empty()) {
    Result<std::vector<SmiGpu>> gpus = ListGpus();
    has_gpu = gpus.ok() && !gpus->empty();
  }
  ScheduleOptions o = ScheduleFor(c, has_gpu);
  o.store = c.store;
  return CommandSchedule(o);
}

void AddScheduleCommand(CLI::App& app, std::vector<Subcommand>& out) {
  auto so = std::make_shared<ScheduleOptions>();
  so->store = StoreFromEnvironment();
  CLI::App* schedule = app.add_subcommand(
      "schedule",
      "Run an experiment file (radT's CSV or YAML sweep): workloads in order, the runs of each together");
  schedule
      ->add_option("file", so->file,
                   "Experiment CSV (Experiment,Workload,Status,Run,Devices,Collocation,File,...) or radT's "
                   "YAML sweep (name, experiment, ..., method, parameters)")
      ->required();
  schedule->add_option("--store", so->store, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();
  schedule->add_option("--python", so->python,
                       "Interpreter for the File column's scripts (default: python3)");
  schedule->add_option("--group", so->group,
                       "Nest every run under a parent run of this name (radT's group), or under the run "
                       "with this id; a YAML sweep's is its name");
  schedule
      ->add_option("--repeat", so->repeat,
                   "Run each workload N times, interleaved across workloads (all first attempts, then "
                   "all second, ...); the report gives means and 95 % intervals over the repeats")
      ->check(CLI::Range(1, 1000));
  schedule->add_flag("--dry-run", so->dry_run,
                     "Print the plan (workloads, runs, commands) and change nothing");
  schedule->add_flag("--rerun", so->rerun,
                     "Run workloads with a FAILED row again, all their rows together (as radT)");
  schedule->add_option("--max-epochs", so->max_epochs,
                       "End each run after N epochs (scripts that log epochs through trainbench's client)");
  schedule->add_option("--max-time", so->max_time,
                       "Each run's time limit (90s, 30m, 2h) unless its MaxTime cell says otherwise");
  schedule->add_flag("--drop-caches", so->drop_caches,
                     "Drop the page cache before each workload, so each reads its data cold (needs root)");
  schedule->add_flag(
      "--slurm", so->slurm,
      "Each workload as a Slurm job (sbatch), its runs together on one node; needs a PostgreSQL "
      "--store the nodes reach (docs/SLURM.md)");
  schedule->add_option("--partition", so->slurm_partition, "With --slurm: the partition to submit to");
  schedule->add_option("--account", so->slurm_account, "With --slurm: the account to charge");
  schedule->add_option("--time-limit", so->slurm_time,
                       "With --slurm: each job's time limit, as sbatch --time takes it");
  schedule->add_option("--sbatch-arg", so->sbatch_args, "With --slurm: one more sbatch argument (repeatable)")
      ->allow_extra_args(false);
  schedule
      ->add_option("--max-jobs", so->slurm_max_jobs,
                   "With --slurm: workloads queued or running at once (default 1: one after another, so "
                   "that no two interfere)")
      ->check(CLI::PositiveNumber);

  out.push_back({schedule, [so](const DashedCommand&) { return CommandSchedule(*so); }});
}

}  // namespace tb::cli
