#include "schedule/scheduler.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <deque>
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
#include "platform/process.h"
#include "platform/start_gate.h"
#include "platform/supervisor.h"
#include "schedule/experiment_file.h"
#include "schedule/experiment_numbers.h"
#include "schedule/gpu_sharing.h"
#include "schedule/plan.h"
#include "schedule/repeats.h"
#include "schedule/slurm.h"
#include "schedule/sweep_file.h"
#include "schedule/write_back.h"
#include "store/store.h"

extern char** environ;

namespace tb {
namespace {

namespace fs = std::filesystem;

// Copies a child's output to ours, line by line, behind its letter, and into the
// workload's log (`log` may be null). Time is linear in the output and memory bounded: a
// line longer than kMaxLine is passed on in pieces of that size, each behind the letter
// (the run's own stdout.log keeps it whole). Our output is flushed once per read, not
// per line, so chatty scripts run as fast as under `trainbench run`.
void PrefixLines(int fd, const std::string& prefix, const std::string& plain_prefix, std::FILE* out,
                 std::FILE* log, std::mutex& mu) {
  constexpr size_t kMaxLine = 64 * 1024;
  std::string pending;        // the unfinished line
  std::string lines, logged;  // the complete lines of one read, prefixed
  auto add = [&](std::string_view line) {
    lines.append(prefix).append(line).push_back('\n');
    if (log != nullptr) logged.append(plain_prefix).append(line).push_back('\n');
  };
  auto pass_on = [&] {
    if (lines.empty()) return;
    std::lock_guard lock(mu);
    std::fwrite(lines.data(), 1, lines.size(), out);
    std::fflush(out);
    if (log != nullptr) std::fwrite(logged.data(), 1, logged.size(), log);
    lines.clear();
    logged.clear();
  };
  std::vector<char> buf(kMaxLine);
  while (true) {
    ssize_t n = read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::string_view chunk(buf.data(), static_cast<size_t>(n));
    while (!chunk.empty()) {
      size_t nl = chunk.find('\n');
      std::string_view piece = chunk.substr(0, nl);
      chunk.remove_prefix(nl == std::string_view::npos ? chunk.size() : nl + 1);
      if (nl != std::string_view::npos && pending.empty()) {
        add(piece);
        continue;
      }
      pending.append(piece);
      if (nl != std::string_view::npos || pending.size() >= kMaxLine) {
        add(pending);
        pending.clear();
      }
    }
    pass_on();
  }
  if (!pending.empty()) add(pending);
  pass_on();
  close(fd);
}

// Keeps the file `source` with run `run_id` as its artifact `name`: linked into the run's
// artifact directory (copied across file systems) and recorded. False when it could not be.
bool KeepFileWithRun(Store& store, const std::string& run_id, const std::string& name,
                     const std::string& source) {
  Result<std::string> dir = store.ArtifactDirectory(run_id);
  if (!dir.ok()) return false;
  std::string copy = *dir + "/" + name;
  std::error_code ec;
  if (copy != source) {
    fs::remove(copy, ec);
    fs::create_hard_link(source, copy, ec);
    if (ec) fs::copy_file(source, copy, fs::copy_options::overwrite_existing, ec);
  }
  if (ec) return false;
  return store.PutArtifact({run_id, name, static_cast<int64_t>(fs::file_size(copy, ec)), "", copy}).ok();
}

// Drops the page cache so that every workload reads its data cold; says once when it cannot.
void DropPageCache(bool& warned) {
  sync();
  std::ofstream drop("/proc/sys/vm/drop_caches");
  drop << "3\n";
  drop.flush();
  if ((!drop || !drop.is_open()) && !warned) {
    warned = true;
    LogWarning(
        "cannot drop the page cache (it needs root and a writable /proc/sys/vm/drop_caches); workloads run "
        "with whatever the cache holds");
  }
}

struct Outcome {
  std::string workload, letter, status, run_id;
  int64_t duration_ms = 0;
};

void PrintSummary(const std::vector<Outcome>& outcomes) {
  if (outcomes.empty()) return;
  std::printf("\n%-20s %-14s %-9s %-10s %s\n", "WORKLOAD", "RUN", "STATUS", "DURATION", "ID");
  for (const Outcome& x : outcomes) {
    std::printf("%-20s %-14s %-9s %-10s %s\n", x.workload.c_str(), x.letter.c_str(), x.status.c_str(),
                x.duration_ms > 0 ? FormatDuration(x.duration_ms).c_str() : "-",
                x.run_id.empty() ? "-" : x.run_id.c_str());
  }
}

// The GPU set up for one workload's sharing: an MPS daemon, MIG instances, DCGM profiling
// paused for Nsight, and the device cell each run is started with. Undone when it goes out
// of scope, however the workload ends.
struct GpuSetup {
  MpsDaemon mps;
  bool mps_started = false;  // when it did not, the error names its log: the log stays
  std::map<unsigned, MigInstances> migs;
  DcgmProfilingPause dcgm_pause;
  std::vector<std::string> devices;  // per run
};

// Starts the MPS daemon the workload's MPS runs share; its clients name their GPUs by
// UUID, as an index would count within the daemon's remapped set, not the machine's.
Status StartMps(const std::vector<const PlannedRun*>& runs, GpuSetup& gpu) {
  auto mps_run =
      std::find_if(runs.begin(), runs.end(), [](const PlannedRun* r) { return IsMps(r->row.collocation); });
  if (mps_run == runs.end()) return Status::Ok();
  std::string on = (*mps_run)->devices;
  Status started = gpu.mps.Start(on);
  gpu.mps_started = started.ok();
  if (!started.ok()) return started;
  std::printf("trainbench: MPS control daemon started for GPU %s (%s)\n", on.empty() ? "all" : on.c_str(),
              gpu.mps.env()[0].c_str());
  if (on.empty()) return Status::Ok();
  Result<std::string> uuids = DevicesAsUuids(on);
  if (!uuids.ok()) return uuids.status();
  std::string cell = *uuids;
  std::replace(cell.begin(), cell.end(), ',', '+');
  for (size_t i = 0; i < runs.size(); ++i) {
    if (IsMps(runs[i]->row.collocation)) gpu.devices[i] = cell;
  }
  return Status::Ok();
}

// Creates a MIG instance for each MIG run, all of one GPU's at once, and gives each run its
// instance's UUID.
Status CreateMigInstances(const std::vector<const PlannedRun*>& runs, GpuSetup& gpu) {
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i]->mig_gpu || gpu.migs.count(*runs[i]->mig_gpu) != 0) continue;
    unsigned index = *runs[i]->mig_gpu;
    std::vector<size_t> members;
    std::vector<std::string> profiles;
    for (size_t j = i; j < runs.size(); ++j) {
      if (runs[j]->mig_gpu == index) {
        members.push_back(j);
        profiles.push_back(runs[j]->row.collocation);
      }
    }
    Result<std::vector<std::string>> uuids = gpu.migs[index].Create(index, profiles);
    if (!uuids.ok()) return uuids.status();
    for (size_t k = 0; k < members.size(); ++k) {
      gpu.devices[members[k]] = (*uuids)[k];
      std::printf("trainbench: MIG %s instance %s created on GPU %u for run %s\n", profiles[k].c_str(),
                  (*uuids)[k].c_str(), index, runs[members[k]]->letter.c_str());
    }
  }
  return Status::Ok();
}

Status SetUpGpus(const std::vector<const PlannedRun*>& runs, GpuSetup& gpu) {
  gpu.devices.resize(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) gpu.devices[i] = runs[i]->devices;
  Status setup = StartMps(runs, gpu);
  if (setup.ok()) setup = CreateMigInstances(runs, gpu);
  if (setup.ok() &&
      std::any_of(runs.begin(), runs.end(), [](const PlannedRun* r) { return !r->profiler.empty(); }) &&
      gpu.dcgm_pause.Pause()) {
    std::printf("trainbench: DCGM profiling paused while Nsight profiles this workload\n");
  }
  return setup;
}

// Undoes SetUpGpus. The MPS daemon's logs go with the runs that used it ("mps-control.log",
// ...), and its directory in /tmp goes once they are kept.
void TearDownGpus(const std::vector<const PlannedRun*>& runs, Store& store, GpuSetup& gpu) {
  gpu.dcgm_pause.Resume();
  gpu.mps.Stop();
  for (auto& [index, instances] : gpu.migs) instances.Destroy();
  if (!gpu.mps_started) return;
  bool kept = true;
  for (const std::string& log_file : gpu.mps.LogFiles()) {
    for (const PlannedRun* r : runs) {
      if (IsMps(r->row.collocation) && store.FindRun(r->id).ok())
        kept &= KeepFileWithRun(store, r->id, "mps-" + fs::path(log_file).filename().string(), log_file);
    }
  }
  if (kept) gpu.mps.RemoveDirectory();
}

// The workload's runs in flight: `trainbench run` children and the threads passing their
// output on.
struct Children {
  std::vector<ChildProcess> processes;
  std::vector<std::thread> readers;
  std::mutex out_mu;
};

// Starts each run of the workload as a `trainbench run` child, its output behind its
// letter (coloured with --color) and into `log`. Stops at the first that cannot start.
Status StartRuns(const ScheduleOptions& o, const Workload& w, const std::vector<const PlannedRun*>& runs,
                 const GpuSetup& gpu, const StartGate& gate, Store& store, std::FILE* log,
                 Children& children) {
  static const char* const kColors[] = {"\033[36m", "\033[35m", "\033[33m",
                                        "\033[32m", "\033[34m", "\033[31m"};
  for (size_t i = 0; i < runs.size(); ++i) {
    const PlannedRun& r = *runs[i];
    Result<std::string> dir = store.ArtifactDirectory(r.id);
    // Named from here: the run starts in its script's folder.
    std::string report = fs::absolute((dir.ok() ? *dir : std::string(".")) + "/" + r.profiler + "_" +
                                      w.experiment + "_" + w.workload + "_" + r.letter)
                             .string();
    std::vector<std::string> extra = r.env;
    if (IsMps(r.row.collocation)) extra.insert(extra.end(), gpu.mps.env().begin(), gpu.mps.env().end());
    extra.push_back(gate.Environment());
    // The runs of the workload on the same GPUs split their idle energy (gpu_devices.h).
    extra.push_back("TRAINBENCH_GPU_RUNS=" +
                    std::to_string(std::count_if(runs.begin(), runs.end(), [&](const PlannedRun* peer) {
                      return peer->devices == r.devices && !peer->mig_gpu;
                    })));
    SpawnOptions spawn = SpawnOptions::Watched(RunArgv(r, o, gpu.devices[i], report), EnvironmentWith(extra));
    spawn.working_directory = RunDirectory(r);
    Result<ChildProcess> child = ChildProcess::Spawn(spawn);
    if (!child.ok()) {
      LogError(Concat({o.file, ":", std::to_string(r.row.line), ": ", r.letter,
                       " cannot start: ", child.status().message()}));
      return child.status();
    }
    std::string plain = "[" + r.letter + "] ";
    std::string prefix = o.color ? std::string(kColors[i % 6]) + "[" + r.letter + "]\033[0m " : plain;
    children.readers.emplace_back(PrefixLines, child->ReleaseStdout(), prefix, plain, stdout, log,
                                  std::ref(children.out_mu));
    children.readers.emplace_back(PrefixLines, child->ReleaseStderr(), prefix, plain, stderr, log,
                                  std::ref(children.out_mu));
    children.processes.push_back(std::move(child.value()));
  }
  return Status::Ok();
}

// Runs one workload's runs together and waits for them; true when interrupted. Each run's
// outcome is read from the store afterwards; the workload's interleaved output is kept
// with each run as workload.log.
bool RunWorkload(const ScheduleOptions& o, const Workload& w, const std::vector<const PlannedRun*>& runs,
                 Store& store, StopSignals& signals, std::string& workload_log) {
  GpuSetup gpu;
  Status setup = SetUpGpus(runs, gpu);
  if (!setup.ok())
    LogError("workload " + w.experiment + "/" + w.workload + " cannot run: " + setup.message());

  // The workload's log, in the first run's artifact directory, later linked into the others'.
  std::FILE* log = nullptr;
  if (Result<std::string> dir = store.ArtifactDirectory(runs[0]->id); dir.ok() && setup.ok()) {
    workload_log = *dir + "/workload.log";
    if (int fd = OpenForWriting(workload_log); fd >= 0) log = fdopen(fd, "w");
  }
  // The runs start together: each `trainbench run` sets itself up (store, listeners,
  // tracking) and starts its command once all are ready (platform/start_gate.h).
  StartGate gate;
  if (setup.ok()) setup = gate.Create();
  Children children;
  if (setup.ok()) (void)StartRuns(o, w, runs, gpu, gate, store, log, children);  // logged there
  gate.OpenWhenReady(children.processes.size());
  // Each `trainbench run` stops its run cleanly on a signal (a second Ctrl-C kills at once).
  Supervisor supervisor(signals, {.what = "the runs in flight",
                                  .max_time_ms = 0,  // each run keeps its own
                                  .escalate = false,
                                  .kill_grace_ms = 0,
                                  .on_signal = nullptr});
  std::vector<ChildProcess*> watched;
  watched.reserve(children.processes.size());
  for (ChildProcess& c : children.processes) watched.push_back(&c);
  supervisor.Watch(watched);
  for (ChildProcess& c : children.processes) (void)c.Wait();  // each run's outcome is read from the store
  for (std::thread& t : children.readers) t.join();
  if (log != nullptr) std::fclose(log);
  TearDownGpus(runs, store, gpu);
  return supervisor.stop_requested();
}

// The progress line before a workload: where the schedule is, and about how long is left.
void SayProgress(const Workload& w, size_t index, size_t total, int repeat, int repeats, size_t runs,
                 size_t todo, size_t done, int finished, int failed, int64_t started_ms) {
  int64_t elapsed = WallMillis() - started_ms;
  std::string left =
      done > 0 ? "; about " + FormatDuration(elapsed / done * static_cast<int64_t>(todo - done)) + " left"
               : "";
  std::string of_repeats =
      repeats > 1 ? Concat({", repeat ", std::to_string(repeat), " of ", std::to_string(repeats)}) : "";
  std::printf(
      "trainbench: workload %zu of %zu (%s/%s%s): %zu run%s; %d finished, %d failed so far; elapsed %s%s\n",
      index, total, w.experiment.c_str(), w.workload.c_str(), of_repeats.c_str(), runs, runs == 1 ? "" : "s",
      finished, failed, FormatDuration(elapsed).c_str(), left.c_str());
  std::fflush(stdout);
}

// What the options cannot do together, said before anything runs.
Status CheckOptions(const ScheduleOptions& o, bool sweep) {
  if (o.slurm && (sweep || !o.group.empty())) {
    return Status::InvalidArgument(
        "--slurm runs a CSV experiment file's workloads as jobs; a YAML sweep or a --group runs here, "
        "without "
        "--slurm (or write the sweep's combinations as CSV rows)");
  }
  if (o.slurm && o.repeat > 1) {
    return Status::InvalidArgument(
        "--repeat runs its rounds here, one workload after another; with --slurm, submit the file once per "
        "repeat instead (the report counts each finished attempt as a repeat)");
  }
  if (!o.max_time.empty() && !ParseDurationMillis(o.max_time).ok()) {
    return Status::InvalidArgument("--max-time " + o.max_time + " is not a duration such as 90s, 30m or 2h");
  }
  return Status::Ok();
}

}  // namespace

Result<int> RunSchedule(const ScheduleOptions& options) {
  ScheduleOptions o = options;
  Result<std::string> text = o.text.empty() ? ReadFile(o.file) : Result<std::string>(o.text);
  if (!text.ok()) return text.status();
  std::optional<SweepFile> sweep;
  if (o.text.empty() && IsSweepPath(o.file)) {
    Result<SweepFile> parsed = ParseSweep(*text, o.file);
    if (!parsed.ok()) return parsed.status();
    sweep = std::move(*parsed);
    if (o.group.empty()) o.group = sweep->parent.empty() ? sweep->name : sweep->parent;
  }
  Result<ExperimentFile> file =
      sweep ? Result<ExperimentFile>(sweep->rows) : ParseExperimentFile(*text, o.file);
  if (!file.ok()) return file.status();
  TB_RETURN_IF_ERROR(CheckOptions(o, sweep.has_value()));
  Result<std::vector<Workload>> plan = Plan(*file, o);
  if (!plan.ok()) return plan.status();

  size_t total = plan->size(), todo = 0;
  for (const Workload& w : *plan) {
    todo += o.repeat > 1 || Runnable(w, o.rerun);  // repeats: the store decides (schedule/repeats.h)
  }
  todo *= static_cast<size_t>(o.repeat);
  std::printf("trainbench: %s: %zu workload%s%s, %zu to run%s\n", o.file.c_str(), total,
              total == 1 ? "" : "s",
              o.repeat > 1 ? Concat({" x ", std::to_string(o.repeat), " repeats"}).c_str() : "", todo,
              o.dry_run ? " (dry run: nothing runs, the file is not changed)" : "");
  if (o.dry_run) {
    PrintPlan(*plan, o);
    return 0;
  }
  if (o.slurm) return RunOnSlurm(o, *file, *plan);
  Result<std::unique_ptr<Store>> store = Store::Open(o.store);
  if (!store.ok()) return store.status();
  TB_RETURN_IF_ERROR(ResolveExperimentIds(**store, *plan));
  Result<std::set<RepeatKey>> repeats_done = RepeatsDone(**store, *plan, o.repeat);
  if (!repeats_done.ok()) return repeats_done.status();
  if (!repeats_done->empty()) {
    std::printf("trainbench: %zu repeat(s) already in %s are not run again\n", repeats_done->size(),
                (*store)->Describe().c_str());
    todo -= std::min(todo, repeats_done->size());
  }
  if (!o.group.empty() && todo > 0) {
    // A sweep written back by a run into another store: its parent is not here, so a new one
    // is named for the sweep, not for the other store's id.
    if (sweep && o.group == sweep->parent && !(*store)->FindRun(sweep->parent).ok()) {
      std::printf("trainbench: the sweep's parent run %s is not in %s: a new parent run is made\n",
                  sweep->parent.c_str(), (*store)->Describe().c_str());
      o.group = sweep->name;
    }
    Result<std::string> parent = OpenParentRun(**store, o, plan->front().experiment);
    if (!parent.ok()) return parent.status();
    o.parent_run = *parent;
  }

  StopSignals signals;  // passed on to the runs in flight by each workload's supervisor
  bool interrupted = false, cache_warned = false;
  int failed = 0, finished = 0;
  int64_t started_ms = WallMillis();
  size_t done_workloads = 0;
  std::vector<Outcome> outcomes;
  std::vector<Unwritten> unwritten;  // statuses not yet in the file
  std::deque<Workload> attempts;     // each attempt's runs, which `unwritten` points into
  for (int k = 1; k <= o.repeat && !interrupted; ++k) {
    size_t index = 0;
    for (const Workload& planned : *plan) {
      ++index;
      if (o.repeat == 1 && !Runnable(planned, o.rerun)) continue;
      const PlannedRun& first = planned.runs.front();
      if (repeats_done->count(
              {first.experiment.empty() ? first.row.experiment : first.experiment, planned.workload, k}) != 0)
        continue;
      const Workload& w = attempts.emplace_back(AttemptOf(planned, k, o.repeat));
      std::vector<const PlannedRun*> runs;
      for (const PlannedRun& r : w.runs) runs.push_back(&r);
      SayProgress(w, index, total, k, o.repeat, runs.size(), todo, done_workloads, finished, failed,
                  started_ms);
      if (o.drop_caches) DropPageCache(cache_warned);
      std::string workload_log;
      interrupted |= RunWorkload(o, w, runs, **store, signals, workload_log);

      // Status and Run back into the file, re-read so that edits made meanwhile are kept.
      for (const PlannedRun* r : runs) {
        Result<RunRecord> rec = (*store)->FindRun(r->id);
        std::string status = rec.ok() ? rec->status : kFailed;
        if (status == kRunning) status = kKilled;
        (status == kFinished ? finished : failed) += 1;
        outcomes.push_back({w.experiment + "/" + w.workload, r->letter, status, rec.ok() ? r->id : "",
                            rec.ok() && rec->end_ms > 0 ? rec->end_ms - rec->start_ms : 0});
        if (rec.ok() && !workload_log.empty()) KeepFileWithRun(**store, r->id, "workload.log", workload_log);
        unwritten.push_back(
            {r, rec.ok() ? RepeatStatus(status, rec->name, k, o.repeat) : status, rec.ok() ? r->id : ""});
      }
      if (sweep) {
        WriteSweepBack(o.file, o.parent_run, unwritten);
      } else if (o.text.empty()) {
        WriteBack(o.file, unwritten);
      } else {
        unwritten.clear();  // a command line has no file to write to; the summary says it all
      }
      ++done_workloads;
      if (interrupted) break;
    }
  }
  PrintSummary(outcomes);
  if (!o.parent_run.empty())
    (void)(*store)->FinishRun(o.parent_run, WallMillis(), kFinished, 0, std::nullopt, "");
  return EndSchedule(o.file, unwritten.size(), finished, failed, started_ms, interrupted);
}

int EndSchedule(const std::string& file, size_t unwritten, int finished, int failed, int64_t started_ms,
                bool interrupted) {
  if (unwritten > 0) {
    LogError(
        Concat({"the statuses of ", std::to_string(unwritten), " run(s) are not in ", file, "; they are in ",
                file, ".trainbench-status (copy them in by hand, or fix the file and run the same command",
                " again: finished runs are found in the store by their Run id)"}));
  }
  std::printf("trainbench: %s: %d run%s finished, %d failed or killed, in %s%s\n", file.c_str(), finished,
              finished == 1 ? "" : "s", failed, FormatDuration(WallMillis() - started_ms).c_str(),
              interrupted ? "; interrupted: run the same command again to resume" : "");
  if (interrupted) return 130;
  return failed > 0 ? 1 : 0;
}

}  // namespace tb
