#include "schedule/scheduler.h"

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
#include "platform/process.h"
#include "schedule/experiment_file.h"
#include "schedule/gpu_sharing.h"
#include "store/store.h"

extern char** environ;

namespace tb {
namespace {

namespace fs = std::filesystem;

struct PlannedRun {
  ExperimentRow row;
  std::string letter;  // devices, A/B/..., collocation: "0A-"
  std::string id;
  std::string script;               // the File, resolved
  std::string python;               // its interpreter ("" : trainbench run's default)
  std::string listeners;            // the run's listeners (without the workload listener)
  std::string profiler;             // nsys, nsysraw, ncu, ncuraw or ""
  std::optional<unsigned> mig_gpu;  // a MIG collocation: the GPU its instance is made on
  std::vector<std::string> params;  // the script's arguments
  std::vector<std::string> env;     // KEY=VALUE the run's environment gains (Env column)
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

// Replaces `path` with `text` whole or not at all; a failed write (a full disk) leaves no
// temporary file behind.
Status WriteFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".trainbench-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return Status::IoError("cannot write " + tmp + " (is the disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int error = errno;
    std::remove(tmp.c_str());
    return Status::FromErrno("cannot replace " + path, error);
  }
  return Status::Ok();
}

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
  return std::nullopt;
}

// The `trainbench run` command of a run. `devices` replaces the row's Devices (a MIG
// instance's UUID); `report` is where the profiler's report goes.
std::vector<std::string> RunArgv(const PlannedRun& r, const ScheduleOptions& o, const std::string& devices,
                                 const std::string& report) {
  const std::string& c = r.row.collocation;
  std::vector<std::string> argv = {
      SelfExecutable(), "run",
      "--store",        o.store,
      "--experiment",   r.row.experiment,
      "--workload",     r.row.workload,
      "--name",         fs::path(r.row.file).filename().string() + " " + r.letter,
      "--run-id",       r.id,
      "--tag",          "trainbench.letter=" + r.letter,
      "--tag",          "trainbench.collocation=" + (c.empty() ? "-" : c)};
  if (!r.listeners.empty()) argv.insert(argv.end(), {"--listeners", r.listeners});
  if (!devices.empty()) argv.insert(argv.end(), {"--devices", devices});
  std::string max_time = r.row.max_time.empty() ? o.max_time : r.row.max_time;
  if (!max_time.empty()) argv.insert(argv.end(), {"--max-time", max_time});
  if (o.max_epochs > 0) argv.insert(argv.end(), {"--max-epochs", std::to_string(o.max_epochs)});
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

// A Status cell's outcome: its first word ("FINISHED w.py 0A-" is FINISHED, as radT writes them).
std::string StatusWord(std::string_view cell) {
  std::vector<std::string_view> words = SplitWhitespace(cell);
  std::string word(words.empty() ? std::string_view() : words[0]);
  for (char& ch : word) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return word;
}

bool Runnable(const ExperimentRow& row, bool rerun) {
  std::string status = StatusWord(row.status);
  if (status == kFinished) return false;
  if (status == kFailed) return rerun;
  return true;  // empty, KILLED (interrupted), RUNNING (trainbench itself died)
}

// Checks every row before anything runs, and builds the plan.
Result<std::vector<Workload>> Plan(const ExperimentFile& file, const ScheduleOptions& o) {
  fs::path base = fs::path(o.file).parent_path();
  std::vector<Workload> plan;
  std::optional<Result<std::vector<SmiGpu>>> gpus;  // asked of nvidia-smi once, when a row names devices
  for (const ExperimentRow& row : file.rows) {
    auto bad = [&](const char* column, const std::string& what) {
      return Status::InvalidArgument(
          Concat({o.file, ":", std::to_string(row.line), ": column ", column, ": ", what}));
    };
    PlannedRun run;
    run.row = row;
    std::string c = row.collocation;
    std::string devices = row.devices == "-" ? "" : row.devices;
    std::vector<std::string_view> device_list;
    for (std::string_view d : Split(devices, '+')) {
      if (!Trim(d).empty()) device_list.push_back(Trim(d));
    }
    // Devices: indices, GPU or MIG UUIDs that nvidia-smi lists.
    for (std::string_view t : device_list) {
      if (!ParseUint(t) && !StartsWith(t, "GPU-") && !StartsWith(t, "MIG-")) {
        return bad("Devices",
                   "'" + row.devices + "' is not a GPU index, indices joined by + or GPU/MIG UUIDs");
      }
      if (!gpus) gpus = ListGpus();
      if (!gpus->ok()) {
        return bad("Devices", "'" + row.devices + "': no GPU can be found: " + gpus->status().message() +
                                  "; use - for a run without a GPU");
      }
      bool found = false;
      for (const SmiGpu& g : gpus->value()) {
        found |= std::to_string(g.index) == t || g.uuid == t;
        for (const SmiGpu::MigDevice& m : g.mig) found |= m.uuid == t;
      }
      if (!found) {
        return bad("Devices", "GPU " + std::string(t) + " does not exist here (nvidia-smi lists " +
                                  std::to_string(gpus->value().size()) +
                                  "); `trainbench devices` lists them");
      }
    }
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
    } else if (IsMigProfile(c)) {
      if (device_list.size() != 1 || StartsWith(device_list[0], "MIG-")) {
        return bad("Devices", "a MIG collocation (" + c +
                                  ") needs one GPU to create its instance on, as 0 or a GPU UUID");
      }
      const SmiGpu* gpu = nullptr;
      for (const SmiGpu& g : gpus->value()) {
        if (std::to_string(g.index) == device_list[0] || g.uuid == device_list[0]) gpu = &g;
      }
      if (gpu == nullptr) return bad("Devices", "GPU " + row.devices + " is not listed by nvidia-smi");
      if (gpu->mig_mode != "Enabled") {
        return bad("Collocation", c + " needs MIG mode on GPU " + std::to_string(gpu->index) + ", which is " +
                                      gpu->mig_mode + " (as root: nvidia-smi -i " +
                                      std::to_string(gpu->index) + " -mig 1, then reset the GPU)");
      }
      if (!MayConfigureMig()) {
        return bad("Collocation",
                   "creating MIG instances (" + c +
                       ") needs root or NVIDIA's MIG configuration capability "
                       "(/proc/driver/nvidia/capabilities/mig/config); run the experiment as root");
      }
      run.mig_gpu = gpu->index;
    } else if (!c.empty() && c != "-") {
      return bad("Collocation", "'" + c + "' is not -, MPS, MPS:PERCENT or a MIG profile such as 3g.20gb");
    }
    if (!row.max_time.empty() && !ParseDurationMillis(row.max_time).ok()) {
      return bad("MaxTime", "'" + row.max_time + "' is not a duration such as 90s, 30m or 2h");
    }
    fs::path script = fs::path(row.file).is_absolute() ? fs::path(row.file) : base / row.file;
    std::error_code ec;
    if (!fs::exists(script, ec)) {
      return bad("File", row.file + " does not exist (looked for " + script.string() + ")");
    }
    if (Status name = CheckExperimentName(row.experiment); !name.ok())
      return bad("Experiment", name.message());
    // Listeners: the run's own, and at most one workload listener (an Nsight tool).
    for (std::string_view l : Split(row.listeners, '+')) {
      std::string name(Trim(l));
      if (!ProfilerCommand(name, "")) {
        if (FindListener(name) == nullptr) {
          return bad("Listeners", "unknown listener '" + name + "'; available: " + AvailableListeners() +
                                      ", and one of nsys, nsysraw, ncu and ncuraw");
        }
        run.listeners += (run.listeners.empty() ? "" : "+") + name;
        continue;
      }
      if (!run.profiler.empty()) return bad("Listeners", "one of nsys, nsysraw, ncu and ncuraw at a time");
      std::string tool = ProfilerCommand(name, "")->front();
      if (!FindExecutable(tool)) {
        return bad("Listeners", Concat({name, " needs ", tool, " (NVIDIA Nsight ",
                                        tool == "nsys" ? "Systems" : "Compute", ") on PATH"}));
      }
      run.profiler = name;
    }
    auto same_workload = [&](const Workload& w) {
      return w.experiment == row.experiment && w.workload == row.workload;
    };
    // Rows of a workload belong together even when the file interleaves them.
    auto it = std::find_if(plan.begin(), plan.end(), same_workload);
    if (it == plan.end()) {
      plan.push_back({row.experiment, row.workload, {}});
      it = plan.end() - 1;
    }
    if (IsMps(c)) {
      // One MPS control daemon serves the workload: its MPS rows share their devices.
      for (const PlannedRun& other : it->runs) {
        if (IsMps(other.row.collocation) && other.row.devices != row.devices) {
          return bad("Devices", "the MPS runs of a workload share one daemon, so one set of devices; line " +
                                    std::to_string(other.row.line) + " has " + other.row.devices);
        }
      }
    }
    run.script = script.string();
    run.letter = devices + static_cast<char>('A' + it->runs.size() % 26) + (c.empty() ? "-" : c);
    run.id = NewRunId();
    run.python = o.python;
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
      run.python = (prefix / "bin" / "python").string();
      const char* path = std::getenv("PATH");
      run.env.push_back("PATH=" + (prefix / "bin").string() +
                        (path != nullptr ? std::string(":") + path : ""));
      run.env.push_back("VIRTUAL_ENV=" + prefix.string());
    }
    if (IsMps(c) && c.size() > 4) run.env.push_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" + c.substr(4));
    run.params = ParamsToArguments(row.params);
    it->runs.push_back(std::move(run));
  }
  return plan;
}

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

// A run's outcome waiting to be written into the experiment file.
struct Unwritten {
  const PlannedRun* run;
  std::string status, run_id;
};

// Writes the outcomes in `pending` into the experiment file as it is now (the user may have
// edited it meanwhile: their lines are kept) and removes them from `pending`. When the
// file does not parse (the user is editing it) it is not touched: the outcomes stay
// pending for the next try, are listed in FILE.trainbench-status, and the user is told.
void WriteBack(const std::string& path, std::vector<Unwritten>& pending) {
  std::string side = path + ".trainbench-status";
  Result<std::string> now = ReadFile(path);
  Result<ExperimentFile> current = now.ok() ? ParseExperimentFile(*now, path) : now.status();
  if (!current.ok()) {
    std::string listing = "# trainbench: outcomes not yet written into " + path + "\nLine,Status,Run\n";
    for (const Unwritten& u : pending)
      listing += std::to_string(u.run->row.line) + "," + u.status + "," + u.run_id + "\n";
    Status kept = WriteFileAtomically(side, listing);
    LogWarning(
        Concat({path, " cannot be read back (", current.status().message(),
                "); it is left as it is. The outcomes so far are in ", kept.ok() ? side : "this output only",
                " and are written into the file after the next workload once it reads again"}));
    return;
  }
  std::vector<CellUpdate> updates;
  std::set<size_t> taken;
  for (const Unwritten& u : pending) {
    std::optional<size_t> line = MatchRow(*current, u.run->row, taken);
    if (!line) {
      LogWarning(Concat({path, ":", std::to_string(u.run->row.line),
                         ": the row was changed or removed while it ran; ", u.run->letter, " ended ",
                         u.status, u.run_id.empty() ? "" : " (run " + u.run_id + ")", ", not written back"}));
      continue;
    }
    taken.insert(*line);
    updates.push_back({*line, u.status, u.run_id});
  }
  Status written = WriteFileAtomically(path, UpdateStatusAndRun(*current, updates));
  if (!written.ok()) {
    LogError("cannot write the statuses back: " + written.message() +
             "; tried again after the next workload");
    return;
  }
  pending.clear();
  std::error_code ec;
  fs::remove(side, ec);
}

// Waits until `runs` children said they are set up (or ended, or a minute passed), then
// opens the gate; closes all four descriptors.
void OpenStartGate(int ready[2], int gate[2], size_t runs) {
  for (int fd : {ready[1], gate[0]}) {
    if (fd >= 0) close(fd);
  }
  size_t said = 0;
  int64_t deadline = MonotonicNanos() + int64_t{60} * 1000000000;
  while (ready[0] >= 0 && said < runs && MonotonicNanos() < deadline) {
    pollfd p{ready[0], POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0) continue;
    char buf[64];
    ssize_t n = read(ready[0], buf, sizeof buf);
    if (n == 0) break;  // every child said so or ended
    if (n > 0) said += static_cast<size_t>(n);
  }
  for (int fd : {ready[0], gate[1]}) {
    if (fd >= 0) close(fd);
  }
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

void PrintPlan(const std::vector<Workload>& plan, const ScheduleOptions& o) {
  for (const Workload& w : plan) {
    std::printf("workload %s/%s\n", w.experiment.c_str(), w.workload.c_str());
    for (const PlannedRun& r : w.runs) {
      if (!Runnable(r.row, o.rerun)) {
        std::printf("  %-10s line %zu  skipped (%s)\n", r.letter.c_str(), r.row.line, r.row.status.c_str());
        continue;
      }
      std::string devices = r.mig_gpu ? "<MIG " + r.row.collocation + " instance created on GPU " +
                                            std::to_string(*r.mig_gpu) + ">"
                                      : (r.row.devices == "-" ? "" : r.row.devices);
      std::string report = "<artifacts of run " + r.id + ">/" + r.profiler;
      std::printf("  %-10s line %zu  runs: %s\n", r.letter.c_str(), r.row.line,
                  JoinShellWords(RunArgv(r, o, devices, report)).c_str());
      std::vector<std::string> env = r.env;
      if (IsMps(r.row.collocation)) env.emplace_back("CUDA_MPS_PIPE_DIRECTORY=<the workload's MPS daemon>");
      if (!env.empty()) std::printf("  %-10s environment: %s\n", "", JoinShellWords(env).c_str());
    }
  }
}

}  // namespace

Result<int> RunSchedule(const ScheduleOptions& o) {
  Result<std::string> text = ReadFile(o.file);
  if (!text.ok()) return text.status();
  Result<ExperimentFile> file = ParseExperimentFile(*text, o.file);
  if (!file.ok()) return file.status();
  if (!o.max_time.empty() && !ParseDurationMillis(o.max_time).ok()) {
    return Status::InvalidArgument("--max-time " + o.max_time + " is not a duration such as 90s, 30m or 2h");
  }
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
    PrintPlan(*plan, o);
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
  bool interrupted = false, cache_warned = false;
  int failed = 0, finished = 0;
  int64_t started_ms = WallMillis();
  size_t index = 0, done_workloads = 0;
  std::vector<Outcome> outcomes;
  std::vector<Unwritten> unwritten;  // statuses not yet in the file
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
    if (o.drop_caches) DropPageCache(cache_warned);

    // The GPU set up for sharing: an MPS daemon, MIG instances, DCGM profiling paused for
    // Nsight. Undone when this scope ends, however the workload ends.
    MpsDaemon mps;
    std::map<unsigned, MigInstances> migs;
    DcgmProfilingPause dcgm_pause;
    std::vector<std::string> devices(runs.size());
    Status setup = Status::Ok();
    for (size_t i = 0; i < runs.size(); ++i)
      devices[i] = runs[i]->row.devices == "-" ? "" : runs[i]->row.devices;
    auto mps_run =
        std::find_if(runs.begin(), runs.end(), [](const PlannedRun* r) { return IsMps(r->row.collocation); });
    if (mps_run != runs.end()) {
      std::string on = (*mps_run)->row.devices == "-" ? "" : (*mps_run)->row.devices;
      setup = mps.Start(on);
      if (setup.ok())
        std::printf("trainbench: MPS control daemon started for GPU %s (%s)\n",
                    on.empty() ? "all" : on.c_str(), mps.env()[0].c_str());
      // Its clients name their GPUs by UUID: an index would count within the daemon's
      // remapped set, not the machine's.
      if (setup.ok() && !on.empty()) {
        Result<std::string> uuids = DevicesAsUuids(on);
        if (uuids.ok()) {
          std::string cell = *uuids;
          std::replace(cell.begin(), cell.end(), ',', '+');
          for (size_t i = 0; i < runs.size(); ++i) {
            if (IsMps(runs[i]->row.collocation)) devices[i] = cell;
          }
        } else {
          setup = uuids.status();
        }
      }
    }
    for (size_t i = 0; i < runs.size() && setup.ok(); ++i) {
      if (!runs[i]->mig_gpu || migs.count(*runs[i]->mig_gpu) != 0) continue;
      unsigned gpu = *runs[i]->mig_gpu;
      std::vector<size_t> members;
      std::vector<std::string> profiles;
      for (size_t j = i; j < runs.size(); ++j) {
        if (runs[j]->mig_gpu == gpu) {
          members.push_back(j);
          profiles.push_back(runs[j]->row.collocation);
        }
      }
      Result<std::vector<std::string>> uuids = migs[gpu].Create(gpu, profiles);
      if (!uuids.ok()) {
        setup = uuids.status();
        break;
      }
      for (size_t k = 0; k < members.size(); ++k) {
        devices[members[k]] = (*uuids)[k];
        std::printf("trainbench: MIG %s instance %s created on GPU %u for run %s\n", profiles[k].c_str(),
                    (*uuids)[k].c_str(), gpu, runs[members[k]]->letter.c_str());
      }
    }
    if (setup.ok() &&
        std::any_of(runs.begin(), runs.end(), [](const PlannedRun* r) { return !r->profiler.empty(); }) &&
        dcgm_pause.Pause()) {
      std::printf("trainbench: DCGM profiling paused while Nsight profiles this workload\n");
    }
    if (!setup.ok())
      LogError("workload " + w.experiment + "/" + w.workload + " cannot run: " + setup.message());

    // The workload's log, in the first run's artifact directory, later linked into the others'.
    std::string workload_log;
    std::FILE* log = nullptr;
    if (Result<std::string> dir = (*store)->ArtifactDirectory(runs[0]->id); dir.ok() && setup.ok()) {
      workload_log = *dir + "/workload.log";
      log = std::fopen(workload_log.c_str(), "w");
    }
    // The runs start together: each `trainbench run` sets itself up (store, listeners,
    // tracking), says so on `ready`, and starts its command when `gate` closes, once all are
    // ready. The children inherit ready's write end and gate's read end only.
    int ready[2] = {-1, -1}, gate[2] = {-1, -1};
    if (setup.ok() && (pipe2(ready, O_CLOEXEC) != 0 || pipe2(gate, O_CLOEXEC) != 0)) {
      setup = Status::FromErrno("cannot create the start gate", errno);
    }
    if (setup.ok()) {
      fcntl(ready[1], F_SETFD, 0);
      fcntl(gate[0], F_SETFD, 0);
    }
    std::string gate_env =
        "TRAINBENCH_START_GATE=" + std::to_string(ready[1]) + "," + std::to_string(gate[0]);
    std::vector<ChildProcess> children;
    std::vector<std::thread> readers;
    for (size_t i = 0; i < runs.size() && setup.ok(); ++i) {
      const PlannedRun& r = *runs[i];
      Result<std::string> dir = (*store)->ArtifactDirectory(r.id);
      std::string report = (dir.ok() ? *dir : std::string(".")) + "/" + r.profiler + "_" + w.experiment +
                           "_" + w.workload + "_" + r.letter;
      SpawnOptions spawn;
      spawn.argv = RunArgv(r, o, devices[i], report);
      std::vector<std::string> extra = r.env;
      if (IsMps(r.row.collocation)) extra.insert(extra.end(), mps.env().begin(), mps.env().end());
      extra.push_back(gate_env);
      spawn.environment = EnvironmentWith(extra);
      spawn.new_process_group = true;
      spawn.parent_death_signal = SIGTERM;  // not outliving a SIGKILLed trainbench
      spawn.stdin_mode = Stdio::kDevNull;
      spawn.stdout_mode = Stdio::kPipe;
      spawn.stderr_mode = Stdio::kPipe;
      Result<ChildProcess> child = ChildProcess::Spawn(spawn);
      if (!child.ok()) {
        setup = child.status();
        LogError(Concat(
            {o.file, ":", std::to_string(r.row.line), ": ", r.letter, " cannot start: ", setup.message()}));
        break;
      }
      std::string plain = "[" + r.letter + "] ";
      std::string prefix = o.color ? std::string(kColors[i % 6]) + "[" + r.letter + "]\033[0m " : plain;
      readers.emplace_back(PrefixLines, child->ReleaseStdout(), prefix, plain, stdout, log, std::ref(out_mu));
      readers.emplace_back(PrefixLines, child->ReleaseStderr(), prefix, plain, stderr, log, std::ref(out_mu));
      children.push_back(std::move(child.value()));
    }
    OpenStartGate(ready, gate, children.size());
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
    if (log != nullptr) std::fclose(log);
    dcgm_pause.Resume();
    mps.Stop();
    for (auto& [gpu, instances] : migs) instances.Destroy();

    // Status and Run back into the file, re-read so that edits made meanwhile are kept.
    for (const PlannedRun* r : runs) {
      Result<RunRecord> rec = (*store)->FindRun(r->id);
      std::string status = rec.ok() ? rec->status : kFailed;
      if (status == kRunning) status = kKilled;
      (status == kFinished ? finished : failed) += 1;
      outcomes.push_back({w.experiment + "/" + w.workload, r->letter, status, rec.ok() ? r->id : "",
                          rec.ok() && rec->end_ms > 0 ? rec->end_ms - rec->start_ms : 0});
      if (rec.ok() && !workload_log.empty()) {
        Result<std::string> dir = (*store)->ArtifactDirectory(r->id);
        std::error_code ec;
        std::string copy = dir.ok() ? *dir + "/workload.log" : "";
        if (!copy.empty() && copy != workload_log) {
          fs::create_hard_link(workload_log, copy, ec);
          if (ec) fs::copy_file(workload_log, copy, fs::copy_options::overwrite_existing, ec);
        }
        if (!copy.empty() && !ec)
          (*store)->PutArtifact(
              {r->id, "workload.log", static_cast<int64_t>(fs::file_size(copy, ec)), "", copy});
      }
      unwritten.push_back({r, rec.ok() ? status + " " + rec->name : status, rec.ok() ? r->id : ""});
    }
    WriteBack(o.file, unwritten);
    ++done_workloads;
    if (interrupted) break;
  }
  if (!unwritten.empty()) {
    LogError(Concat({"the statuses of ", std::to_string(unwritten.size()), " run(s) are not in ", o.file,
                     "; they are in ", o.file,
                     ".trainbench-status (copy them in by hand, or fix the file and run the same command",
                     " again: finished runs are found in the store by their Run id)"}));
  }
  PrintSummary(outcomes);
  std::printf("trainbench: %s: %d runs finished, %d failed or killed, in %s%s\n", o.file.c_str(), finished,
              failed, FormatDuration(WallMillis() - started_ms).c_str(),
              interrupted ? "; interrupted: run the same command again to resume" : "");
  if (interrupted) return 130;
  return failed > 0 ? 1 : 0;
}

}  // namespace tb
