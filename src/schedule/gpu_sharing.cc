#include "schedule/gpu_sharing.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>

#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"
#include "platform/amdsmi.h"
#include "platform/process.h"

extern char** environ;

namespace tb {

namespace fs = std::filesystem;

std::vector<std::string> EnvironmentWith(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv = *e;
    std::string_view key = kv.substr(0, kv.find('=') + 1);
    bool replaced = std::any_of(extra.begin(), extra.end(), [&](const std::string& x) {
      return key == std::string_view(x).substr(0, x.find('=') + 1);
    });
    if (!replaced) env.emplace_back(kv);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

Result<ToolResult> RunTool(const std::vector<std::string>& argv, const std::vector<std::string>& extra,
                           int64_t timeout_ms) {
  // stderr joins stdout: the tools print their errors on either.
  std::vector<std::string> shell = {"/bin/sh", "-c", "exec \"$@\" 2>&1", "sh"};
  shell.insert(shell.end(), argv.begin(), argv.end());
  Result<CapturedOutput> r = RunAndCapture(shell, timeout_ms, 1 << 20, "", 0, EnvironmentWith(extra));
  if (!r.ok()) return r.status();
  if (r->timed_out) {
    return Status::Unavailable(JoinShellWords(argv) + " did not answer in " + FormatDuration(timeout_ms) +
                               " and was killed (is the GPU driver hung? nvidia-smi would hang too)");
  }
  return ToolResult{r->exit.ShellCode(), std::move(r->out)};
}

std::vector<SmiGpu> ParseGpuQuery(std::string_view csv) {
  std::vector<SmiGpu> gpus;
  for (std::string_view line : Split(csv, '\n')) {
    std::vector<std::string_view> cells = Split(line, ',');
    if (cells.size() < 3) continue;
    std::optional<uint64_t> index = ParseUint(Trim(cells[0]));
    if (!index) continue;
    gpus.push_back(
        {static_cast<unsigned>(*index), std::string(Trim(cells[1])), std::string(Trim(cells[2])), {}});
  }
  return gpus;
}

// `nvidia-smi -L`: "GPU 1: NAME (UUID: GPU-...)" lines, each followed by its MIG devices,
// "  MIG 2g.10gb     Device  0: (UUID: MIG-...)".
void AddMigDevices(std::string_view list_output, std::vector<SmiGpu>& gpus) {
  SmiGpu* current = nullptr;
  for (std::string_view line : Split(list_output, '\n')) {
    std::string_view t = Trim(line);
    size_t uuid_at = t.find("(UUID: ");
    if (uuid_at == std::string_view::npos) continue;
    std::string_view uuid = t.substr(uuid_at + 7);
    uuid = uuid.substr(0, uuid.find(')'));
    if (StartsWith(t, "GPU ")) {
      current = nullptr;
      for (SmiGpu& g : gpus) {
        if (g.uuid == uuid) current = &g;
      }
    } else if (StartsWith(t, "MIG ") && current != nullptr) {
      std::string_view profile = Trim(t.substr(4));
      profile = profile.substr(0, profile.find(' '));
      current->mig.push_back({std::string(profile), std::string(uuid)});
    }
  }
}

// AMD's GPUs where there is no nvidia-smi: AMD SMI's processors (partitions count as
// GPUs, as ROCm's runtimes count them), none in MIG mode.
Result<std::vector<SmiGpu>> ListAmdGpus() {
  Result<std::unique_ptr<AmdSmi>> amdsmi = AmdSmi::Open();
  if (!amdsmi.ok()) return amdsmi.status();
  Result<std::vector<AmdSmi::Processor>> found = (*amdsmi)->Processors();
  if (!found.ok()) return found.status();
  std::vector<SmiGpu> gpus;
  for (const AmdSmi::Processor& p : *found) gpus.push_back({p.index, p.uuid, "[N/A]", {}});
  return gpus;
}

Result<std::vector<SmiGpu>> ListGpus() {
  if (!FindExecutable("nvidia-smi")) {
    Result<std::vector<SmiGpu>> amd = ListAmdGpus();
    if (amd.ok() && !amd->empty()) return amd;
    return Status::NotFound(
        "nvidia-smi is not on PATH (it comes with NVIDIA's driver), and AMD SMI finds no GPU");
  }
  Result<ToolResult> query =
      RunTool({"nvidia-smi", "--query-gpu=index,uuid,mig.mode.current", "--format=csv,noheader"});
  if (!query.ok()) return query.status();
  if (query->code != 0) {
    return Status::Unavailable("nvidia-smi cannot list the GPUs: " + std::string(Trim(query->out)));
  }
  std::vector<SmiGpu> gpus = ParseGpuQuery(query->out);
  Result<ToolResult> list = RunTool({"nvidia-smi", "-L"});
  if (list.ok() && list->code == 0) AddMigDevices(list->out, gpus);
  return gpus;
}

bool MayConfigureMig() {
  return geteuid() == 0 || access("/proc/driver/nvidia/capabilities/mig/config", R_OK) == 0;
}

bool IsMigProfile(std::string_view p) {
  // DIGITSg.DIGITSgb, optionally +me / +gfx (media extensions and the like).
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < p.size() && std::isdigit(static_cast<unsigned char>(p[i]))) ++i;
    return i > start;
  };
  auto literal = [&](std::string_view s) {
    if (p.substr(i, s.size()) != s) return false;
    i += s.size();
    return true;
  };
  if (!digits() || !literal("g.") || !digits() || !literal("gb")) return false;
  return i == p.size() || (p[i] == '+' && i + 1 < p.size());
}

// "Successfully created GPU instance ID  2 on GPU  1 using profile ..." and
// "Successfully created compute instance ID  0 on GPU  1 GPU instance ID  2 using ...".
std::vector<std::pair<unsigned, int>> ParseCreated(std::string_view out) {
  std::vector<std::pair<unsigned, int>> created;
  auto number_after = [](std::string_view line, std::string_view key) -> std::optional<uint64_t> {
    size_t at = line.find(key);
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = Trim(line.substr(at + key.size()));
    return ParseUint(rest.substr(0, rest.find(' ')));
  };
  for (std::string_view line : Split(out, '\n')) {
    if (!StartsWith(Trim(line), "Successfully created")) continue;
    if (line.find("compute instance ID") != std::string_view::npos) {
      std::optional<uint64_t> ci = number_after(line, "compute instance ID");
      std::optional<uint64_t> gi = number_after(line, "GPU instance ID");
      for (auto& [g, c] : created) {
        if (ci && gi && g == *gi) c = static_cast<int>(*ci);
      }
    } else if (std::optional<uint64_t> gi = number_after(line, "GPU instance ID")) {
      created.emplace_back(static_cast<unsigned>(*gi), -1);
    }
  }
  return created;
}

Result<std::vector<std::string>> MigInstances::Create(unsigned gpu,
                                                      const std::vector<std::string>& profiles) {
  gpu_ = gpu;
  auto devices_of = [&](const std::vector<SmiGpu>& gpus) {
    std::vector<SmiGpu::MigDevice> out;
    for (const SmiGpu& g : gpus) {
      if (g.index == gpu) out = g.mig;
    }
    return out;
  };
  Result<std::vector<SmiGpu>> before = ListGpus();
  if (!before.ok()) return before.status();
  std::string list;
  for (const std::string& p : profiles) list += (list.empty() ? "" : ",") + p;
  std::string index = std::to_string(gpu);
  Result<ToolResult> made = RunTool({"nvidia-smi", "mig", "-i", index, "-cgi", list, "-C"});
  if (!made.ok()) return made.status();
  created_ = ParseCreated(made->out);
  if (made->code != 0 || created_.size() != profiles.size()) {
    Destroy();
    return Status::Unavailable("could not create MIG instances " + list + " on GPU " + index +
                               " (nvidia-smi mig -i " + index + " -cgi " + list +
                               " -C: " + std::string(Trim(made->out)) + ")");
  }
  Result<std::vector<SmiGpu>> after = ListGpus();
  if (!after.ok()) {
    Destroy();
    return after.status();
  }
  // The new MIG devices are those -L did not list before; each request takes one of its profile.
  std::vector<SmiGpu::MigDevice> fresh;
  for (const SmiGpu::MigDevice& d : devices_of(*after)) {
    std::vector<SmiGpu::MigDevice> old = devices_of(*before);
    if (std::none_of(old.begin(), old.end(), [&](const SmiGpu::MigDevice& o) { return o.uuid == d.uuid; }))
      fresh.push_back(d);
  }
  std::vector<std::string> uuids;
  for (const std::string& profile : profiles) {
    auto it = std::find_if(fresh.begin(), fresh.end(),
                           [&](const SmiGpu::MigDevice& d) { return d.profile == profile; });
    if (it == fresh.end()) {
      Destroy();
      return Status::Unavailable(
          Concat({"nvidia-smi -L does not list the ", profile, " MIG device created on GPU ", index}));
    }
    uuids.push_back(it->uuid);
    fresh.erase(it);
  }
  return uuids;
}

void MigInstances::Destroy() {
  std::string index = std::to_string(gpu_);
  for (const auto& [gi, ci] : created_) {
    std::string g = std::to_string(gi);
    if (ci >= 0) {
      Result<ToolResult> r =
          RunTool({"nvidia-smi", "mig", "-i", index, "-gi", g, "-ci", std::to_string(ci), "-dci"});
      if (!r.ok() || r->code != 0)
        LogWarning(Concat({"could not destroy MIG compute instance ", std::to_string(ci), " of GPU instance ",
                           g, " on GPU ", index, ": ", r.ok() ? Trim(r->out) : r.status().message()}));
    }
    Result<ToolResult> r = RunTool({"nvidia-smi", "mig", "-i", index, "-gi", g, "-dgi"});
    if (!r.ok() || r->code != 0)
      LogWarning(
          Concat({"could not destroy MIG GPU instance ", g, " on GPU ", index, " (run: nvidia-smi mig -i ",
                  index, " -gi ", g, " -dgi): ", r.ok() ? Trim(r->out) : r.status().message()}));
  }
  created_.clear();
}

Status MpsDaemon::Start(const std::string& devices) {
  char dir[] = "/tmp/trainbench-mps-XXXXXX";
  if (mkdtemp(dir) == nullptr) return Status::FromErrno("cannot create a directory for MPS", errno);
  dir_ = dir;
  env_ = {"CUDA_MPS_PIPE_DIRECTORY=" + dir_ + "/pipe", "CUDA_MPS_LOG_DIRECTORY=" + dir_ + "/log"};
  fs::create_directories(dir_ + "/pipe");
  fs::create_directories(dir_ + "/log");
  std::vector<std::string> extra = env_;
  if (!devices.empty()) {
    Result<std::string> uuids = DevicesAsUuids(devices);
    if (!uuids.ok()) return uuids.status();
    extra.push_back("CUDA_VISIBLE_DEVICES=" + *uuids);
  }
  Result<ToolResult> r = RunTool({"nvidia-cuda-mps-control", "-d"}, extra);
  if (!r.ok() || r->code != 0) {
    return Status::Unavailable("the MPS control daemon did not start (nvidia-cuda-mps-control -d" +
                               (r.ok() ? ": " + std::string(Trim(r->out)) : std::string()) + "); see " +
                               dir_ + "/log/control.log");
  }
  started_ = true;
  // Ready once its front end finds it.
  std::string last;
  for (int attempt = 0; attempt < 100; ++attempt) {
    Result<ToolResult> ready =
        RunTool({"/bin/sh", "-c", "echo get_server_list | nvidia-cuda-mps-control"}, env_);
    if (ready.ok() && ready->code == 0) return Status::Ok();
    last = ready.ok() ? std::string(Trim(ready->out)) : ready.status().message();
    usleep(100000);
  }
  Stop();
  return Status::Unavailable("the MPS control daemon did not become ready within 10 s (" + last + "); see " +
                             dir_ + "/log/control.log");
}

Result<std::string> DevicesAsUuids(const std::string& devices) {
  Result<std::vector<SmiGpu>> gpus = ListGpus();
  if (!gpus.ok()) return gpus.status();
  std::string out;
  for (std::string_view part : Split(devices, '+')) {
    std::string t(Trim(part));
    if (t.empty()) continue;
    const SmiGpu* found = nullptr;
    for (const SmiGpu& g : *gpus) {
      if (std::to_string(g.index) == t || g.uuid == t) found = &g;
    }
    if (found == nullptr)
      return Status::InvalidArgument("GPU " + t + " is not on this machine (nvidia-smi -L lists them)");
    out += (out.empty() ? "" : ",") + found->uuid;
  }
  return out;
}

void MpsDaemon::Stop() {
  if (!started_) return;
  started_ = false;
  Result<ToolResult> r = RunTool({"/bin/sh", "-c", "echo quit | nvidia-cuda-mps-control"}, env_);
  if (!r.ok() || r->code != 0)
    LogWarning("the MPS control daemon did not quit cleanly; see " + dir_ + "/log");
  std::error_code ec;
  fs::remove_all(dir_ + "/pipe", ec);
}

std::vector<std::string> MpsDaemon::LogFiles() const {
  std::vector<std::string> files;
  std::error_code ec;
  if (dir_.empty()) return files;
  for (auto it = fs::directory_iterator(dir_ + "/log", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void MpsDaemon::RemoveDirectory() {
  if (dir_.empty() || started_) return;
  std::error_code ec;
  fs::remove_all(dir_, ec);
  dir_.clear();
}

bool DcgmProfilingPause::Pause() {
  if (paused_) return true;
  if (!FindExecutable("dcgmi")) return false;  // no DCGM: nothing holds the counters
  Result<ToolResult> r = RunTool({"dcgmi", "profile", "--pause"});
  if (!r.ok() || r->code != 0) {
    LogWarning("could not pause DCGM's profiling for the Nsight tools (dcgmi profile --pause: " +
               (r.ok() ? std::string(Trim(r->out)) : r.status().message()) +
               "); they may find the counters busy");
    return false;
  }
  paused_ = true;
  return true;
}

void DcgmProfilingPause::Resume() {
  if (!paused_) return;
  paused_ = false;
  Result<ToolResult> r = RunTool({"dcgmi", "profile", "--resume"});
  if (!r.ok() || r->code != 0) LogWarning("could not resume DCGM's profiling (run: dcgmi profile --resume)");
}

}  // namespace tb
