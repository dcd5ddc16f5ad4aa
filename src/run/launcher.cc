#include "run/launcher.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "analyze/phases.h"
#include "base/log.h"
#include "base/secret.h"
#include "base/strings.h"
#include "base/time.h"
#include "collect/gpu_devices.h"
#include "collect/gpu_tool_collectors.h"
#include "collect/jetson.h"
#include "collect/listeners.h"
#include "collect/progress.h"
#include "platform/nvml.h"
#include "platform/process.h"
#include "platform/start_gate.h"
#include "platform/supervisor.h"
#include "run/command.h"
#include "run/gpu_setup.h"
#include "run/manifest.h"
#include "run/output_pump.h"
#include "run/run_cost.h"
#include "run/sampler.h"
#include "store/run_tags.h"
#include "store/series_writer.h"
#include "track/tracking_api.h"

namespace tb {
namespace {

constexpr int64_t kOutputDrainMs = 2000;
// How long a part of a distributed run waits for part 0 to record the run.
constexpr int64_t kAttachTimeoutMs = 120000;
// Threads of the run's tracking server: requests it answers at once (its clients' kept-alive
// connections wait between requests without one), a quarter of a shared server's.
constexpr size_t kTrackingWorkers = 16;

std::string CurrentDirectory() {
  char cwd[4096];
  return getcwd(cwd, sizeof cwd) != nullptr ? cwd : "";
}

// Files the script wrote into the run's artifact directory itself (MLflow's clients upload
// through the tracking API instead), recorded as artifacts.
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
    WarnIfFailed(store.PutArtifact({run_id, name, ec ? 0 : size, "", it->path().string()}),
                 "record artifact " + name);
  }
}

// The run's record as it starts: RUNNING, its command, params from the script's arguments.
RunRecord NewRunRecord(const RunOptions& options, const GpuSetup& gpu) {
  RunRecord run;
  run.id = options.run_id.empty() ? NewRunId() : options.run_id;
  run.experiment = options.experiment;
  run.workload = options.workload;
  run.name = !options.run_name.empty()
                 ? options.run_name
                 : BaseName(options.script.empty() ? options.command[0] : options.script);
  run.command = JoinShellWords(options.command);
  run.working_directory = CurrentDirectory();
  run.host = HostName();
  run.supervisor_pid = getpid();
  run.start_ms = WallMillis();
  for (const std::string& l : gpu.listeners) run.listeners += (run.listeners.empty() ? "" : "+") + l;
  run.interval_ms = options.interval_ms;
  run.params =
      MergeParams(ParamsFromArguments(ScriptArguments(options.command, options.script)), options.params);
  run.tags = options.tags;
  run.devices = options.devices;
  if (options.part.distributed()) {
    run.supervisor_pid = 0;  // one trainbench per node: no single process watches the run
    run.tags.emplace_back(kNodesTag, std::to_string(options.part.count));
  }
  if (gpu.simulated) run.tags.emplace_back(kSimulatedGpuTag, "true");
  run.tags.insert(run.tags.end(), gpu.tags.begin(), gpu.tags.end());
  // A Jetson's power mode: what Jetson studies compare runs by.
  if (std::optional<std::pair<std::string, int>> mode = JetsonPowerMode()) {
    run.params.emplace_back("jetson.power_mode", mode->first);
    run.params.emplace_back("jetson.power_mode_id", std::to_string(mode->second));
  }
  // Inside a Slurm job: which job and step, on which node, so runs can be compared by node.
  for (const auto& [variable, tag] :
       {std::pair{"SLURM_JOB_ID", "slurm.job_id"}, std::pair{"SLURM_STEP_ID", "slurm.step_id"},
        std::pair{"SLURMD_NODENAME", "slurm.node"}}) {
    if (const char* value = std::getenv(variable); value != nullptr && *value != 0)
      run.tags.emplace_back(tag, value);
  }
  return run;
}

// How the run ended, in the store's words.
struct Ending {
  RunOutcome outcome;
  std::optional<int> exit_code, signal;
  std::string reason;
};

Ending EndingOf(const std::string& run_id, const Result<ExitInfo>& exit, const Supervisor& supervisor,
                const std::string& not_stored) {
  Ending e{{run_id, kFinished, 0}, std::nullopt, std::nullopt, ""};
  if (!exit.ok()) {
    e.outcome = {run_id, kFailed, 1};
    e.reason = exit.status().message();
  } else {
    e.outcome.exit_code = exit->ShellCode();
    if (exit->signaled) {
      e.signal = exit->signal;
      e.reason = "killed by " + SignalName(exit->signal);
    } else {
      e.exit_code = exit->exit_code;
      if (exit->exit_code != 0) e.reason = "exit code " + std::to_string(exit->exit_code);
    }
    if (e.outcome.exit_code != 0) e.outcome.status = supervisor.stop_requested() ? kKilled : kFailed;
    if (supervisor.stop_requested())
      e.reason = supervisor.stop_reason() + (e.reason.empty() ? "" : "; " + e.reason);
    // A time limit is a planned end (radT's -t): FINISHED, its reason said, trainbench's
    // exit 0, so that a resume of the experiment does not run it again.
    if (supervisor.time_limit_reached()) e.outcome = {run_id, kFinished, 0};
  }
  // Samples the store would not take (a full disk) make trainbench exit non-zero even
  // when the command succeeded.
  if (!not_stored.empty()) {
    e.reason += (e.reason.empty() ? "" : "; ") + not_stored;
    if (e.outcome.exit_code == 0) e.outcome.exit_code = 1;
  }
  return e;
}

// Its phases and steady state, kept with it (serve and report compute them again when
// asked; this copy is what the run looked like when it ended).
void StoreAnalysis(Store& store, RunRecord run, int64_t end_ms, const std::string& status) {
  run.end_ms = end_ms;
  run.status = status;
  (void)AnalyseAndKeep(store, run);
}

// A part of a distributed run ends: its end is recorded, and the last part to end
// finishes the run for all of them.
Result<RunOutcome> EndDistributedPart(Store& store, const RunRecord& run, const RunPart& part,
                                      const Ending& ending, int64_t end_ms) {
  PartEnding mine{ending.outcome.status, ending.exit_code, ending.signal, ending.reason, end_ms};
  Result<std::optional<PartEnding>> whole = EndPart(store, run.id, part, mine);
  std::string said = ending.outcome.status + (ending.reason.empty() ? "" : " (" + ending.reason + ")");
  if (!whole.ok()) {
    return Status::IoError(whole.status().message() + "; this node's part ended " + said +
                           ", the run stays RUNNING until a part can record its end");
  }
  if (!whole->has_value()) {
    LogInfo("run " + run.id + ": the part on " + part.node + " ended " + said +
            "; the run ends with the last part");
    return ending.outcome;
  }
  const PartEnding& all = **whole;
  TB_RETURN_IF_ERROR(store.FinishRun(run.id, all.end_ms, all.status, all.exit_code, all.signal, all.reason));
  StoreAnalysis(store, run, all.end_ms, all.status);
  LogInfo("run " + run.id + " " + all.status + " after " + FormatDuration(all.end_ms - run.start_ms) +
          " on " + std::to_string(part.count) + " nodes" +
          (all.reason.empty() ? "" : " (" + all.reason + ")") + "; details: trainbench show " +
          run.id.substr(0, 8));
  return ending.outcome;
}

double CpuSeconds(const rusage& usage) {
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// What trainbench cost beside the command; after the command, the tools and the threads ended.
RunCost CostOf(const Result<ExitInfo>& exit, const Sampler& sampler, const HttpServer& tracking_server) {
  RunCost cost;
  if (exit.ok()) cost.command = CpuSeconds(exit->usage);
  cost.trainbench = static_cast<double>(ProcessCpuNanos()) / 1e9;
  for (const ListenerHealth& h : sampler.Health()) cost.listeners += static_cast<double>(h.cpu_ns) / 1e9;
  cost.tracking_server = static_cast<double>(tracking_server.worker_cpu_ns()) / 1e9;
  rusage children{};
  if (getrusage(RUSAGE_CHILDREN, &children) == 0)
    cost.tools = std::max(0.0, CpuSeconds(children) - cost.command);
  return cost;
}

}  // namespace

Result<std::vector<std::string>> ParseListeners(const std::string& spec) {
  std::vector<std::string> names;
  bool skipped = false;
  for (std::string_view part : Split(spec, '+')) {
    std::string name = ToLower(Trim(part));  // in any case, as radT takes them
    if (name.empty()) continue;
    if (name == "macmon") {  // radT's Apple-silicon listener, as radT treats a missing DCGM
      LogWarning("listener macmon reads Apple silicon under macOS: skipped on Linux; the run goes on");
      skipped = true;
      continue;
    }
    if (FindListener(name) == nullptr) {
      return Status::InvalidArgument("unknown listener '" + name +
                                     "'; available listeners: " + AvailableListeners());
    }
    names.push_back(name);
  }
  // `none` with others is the others; nothing left after skipping is `none`, not the
  // default set an empty list means.
  if (names.size() > 1) std::erase(names, "none");
  if (names.empty() && skipped) names.push_back("none");
  return names;
}

namespace {

// The listeners' collectors, over the GPUs that SetUpGpuListeners chose.
Result<std::vector<std::unique_ptr<Collector>>> MakeCollectors(const ListenerContext& context,
                                                               GpuSetup& gpu) {
  std::vector<std::unique_ptr<Collector>> collectors;
  for (const std::string& name : gpu.listeners) {
    const ListenerInfo* listener = FindListener(name);
    if (listener == nullptr) return Status::InvalidArgument("unknown listener '" + name + "'");
    // nvml without the library was said in a notice; the run goes on without it.
    if (std::unique_ptr<Collector> c = listener->make(context)) collectors.push_back(std::move(c));
    if (!listener->tool.empty()) gpu.simulated |= IsSimulatedTool(std::string(listener->tool));
  }
  return collectors;
}

// The run as recorded before its command starts, and where its files go.
struct RecordedRun {
  RunRecord run;
  int64_t experiment_id = 0;
  std::string artifact_dir;
  std::string prefix;  // a part other than 0 of a distributed run keeps its files under node-NAME/
  std::string stdout_log, stderr_log;

  void Event(Store& store, const std::string& kind, const std::string& label) const {
    WarnIfFailed(store.AddEvent({run.id, WallMillis(), kind, label}), "record an event");
  }
};

// Records the run (part 0 of a distributed run; the others attach to it), its logs as
// artifacts and the listeners' notices as events.
Result<RecordedRun> RecordRun(Store& store, const RunOptions& options, const GpuSetup& gpu,
                              const std::vector<std::string>& notices) {
  const RunPart& part = options.part;
  RecordedRun r;
  r.run = NewRunRecord(options, gpu);
  if (part.distributed() && part.index > 0) {
    Result<RunRecord> stored = AwaitRun(store, r.run.id, kAttachTimeoutMs);
    if (!stored.ok()) return stored.status();
    r.run.experiment = stored->experiment;
    r.run.start_ms = stored->start_ms;
  }
  Result<int64_t> experiment = store.EnsureExperiment(r.run.experiment);
  if (!experiment.ok()) return experiment.status();
  r.experiment_id = *experiment;
  if (!part.distributed() || part.index == 0) TB_RETURN_IF_ERROR(store.CreateRun(r.run));
  Result<std::string> artifact_dir = store.ArtifactDirectory(r.run.id);
  if (!artifact_dir.ok()) return artifact_dir.status();
  r.artifact_dir = *artifact_dir;
  r.prefix = part.distributed() ? part.ArtifactPrefix() : "";
  if (!r.prefix.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(r.artifact_dir + "/" + r.prefix, ec);
  }
  r.stdout_log = r.artifact_dir + "/" + r.prefix + "stdout.log";
  r.stderr_log = r.artifact_dir + "/" + r.prefix + "stderr.log";
  TB_RETURN_IF_ERROR(store.PutArtifact({r.run.id, r.prefix + "stdout.log", 0, "", r.stdout_log}));
  TB_RETURN_IF_ERROR(store.PutArtifact({r.run.id, r.prefix + "stderr.log", 0, "", r.stderr_log}));
  if (part.distributed()) {
    WarnIfFailed(store.AddEvent(PartStartEvent(r.run.id, part, WallMillis())), "record the part's start");
    WarnIfFailed(store.SetTags(r.run.id, {{kNodeTagPrefix + std::to_string(part.index), part.node}}),
                 "tag the run with its node");
  }
  for (const std::string& notice : notices)
    r.Event(store, "listener", (part.distributed() ? part.node + ": " : "") + notice);
  return r;
}

// The tracking API for the script, MLflow's calls and the Python client landing in this
// run. Only the user's own processes reach the port, on loopback (another user on the
// machine can find the port; the connection itself says whose it is), with no secret to
// hand out, and through it only the script's own run (TrackingApi::Confine). Fills in the
// settings' URI once it listens.
void StartTracking(Store& store, const RecordedRun& r, SeriesWriter& writer, TrackingApi& api,
                   HttpServer& server, ChildSettings& settings) {
  api.AttachRun(r.run.id, &writer);
  api.Confine(r.run.id);
  HttpServerOptions server_options = TrackingApi::ServerOptions();
  server_options.workers = kTrackingWorkers;
  server_options.without_token = HttpServerOptions::Peers::kOwner;
  Status listening = server.Start(server_options);
  if (!listening.ok()) {
    LogWarning("the script's own metrics cannot be tracked: " + listening.message());
    r.Event(store, "tracking", listening.message());
    return;
  }
  settings.tracking_uri = server.Url();
}

// A command that could not start: the run FAILED with the shell's code (127 not found,
// 126 not runnable).
Result<RunOutcome> FailToStart(Store& store, const RecordedRun& r, const RunPart& part, const Status& why) {
  int code = why.code() == Status::Code::kNotFound ? 127 : 126;
  LogError(why.message());
  r.Event(store, "start", why.message());
  if (part.distributed()) {
    Ending failed{{r.run.id, kFailed, code}, code, std::nullopt, why.message()};
    return EndDistributedPart(store, r.run, part, failed, WallMillis());
  }
  TB_RETURN_IF_ERROR(store.FinishRun(r.run.id, WallMillis(), kFailed, code, std::nullopt, why.message()));
  return RunOutcome{r.run.id, kFailed, code};
}

// The environment manifest, collected beside the running command and kept as an artifact.
std::thread CollectManifestInBackground(Store& store, const RecordedRun& r, const RunOptions& options,
                                        const HostFiles& files, const std::vector<std::string>& environment) {
  return std::thread([&store, &r, &options, &files, environment] {
    ManifestInput input{options.command, options.python, options.script, r.run.working_directory,
                        environment};
    std::vector<std::string> timed_out;
    std::string manifest = CollectManifest(input, files, &timed_out);
    for (const std::string& tool : timed_out) {
      LogWarning("the environment manifest lacks " + tool);
      r.Event(store, "manifest", tool);
    }
    Status s = store.PutArtifact(
        {r.run.id, r.prefix + "manifest.json", static_cast<int64_t>(manifest.size()), manifest, ""});
    if (!s.ok()) LogWarning("cannot store the environment manifest: " + s.message());
  });
}

// A reader of the progress lines on each of the script's outputs, its points appended to
// the run's series; none without a pattern. The pump holds references: keep the vector.
std::vector<ProgressReader> ProgressReaders(const std::optional<ProgressPattern>& pattern,
                                            SeriesWriter& writer, OutputPump& pump) {
  std::vector<ProgressReader> readers;
  if (!pattern) return readers;
  readers.reserve(2);
  for (int stream = 0; stream < 2; ++stream) {
    readers.emplace_back(*pattern,
                         [&writer](std::string_view metric, int64_t time_ms, double value, int64_t step) {
                           writer.Append(metric, "", Point{.time_ms = time_ms, .value = value, .step = step});
                         });
    pump.Observe(stream, [reader = &readers.back()](std::string_view bytes, int64_t time_ms) {
      reader->Feed(bytes, time_ms);
    });
  }
  return readers;
}

// The pattern in the run's tags, and a warning when it matched no line.
void SayProgressRead(Store& store, const RecordedRun& r, const std::vector<ProgressReader>& readers) {
  int64_t lines = 0;
  for (const ProgressReader& reader : readers) lines += reader.lines_matched();
  WarnIfFailed(store.SetTags(r.run.id, {{std::string(kProgressTag), readers.front().pattern()}}),
               "record the progress pattern");
  if (lines > 0) return;
  std::string why = "the progress pattern matched no line the script printed; compare it with " + r.prefix +
                    "stdout.log (`trainbench show " + r.run.id.substr(0, 8) + "`)";
  LogWarning(why);
  r.Event(store, "progress", why);
}

// The run's end in the store: its logs' sizes, its status and what it recorded, analysed.
Result<RunOutcome> RecordEnd(Store& store, const RecordedRun& r, const RunPart& part, const Ending& ending,
                             int64_t end_ms, const OutputPump& pump) {
  const RunRecord& run = r.run;
  RecordArtifactFiles(store, run.id, r.artifact_dir);
  WarnIfFailed(store.PutArtifact({run.id, r.prefix + "stdout.log", pump.stdout_bytes(), "", r.stdout_log}),
               "record the size of stdout.log");
  WarnIfFailed(store.PutArtifact({run.id, r.prefix + "stderr.log", pump.stderr_bytes(), "", r.stderr_log}),
               "record the size of stderr.log");
  const std::string& status = ending.outcome.status;
  const std::string& reason = ending.reason;
  if (part.distributed()) return EndDistributedPart(store, run, part, ending, end_ms);
  if (Status finished = store.FinishRun(run.id, end_ms, status, ending.exit_code, ending.signal, reason);
      !finished.ok()) {
    return Status::IoError(finished.message() + "; the command ended " + status +
                           (reason.empty() ? "" : " (" + reason + ")") +
                           ". Free space where the store is, then `trainbench show` the run");
  }
  StoreAnalysis(store, run, end_ms, status);
  LogInfo("run " + run.id + " " + status + " after " + FormatDuration(end_ms - run.start_ms) +
          (reason.empty() ? "" : " (" + reason + ")") + "; details: trainbench show " + run.id.substr(0, 8));
  return ending.outcome;
}

}  // namespace

Result<RunOutcome> ExecuteRun(Store& store, const RunOptions& options) {
  if (options.command.empty()) return Status::InvalidArgument("no command to run");
  std::optional<ProgressPattern> progress;
  if (!options.progress.empty()) {
    Result<ProgressPattern> parsed = ProgressPattern::Parse(options.progress);
    if (!parsed.ok()) return parsed.status();
    progress = std::move(*parsed);
  }
  std::vector<std::string> notices;  // recorded as events once the run exists
  GpuSetup gpu = SetUpGpuListeners(options, notices);
  if (!gpu.status.ok()) return gpu.status;
  ListenerContext context{.files = HostFiles(options.proc_root),
                          .nvml = gpu.nvml,
                          .amdsmi = gpu.amdsmi,
                          .devices = gpu.selection,
                          .interval_ms = options.interval_ms};
  Result<std::vector<std::unique_ptr<Collector>>> collectors = MakeCollectors(context, gpu);
  if (!collectors.ok()) return collectors.status();
  const RunPart& part = options.part;
  Result<RecordedRun> recorded = RecordRun(store, options, gpu, notices);
  if (!recorded.ok()) return recorded.status();
  const RecordedRun& r = *recorded;
  const RunRecord& run = r.run;
  auto event = [&](const std::string& kind, const std::string& label) { r.Event(store, kind, label); };

  StopSignals signals;                 // taken by this thread; the threads started below inherit the mask
  SeriesWriter writer(store, run.id);  // declared first: the server stops before it goes
  if (part.distributed()) writer.AddSampleLabels(Labels{{"node", part.node}});
  TrackingApi tracking_api(store);
  HttpServer tracking_server({tracking_api.Handler()});
  ChildSettings settings{.run_id = run.id,
                         .store = store.Describe(),
                         .tracking_uri = "",  // set once the tracking server listens
                         .experiment = run.experiment,
                         .max_epochs = options.max_epochs,
                         .python_dir = PythonClientDirectory(),
                         .cuda_visible_devices = gpu.selection.cuda_visible_devices,
                         .node_rank = part.distributed() ? part.index : -1,
                         .node = part.node,
                         .listeners = gpu.listeners,
                         .devices = options.devices};
  if (options.tracking) StartTracking(store, r, writer, tracking_api, tracking_server, settings);

  WaitAtStartGate(options.start_gate);
  SpawnOptions spawn = SpawnOptions::Watched(options.command, ChildEnvironment(settings));
  Result<ChildProcess> child = ChildProcess::Spawn(spawn);
  if (!child.ok()) return FailToStart(store, r, part, child.status());
  LogInfo("run " + run.id + " started (experiment " + run.experiment + "): " + run.command);

  OutputPump pump(child->ReleaseStdout(), child->ReleaseStderr(), options.echo_output);
  std::vector<ProgressReader> readers = ProgressReaders(progress, writer, pump);
  Status pump_started = pump.Start(r.stdout_log, r.stderr_log);
  if (!pump_started.ok()) LogWarning(pump_started.message());
  Sampler sampler(std::move(*collectors), writer, options.interval_ms, event);
  sampler.WatchProcessTree(context.files, child->pid());
  sampler.Start();
  std::thread manifest_thread =
      CollectManifestInBackground(store, r, options, context.files, *spawn.environment);
  Supervisor supervisor(signals, {.what = "the run",
                                  .max_time_ms = options.max_time_ms,
                                  .escalate = true,
                                  .kill_grace_ms = options.kill_grace_ms,
                                  .on_signal = [&](const std::string& what) { event("signal", what); }});
  supervisor.Watch({&*child});
  // The command's end, taken as it ends: a listener still in a slow call (an NVML driver
  // taking seconds) delays what follows, never the run's end or its duration.
  int64_t end_ms = WallMillis();

  sampler.Stop();  // its last tick still sees the exited child's final CPU times
  Result<ExitInfo> exit = child->Wait();
  // Processes the run left behind in its group (they would hold GPU memory, for example).
  if (kill(-child->pid(), 0) == 0) {
    kill(-child->pid(), SIGTERM);
    event("cleanup", "terminated processes the run left behind");
  }
  pump.Finish(kOutputDrainMs);
  tracking_server.Stop();  // requests in flight are answered before the writer closes
  Status closed = writer.Close();
  // Samples the store would not take: said in the run's record, its events and the exit message.
  std::string not_stored;
  if (!closed.ok()) {
    not_stored =
        std::to_string(writer.pending_points()) + " samples could not be stored (" + closed.message() + ")";
    LogError(not_stored);
    event("store", not_stored);
  }
  manifest_thread.join();
  if (progress) SayProgressRead(store, r, readers);
  WarnIfFailed(store.SetTags(run.id, RunCostTags(CostOf(exit, sampler, tracking_server),
                                                 part.distributed() ? "node-" + part.node + "." : "")),
               "record what trainbench cost the run");
  return RecordEnd(store, r, part, EndingOf(run.id, exit, supervisor, not_stored), end_ms, pump);
}

}  // namespace tb
