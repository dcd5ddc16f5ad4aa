// Launching and supervising one run: records it in the store, starts the command in its
// own process group with its output pumped to the terminal and to log artifacts, samples
// it with the chosen listeners, forwards SIGINT/SIGTERM/SIGHUP, enforces the maximum run
// time (SIGTERM, then SIGKILL after a grace period), stores the environment manifest and
// finally the status, exit code and end time.
// Call from the main thread: it blocks signals and waits for them with sigtimedwait.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "platform/start_gate.h"
#include "run/command.h"
#include "run/distributed.h"
#include "store/store.h"

namespace tb {

struct RunOptions {
  std::vector<std::string> command;  // what is executed
  std::string experiment{kDefaultExperiment};
  std::string workload;
  std::string run_name;  // default: the script's or program's file name
  KeyValues params;      // explicit --param, after those parsed from the command
  KeyValues tags;
  // Empty: the machine's default set (top+iostat+net, plus nvml where NVML finds a GPU and
  // dcgmi where a DCGM host engine answers).
  std::vector<std::string> listeners;
  int64_t interval_ms = 1000;
  int64_t max_time_ms = 0;  // 0: no limit
  int64_t kill_grace_ms = 10000;
  std::string proc_root = "/";  // where /proc and /sys are read
  bool echo_output = true;
  std::string python;   // interpreter, when the command is a Python script
  std::string script;   // the script file, when there is one
  std::string devices;  // "0", "1+2", GPU or MIG UUIDs; "" uses CUDA_VISIBLE_DEVICES or all GPUs
  // The trainbench Python client ends the script cleanly once it logs epoch N; 0: no limit.
  int max_epochs = 0;
  // The run's id (32 hex digits), chosen by a caller that must know it beforehand (the
  // scheduler); "" for a new random one.
  std::string run_id;
  // The pattern of the progress lines the script prints (run/progress.h); "" for none.
  std::string progress;
  // Serve the tracking API (MLflow's REST calls, the Python client) to the script.
  bool tracking = true;
  // One part of a run across several nodes (run/distributed.h); run_id is then the
  // run's, the same on every node.
  RunPart part;
  // The start gate shared with sibling runs (the scheduler's, platform/start_gate.h): the
  // command starts once every sibling is set up too. None: at once.
  GatePass start_gate;
};

struct RunOutcome {
  std::string run_id;
  std::string status;
  int exit_code = 0;  // what trainbench exits with: the child's code, 128+signal, or 127
};

// Runs the command to completion. Fails (before anything starts) only when the run
// cannot be recorded; a command that cannot start is a FAILED run with exit code 127.
Result<RunOutcome> ExecuteRun(Store& store, const RunOptions& options);

// Splits "top+iostat+net" and checks every name; the error names the available ones.
// radT's names: `none` is no listener (["none"]); `macmon` (macOS) is skipped with a warning.
Result<std::vector<std::string>> ParseListeners(const std::string& spec);

}  // namespace tb
