// The environment manifest stored with every run (artifact "manifest.json"): the
// machine (hostname, kernel, CPU model and count, memory), the interpreter and its
// packages when the command is Python (NAME==VERSION as `pip freeze` lists them), `conda
// list`, `nvidia-smi -q` and a Jetson's `nvpmodel -q` when those tools exist, the git commit and dirty state
// of the script's repository, and the environment variables that change how training runs (CUDA_*, OMP_*,
// NCCL_*, PYTORCH_*, PYTHON*, ...). Missing tools are skipped silently. Runs external tools at the lowest
// priority: call it off the critical path, beside the training (it takes a tenth of a second of CPU time,
// longer when the CPU is busy).
#pragma once

#include <string>
#include <vector>

#include "platform/host_files.h"

namespace tb {

struct ManifestInput {
  std::vector<std::string> command;  // as started
  std::string python;                // interpreter when the command is Python, else ""
  std::string script;                // the script file, for its git repository; may be ""
  std::string working_directory;
  std::vector<std::string> environment;  // the run's environment, "K=V"
};

// A JSON object, pretty-printed. Environment variables named like secrets (IsSecretName)
// are recorded as kRedacted, passwords in URIs as ***. Each tool asked (nvidia-smi -q, pip,
// conda, git) has 10 s; those that did not answer are killed with their process group,
// listed in the manifest's "timed_out" and in `timed_out`.
std::string CollectManifest(const ManifestInput& input, const HostFiles& files,
                            std::vector<std::string>* timed_out = nullptr);

// Whether an environment variable belongs in the manifest.
bool IsRelevantEnvironmentVariable(const std::string& name);

}  // namespace tb
