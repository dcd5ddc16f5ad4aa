// What a run executes and what it tells the command: the script found in the command
// line (radT's `trainbench run train.py`, or inside `nsys profile ... python3 train.py`),
// the params read from the script's arguments, and the environment the command starts
// with (where to log, which GPUs, the Python client on PYTHONPATH). Pure but for the
// environment, which starts from this process's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/store.h"

namespace tb {

struct CommandLine {
  std::vector<std::string> argv;  // what is executed
  std::string python;             // the interpreter, when a Python script runs
  std::string script;             // the script file, when there is one
};

// A command that is a .py file runs with `python`; in a longer one the first .py argument
// is the script, and the word before it the interpreter when it is a python.
CommandLine ResolveCommand(std::vector<std::string> command, const std::string& python);

// The script's arguments (after the script; after argv[0] when there is no script).
std::vector<std::string> ScriptArguments(const std::vector<std::string>& argv, const std::string& script);

// Params radT-style from a script's arguments: "--batch-size 128" gives batch-size=128,
// "--lr=0.1" gives lr=0.1, a flag alone gives flag=true; positional words are skipped.
KeyValues ParamsFromArguments(const std::vector<std::string>& args);

// `base` with the keys of `overrides` replaced or added.
KeyValues MergeParams(KeyValues base, const KeyValues& overrides);

// What tells the command it runs under trainbench, and where to log.
struct ChildSettings {
  std::string run_id;
  std::string store;
  std::string tracking_uri;  // "" without the tracking API
  std::string experiment;    // the run's experiment, by name
  int max_epochs = 0;
  std::string python_dir;            // prepended to PYTHONPATH
  std::string cuda_visible_devices;  // "" keeps ours
  // A distributed run's part: TRAINBENCH_NODE_RANK and TRAINBENCH_NODE (the Python client
  // logs from rank 0 only, unless asked for every rank); -1: not distributed.
  int node_rank = -1;
  std::string node;
  // What radT's scripts read (RADT_PRESENT, RADT_RUN_ID, SMI_GPU_ID, RADT_LISTENER_<NAME>):
  // the run's listeners and its devices as given.
  std::vector<std::string> listeners = {};
  std::string devices = {};
};

// The command's environment: ours with ChildSettings. MLflow's client reads
// MLFLOW_TRACKING_URI and MLFLOW_EXPERIMENT_NAME (the run's experiment, unless the user set
// one), so `mlflow.start_run()` makes the run trainbench started its own (TrackingApi::
// Confine); no MLFLOW_RUN_ID, which a script with a tracking server of its own would look up
// there, and no secret: the port knows its user's processes (HttpServerOptions::Peers). A
// user's MLFLOW_TRACKING_TOKEN, _USERNAME and _PASSWORD stay, for their own server. CUDA
// numbers GPUs as NVML does (CUDA_DEVICE_ORDER=PCI_BUS_ID) unless told otherwise. radT's
// variables are set as radT sets them for its scripts: RADT_PRESENT=True, RADT_RUN_ID,
// RADT_MANUAL_MODE=False, SMI_GPU_ID (the devices) and RADT_LISTENER_<NAME>=True/False for
// radT's listeners.
std::vector<std::string> ChildEnvironment(const ChildSettings& settings);

// The directory holding the `trainbench` Python package: TRAINBENCH_PYTHON_DIR, else
// python/ beside the build or install directory of this executable; "" when not found.
std::string PythonClientDirectory();

}  // namespace tb
