#include "run/command.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iterator>

#include "base/strings.h"

extern char** environ;

namespace tb {

CommandLine ResolveCommand(std::vector<std::string> command, const std::string& python) {
  CommandLine out;
  if (!command.empty() && command[0].ends_with(".py")) {
    out.python = python;
    out.script = command[0];
    command.insert(command.begin(), python);
  } else {
    // "python3 -u train.py", "nsys profile -o report python3 train.py".
    for (size_t i = 1; i < command.size(); ++i) {
      if (command[i].ends_with(".py")) {
        out.script = command[i];
        if (StartsWith(BaseName(command[i - 1]), "python")) out.python = command[i - 1];
        break;
      }
    }
  }
  out.argv = std::move(command);
  return out;
}

std::vector<std::string> ScriptArguments(const std::vector<std::string>& argv, const std::string& script) {
  if (argv.empty()) return {};
  auto at = script.empty() ? argv.end() : std::find(argv.begin(), argv.end(), script);
  return {at == argv.end() ? argv.begin() + 1 : at + 1, argv.end()};
}

KeyValues ParamsFromArguments(const std::vector<std::string>& args) {
  KeyValues params;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a.size() < 2 || a[0] != '-' || a == "--" || ParseDouble(a)) continue;
    std::string_view key = a.substr(a[1] == '-' ? 2 : 1);
    size_t eq = key.find('=');
    if (eq != std::string_view::npos) {
      params.emplace_back(std::string(key.substr(0, eq)), std::string(key.substr(eq + 1)));
      continue;
    }
    bool next_is_value =
        i + 1 < args.size() && (args[i + 1].empty() || args[i + 1][0] != '-' || ParseDouble(args[i + 1]));
    if (next_is_value) {
      params.emplace_back(std::string(key), args[++i]);
    } else {
      params.emplace_back(std::string(key), "true");
    }
  }
  return params;
}

KeyValues MergeParams(KeyValues base, const KeyValues& overrides) {
  for (const auto& [k, v] : overrides) {
    bool replaced = false;
    for (auto& [bk, bv] : base) {
      if (bk == k) {
        bv = v;
        replaced = true;
      }
    }
    if (!replaced) base.emplace_back(k, v);
  }
  return base;
}

std::vector<std::string> ChildEnvironment(const ChildSettings& c) {
  static const char* const kReplaced[] = {
      "TRAINBENCH_RUN_ID=", "TRAINBENCH_STORE=",     "TRAINBENCH_TRACKING_URI=", "TRAINBENCH_MAX_EPOCHS=",
      "TRAINBENCH_TOKEN=",  "MLFLOW_TRACKING_URI=",  "MLFLOW_RUN_ID=",           "MLFLOW_EXPERIMENT_ID=",
      "PYTHONPATH=",        "TRAINBENCH_NODE_RANK=", "TRAINBENCH_NODE=",         "RADT_PRESENT=",
      "RADT_RUN_ID=",       "RADT_MANUAL_MODE=",     "RADT_LISTENER_",           "SMI_GPU_ID="};
  std::vector<std::string> env;
  bool has_unbuffered = false, has_device_order = false, has_experiment_name = false;
  std::string python_path;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv = *e;
    if (StartsWith(kv, "PYTHONPATH=")) python_path = kv.substr(11);
    if (std::any_of(std::begin(kReplaced), std::end(kReplaced),
                    [&](const char* p) { return StartsWith(kv, p); }))
      continue;
    has_experiment_name |= StartsWith(kv, "MLFLOW_EXPERIMENT_NAME=");
    if (!c.cuda_visible_devices.empty() && StartsWith(kv, "CUDA_VISIBLE_DEVICES=")) continue;
    has_unbuffered |= StartsWith(kv, "PYTHONUNBUFFERED=");
    has_device_order |= StartsWith(kv, "CUDA_DEVICE_ORDER=");
    env.emplace_back(kv);
  }
  env.push_back("TRAINBENCH_RUN_ID=" + c.run_id);
  env.push_back("TRAINBENCH_STORE=" + c.store);
  if (!c.tracking_uri.empty()) {
    env.push_back("TRAINBENCH_TRACKING_URI=" + c.tracking_uri);
    env.push_back("MLFLOW_TRACKING_URI=" + c.tracking_uri);
    if (!has_experiment_name) env.push_back("MLFLOW_EXPERIMENT_NAME=" + c.experiment);
  }
  if (c.max_epochs > 0) env.push_back("TRAINBENCH_MAX_EPOCHS=" + std::to_string(c.max_epochs));
  if (c.node_rank >= 0) {
    env.push_back("TRAINBENCH_NODE_RANK=" + std::to_string(c.node_rank));
    env.push_back("TRAINBENCH_NODE=" + c.node);
  }
  if (!c.python_dir.empty())
    python_path = python_path.empty() ? c.python_dir : c.python_dir + ":" + python_path;
  if (!python_path.empty()) env.push_back("PYTHONPATH=" + python_path);
  // Python buffers stdout when it is a pipe; unbuffered, lines reach the terminal and the
  // log as they are printed.
  if (!has_unbuffered) env.push_back("PYTHONUNBUFFERED=1");
  if (!c.cuda_visible_devices.empty()) env.push_back("CUDA_VISIBLE_DEVICES=" + c.cuda_visible_devices);
  // CUDA orders GPUs fastest first unless told otherwise; nvidia-smi and NVML by PCI bus.
  if (!has_device_order) env.push_back("CUDA_DEVICE_ORDER=PCI_BUS_ID");
  // radT's, for scripts written for it (radt/run/benchmark.py reads RADT_PRESENT).
  env.push_back("RADT_PRESENT=True");
  env.push_back("RADT_RUN_ID=" + c.run_id);
  env.push_back("RADT_MANUAL_MODE=False");
  env.push_back("SMI_GPU_ID=" + c.devices);
  for (std::string_view l : {"PS", "SMI", "DCGMI", "TOP", "IOSTAT", "FREE", "MACMON"}) {
    bool on = std::find(c.listeners.begin(), c.listeners.end(), ToLower(l)) != c.listeners.end();
    env.push_back(Concat({"RADT_LISTENER_", l, on ? "=True" : "=False"}));
  }
  return env;
}

std::string PythonClientDirectory() {
  if (const char* dir = std::getenv("TRAINBENCH_PYTHON_DIR"); dir != nullptr && *dir != '\0') return dir;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  // build/trainbench -> python/ in the source tree; bin/trainbench -> share/trainbench/python.
  for (const char* relative : {"../python", "../../python", "../share/trainbench/python"}) {
    std::filesystem::path candidate = exe.parent_path() / relative;
    if (std::filesystem::exists(candidate / "trainbench" / "__init__.py", ec)) {
      return std::filesystem::weakly_canonical(candidate, ec).string();
    }
  }
  return "";
}

}  // namespace tb
