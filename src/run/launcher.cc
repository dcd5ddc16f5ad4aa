#include "run/launcher.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "analyze/phases.h"
#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"
#include "collect/gpu_devices.h"
#include "collect/gpu_tool_collectors.h"
#include "collect/listeners.h"
#include "platform/nvml.h"
#include "platform/process.h"
#include "run/gpu_setup.h"
#include "run/manifest.h"
#include "run/output_pump.h"
#include "sample/sampler.h"
#include "store/series_writer.h"
#include "track/tracking_api.h"

extern char** environ;

namespace tb {
namespace {

constexpr int64_t kWaitSliceMs = 100;
constexpr int64_t kOutputDrainMs = 2000;

std::string Hostname() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::string CurrentDirectory() {
  char cwd[4096];
  return getcwd(cwd, sizeof cwd) != nullptr ? cwd : "";
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// What tells the script it runs under trainbench, and where to log.
struct ChildSettings {
  std::string run_id;
  std::string store;
  std::string tracking_uri;  // "" without the tracking API
  int64_t experiment_id = 0;
  int max_epochs = 0;
  std::string python_dir;  // prepended to PYTHONPATH
};

// The child's environment: ours, plus ChildSettings. MLflow's client reads
// MLFLOW_TRACKING_URI and MLFLOW_RUN_ID, so `mlflow.log_metric` logs into the run.
std::vector<std::string> ChildEnvironment(const ChildSettings& c) {
  static const char* const kReplaced[] = {
      "TRAINBENCH_RUN_ID=",     "TRAINBENCH_STORE=",       "TRAINBENCH_TRACKING_URI=",
      "TRAINBENCH_MAX_EPOCHS=", "MLFLOW_TRACKING_URI=",    "MLFLOW_RUN_ID=",
      "MLFLOW_EXPERIMENT_ID=",  "MLFLOW_EXPERIMENT_NAME=", "PYTHONPATH="};
  std::vector<std::string> env;
  bool has_unbuffered = false;
  std::string python_path;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv = *e;
    if (StartsWith(kv, "PYTHONPATH=")) python_path = kv.substr(11);
    if (std::any_of(std::begin(kReplaced), std::end(kReplaced),
                    [&](const char* p) { return StartsWith(kv, p); }))
      continue;
    has_unbuffered |= StartsWith(kv, "PYTHONUNBUFFERED=");
    env.emplace_back(kv);
  }
  env.push_back("TRAINBENCH_RUN_ID=" + c.run_id);
  env.push_back("TRAINBENCH_STORE=" + c.store);
  if (!c.tracking_uri.empty()) {
    env.push_back("TRAINBENCH_TRACKING_URI=" + c.tracking_uri);
    env.push_back("MLFLOW_TRACKING_URI=" + c.tracking_uri);
    env.push_back("MLFLOW_RUN_ID=" + c.run_id);
    env.push_back("MLFLOW_EXPERIMENT_ID=" + std::to_string(c.experiment_id));
  }
  if (c.max_epochs > 0) env.push_back("TRAINBENCH_MAX_EPOCHS=" + std::to_string(c.max_epochs));
  if (!c.python_dir.empty()) {
    python_path = python_path.empty() ? c.python_dir : c.python_dir + ":" + python_path;
  }
  if (!python_path.empty()) env.push_back("PYTHONPATH=" + python_path);
  // Python buffers stdout when it is a pipe; unbuffered, lines reach the terminal and the
  // log as they are printed.
  if (!has_unbuffered) env.push_back("PYTHONUNBUFFERED=1");
  return env;
}

// Files the script wrote into the run's artifact directory itself (MLflow's client copies
// artifacts to the file:// artifact URI it is given), recorded as artifacts.
void RecordArtifactFiles(Store& store, const std::string& run_id, const std::string& dir) {
  Result<std::vector<ArtifactRecord>> known = store.ListArtifacts(run_id);
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string name = std::filesystem::relative(it->path(), dir, ec).string();
    if (ec || name.ends_with(".partial")) continue;
    bool recorded = known.ok() && std::any_of(known->begin(), known->end(),
                                              [&](const ArtifactRecord& a) { return a.name == name; });
    if (recorded) continue;
    int64_t size = static_cast<int64_t>(it->file_size(ec));
    store.PutArtifact({run_id, name, ec ? 0 : size, "", it->path().string()});
  }
}

// Says this run is set up, then waits until its siblings are too (the scheduler closes the
// gate); both descriptors are closed after, so the command does not inherit them.
void WaitAtStartGate(int ready_fd, int gate_fd) {
  if (ready_fd >= 0) {
    while (write(ready_fd, "r", 1) < 0 && errno == EINTR) {
    }
    close(ready_fd);
  }
  if (gate_fd < 0) return;
  // The scheduler closes its end; a scheduler gone astray must not hold the run forever.
  pollfd p{gate_fd, POLLIN, 0};
  int64_t deadline = MonotonicNanos() + int64_t{120} * 1000000000;
  while (MonotonicNanos() < deadline && poll(&p, 1, 1000) == 0) {
  }
  close(gate_fd);
}

// Merges explicit params over those parsed from the command line.
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

}  // namespace

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

Result<std::vector<std::string>> ParseListeners(const std::string& spec) {
  std::vector<std::string> names;
  for (std::string_view part : Split(spec, '+')) {
    std::string name(Trim(part));
    if (name.empty()) continue;
    if (FindListener(name) == nullptr) {
      return Status::InvalidArgument("unknown listener '" + name +
                                     "'; available listeners: " + AvailableListeners());
    }
    names.push_back(name);
  }
  return names;
}

Result<RunOutcome> ExecuteRun(Store& store, const RunOptions& options) {
  if (options.command.empty()) return Status::InvalidArgument("no command to run");
  std::vector<std::unique_ptr<Collector>> collectors;
  std::vector<std::string> notices;  // recorded as events once the run exists
  GpuSetup gpu = SetUpGpuListeners(options, notices);
  if (!gpu.status.ok()) return gpu.status;
  ListenerContext context{.files = HostFiles(options.proc_root),
                          .nvml = gpu.nvml,
                          .devices = gpu.selection,
                          .interval_ms = options.interval_ms};
  for (const std::string& name : gpu.listeners) {
    const ListenerInfo* listener = FindListener(name);
    if (listener == nullptr) return Status::InvalidArgument("unknown listener '" + name + "'");
    // nvml without the library was said in a notice; the run goes on without it.
    if (std::unique_ptr<Collector> c = listener->make(context)) collectors.push_back(std::move(c));
    if (!listener->tool.empty()) gpu.simulated |= IsSimulatedTool(std::string(listener->tool));
  }

  RunRecord run;
  run.id = options.run_id.empty() ? NewRunId() : options.run_id;
  run.experiment = options.experiment;
  run.workload = options.workload;
  run.name = !options.run_name.empty()
                 ? options.run_name
                 : BaseName(options.script.empty() ? options.command[0] : options.script);
  run.command = JoinShellWords(options.command);
  run.working_directory = CurrentDirectory();
  run.host = Hostname();
  run.supervisor_pid = getpid();
  run.start_ms = WallMillis();
  for (const std::string& l : gpu.listeners) run.listeners += (run.listeners.empty() ? "" : "+") + l;
  run.interval_ms = options.interval_ms;
  // The script's arguments when there is a script (not the interpreter's or a profiler's).
  auto script = std::find(options.command.begin(), options.command.end(), options.script);
  std::vector<std::string> args(
      options.script.empty() || script == options.command.end() ? options.command.begin() + 1 : script + 1,
      options.command.end());
  run.params = MergeParams(ParamsFromArguments(args), options.params);
  run.tags = options.tags;
  run.devices = options.devices;
  if (gpu.simulated) run.tags.emplace_back(kSimulatedGpuTag, "true");

  Result<int64_t> experiment = store.EnsureExperiment(run.experiment);
  if (!experiment.ok()) return experiment.status();
  TB_RETURN_IF_ERROR(store.CreateRun(run));
  Result<std::string> artifact_dir = store.ArtifactDirectory(run.id);
  if (!artifact_dir.ok()) return artifact_dir.status();
  std::string stdout_log = *artifact_dir + "/stdout.log";
  std::string stderr_log = *artifact_dir + "/stderr.log";
  TB_RETURN_IF_ERROR(store.PutArtifact({run.id, "stdout.log", 0, "", stdout_log}));
  TB_RETURN_IF_ERROR(store.PutArtifact({run.id, "stderr.log", 0, "", stderr_log}));
  auto event = [&](const std::string& kind, const std::string& label) {
    store.AddEvent({run.id, WallMillis(), kind, label});
  };
  for (const std::string& notice : notices) event("listener", notice);

  // Signals are taken synchronously by this thread; threads started below inherit the mask.
  sigset_t signals, previous_mask;
  sigemptyset(&signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, &previous_mask);
  struct RestoreMask {
    sigset_t mask;
    ~RestoreMask() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{previous_mask};

  // The tracking API for the script: MLflow's calls and the Python client land in this run.
  SeriesWriter writer(store, run.id);  // declared first: the server stops before it goes
  TrackingApi tracking_api(store);
  HttpServer tracking_server({tracking_api.Handler()});
  ChildSettings settings{run.id,      store.Describe(),   "",
                         *experiment, options.max_epochs, PythonClientDirectory()};
  if (options.tracking) {
    tracking_api.AttachRun(run.id, &writer);
    Status listening = tracking_server.Start(TrackingApi::ServerOptions());
    if (listening.ok()) {
      settings.tracking_uri = tracking_server.Url();
    } else {
      LogWarning("the script's own metrics cannot be tracked: " + listening.message());
      event("tracking", listening.message());
    }
  }

  WaitAtStartGate(options.ready_fd, options.gate_fd);
  SpawnOptions spawn;
  spawn.argv = options.command;
  spawn.environment = ChildEnvironment(settings);
  if (!gpu.selection.cuda_visible_devices.empty()) {
    std::erase_if(*spawn.environment,
                  [](const std::string& kv) { return StartsWith(kv, "CUDA_VISIBLE_DEVICES="); });
    spawn.environment->push_back("CUDA_VISIBLE_DEVICES=" + gpu.selection.cuda_visible_devices);
  }
  // CUDA orders GPUs fastest first unless told otherwise; nvidia-smi and NVML by PCI bus.
  if (std::none_of(spawn.environment->begin(), spawn.environment->end(),
                   [](const std::string& kv) { return StartsWith(kv, "CUDA_DEVICE_ORDER="); })) {
    spawn.environment->push_back("CUDA_DEVICE_ORDER=PCI_BUS_ID");
  }
  spawn.new_process_group = true;
  spawn.parent_death_signal = SIGTERM;  // not outliving a SIGKILLed trainbench
  spawn.stdin_mode = Stdio::kDevNull;
  spawn.stdout_mode = Stdio::kPipe;
  spawn.stderr_mode = Stdio::kPipe;
  Result<ChildProcess> child = ChildProcess::Spawn(spawn);
  if (!child.ok()) {
    int code = child.status().code() == Status::Code::kNotFound ? 127 : 126;
    LogError(child.status().message());
    event("start", child.status().message());
    TB_RETURN_IF_ERROR(
        store.FinishRun(run.id, WallMillis(), kFailed, code, std::nullopt, child.status().message()));
    return RunOutcome{run.id, kFailed, code};
  }
  LogInfo("run " + run.id + " started (experiment " + run.experiment + "): " + run.command);

  OutputPump pump(child->ReleaseStdout(), child->ReleaseStderr(), options.echo_output);
  Status pump_started = pump.Start(stdout_log, stderr_log);
  if (!pump_started.ok()) LogWarning(pump_started.message());

  Sampler sampler(std::move(collectors), writer, options.interval_ms, event);
  sampler.WatchProcessTree(context.files, child->pid());
  sampler.Start();

  ManifestInput manifest_input{options.command, options.python, options.script, run.working_directory,
                               *spawn.environment};
  std::thread manifest_thread([&] {
    std::string manifest = CollectManifest(manifest_input, context.files);
    Status s =
        store.PutArtifact({run.id, "manifest.json", static_cast<int64_t>(manifest.size()), manifest, ""});
    if (!s.ok()) LogWarning("cannot store the environment manifest: " + s.message());
  });

  int64_t start_ns = MonotonicNanos();
  int64_t kill_at_ns = 0;  // when SIGKILL follows an earlier SIGTERM/SIGINT
  bool stop_requested = false;
  bool sigkill_sent = false;
  std::string stop_reason;
  auto request_stop = [&](int sig, const std::string& reason) {
    if (!stop_requested) {
      stop_requested = true;
      stop_reason = reason;
      kill_at_ns = MonotonicNanos() + options.kill_grace_ms * 1000000;
      LogWarning(reason + ": sending " + SignalName(sig) + " to the run; SIGKILL follows in " +
                 FormatDuration(options.kill_grace_ms));
      event("signal", reason + ": sent " + SignalName(sig));
      child->Signal(sig);
    } else if (!sigkill_sent && sig != SIGTERM) {
      // A second Ctrl-C means now.
      sigkill_sent = true;
      event("signal", "sent SIGKILL");
      child->Signal(SIGKILL);
    }
  };
  while (!child->HasExited()) {
    timespec slice{0, kWaitSliceMs * 1000000};
    siginfo_t info{};
    int sig = sigtimedwait(&signals, &info, &slice);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
      request_stop(sig, "interrupted by " + SignalName(sig));
    }
    int64_t now = MonotonicNanos();
    if (options.max_time_ms > 0 && !stop_requested && now - start_ns >= options.max_time_ms * 1000000) {
      request_stop(SIGTERM, "maximum run time " + FormatDuration(options.max_time_ms) + " reached");
    }
    if (stop_requested && !sigkill_sent && now >= kill_at_ns) {
      sigkill_sent = true;
      LogWarning("the run did not stop within the grace period: sending SIGKILL");
      event("signal", "grace period over: sent SIGKILL");
      child->Signal(SIGKILL);
    }
  }

  sampler.Stop();  // its last tick still sees the exited child's final CPU times
  Result<ExitInfo> exit = child->Wait();
  int64_t end_ms = WallMillis();
  // Processes the run left behind in its group (they would hold GPU memory, for example).
  if (kill(-child->pid(), 0) == 0) {
    kill(-child->pid(), SIGTERM);
    event("cleanup", "terminated processes the run left behind");
  }
  pump.Finish(kOutputDrainMs);
  tracking_server.Stop();  // requests in flight are answered before the writer closes
  Status closed = writer.Close();
  // Samples the store would not take (a full disk): said in the run's record, its events
  // and the exit message, and trainbench exits non-zero even when the command succeeded.
  std::string not_stored;
  if (!closed.ok()) {
    not_stored =
        std::to_string(writer.pending_points()) + " samples could not be stored (" + closed.message() + ")";
    LogError(not_stored);
    event("store", not_stored);
  }
  manifest_thread.join();

  RunOutcome outcome{run.id, kFinished, 0};
  std::optional<int> exit_code, signal;
  std::string reason;
  if (!exit.ok()) {
    outcome.status = kFailed;
    outcome.exit_code = 1;
    reason = exit.status().message();
  } else {
    outcome.exit_code = exit->ShellCode();
    if (exit->signaled) {
      signal = exit->signal;
      reason = "killed by " + SignalName(exit->signal);
    } else {
      exit_code = exit->exit_code;
      if (exit->exit_code != 0) reason = "exit code " + std::to_string(exit->exit_code);
    }
    if (outcome.exit_code != 0) outcome.status = stop_requested ? kKilled : kFailed;
    if (stop_requested) reason = stop_reason + (reason.empty() ? "" : "; " + reason);
  }
  if (!not_stored.empty()) {
    reason += (reason.empty() ? "" : "; ") + not_stored;
    if (outcome.exit_code == 0) outcome.exit_code = 1;
  }
  RecordArtifactFiles(store, run.id, *artifact_dir);
  store.PutArtifact({run.id, "stdout.log", pump.stdout_bytes(), "", stdout_log});
  store.PutArtifact({run.id, "stderr.log", pump.stderr_bytes(), "", stderr_log});
  if (Status finished = store.FinishRun(run.id, end_ms, outcome.status, exit_code, signal, reason);
      !finished.ok()) {
    return Status::IoError(finished.message() + "; the command ended " + outcome.status +
                           (reason.empty() ? "" : " (" + reason + ")") +
                           ". Free space where the store is, then `trainbench show` the run");
  }
  // Its phases and steady state, kept with it (serve and report compute them again when
  // asked; this copy is what the run looked like when it ended).
  run.end_ms = end_ms;
  run.status = outcome.status;
  if (Result<RunAnalysis> analysis = AnalyzeStoredRun(store, run); analysis.ok()) {
    std::string json = AnalysisJson(*analysis);
    store.PutArtifact({run.id, "phases.json", static_cast<int64_t>(json.size()), json, ""});
  }
  LogInfo("run " + run.id + " " + outcome.status + " after " + FormatDuration(end_ms - run.start_ms) +
          (reason.empty() ? "" : " (" + reason + ")") + "; details: trainbench show " + run.id.substr(0, 8));
  return outcome;
}

}  // namespace tb
