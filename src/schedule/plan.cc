#include "schedule/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"
#include "collect/listeners.h"
#include "collect/progress.h"
#include "platform/process.h"
#include "schedule/experiment_file.h"
#include "schedule/gpu_sharing.h"
#include "store/run_tags.h"
#include "store/store.h"

namespace tb {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::string SelfExecutable() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "trainbench" : exe.string();
}

bool IsMps(const std::string& collocation) { return collocation == "MPS" || StartsWith(collocation, "MPS:"); }

// radT's workload listeners: the Nsight tool wraps the run's command (nsys and ncu
// profile the NVTX range named "profile", the raw forms everything, ncu its first 100
// kernels); `report` is the report's path without extension.
std::optional<std::vector<std::string>> ProfilerCommand(const std::string& name, const std::string& report) {
  if (name == "nsys") {
    return std::vector<std::string>{"nsys",
                                    "profile",
                                    "--capture-range",
                                    "nvtx",
                                    "--nvtx-capture",
                                    "profile",
                                    "--cuda-memory-usage=true",
                                    "--capture-range-end",
                                    "repeat",
                                    "-o",
                                    report,
                                    "-f",
                                    "true",
                                    "-w",
                                    "true",
                                    "-x",
                                    "true",
                                    "-t",
                                    "cuda,nvtx"};
  }
  if (name == "nsysraw") {
    return std::vector<std::string>{"nsys", "profile",  "--cuda-memory-usage",
                                    "true", "-o",       report,
                                    "-f",   "true",     "-w",
                                    "true", "-x",       "true",
                                    "-t",   "cuda,nvtx"};
  }
  if (name == "ncu")
    return std::vector<std::string>{"ncu", "-o", report, "-f", "--nvtx", "--nvtx-include", "profile"};
  if (name == "ncuraw") return std::vector<std::string>{"ncu", "-o", report, "-f", "-c", "100"};
  // The application starts suspended until `ncu --mode=attach` profiles it from elsewhere.
  if (name == "ncuattach") return std::vector<std::string>{"ncu", "--mode=launch"};
  return std::nullopt;
}

namespace {

// A run's name: radT's "(workload letter) Name" where the row has a Name, else the script's
// file and the run's letter.
std::string RunName(const PlannedRun& r) {
  std::string repeat = r.repeat.empty() ? "" : " (repeat " + r.repeat + ")";
  if (!r.row.name.empty()) return "(" + r.row.workload + " " + r.letter + ") " + r.row.name + repeat;
  return fs::path(r.row.file).filename().string() + " " + r.letter + repeat;
}

}  // namespace

// The `trainbench run` command of a run. `devices` replaces the row's Devices (a MIG
// instance's UUID); `report` is where the profiler's report goes.
std::vector<std::string> RunArgv(const PlannedRun& r, const ScheduleOptions& o, const std::string& devices,
                                 const std::string& report) {
  const std::string& c = r.row.collocation;
  // The run starts in its script's folder (RunDirectory): a store named by a relative path
  // is named from here.
  std::string store = o.store.find("://") == std::string::npos && !o.store.empty()
                          ? fs::absolute(o.store).lexically_normal().string()
                          : o.store;
  std::vector<std::string> argv = {
      SelfExecutable(), "run",
      "--store",        store,
      "--experiment",   r.experiment.empty() ? r.row.experiment : r.experiment,
      "--workload",     r.row.workload,
      "--name",         RunName(r),
      "--run-id",       r.id,
      "--tag",          std::string(kLetterTag) + "=" + r.letter,
      "--tag",          std::string(kCollocationTag) + "=" + (c.empty() ? "-" : c)};
  if (!o.parent_run.empty())
    argv.insert(argv.end(), {"--tag", std::string(kParentRunTag) + "=" + o.parent_run});
  if (!r.attempt.empty()) argv.insert(argv.end(), {"--tag", std::string(kAttemptTag) + "=" + r.attempt});
  if (!r.repeat.empty()) argv.insert(argv.end(), {"--tag", std::string(kRepeatTag) + "=" + r.repeat});
  if (!r.listeners.empty()) argv.insert(argv.end(), {"--listeners", r.listeners});
  if (!devices.empty()) argv.insert(argv.end(), {"--devices", devices});
  std::string max_time = r.row.max_time.empty() ? o.max_time : r.row.max_time;
  if (!max_time.empty()) argv.insert(argv.end(), {"--max-time", max_time});
  if (o.max_epochs > 0) argv.insert(argv.end(), {"--max-epochs", std::to_string(o.max_epochs)});
  if (!r.row.progress.empty()) argv.insert(argv.end(), {"--progress", r.row.progress});
  if (r.profiler.empty()) {
    if (!r.python.empty()) argv.insert(argv.end(), {"--python", r.python});
    argv.push_back(r.script);
  } else {
    // The profiler runs the interpreter (the params are still the script's arguments).
    argv.push_back("--");
    std::vector<std::string> wrapper = ProfilerCommand(r.profiler, report).value();
    argv.insert(argv.end(), wrapper.begin(), wrapper.end());
    argv.push_back(r.python.empty() ? "python3" : r.python);
    argv.push_back(r.script);
  }
  argv.insert(argv.end(), r.params.begin(), r.params.end());
  return argv;
}

std::string RunDirectory(const PlannedRun& r) { return fs::path(r.script).parent_path().string(); }

std::string StatusWord(std::string_view cell) {
  std::vector<std::string_view> words = SplitWhitespace(cell);
  std::string word(words.empty() ? std::string_view() : words[0]);
  for (char& ch : word) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return word;
}

bool Done(const ExperimentRow& row, bool rerun) {
  std::string status = StatusWord(row.status);
  // Not done: empty, KILLED (interrupted), RUNNING (trainbench itself died).
  return status == kFinished || (status == kFailed && !rerun);
}

bool Runnable(const Workload& workload, bool rerun) {
  return std::any_of(workload.runs.begin(), workload.runs.end(),
                     [&](const PlannedRun& r) { return !Done(r.row, rerun); });
}

namespace {

// Checks a row's cells one column at a time and fills in its planned run. With --slurm the
// rows run elsewhere: what this machine has (GPUs, MIG, MPS) is checked by the job on its
// node, where it plans the rows again.
class RowPlanner {
 public:
  explicit RowPlanner(const ScheduleOptions& o)
      : o_(o), base_(fs::path(o.file).parent_path()), here_(!o.slurm) {}

  Result<PlannedRun> PlanRow(const ExperimentRow& row);

 private:
  Status Bad(const char* column, const std::string& what) const {
    return Status::InvalidArgument(
        Concat({o_.file, ":", std::to_string(row_->line), ": column ", column, ": ", what}));
  }
  Status CheckDevices(PlannedRun& run);
  Status CheckCollocation(PlannedRun& run);
  Status CheckListeners(PlannedRun& run);
  Status CheckEnv(PlannedRun& run);
  Result<std::string> ResolveFile(const std::string& file);

  const ScheduleOptions& o_;
  fs::path base_;
  bool here_;
  const ExperimentRow* row_ = nullptr;
  std::vector<std::string_view> device_list_;        // the row's Devices, one by one
  std::optional<Result<std::vector<SmiGpu>>> gpus_;  // asked of nvidia-smi once, when a row names devices
};

// Devices: indices, GPU or MIG UUIDs that nvidia-smi lists (within the Slurm job's GPUs).
Status RowPlanner::CheckDevices(PlannedRun& run) {
  const ExperimentRow& row = *row_;
  const char* job_gpus = here_ ? std::getenv("SLURM_JOB_GPUS") : nullptr;
  Result<std::string> devices = DevicesOnThisNode(row.devices, job_gpus != nullptr ? job_gpus : "");
  if (!devices.ok()) return Bad("Devices", std::string(devices.status().message()));
  run.devices = *devices;
  device_list_.clear();
  for (std::string_view d : Split(run.devices, '+')) {
    if (!Trim(d).empty()) device_list_.push_back(Trim(d));
  }
  for (std::string_view t : device_list_) {
    if (!ParseUint(t) && !StartsWith(t, "GPU-") && !StartsWith(t, "MIG-"))
      return Bad("Devices", "'" + row.devices + "' is not a GPU index, indices joined by + or GPU/MIG UUIDs");
    if (!here_) continue;
    if (!gpus_) gpus_ = ListGpus();
    if (!gpus_->ok()) {
      return Bad("Devices", "'" + row.devices + "': no GPU can be found: " + gpus_->status().message() +
                                "; use - for a run without a GPU");
    }
    bool found = false;
    for (const SmiGpu& g : gpus_->value()) {
      found |= std::to_string(g.index) == t || g.uuid == t;
      for (const SmiGpu::MigDevice& m : g.mig) found |= m.uuid == t;
    }
    if (!found) {
      return Bad("Devices", "GPU " + std::string(t) + " does not exist here (nvidia-smi lists " +
                                std::to_string(gpus_->value().size()) + "); `trainbench devices` lists them");
    }
  }
  return Status::Ok();
}

// Collocation: - (naive), MPS or MPS:PERCENT, or a MIG profile on one GPU in MIG mode.
Status RowPlanner::CheckCollocation(PlannedRun& run) {
  const std::string& c = row_->collocation;
  if (IsMps(c)) {
    uint64_t percent = c.size() > 4 ? ParseUint(std::string_view(c).substr(4)).value_or(0) : 0;
    if (c.size() > 3 && (c[3] != ':' || percent < 1 || percent > 100))
      return Bad("Collocation",
                 "'" + c + "': MPS takes an active-thread percentage from 1 to 100, as MPS:50");
    if (here_ && !FindExecutable("nvidia-cuda-mps-control"))
      return Bad("Collocation", "MPS needs nvidia-cuda-mps-control on PATH (it comes with NVIDIA's driver)");
    return Status::Ok();
  }
  if (!IsMigProfile(c)) {
    if (!c.empty() && c != "-")
      return Bad("Collocation", "'" + c + "' is not -, MPS, MPS:PERCENT or a MIG profile such as 3g.20gb");
    return Status::Ok();
  }
  if (device_list_.size() != 1 || StartsWith(device_list_[0], "MIG-"))
    return Bad("Devices",
               "a MIG collocation (" + c + ") needs one GPU to create its instance on, as 0 or a GPU UUID");
  if (!here_) {
    if (std::optional<uint64_t> index = ParseUint(device_list_[0]))
      run.mig_gpu = static_cast<unsigned>(*index);
    return Status::Ok();
  }
  const SmiGpu* gpu = nullptr;
  for (const SmiGpu& g : gpus_->value()) {
    if (std::to_string(g.index) == device_list_[0] || g.uuid == device_list_[0]) gpu = &g;
  }
  if (gpu == nullptr) return Bad("Devices", "GPU " + row_->devices + " is not listed by nvidia-smi");
  if (gpu->mig_mode != "Enabled") {
    return Bad("Collocation", c + " needs MIG mode on GPU " + std::to_string(gpu->index) + ", which is " +
                                  gpu->mig_mode + " (as root: nvidia-smi -i " + std::to_string(gpu->index) +
                                  " -mig 1, then reset the GPU)");
  }
  if (!MayConfigureMig()) {
    return Bad("Collocation",
               "creating MIG instances (" + c +
                   ") needs root or NVIDIA's MIG configuration capability "
                   "(/proc/driver/nvidia/capabilities/mig/config); run the experiment as root");
  }
  run.mig_gpu = gpu->index;
  return Status::Ok();
}

// File: as radT reads it, from the working directory; else from the experiment file's
// folder. Where both hold one, the one used is said.
Result<std::string> RowPlanner::ResolveFile(const std::string& file) {
  std::error_code ec;
  if (fs::path(file).is_absolute()) {
    if (!fs::exists(file, ec)) return Status::NotFound(file + " does not exist");
    return file;
  }
  fs::path here = fs::absolute(file, ec), beside = fs::absolute(base_ / file, ec);
  bool in_here = fs::exists(here, ec), in_beside = fs::exists(beside, ec);
  if (!in_here && !in_beside) {
    return Status::NotFound(file + " does not exist (looked for " + here.string() + ", as radT does, and " +
                            beside.string() + ", beside the experiment file)");
  }
  if (in_here && in_beside && !fs::equivalent(here, beside, ec)) {
    LogWarning(Concat({o_.file, ":", std::to_string(row_->line), ": File ", file, " is ", here.string(),
                       " (the working directory's, as radT reads it), not ", beside.string()}));
  }
  return (in_here ? here : beside).lexically_normal().string();
}

// Listeners: the run's own, and at most one workload listener (an Nsight tool); in any
// case, as radT lowercases them (SMI+Top).
Status RowPlanner::CheckListeners(PlannedRun& run) {
  for (std::string_view l : Split(row_->listeners, '+')) {
    std::string name = ToLower(Trim(l));
    if (name.empty()) continue;  // an empty cell: trainbench's default set
    if (!ProfilerCommand(name, "")) {
      if (FindListener(name) == nullptr && name != "macmon") {  // macmon: skipped by the run, said there
        return Bad("Listeners", "unknown listener '" + name + "'; available: " + AvailableListeners() +
                                    ", and one of nsys, nsysraw, ncu, ncuraw and ncuattach");
      }
      run.listeners += (run.listeners.empty() ? "" : "+") + name;
      continue;
    }
    if (!run.profiler.empty())
      return Bad("Listeners", "one of nsys, nsysraw, ncu, ncuraw and ncuattach at a time");
    std::string tool = ProfilerCommand(name, "")->front();
    if (!FindExecutable(tool)) {
      return Bad("Listeners", Concat({name, " needs ", tool, " (NVIDIA Nsight ",
                                      tool == "nsys" ? "Systems" : "Compute", ") on PATH"}));
    }
    run.profiler = name;
  }
  return Status::Ok();
}

// Env: KEY=VALUE items, and the directory of a venv or conda environment whose interpreter
// runs the File.
Status RowPlanner::CheckEnv(PlannedRun& run) {
  std::error_code ec;
  for (const std::string& item : SplitWords(row_->env)) {
    if (item.find('=') != std::string::npos && item[0] != '/' && item[0] != '.') {
      run.env.push_back(item);
      continue;
    }
    fs::path prefix = fs::absolute(fs::path(item).is_absolute() ? fs::path(item) : base_ / item, ec);
    if (!fs::exists(prefix / "bin" / "python", ec)) {
      return Bad("Env", "'" + item + "' is neither KEY=VALUE nor a venv or conda environment (no " +
                            (prefix / "bin" / "python").string() + ")");
    }
    run.python = (prefix / "bin" / "python").string();
    const char* path = std::getenv("PATH");
    run.env.push_back("PATH=" + (prefix / "bin").string() + (path != nullptr ? std::string(":") + path : ""));
    run.env.push_back("VIRTUAL_ENV=" + prefix.string());
  }
  const std::string& c = row_->collocation;
  if (IsMps(c) && c.size() > 4) run.env.push_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" + c.substr(4));
  return Status::Ok();
}

Result<PlannedRun> RowPlanner::PlanRow(const ExperimentRow& row) {
  row_ = &row;
  PlannedRun run;
  run.row = row;
  // An interpreter named by a relative path is named from here: the run starts elsewhere.
  run.python = o_.python.find('/') == std::string::npos ? o_.python : fs::absolute(o_.python).string();
  TB_RETURN_IF_ERROR(CheckDevices(run));
  TB_RETURN_IF_ERROR(CheckCollocation(run));
  if (!row.max_time.empty() && !ParseDurationMillis(row.max_time).ok())
    return Bad("MaxTime", "'" + row.max_time + "' is not a duration such as 90s, 30m or 2h");
  if (!row.progress.empty())
    if (Result<ProgressPattern> p = ProgressPattern::Parse(row.progress); !p.ok())
      return Bad("Progress", p.status().message());
  Result<std::string> script = ResolveFile(row.file);
  if (!script.ok()) return Bad("File", script.status().message());
  run.script = *script;
  if (Status name = CheckExperimentName(row.experiment); !name.ok()) return Bad("Experiment", name.message());
  TB_RETURN_IF_ERROR(CheckListeners(run));
  TB_RETURN_IF_ERROR(CheckEnv(run));
  run.params = ParamsToArguments(row.params);
  run.id = NewRunId();
  return run;
}

}  // namespace

// Checks every row before anything runs, and builds the plan.
Result<std::vector<Workload>> Plan(const ExperimentFile& file, const ScheduleOptions& o) {
  std::vector<Workload> plan;
  RowPlanner planner(o);
  for (const ExperimentRow& row : file.rows) {
    Result<PlannedRun> run = planner.PlanRow(row);
    if (!run.ok()) return run.status();
    // Rows of a workload belong together even when the file interleaves them.
    auto it = std::find_if(plan.begin(), plan.end(), [&](const Workload& w) {
      return w.experiment == row.experiment && w.workload == row.workload;
    });
    if (it == plan.end()) {
      plan.push_back({row.experiment, row.workload, {}});
      it = plan.end() - 1;
    }
    const std::string& c = row.collocation;
    if (IsMps(c)) {
      // One MPS control daemon serves the workload: its MPS rows share their devices.
      for (const PlannedRun& other : it->runs) {
        if (IsMps(other.row.collocation) && other.row.devices != row.devices) {
          return Status::InvalidArgument(Concat(
              {o.file, ":", std::to_string(row.line),
               std::string_view(": column Devices: the MPS runs of a workload share one daemon, so one "
                                "set of devices; line "),
               std::to_string(other.row.line), " has ", other.row.devices}));
        }
      }
    }
    run->letter = (row.devices == "-" ? "" : row.devices) + static_cast<char>('A' + it->runs.size() % 26) +
                  (c.empty() ? "-" : c);
    it->runs.push_back(std::move(*run));
  }
  return plan;
}

Result<std::string> DevicesOnThisNode(std::string_view cell, std::string_view job_gpus) {
  std::string_view devices = Trim(cell);
  if (devices == "-") devices = "";
  if (Trim(job_gpus).empty()) return std::string(devices);
  std::vector<std::string_view> allocated;
  for (std::string_view g : Split(job_gpus, ',')) {
    if (!Trim(g).empty()) allocated.push_back(Trim(g));
  }
  std::string out;
  for (std::string_view d : Split(devices, '+')) {
    std::string_view t = Trim(d);
    if (t.empty()) continue;
    std::string gpu(t);
    if (std::optional<uint64_t> k = ParseUint(t)) {
      if (*k >= allocated.size()) {
        return Status::InvalidArgument(Concat(
            {"GPU ", t, ": the Slurm job has ", std::to_string(allocated.size()),
             " GPU(s) (SLURM_JOB_GPUS=", job_gpus, "); a row's GPU k is the job's k-th, counted from 0"}));
      }
      gpu = std::string(allocated[*k]);
    }
    out += (out.empty() ? "" : "+") + gpu;
  }
  return out;
}

void PrintPlan(const std::vector<Workload>& plan, const ScheduleOptions& o) {
  for (const Workload& w : plan) {
    bool runs = Runnable(w, o.rerun);
    std::printf("workload %s/%s%s\n", w.experiment.c_str(), w.workload.c_str(),
                runs ? "" : ": skipped, every run is done");
    for (const PlannedRun& r : w.runs) {
      if (!runs) {
        std::printf("  %-10s line %zu  %s\n", r.letter.c_str(), r.row.line, r.row.status.c_str());
        continue;
      }
      std::string devices = r.mig_gpu ? "<MIG " + r.row.collocation + " instance created on GPU " +
                                            std::to_string(*r.mig_gpu) + ">"
                                      : r.devices;
      std::string report = "<artifacts of run " + r.id + ">/" + r.profiler;
      std::printf("  %-10s line %zu  runs: %s\n", r.letter.c_str(), r.row.line,
                  JoinShellWords(RunArgv(r, o, devices, report)).c_str());
      std::vector<std::string> env = r.env;
      if (IsMps(r.row.collocation)) env.emplace_back("CUDA_MPS_PIPE_DIRECTORY=<the workload's MPS daemon>");
      if (!env.empty()) std::printf("  %-10s environment: %s\n", "", JoinShellWords(env).c_str());
    }
  }
}

}  // namespace tb
