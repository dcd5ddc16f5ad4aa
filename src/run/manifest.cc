#include "run/manifest.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "collect/proc_parsers.h"
#include "platform/process.h"

namespace tb {
namespace {

constexpr int64_t kToolTimeoutMs = 30000;

std::optional<std::string> ToolOutput(const std::vector<std::string>& argv, const std::string& cwd = "") {
  if (!FindExecutable(argv[0])) return std::nullopt;
  Result<CapturedOutput> r = RunAndCapture(argv, kToolTimeoutMs, 16 << 20, cwd);
  if (!r.ok() || r->timed_out || r->exit.signaled || r->exit.exit_code != 0) return std::nullopt;
  return r->out;
}

std::string CpuModel(const HostFiles& files) {
  std::string text;
  if (!files.Read("/proc/cpuinfo", text).ok()) return "";
  for (std::string_view line : Split(text, '\n')) {
    if (StartsWith(line, "model name")) {
      size_t colon = line.find(':');
      if (colon != std::string_view::npos) return std::string(Trim(line.substr(colon + 1)));
    }
  }
  return "";
}

// Packages of a Python environment: pip freeze, or, where pip is not installed (Debian's
// python3 without python3-pip), the distributions importlib.metadata finds.
std::optional<std::string> PythonPackages(const std::string& python) {
  if (auto out = ToolOutput({python, "-m", "pip", "freeze", "--disable-pip-version-check"})) return out;
  return ToolOutput(
      {python, "-c",
       "import importlib.metadata as m\n"
       "names = sorted({(d.metadata['Name'] or '?') + '==' + d.version for d in m.distributions()})\n"
       "print('\\n'.join(names))"});
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

bool IsRelevantEnvironmentVariable(const std::string& name) {
  static const char* kPrefixes[] = {"CUDA_",  "NVIDIA_", "OMP_",      "MKL_",    "NCCL_",       "PYTORCH_",
                                    "TORCH_", "CUBLAS_", "CUDNN_",    "TF_",     "XLA_",        "HIP_",
                                    "ROCR_",  "KMP_",    "OPENBLAS_", "MLFLOW_", "TRAINBENCH_", "PYTHON"};
  static const char* kNames[] = {"PATH",         "LD_LIBRARY_PATH",   "VIRTUAL_ENV",
                                 "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "HOSTNAME"};
  for (const char* p : kPrefixes) {
    if (StartsWith(name, p)) return true;
  }
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return false;
}

std::string CollectManifest(const ManifestInput& input, const HostFiles& files) {
  nlohmann::ordered_json m;
  utsname u{};
  uname(&u);
  m["hostname"] = u.nodename;
  m["kernel"] = std::string(u.sysname) + " " + u.release + " " + u.version;
  m["machine"] = u.machine;
  m["cpu_model"] = CpuModel(files);
  m["cpu_count"] = sysconf(_SC_NPROCESSORS_ONLN);
  std::string text;
  MemInfo mem;
  if (files.Read("/proc/meminfo", text).ok() && ParseMemInfo(text, mem).ok()) {
    m["memory_bytes"] = mem.total_bytes;
    m["swap_bytes"] = mem.swap_total_bytes;
  }
  if (files.Read("/etc/os-release", text).ok()) {
    for (std::string_view line : Split(text, '\n')) {
      if (StartsWith(line, "PRETTY_NAME=")) {
        std::string_view v = line.substr(12);
        if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
        m["os"] = std::string(v);
      }
    }
  }
  m["command"] = input.command;
  m["working_directory"] = input.working_directory;

  if (!input.python.empty()) {
    nlohmann::ordered_json py;
    py["interpreter"] = FindExecutable(input.python).value_or(input.python);
    if (auto v = ToolOutput({input.python, "-c", "import sys; print(sys.version)"})) {
      py["version"] = std::string(Trim(*v));
    }
    if (auto pkgs = PythonPackages(input.python)) py["packages"] = std::string(Trim(*pkgs));
    m["python"] = py;
  }
  if (auto conda = ToolOutput({"conda", "list"})) m["conda_list"] = *conda;
  if (auto smi = ToolOutput({"nvidia-smi", "-q"})) m["nvidia_smi_q"] = *smi;

  std::string repo_dir = input.script.empty() ? input.working_directory : DirectoryOf(input.script);
  if (auto commit = ToolOutput({"git", "-C", repo_dir, "rev-parse", "HEAD"})) {
    nlohmann::ordered_json git;
    git["commit"] = std::string(Trim(*commit));
    if (auto top = ToolOutput({"git", "-C", repo_dir, "rev-parse", "--show-toplevel"})) {
      git["repository"] = std::string(Trim(*top));
    }
    if (auto status = ToolOutput({"git", "-C", repo_dir, "status", "--porcelain"})) {
      git["dirty"] = !Trim(*status).empty();
      if (!Trim(*status).empty()) git["changes"] = *status;
    }
    m["git"] = git;
  }

  nlohmann::ordered_json env = nlohmann::ordered_json::object();
  for (const std::string& entry : input.environment) {
    std::string_view kv = entry;
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name(kv.substr(0, eq));
    if (IsRelevantEnvironmentVariable(name)) env[name] = std::string(kv.substr(eq + 1));
  }
  m["environment"] = env;
  return m.dump(2);
}

}  // namespace tb
