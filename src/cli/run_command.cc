// `trainbench run` and `trainbench devices`.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analyze/phases.h"
#include "analyze/report.h"
#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"
#include "cli/cli.h"
#include "collect/gpu_tool_collectors.h"
#include "collect/progress.h"
#include "http/http_server.h"
#include "import/migrate.h"
#include "metrics/catalog.h"
#include "platform/nvml.h"
#include "platform/nvml_call_costs.h"
#include "platform/process.h"
#include "query/energy.h"
#include "query/export.h"
#include "query/summary.h"
#include "run/launcher.h"
#include "schedule/scheduler.h"
#include "serve/serve_api.h"
#include "store/store.h"
#include "track/tracking_api.h"

namespace tb::cli {

// --- run -------------------------------------------------------------------------------

int CommandRun(const RunArgs& a, std::vector<std::string> command) {
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty()) {
    return Fail(
        Status::InvalidArgument("no command given: trainbench run [options] -- COMMAND [ARGS...] or "
                                "trainbench run train.py [ARGS...]"));
  }
  RunOptions o;
  o.experiment = a.experiment;
  o.workload = a.workload;
  o.run_name = a.name;
  o.proc_root = a.proc_root;
  o.echo_output = !a.quiet;

  Result<int64_t> interval = ParseDurationMillis(a.interval);
  if (!interval.ok()) return Fail(Status::InvalidArgument("--interval: " + interval.status().message()));
  if (*interval < kMinIntervalMs) {
    return Fail(Status::InvalidArgument("--interval " + a.interval + " is below the minimum of 100ms"));
  }
  o.interval_ms = *interval;
  if (!a.max_time.empty()) {
    Result<int64_t> max_time = ParseDurationMillis(a.max_time);
    if (!max_time.ok()) return Fail(Status::InvalidArgument("--max-time: " + max_time.status().message()));
    o.max_time_ms = *max_time;
  }
  Result<int64_t> grace = ParseDurationMillis(a.kill_grace);
  if (!grace.ok()) return Fail(Status::InvalidArgument("--kill-grace: " + grace.status().message()));
  o.kill_grace_ms = *grace;
  Result<std::vector<std::string>> listeners = ParseListeners(a.listeners);
  if (!listeners.ok()) return Fail(listeners.status());
  o.listeners = *listeners;
  Result<KeyValues> params = ParseKeyValues(a.params, "--param");
  if (!params.ok()) return Fail(params.status());
  o.params = *params;
  Result<KeyValues> tags = ParseKeyValues(a.tags, "--tag");
  if (!tags.ok()) return Fail(tags.status());
  o.tags = *tags;
  o.devices = a.devices;
  if (a.max_epochs < 0)
    return Fail(Status::InvalidArgument("--max-epochs must be a positive number of epochs"));
  o.max_epochs = a.max_epochs;
  if (!a.progress.empty()) {
    Result<ProgressPattern> progress = ProgressPattern::Parse(a.progress);
    if (!progress.ok()) return Fail(Status::InvalidArgument("--progress: " + progress.status().message()));
    o.progress = a.progress;
  }
  o.tracking = !a.no_tracking;
  if (!a.run_id.empty()) {
    bool hex = a.run_id.size() == 32 && std::all_of(a.run_id.begin(), a.run_id.end(), [](char c) {
                 return std::isxdigit(static_cast<unsigned char>(c));
               });
    if (!hex) return Fail(Status::InvalidArgument("--run-id must be 32 hex digits"));
    o.run_id = a.run_id;
  }

  if (a.distributed) {
    Result<DistributedRun> d =
        ResolveDistributed({a.nodes, a.node_rank, a.node, o.run_id}, ProcessEnvironment(), HostName());
    if (!d.ok()) return Fail(d.status());
    o.part = d->part;
    o.run_id = d->run_id;
  } else if (a.nodes != 0 || a.node_rank != -1 || !a.node.empty()) {
    return Fail(Status::InvalidArgument("--nodes, --node-rank and --node belong to --distributed"));
  }

  // radT's form: a .py file runs with the Python interpreter. One that is not there (a
  // typo) is refused before anything runs, rather than left in the store as a FAILED run.
  std::error_code ec;
  if (!command.empty() && command[0].ends_with(".py") && !std::filesystem::exists(command[0], ec)) {
    return Fail(Status::NotFound(command[0] + " does not exist (in " +
                                 std::filesystem::current_path(ec).string() +
                                 "); nothing was run or recorded"));
  }
  const char* python_env = std::getenv("TRAINBENCH_PYTHON");
  CommandLine resolved = ResolveCommand(command, !a.python.empty()       ? a.python
                                                 : python_env != nullptr ? python_env
                                                                         : "python3");
  o.command = resolved.argv;
  o.python = resolved.python;
  o.script = resolved.script;
  o.start_gate = TakeStartGate();

  // The store must be usable before anything starts.
  Result<std::unique_ptr<Store>> store = OpenStore(a.store);
  if (!store.ok()) return Fail(store.status());
  Result<RunOutcome> outcome = ExecuteRun(**store, o);
  if (!outcome.ok()) return Fail(outcome.status());
  return outcome->exit_code;
}

void AddRunCommands(CLI::App& app, std::vector<Subcommand>& out) {
  auto ra = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand("run",
                                     "Run a training command and record it.\n"
                                     "  trainbench run [options] -- COMMAND [ARGS...]\n"
                                     "  trainbench run [options] train.py [ARGS...]   (runs with --python)\n"
                                     "The script's --key value arguments are recorded as params.");
  run->add_option("--store", ra->store, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();
  run->add_option("-e,--experiment", ra->experiment, "Experiment name; created on first use")
      ->capture_default_str();
  run->add_option("-w,--workload", ra->workload, "Workload id within the experiment");
  run->add_option("-n,--name", ra->name, "Run name (default: the script's file name)");
  run->add_option("-p,--param", ra->params, "Param KEY=VALUE (repeatable; overrides parsed arguments)")
      ->allow_extra_args(false);
  run->add_option("-t,--tag", ra->tags, "Tag KEY=VALUE (repeatable)")->allow_extra_args(false);
  run->add_option(
      "-l,--listeners", ra->listeners,
      "Listeners joined with '+': top, ps, iostat, net, free, rapl, jetson, tegrastats, nvml, smi, dcgmi, "
      "amdsmi; none for none (default: top+iostat+net, plus rapl where RAPL is readable, jetson on a Jetson "
      "(tegrastats where its rails cannot be read), nvml where NVML finds a GPU, dcgmi "
      "where a DCGM host engine answers, amdsmi where AMD SMI finds a GPU and NVML none)");
  run->add_option("-d,--devices", ra->devices,
                  "GPUs the run uses: 0, 1+2, GPU-/MIG- UUIDs, AMD SMI's indices on AMD GPUs (default: "
                  "CUDA_VISIBLE_DEVICES, else all); "
                  "sets CUDA_VISIBLE_DEVICES for the command");
  run->add_option("-i,--interval", ra->interval, "Sampling interval, at least 100ms (250ms, 1s, ...)")
      ->capture_default_str();
  run->add_option("--max-time", ra->max_time, "Stop the run after this long (SIGTERM, then SIGKILL)");
  run->add_option("--kill-grace", ra->kill_grace, "Time between SIGTERM and SIGKILL")->capture_default_str();
  run->add_option("--python", ra->python,
                  "Interpreter for .py scripts (env TRAINBENCH_PYTHON; default python3)");
  run->add_option("--proc-root", ra->proc_root, "Read /proc and /sys under this directory (for testing)")
      ->capture_default_str();
  run->add_flag("-q,--quiet", ra->quiet, "Do not echo the command's output (it is still stored)");
  run->add_option("--max-epochs", ra->max_epochs,
                  "End the script cleanly once it logs epoch N through the trainbench client");
  run->add_option("--progress", ra->progress,
                  "Read the script's progress from the lines it prints: the line with its numbers named, "
                  "e.g. '| epoch {epoch} | {step}/{} batches | ms/batch {ms}' ({throughput}: samples/s, "
                  "{samples}: samples so far, {step}, {epoch}, {ms} or {s} per step, {loss}, {}: any text)");
  run->add_option("--run-id", ra->run_id, "The run's id, 32 hex digits (default: a new random one)");
  run->add_flag("--no-tracking", ra->no_tracking,
                "Do not serve the tracking API (MLFLOW_TRACKING_URI) to the script");
  run->add_flag("--distributed", ra->distributed,
                "This node's part of one run across several nodes: start it on every node "
                "(srun --ntasks-per-node=1 trainbench run --distributed ...); series get a node label");
  run->add_option("--nodes", ra->nodes, "With --distributed outside Slurm: how many nodes run it");
  run->add_option("--node-rank", ra->node_rank,
                  "With --distributed outside Slurm: this node's rank, 0 to --nodes - 1 (0 records the run)");
  run->add_option("--node", ra->node,
                  "With --distributed: this node's name on its series (default: Slurm's node name, "
                  "else the host name)");
  run->prefix_command();

  out.push_back({run, [ra, run](const DashedCommand& command) {
                   return CommandRun(*ra, command ? *command : run->remaining());
                 }});

  CLI::App* devices = app.add_subcommand("devices",
                                         "GPUs (NVIDIA with MIG devices, AMD with partitions), a Jetson's "
                                         "rails, RAPL domains, usable listeners");
  auto call_costs = std::make_shared<bool>(false);
  auto root = std::make_shared<std::string>("/");
  devices->add_flag(
      "--call-costs", *call_costs,
      "Also time each NVML call trainbench makes on GPU 0 (CPU and wall time per call, this driver)");
  devices->add_option("--proc-root", *root, "Read /sys under this directory (for testing)");

  out.push_back(
      {devices, [call_costs, root](const DashedCommand&) { return CommandDevices(*call_costs, *root); }});
}

}  // namespace tb::cli
