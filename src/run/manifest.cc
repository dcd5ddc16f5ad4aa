#include "run/manifest.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/secret.h"
#include "base/strings.h"
#include "collect/proc_parsers.h"
#include "platform/process.h"

namespace tb {
namespace {

// The tools run at the lowest priority, beside the training that has just started: they
// take the CPU time it leaves. Each has a short deadline (a hung nvidia-smi on PATH once
// held every run's end for a minute); then its process group is killed and the manifest
// says which tool timed out.
constexpr int64_t kToolTimeoutMs = 10000;
constexpr int kToolNice = 19;

// What the tools that did not answer were, for the manifest's "timed_out".
thread_local std::vector<std::string>* timed_out_tools = nullptr;

std::optional<std::string> ToolOutput(const std::vector<std::string>& argv, const std::string& cwd = "") {
  if (!FindExecutable(argv[0])) return std::nullopt;
  Result<CapturedOutput> r = RunAndCapture(argv, kToolTimeoutMs, 16 << 20, cwd, kToolNice);
  if (r.ok() && r->timed_out && timed_out_tools != nullptr) {
    timed_out_tools->push_back(JoinShellWords({argv[0], argv.size() > 1 ? argv[1] : ""}) + " (no answer in " +
                               std::to_string(kToolTimeoutMs / 1000) + " s, killed)");
  }
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

struct PythonDetails {
  std::optional<std::string> version, packages;
};

// The interpreter's version and its packages as `pip freeze` lists them (NAME==VERSION, or
// NAME @ URL for what was installed from a URL, a local path or a checkout), in one start
// of the interpreter. The packages are read from the names of the NAME-VERSION.dist-info
// and .egg-info entries on sys.path, the first of a name winning, as importlib.metadata
// finds them, without parsing every METADATA file: 0.027 s of CPU time here, against 0.13 s
// for importlib.metadata and 0.55 s for `pip freeze` (which imports all of pip). The json
// module (12 ms of it, a third) is imported only where a package has a direct_url.json.
// When that fails: `pip freeze`.
PythonDetails AskPython(const std::string& python) {
  PythonDetails details;
  if (auto out = ToolOutput({python, "-c",
                             "import sys, os\n"
                             "print(sys.version.replace('\\n', ' '))\n"
                             "found = {}\n"
                             "for directory in sys.path:\n"
                             "    try:\n"
                             "        entries = list(os.scandir(directory or '.'))\n"
                             "    except OSError:\n"
                             "        continue\n"
                             "    for e in entries:\n"
                             "        stem, dot, kind = e.name.rpartition('.')\n"
                             "        if kind not in ('dist-info', 'egg-info'):\n"
                             "            continue\n"
                             "        name, _, version = stem.partition('-')\n"
                             "        version = version.split('-')[0]\n"
                             "        key = name.lower().replace('-', '_').replace('.', '_')\n"
                             "        if key in found or not version:\n"
                             "            continue\n"
                             "        url = None\n"
                             "        try:\n"
                             "            with open(os.path.join(e.path, 'direct_url.json')) as f:\n"
                             "                import json\n"
                             "                url = json.load(f)['url']\n"
                             "        except (OSError, ValueError, KeyError, TypeError):\n"
                             "            pass\n"
                             "        found[key] = name + (' @ ' + url if url else '==' + version)\n"
                             "print('\\n'.join(sorted(found.values(), key=str.lower)))"})) {
    size_t newline = out->find('\n');
    details.version = out->substr(0, newline);
    if (newline != std::string::npos) details.packages = out->substr(newline + 1);
    return details;
  }
  details.version = ToolOutput({python, "-c", "import sys; print(sys.version)"});
  details.packages = ToolOutput({python, "-m", "pip", "freeze", "--disable-pip-version-check"});
  return details;
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

namespace {

// What the system hands over is bytes, not always UTF-8 (a Latin-1 argument or path, a
// tool's output): every string of the manifest, keys too, has such bytes escaped as \xHH,
// so that the manifest is JSON and the run goes on.
nlohmann::ordered_json EscapedStrings(const nlohmann::ordered_json& j) {
  if (j.is_string()) return EscapeInvalidUtf8(j.get_ref<const std::string&>());
  if (j.is_array()) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& e : j) out.push_back(EscapedStrings(e));
    return out;
  }
  if (j.is_object()) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const auto& [k, v] : j.items()) out[EscapeInvalidUtf8(k)] = EscapedStrings(v);
    return out;
  }
  return j;
}

}  // namespace

std::string CollectManifest(const ManifestInput& input, const HostFiles& files,
                            std::vector<std::string>* timed_out) {
  std::vector<std::string> late;
  timed_out_tools = &late;
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
    PythonDetails details = AskPython(input.python);
    if (details.version) py["version"] = std::string(Trim(*details.version));
    if (details.packages) py["packages"] = std::string(Trim(*details.packages));
    m["python"] = py;
  }
  if (auto conda = ToolOutput({"conda", "list"})) m["conda_list"] = *conda;
  if (auto smi = ToolOutput({"nvidia-smi", "-q"})) m["nvidia_smi_q"] = *smi;
  if (auto mode = ToolOutput({"nvpmodel", "-q"})) m["nvpmodel_q"] = *mode;  // a Jetson's power mode

  std::string repo_dir = input.script.empty() ? input.working_directory : DirName(input.script);
  if (auto head = ToolOutput({"git", "-C", repo_dir, "rev-parse", "HEAD", "--show-toplevel"})) {
    nlohmann::ordered_json git;
    std::vector<std::string_view> lines = Split(Trim(*head), '\n');
    git["commit"] = std::string(Trim(lines[0]));
    if (lines.size() > 1) git["repository"] = std::string(Trim(lines[1]));
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
    if (!IsRelevantEnvironmentVariable(name)) continue;
    // A secret's value is not written where others read it (serve serves manifests); a
    // password in a store's URI neither.
    env[name] = IsSecretName(name) ? std::string(kRedacted) : RedactedUri(std::string(kv.substr(eq + 1)));
  }
  m["environment"] = env;
  if (!late.empty()) m["timed_out"] = late;
  timed_out_tools = nullptr;
  if (timed_out != nullptr) *timed_out = late;
  return EscapedStrings(m).dump(2);
}

}  // namespace tb
