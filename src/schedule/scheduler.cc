#include "schedule/scheduler.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"
#include "platform/process.h"
#include "schedule/experiment_file.h"
#include "store/store.h"

extern char** environ;

namespace tb {
namespace {

namespace fs = std::filesystem;

struct PlannedRun {
  ExperimentRow row;
  std::string letter;  // devices, A/B/..., collocation: "0A-"
  std::string id;
  std::string script;  // the File, resolved
  std::vector<std::string> argv;
  std::vector<std::string> env;  // KEY=VALUE the run's environment gains (Env column)
};

struct Workload {
  std::string experiment, workload;
  std::vector<PlannedRun> runs;
};

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read experiment file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".trainbench-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) return Status::IoError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Status::FromErrno("cannot replace " + path, errno);
  return Status::Ok();
}

std::string SelfExecutable() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "trainbench" : exe.string();
}

bool IsMps(const std::string& collocation) { return collocation == "MPS" || StartsWith(collocation, "MPS:"); }

// An MPS control daemon for one workload, with its own pipe and log directories; shut
// down when the workload ends, however it ends.
class MpsDaemon {
 public:
  // Starts it for `devices` ("" for all GPUs).
  Status Start(const std::string& devices) {
    char dir[] = "/tmp/trainbench-mps-XXXXXX";
    if (mkdtemp(dir) == nullptr) return Status::FromErrno("cannot create a directory for MPS", errno);
    dir_ = dir;
    env_ = {"CUDA_MPS_PIPE_DIRECTORY=" + dir_ + "/pipe", "CUDA_MPS_LOG_DIRECTORY=" + dir_ + "/log"};
    fs::create_directories(dir_ + "/pipe");
    fs::create_directories(dir_ + "/log");
    std::vector<std::string> env = Environment();
    if (!devices.empty()) env.push_back("CUDA_VISIBLE_DEVICES=" + devices);
    Result<ExitInfo> exit = Command({"nvidia-cuda-mps-control", "-d"}, env);
    if (!exit.ok() || exit->ShellCode() != 0) {
      return Status::Unavailable(
          "the MPS control daemon did not start (nvidia-cuda-mps-control -d" +
          std::string(exit.ok() ? " exited " + std::to_string(exit->ShellCode()) : "") + "); see " + dir_ +
          "/log/control.log");
    }
    started_ = true;
    return Status::Ok();
  }
  // Stops it ("quit" on its control front end) and removes its pipe directory; the log stays.
  void Stop() {
    if (!started_) return;
    started_ = false;
    Result<ExitInfo> exit = Command({"/bin/sh", "-c", "echo quit | nvidia-cuda-mps-control"}, Environment());
    if (!exit.ok() || exit->ShellCode() != 0)
      LogWarning("the MPS control daemon did not quit cleanly; see " + dir_ + "/log");
    std::error_code ec;
    fs::remove_all(dir_ + "/pipe", ec);
  }
  ~MpsDaemon() { Stop(); }
  // What the runs' environment gains.
  const std::vector<std::string>& env() const { return env_; }

 private:
  std::vector<std::string> Environment() const {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    env.insert(env.end(), env_.begin(), env_.end());
    return env;
  }
  static Result<ExitInfo> Command(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    SpawnOptions spawn;
    spawn.argv = argv;
    spawn.environment = env;
    spawn.stdin_mode = Stdio::kDevNull;
    Result<ChildProcess> child = ChildProcess::Spawn(spawn);
    if (!child.ok()) return child.status();
    return child->Wait();
  }
  std::string dir_;
  std::vector<std::string> env_;
  bool started_ = false;
};

bool Runnable(const ExperimentRow& row, bool rerun) {
  if (row.status == "FINISHED") return false;
  if (row.status == "FAILED") return rerun;
  return true;  // empty, KILLED (interrupted), RUNNING (trainbench itself died)
}

// Checks every row before anything runs, and builds the plan.
Result<std::vector<Workload>> Plan(const ExperimentFile& file, const ScheduleOptions& o) {
  fs::path base = fs::path(o.file).parent_path();
  std::vector<Workload> plan;
  for (const ExperimentRow& row : file.rows) {
    auto bad = [&](const char* column, const std::string& what) {
      return Status::InvalidArgument(
          Concat({o.file, ":", std::to_string(row.line), ": column ", column, ": ", what}));
    };
    std::string c = row.collocation;
    if (IsMps(c)) {
      uint64_t percent = c.size() > 4 ? ParseUint(std::string_view(c).substr(4)).value_or(0) : 0;
      if (c.size() > 3 && (c[3] != ':' || percent < 1 || percent > 100)) {
        return bad("Collocation",
                   "'" + c + "': MPS takes an active-thread percentage from 1 to 100, as MPS:50");
      }
      if (!FindExecutable("nvidia-cuda-mps-control")) {
        return bad("Collocation",
                   "MPS needs nvidia-cuda-mps-control on PATH (it comes with NVIDIA's driver)");
      }
    } else if (!c.empty() && c != "-") {
      if (c.find('g') != std::string::npos) {
        return bad("Collocation",
                   "'" + c +
                       "' (MIG collocation) is not supported by this trainbench yet; use - to share "
                       "the device naively, or MPS");
      }
      return bad("Collocation", "'" + c + "' is not -, MPS, MPS:PERCENT or a MIG profile such as 3g.20gb");
    }
    fs::path script = fs::path(row.file).is_absolute() ? fs::path(row.file) : base / row.file;
    std::error_code ec;
    if (!fs::exists(script, ec)) {
      return bad("File", row.file + " does not exist (looked for " + script.string() + ")");
    }
    for (std::string_view d : Split(row.devices, '+')) {
      std::string_view t = Trim(d);
      if (!t.empty() && t != "-" && !ParseUint(t) && !StartsWith(t, "GPU-") && !StartsWith(t, "MIG-")) {
        return bad("Devices",
                   "'" + row.devices + "' is not a GPU index, indices joined by + or GPU/MIG UUIDs");
      }
    }
    if (plan.empty() || plan.back().experiment != row.experiment || plan.back().workload != row.workload) {
      // Rows of a workload belong together even when the file interleaves them.
      auto it = std::find_if(plan.begin(), plan.end(), [&](const Workload& w) {
        return w.experiment == row.experiment && w.workload == row.workload;
      });
      if (it == plan.end()) plan.push_back({row.experiment, row.workload, {}});
    }
    auto it = std::find_if(plan.begin(), plan.end(), [&](const Workload& w) {
      return w.experiment == row.experiment && w.workload == row.workload;
    });
    PlannedRun run;
    run.row = row;
    run.script = script.string();
    std::string devices = row.devices == "-" ? "" : row.devices;
    run.letter = devices + static_cast<char>('A' + it->runs.size() % 26) + (c.empty() ? "-" : c);
    run.id = NewRunId();
    run.argv = {SelfExecutable(), "run",
                "--store",        o.store,
                "--experiment",   row.experiment,
                "--workload",     row.workload,
                "--name",         fs::path(row.file).filename().string() + " " + run.letter,
                "--run-id",       run.id,
                "--tag",          "trainbench.letter=" + run.letter,
                "--tag",          "trainbench.collocation=" + (c.empty() ? "-" : c)};
    if (!row.listeners.empty()) run.argv.insert(run.argv.end(), {"--listeners", row.listeners});
    if (!devices.empty()) run.argv.insert(run.argv.end(), {"--devices", devices});
    if (!row.max_time.empty()) run.argv.insert(run.argv.end(), {"--max-time", row.max_time});
    std::string python = o.python;
    // Env: KEY=VALUE items, and the directory of a venv or conda environment whose
    // interpreter runs the File.
    for (const std::string& item : SplitWords(row.env)) {
      if (item.find('=') != std::string::npos && item[0] != '/' && item[0] != '.') {
        run.env.push_back(item);
        continue;
      }
      fs::path prefix = fs::path(item).is_absolute() ? fs::path(item) : base / item;
      if (!fs::exists(prefix / "bin" / "python", ec)) {
        return bad("Env", "'" + item + "' is neither KEY=VALUE nor a venv or conda environment (no " +
                              (prefix / "bin" / "python").string() + ")");
      }
      python = (prefix / "bin" / "python").string();
      const char* path = std::getenv("PATH");
      run.env.push_back("PATH=" + (prefix / "bin").string() +
                        (path != nullptr ? std::string(":") + path : ""));
      run.env.push_back("VIRTUAL_ENV=" + prefix.string());
    }
    if (!python.empty()) run.argv.insert(run.argv.end(), {"--python", python});
    run.argv.push_back(run.script);
    for (std::string& w : SplitWords(row.params)) run.argv.push_back(std::move(w));
    it->runs.push_back(std::move(run));
  }
  return plan;
}

// Copies a child's output to ours, line by line, behind its letter.
void PrefixLines(int fd, const std::string& prefix, std::FILE* out, std::mutex& mu) {
  std::string pending;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) {
    pending.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      std::lock_guard lock(mu);
      std::fprintf(out, "%s%s\n", prefix.c_str(), pending.substr(0, nl).c_str());
      std::fflush(out);
      pending.erase(0, nl + 1);
    }
  }
  if (!pending.empty()) {
    std::lock_guard lock(mu);
    std::fprintf(out, "%s%s\n", prefix.c_str(), pending.c_str());
  }
  close(fd);
}

}  // namespace

Result<int> RunSchedule(const ScheduleOptions& o) {
  Result<std::string> text = ReadFile(o.file);
  if (!text.ok()) return text.status();
  Result<ExperimentFile> file = ParseExperimentFile(*text, o.file);
  if (!file.ok()) return file.status();
  Result<std::vector<Workload>> plan = Plan(*file, o);
  if (!plan.ok()) return plan.status();

  size_t total = plan->size(), todo = 0;
  for (const Workload& w : *plan) {
    todo += std::any_of(w.runs.begin(), w.runs.end(),
                        [&](const PlannedRun& r) { return Runnable(r.row, o.rerun); });
  }
  std::printf("trainbench: %s: %zu workloads, %zu to run%s\n", o.file.c_str(), total, todo,
              o.dry_run ? " (dry run: nothing runs, the file is not changed)" : "");
  if (o.dry_run) {
    for (const Workload& w : *plan) {
      std::printf("workload %s/%s\n", w.experiment.c_str(), w.workload.c_str());
      for (const PlannedRun& r : w.runs) {
        bool runs = Runnable(r.row, o.rerun);
        std::printf("  %-8s line %zu  %s  %s\n", r.letter.c_str(), r.row.line,
                    runs ? "runs:" : ("skipped (" + r.row.status + ")").c_str(),
                    runs ? JoinShellWords(r.argv).c_str() : "");
      }
    }
    return 0;
  }
  Result<std::unique_ptr<Store>> store = Store::Open(o.store);
  if (!store.ok()) return store.status();

  sigset_t signals, previous;
  sigemptyset(&signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, &previous);
  struct Restore {
    sigset_t mask;
    ~Restore() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{previous};

  static const char* const kColors[] = {"\033[36m", "\033[35m", "\033[33m",
                                        "\033[32m", "\033[34m", "\033[31m"};
  std::mutex out_mu;
  bool interrupted = false;
  int failed = 0, finished = 0;
  int64_t started_ms = WallMillis();
  size_t index = 0, done_workloads = 0;
  for (const Workload& w : *plan) {
    ++index;
    std::vector<const PlannedRun*> runs;
    for (const PlannedRun& r : w.runs) {
      if (Runnable(r.row, o.rerun)) runs.push_back(&r);
    }
    if (runs.empty()) continue;
    int64_t elapsed = WallMillis() - started_ms;
    std::string left =
        done_workloads > 0
            ? "; about " +
                  FormatDuration(elapsed / done_workloads * static_cast<int64_t>(todo - done_workloads)) +
                  " left"
            : "";
    std::printf(
        "trainbench: workload %zu of %zu (%s/%s): %zu runs; %d finished, %d failed so far; elapsed %s%s\n",
        index, total, w.experiment.c_str(), w.workload.c_str(), runs.size(), finished, failed,
        FormatDuration(elapsed).c_str(), left.c_str());
    std::fflush(stdout);
    // Every run is set up (spawned) before any is waited for: they start together.
    MpsDaemon mps;
    const PlannedRun* mps_run = nullptr;
    for (const PlannedRun* r : runs) {
      if (IsMps(r->row.collocation)) mps_run = r;
    }
    if (mps_run != nullptr) {
      std::string devices = mps_run->row.devices == "-" ? "" : mps_run->row.devices;
      Status started = mps.Start(devices);
      if (!started.ok()) return started;
      std::printf("trainbench: MPS control daemon started for GPU %s (%s)\n",
                  devices.empty() ? "all" : devices.c_str(), mps.env()[0].c_str());
    }
    std::vector<ChildProcess> children;
    std::vector<std::thread> readers;
    for (size_t i = 0; i < runs.size(); ++i) {
      SpawnOptions spawn;
      spawn.argv = runs[i]->argv;
      if (IsMps(runs[i]->row.collocation) || !runs[i]->env.empty()) {
        std::vector<std::string> env;
        std::vector<std::string> extra = runs[i]->env;
        if (IsMps(runs[i]->row.collocation)) {
          extra.insert(extra.end(), mps.env().begin(), mps.env().end());
          const std::string& c = runs[i]->row.collocation;
          if (c.size() > 4) extra.push_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" + c.substr(4));
        }
        for (char** e = environ; *e != nullptr; ++e) {
          std::string_view kv = *e;
          bool replaced = std::any_of(extra.begin(), extra.end(), [&](const std::string& x) {
            return kv.substr(0, kv.find('=') + 1) == std::string_view(x).substr(0, x.find('=') + 1);
          });
          if (!replaced) env.emplace_back(kv);
        }
        env.insert(env.end(), extra.begin(), extra.end());
        spawn.environment = std::move(env);
      }
      spawn.new_process_group = true;
      spawn.stdin_mode = Stdio::kDevNull;
      spawn.stdout_mode = Stdio::kPipe;
      spawn.stderr_mode = Stdio::kPipe;
      Result<ChildProcess> child = ChildProcess::Spawn(spawn);
      if (!child.ok()) return child.status();
      std::string prefix = o.color ? std::string(kColors[i % 6]) + "[" + runs[i]->letter + "]\033[0m "
                                   : "[" + runs[i]->letter + "] ";
      readers.emplace_back(PrefixLines, child->ReleaseStdout(), prefix, stdout, std::ref(out_mu));
      readers.emplace_back(PrefixLines, child->ReleaseStderr(), prefix, stderr, std::ref(out_mu));
      children.push_back(std::move(child.value()));
    }
    auto all_exited = [&] {
      return std::all_of(children.begin(), children.end(),
                         [](const ChildProcess& c) { return c.HasExited(); });
    };
    while (!all_exited()) {
      timespec slice{0, 100000000};
      siginfo_t info{};
      int sig = sigtimedwait(&signals, &info, &slice);
      if (sig > 0) {
        // Each `trainbench run` stops its run cleanly (a second Ctrl-C kills at once).
        if (!interrupted) LogWarning("interrupted: stopping the runs in flight; the next start resumes here");
        interrupted = true;
        for (ChildProcess& c : children) {
          if (!c.HasExited()) kill(c.pid(), sig == SIGHUP ? SIGTERM : sig);
        }
      }
    }
    for (ChildProcess& c : children) c.Wait();
    for (std::thread& t : readers) t.join();
    mps.Stop();

    // Status and Run back into the file, re-read so that edits made meanwhile are kept.
    std::vector<CellUpdate> updates;
    for (const PlannedRun* r : runs) {
      Result<RunRecord> rec = (*store)->FindRun(r->id);
      std::string status = rec.ok() ? rec->status : kFailed;
      if (status == kRunning) status = kKilled;
      (status == kFinished ? finished : failed) += 1;
      updates.push_back({r->row.line, status, r->id});
    }
    Result<std::string> now = ReadFile(o.file);
    Result<ExperimentFile> current = now.ok() ? ParseExperimentFile(*now, o.file) : now.status();
    const ExperimentFile& target = current.ok() ? *current : *file;
    Status written = WriteFileAtomically(o.file, UpdateStatusAndRun(target, updates));
    if (!written.ok()) LogError("cannot write the statuses back: " + written.message());
    ++done_workloads;
    if (interrupted) break;
  }
  std::printf("trainbench: %s: %d runs finished, %d failed or killed, in %s%s\n", o.file.c_str(), finished,
              failed, FormatDuration(WallMillis() - started_ms).c_str(),
              interrupted ? "; interrupted: run the same command again to resume" : "");
  if (interrupted) return 130;
  return failed > 0 ? 1 : 0;
}

}  // namespace tb
