// trainbench's command line: the only file that knows every layer. Subcommands:
// run, ls, show, export.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analyze/phases.h"
#include "analyze/report.h"
#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"
#include "collect/gpu_tool_collectors.h"
#include "metrics/catalog.h"
#include "platform/http_server.h"
#include "platform/nvml.h"
#include "platform/process.h"
#include "query/energy.h"
#include "query/export.h"
#include "query/summary.h"
#include "run/launcher.h"
#include "schedule/scheduler.h"
#include "serve/serve_api.h"
#include "store/migrate.h"
#include "store/store.h"
#include "track/tracking_api.h"

namespace tb {
namespace {

constexpr const char* kDefaultStore = "trainbench.db";
constexpr int64_t kMinIntervalMs = 100;

std::string StoreFromEnvironment() {
  const char* env = std::getenv("TRAINBENCH_STORE");
  return env != nullptr && *env != '\0' ? env : kDefaultStore;
}

// Parses "k=v" options; the error names the option and the bad text.
Result<KeyValues> ParseKeyValues(const std::vector<std::string>& items, const char* option) {
  KeyValues out;
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument(std::string(option) + " '" + item + "' is not KEY=VALUE");
    }
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "UNFINISHED" for a RUNNING run whose trainbench on this host is gone (killed, crashed).
std::string DisplayStatus(const RunRecord& r) {
  if (r.status != kRunning) return r.status;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  if (r.host == host && r.supervisor_pid > 0 && kill(static_cast<pid_t>(r.supervisor_pid), 0) != 0 &&
      errno == ESRCH) {
    return "UNFINISHED";
  }
  return r.status;
}

std::string FormatValue(double v, std::string_view unit) {
  if (std::isnan(v) || std::isinf(v)) return FormatDouble(v);
  char buf[64];
  if ((unit == "bytes" || unit == "bytes/s") && std::fabs(v) >= 1024) {
    const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double x = v;
    int i = -1;
    while (std::fabs(x) >= 1024 && i < 4) {
      x /= 1024;
      ++i;
    }
    std::snprintf(buf, sizeof buf, "%.1f %s%s", x, units[i], unit == "bytes/s" ? "/s" : "");
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", v);
  }
  return buf;
}

int Fail(const Status& s) {
  LogError(s.message());
  return 1;
}

Result<std::unique_ptr<Store>> OpenStore(const std::string& uri) { return Store::Open(uri); }

// For commands that read: a SQLite store that does not exist is a mistyped path, not a
// new empty store.
Result<std::unique_ptr<Store>> OpenStoreToRead(const std::string& uri) {
  if (!StartsWith(uri, "postgres")) {
    std::string path = StartsWith(uri, "sqlite://") ? uri.substr(9) : uri;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      return Status::NotFound("no store at " + path +
                              "; check the path (--store or TRAINBENCH_STORE); `trainbench run` creates one");
    }
  }
  return Store::Open(uri);
}

// A run's duration as ls and show print it: until now while it runs; unknown when its
// trainbench is gone without finishing it (it must not keep growing).
std::string RunDuration(const RunRecord& r, const std::string& status) {
  if (r.end_ms > 0) return FormatDuration(r.end_ms - r.start_ms);
  if (status == "UNFINISHED") return "-";
  return FormatDuration(WallMillis() - r.start_ms);
}

// --- run -------------------------------------------------------------------------------

struct RunArgs {
  std::string store = StoreFromEnvironment();
  std::string experiment = "Default";
  std::string workload;
  std::string name;
  std::vector<std::string> params, tags;
  std::string listeners;  // empty: host listeners, plus nvml where a GPU answers
  std::string devices;
  std::string interval = "1s";
  std::string max_time;
  std::string kill_grace = "10s";
  std::string python;
  std::string proc_root = "/";
  bool quiet = false;
  int max_epochs = 0;
  bool no_tracking = false;
  std::string run_id;
};

int CommandRun(const RunArgs& a, std::vector<std::string> command) {
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty()) {
    return Fail(
        Status::InvalidArgument("no command given: trainbench run [options] -- COMMAND [ARGS...] or "
                                "trainbench run train.py [ARGS...]"));
  }
  RunOptions o;
  o.experiment = a.experiment;
  o.workload = a.workload;
  o.run_name = a.name;
  o.proc_root = a.proc_root;
  o.echo_output = !a.quiet;

  Result<int64_t> interval = ParseDurationMillis(a.interval);
  if (!interval.ok()) return Fail(Status::InvalidArgument("--interval: " + interval.status().message()));
  if (*interval < kMinIntervalMs) {
    return Fail(Status::InvalidArgument("--interval " + a.interval + " is below the minimum of 100ms"));
  }
  o.interval_ms = *interval;
  if (!a.max_time.empty()) {
    Result<int64_t> max_time = ParseDurationMillis(a.max_time);
    if (!max_time.ok()) return Fail(Status::InvalidArgument("--max-time: " + max_time.status().message()));
    o.max_time_ms = *max_time;
  }
  Result<int64_t> grace = ParseDurationMillis(a.kill_grace);
  if (!grace.ok()) return Fail(Status::InvalidArgument("--kill-grace: " + grace.status().message()));
  o.kill_grace_ms = *grace;
  Result<std::vector<std::string>> listeners = ParseListeners(a.listeners);
  if (!listeners.ok()) return Fail(listeners.status());
  o.listeners = *listeners;
  Result<KeyValues> params = ParseKeyValues(a.params, "--param");
  if (!params.ok()) return Fail(params.status());
  o.params = *params;
  Result<KeyValues> tags = ParseKeyValues(a.tags, "--tag");
  if (!tags.ok()) return Fail(tags.status());
  o.tags = *tags;
  o.devices = a.devices;
  if (a.max_epochs < 0)
    return Fail(Status::InvalidArgument("--max-epochs must be a positive number of epochs"));
  o.max_epochs = a.max_epochs;
  o.tracking = !a.no_tracking;
  if (!a.run_id.empty()) {
    bool hex = a.run_id.size() == 32 && std::all_of(a.run_id.begin(), a.run_id.end(), [](char c) {
                 return std::isxdigit(static_cast<unsigned char>(c));
               });
    if (!hex) return Fail(Status::InvalidArgument("--run-id must be 32 hex digits"));
    o.run_id = a.run_id;
  }

  // radT's form: a .py file runs with the Python interpreter.
  const char* python_env = std::getenv("TRAINBENCH_PYTHON");
  std::string python = !a.python.empty() ? a.python : python_env != nullptr ? python_env : "python3";
  if (EndsWith(command[0], ".py")) {
    o.python = python;
    o.script = command[0];
    command.insert(command.begin(), python);
  } else {
    // The script in a longer command ("python3 -u train.py", "nsys profile ... python3 train.py").
    for (size_t i = 1; i < command.size(); ++i) {
      if (EndsWith(command[i], ".py")) {
        o.script = command[i];
        if (StartsWith(BaseName(command[i - 1]), "python")) o.python = command[i - 1];
        break;
      }
    }
  }
  o.command = command;
  // The scheduler's start gate (READY_FD,GATE_FD), for this process only.
  if (const char* gate = std::getenv("TRAINBENCH_START_GATE")) {
    std::vector<std::string_view> fds = Split(gate, ',');
    if (fds.size() == 2) {
      o.ready_fd = static_cast<int>(ParseInt(fds[0]).value_or(-1));
      o.gate_fd = static_cast<int>(ParseInt(fds[1]).value_or(-1));
      // Tools the listeners start must not hold them open.
      for (int fd : {o.ready_fd, o.gate_fd}) {
        if (fd >= 0) fcntl(fd, F_SETFD, FD_CLOEXEC);
      }
    }
    unsetenv("TRAINBENCH_START_GATE");
  }

  // The store must be usable before anything starts.
  Result<std::unique_ptr<Store>> store = OpenStore(a.store);
  if (!store.ok()) return Fail(store.status());
  Result<RunOutcome> outcome = ExecuteRun(**store, o);
  if (!outcome.ok()) return Fail(outcome.status());
  return outcome->exit_code;
}

// --- devices -----------------------------------------------------------------------------

// Whether the smi and dcgmi listeners can work here, and why not.
void PrintToolListeners() {
  std::optional<std::string> smi = FindExecutable("nvidia-smi");
  std::printf("  smi                    %s\n",
              smi ? ("available (" + *smi + ")").c_str() : "not available: no nvidia-smi on PATH");
  Result<std::string> dcgm = ProbeDcgm();
  std::printf("  dcgmi                  %s\n",
              dcgm.ok() ? "available" : ("not available: " + dcgm.status().message()).c_str());
}

int CommandDevices() {
  Result<std::unique_ptr<Nvml>> nvml = Nvml::Open();
  std::printf("NVML library   %s\n", Nvml::LibraryPath().c_str());
  if (!nvml.ok()) {
    std::printf("GPUs           none found: %s\n", nvml.status().message().c_str());
    std::printf(
        "\nlisteners\n  top, ps, iostat, net   available\n  nvml                   not available: %s\n",
        nvml.status().message().c_str());
    PrintToolListeners();
    return 0;
  }
  const Nvml& n = **nvml;
  std::printf("driver         %s%s\n", n.DriverVersion().c_str(), n.simulated() ? "  (simulated GPU)" : "");
  std::printf("CUDA           %s\n", n.CudaVersion().c_str());
  Result<Nvml::DeviceList> devices = n.Devices();
  if (!devices.ok()) return Fail(devices.status());
  std::printf("\n%-5s %-28s %-42s %s\n", "index", "name", "uuid", "memory");
  for (const Nvml::DeviceInfo& d : devices->gpus) {
    std::printf("%-5u %-28s %-42s %s%s\n", d.index, d.name.c_str(), d.uuid.c_str(),
                FormatValue(static_cast<double>(d.memory_total_bytes), "bytes").c_str(),
                d.mig_enabled ? "  (MIG mode)" : "");
    for (const auto& m : d.mig) {
      std::string gi = "GPU instance " + std::to_string(m.gpu_instance_id);
      std::printf("      MIG %-24s %-42s %s\n", gi.c_str(), m.uuid.c_str(),
                  FormatValue(static_cast<double>(m.memory_total_bytes), "bytes").c_str());
    }
  }
  for (const std::string& why : devices->skipped) std::printf("      %s\n", why.c_str());
  std::printf("\nlisteners\n  top, ps, iostat, net   available\n  nvml                   %s\n",
              devices->gpus.empty() ? "not available: NVML finds no GPU it may open" : "available");
  PrintToolListeners();
  return 0;
}

// --- migrate -----------------------------------------------------------------------------

int CommandMigrate(const std::string& from_uri, const std::string& to_uri) {
  if (from_uri == to_uri) return Fail(Status::InvalidArgument("--from and --to name the same store"));
  Result<std::unique_ptr<Store>> from = OpenStoreToRead(from_uri);
  if (!from.ok()) return Fail(from.status());
  Result<std::unique_ptr<Store>> to = Store::Open(to_uri);
  if (!to.ok()) return Fail(to.status());
  // Both must answer now: a migration is not spooled.
  if (Result<std::vector<ExperimentInfo>> probe = (*to)->ListExperiments(); !probe.ok())
    return Fail(probe.status());
  Result<MigrationResult> done = MigrateRuns(**from, **to, [](const RunRecord& r) {
    std::printf("  %.8s  %s/%s  %s\n", r.id.c_str(), r.experiment.c_str(),
                r.workload.empty() ? "-" : r.workload.c_str(), r.name.c_str());
    std::fflush(stdout);
  });
  if (!done.ok()) return Fail(done.status());
  std::printf("trainbench: %d run%s copied (%lld points), %d already there, from %s to %s\n", done->copied,
              done->copied == 1 ? "" : "s", static_cast<long long>(done->points), done->skipped,
              (*from)->Describe().c_str(), (*to)->Describe().c_str());
  return 0;
}

// --- report ------------------------------------------------------------------------------

int CommandReport(const std::string& store_uri, const std::string& experiment, const std::string& format,
                  const std::string& output) {
  if (format != "table" && format != "csv" && format != "html")
    return Fail(Status::InvalidArgument("--format must be table, csv or html"));
  Result<std::unique_ptr<Store>> store = OpenStoreToRead(store_uri);
  if (!store.ok()) return Fail(store.status());
  Result<ExperimentReport> report = BuildReport(**store, experiment);
  if (!report.ok()) return Fail(report.status());
  std::string text = format == "csv"    ? ReportCsv(*report)
                     : format == "html" ? ReportHtml(*report)
                                        : ReportTable(*report);
  if (output.empty() || output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  std::ofstream out(output, std::ios::binary);
  out << text;
  if (!out) return Fail(Status::IoError("cannot write " + output));
  std::printf("trainbench: report of %s written to %s\n", experiment.c_str(), output.c_str());
  return 0;
}

// --- ls ----------------------------------------------------------------------------------

int CommandLs(const std::string& store_uri, const std::string& experiment) {
  Result<std::unique_ptr<Store>> store = OpenStoreToRead(store_uri);
  if (!store.ok()) return Fail(store.status());
  Result<std::vector<ExperimentInfo>> experiments = (*store)->ListExperiments();
  if (!experiments.ok()) return Fail(experiments.status());
  bool any = false;
  for (const ExperimentInfo& e : *experiments) {
    if (!experiment.empty() && e.name != experiment) continue;
    Result<std::vector<RunRecord>> runs = (*store)->ListRuns(e.name);
    if (!runs.ok()) return Fail(runs.status());
    any = true;
    std::printf("experiment %s  (%zu run%s)\n", Printable(e.name).c_str(), runs->size(),
                runs->size() == 1 ? "" : "s");
    // Workloads in order of their first run; runs without one under "-".
    std::vector<std::string> workloads;
    for (const RunRecord& r : *runs) {
      if (std::find(workloads.begin(), workloads.end(), r.workload) == workloads.end()) {
        workloads.push_back(r.workload);
      }
    }
    for (const std::string& w : workloads) {
      std::printf("  workload %s\n", w.empty() ? "-" : Printable(w).c_str());
      for (const RunRecord& r : *runs) {
        if (r.workload != w) continue;
        std::string status = DisplayStatus(r);
        std::printf("    %.8s  %-10s  %-20s  %s  %9s  %s\n", r.id.c_str(), status.c_str(),
                    Printable(r.name).c_str(), FormatWallTime(r.start_ms).c_str(),
                    RunDuration(r, status).c_str(), Printable(r.command).c_str());
      }
    }
  }
  if (!any) {
    std::printf(experiment.empty() ? "no runs in %s yet; start one with `trainbench run`\n"
                                   : "no experiment named %s in this store\n",
                experiment.empty() ? (*store)->Describe().c_str() : experiment.c_str());
    return experiment.empty() ? 0 : 1;
  }
  return 0;
}

// --- show --------------------------------------------------------------------------------

int CommandShow(const std::string& store_uri, const std::string& key) {
  Result<std::unique_ptr<Store>> store = OpenStoreToRead(store_uri);
  if (!store.ok()) return Fail(store.status());
  Result<RunRecord> found = (*store)->FindRun(key);
  if (!found.ok()) return Fail(found.status());
  const RunRecord& r = *found;
  std::string status = DisplayStatus(r);
  bool simulated = false;
  for (const auto& [k, v] : r.tags) simulated |= k == kSimulatedGpuTag && v == "true";
  if (r.exit_code) status += " (exit code " + std::to_string(*r.exit_code) + ")";
  if (r.signal) status += " (signal " + std::to_string(*r.signal) + ")";
  std::string duration = RunDuration(r, DisplayStatus(r));
  std::printf("run         %s  %s\n", r.id.c_str(), Printable(r.name).c_str());
  std::printf("experiment  %s   workload %s\n", Printable(r.experiment).c_str(),
              r.workload.empty() ? "-" : Printable(r.workload).c_str());
  std::printf("status      %s\n", status.c_str());
  if (!r.reason.empty()) std::printf("reason      %s\n", Printable(r.reason).c_str());
  std::printf("command     %s\n", Printable(r.command).c_str());
  std::printf("directory   %s\n", Printable(r.working_directory).c_str());
  std::printf("host        %s\n", Printable(r.host).c_str());
  std::printf("started     %s   duration %s%s\n", FormatWallTime(r.start_ms).c_str(), duration.c_str(),
              r.end_ms > 0 || duration == "-" ? "" : " so far");
  std::printf("listeners   %s every %gs\n", Printable(r.listeners).c_str(),
              static_cast<double>(r.interval_ms) / 1000);
  if (!r.devices.empty()) std::printf("devices     %s\n", Printable(r.devices).c_str());
  Result<std::optional<GpuEnergy>> energy = RunGpuEnergy(**store, r.id);
  if (energy.ok() && energy->has_value()) {
    const GpuEnergy& e = **energy;
    std::printf("GPU energy  %.1f J over %d GPU%s%s%s\n", e.joules, e.gpus, e.gpus == 1 ? "" : "s",
                e.integrated ? " (power integrated over time where no energy counter)" : "",
                simulated ? "  [simulated GPU]" : "");
    if (e.run_share_joules)
      std::printf(
          "run energy  %.1f J, this run's share of the GPU energy by its share of the GPUs' activity\n",
          *e.run_share_joules);
  }
  if (simulated)
    std::printf("note        GPU metrics of this run come from the simulated GPU (sim/), not hardware\n");
  if (!r.params.empty()) {
    std::printf("\nparams\n");
    for (const auto& [k, v] : r.params)
      std::printf("  %s = %s\n", Printable(k).c_str(), Printable(v).c_str());
  }
  if (!r.tags.empty()) {
    std::printf("\ntags\n");
    for (const auto& [k, v] : r.tags) std::printf("  %s = %s\n", Printable(k).c_str(), Printable(v).c_str());
  }
  Result<std::vector<EventRecord>> events = (*store)->ListEvents(r.id);
  if (events.ok() && !events->empty()) {
    std::printf("\nevents\n");
    for (const EventRecord& e : *events) {
      std::printf("  +%-9s %-9s %s\n", FormatDuration(e.time_ms - r.start_ms).c_str(),
                  Printable(e.kind).c_str(), Printable(e.label).c_str());
    }
  }
  Result<std::vector<ArtifactRecord>> artifacts = (*store)->ListArtifacts(r.id);
  if (artifacts.ok() && !artifacts->empty()) {
    std::printf("\nartifacts\n");
    for (const ArtifactRecord& a : *artifacts) {
      std::printf("  %-14s %10s  %s\n", Printable(a.name).c_str(),
                  FormatValue(static_cast<double>(a.size), "bytes").c_str(),
                  a.path.empty() ? "(in the store)" : a.path.c_str());
    }
  }
  // Phases and the steady state.
  if (Result<RunAnalysis> a = AnalyzeStoredRun(**store, r); a.ok() && !a->phases.empty()) {
    std::printf("\nphases (found in %s)\n", a->activity.empty() ? "-" : a->activity.c_str());
    for (const Phase& p : a->phases) {
      std::printf("  +%-9s %9s  %-13s %s\n", FormatDuration(p.start_ms - r.start_ms).c_str(),
                  FormatDuration(p.end_ms - p.start_ms).c_str(), p.kind.c_str(), p.detail.c_str());
    }
    std::printf("\nsteady state (%d s)\n", a->steady_samples);
    for (const auto& [metric, mean] : a->steady) {
      const MetricInfo* info = FindMetric(metric);
      std::printf("  %-44s %11s\n", metric.c_str(), FormatValue(mean, info ? info->unit : "").c_str());
    }
    if (a->epoch_seconds) std::printf("  %-44s %11.2f s\n", "time per epoch", *a->epoch_seconds);
    if (a->energy_per_sample_joules)
      std::printf("  %-44s %11.4g J\n", "energy per training sample", *a->energy_per_sample_joules);
    for (const std::string& c : a->caveats) std::printf("  note: %s\n", c.c_str());
  }
  Result<std::vector<SeriesInfo>> series = (*store)->ListSeries(r.id);
  if (!series.ok()) return Fail(series.status());
  std::printf("\nmetrics (%zu series)\n", series->size());
  std::printf("  %-44s %-22s %7s %11s %11s %11s %11s %11s\n", "metric", "labels", "count", "min", "mean",
              "max", "p50", "p95");
  for (const SeriesInfo& s : *series) {
    Result<std::vector<Point>> points = ReadSeriesPoints(**store, s.id);
    if (!points.ok()) return Fail(points.status());
    SeriesSummary sum = Summarize(*points);
    const MetricInfo* info = FindMetric(s.metric);
    std::string_view unit = info ? info->unit : "";
    std::printf("  %-44s %-22s %7lld %11s %11s %11s %11s %11s\n", Printable(s.metric).c_str(),
                s.labels.empty() ? "-" : Printable(s.labels).c_str(), static_cast<long long>(sum.count),
                FormatValue(sum.min, unit).c_str(), FormatValue(sum.mean, unit).c_str(),
                FormatValue(sum.max, unit).c_str(), FormatValue(sum.p50, unit).c_str(),
                FormatValue(sum.p95, unit).c_str());
  }
  return 0;
}

// --- serve -------------------------------------------------------------------------------

struct ServeArgs {
  std::string store = StoreFromEnvironment();
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string token;
  std::string web;
};

// The web UI's built files: --web, else web/dist or web/ beside the build or install.
std::string WebDirectory(const std::string& given) {
  if (!given.empty()) return given;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (const char* relative :
       {"../web/dist", "../../web/dist", "../share/trainbench/web", "../web", "../../web"}) {
    std::filesystem::path dir = exe.parent_path() / relative;
    if (std::filesystem::exists(dir / "index.html", ec))
      return std::filesystem::weakly_canonical(dir, ec).string();
  }
  return "";
}

int CommandServe(ServeArgs a) {
  if (a.token.empty()) {
    if (const char* t = std::getenv("TRAINBENCH_TOKEN")) a.token = t;
  }
  if (!IsLoopbackHost(a.host) && a.token.empty()) {
    return Fail(Status::InvalidArgument("serving on " + a.host +
                                        " lets other machines in: give an access token with --token or "
                                        "TRAINBENCH_TOKEN (every request must then carry it)"));
  }
  if (a.port < 0 || a.port > 65535) return Fail(Status::InvalidArgument("--port must be 0 to 65535"));
  Result<std::unique_ptr<Store>> store = OpenStore(a.store);
  if (!store.ok()) return Fail(store.status());
  ServeApi api(**store);
  TrackingApi tracking(**store);
  HttpServer server({api.Handler(), tracking.Handler()});
  HttpServerOptions options = TrackingApi::ServerOptions();
  options.host = a.host;
  options.port = a.port;
  options.token = a.token;
  options.static_dir = WebDirectory(a.web);
  // Signals are taken by this thread; the server's threads inherit the mask.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Status started = server.Start(options);
  if (!started.ok()) return Fail(started);
  std::printf("trainbench: serving %s at %s/%s (Ctrl-C stops)\n", (*store)->Describe().c_str(),
              server.Url().c_str(),
              options.static_dir.empty() ? " (API only: no web UI found, --web names its directory)" : "");
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  server.Stop();
  return 0;
}

// --- export ------------------------------------------------------------------------------

int CommandExport(const std::string& store_uri, const std::string& key, const std::string& metric,
                  const std::string& format, const std::string& output) {
  ExportFormat f;
  if (format == "csv") {
    f = ExportFormat::kCsv;
  } else if (format == "json") {
    f = ExportFormat::kJson;
  } else {
    return Fail(Status::InvalidArgument("--format " + format + " is unknown; use csv or json"));
  }
  Result<std::unique_ptr<Store>> store = OpenStoreToRead(store_uri);
  if (!store.ok()) return Fail(store.status());
  Result<RunRecord> run = (*store)->FindRun(key);
  if (!run.ok()) return Fail(run.status());
  std::FILE* out = stdout;
  if (!output.empty() && output != "-") {
    out = std::fopen(output.c_str(), "w");
    if (out == nullptr) return Fail(Status::FromErrno("cannot write " + output, errno));
  }
  Status s = ExportRun(**store, run->id, metric, f, out);
  if (out != stdout) std::fclose(out);
  return s.ok() ? 0 : Fail(s);
}

int Main(int argc, char** argv) {
  CLI::App app{
      "trainbench: benchmark deep-learning training on real hardware.\n"
      "Runs a training command (or a whole experiment file), samples host and GPU metrics\n"
      "while it trains, takes the script's own metrics (MLflow's API or the trainbench\n"
      "client), stores everything in a SQLite file (trainbench.db) or a shared PostgreSQL\n"
      "database (--store / TRAINBENCH_STORE), finds each run's phases, reports per workload\n"
      "(trainbench report) and serves it all to a browser (trainbench serve)."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trainbench 0.1.0");

  RunArgs ra;
  CLI::App* run = app.add_subcommand("run",
                                     "Run a training command and record it.\n"
                                     "  trainbench run [options] -- COMMAND [ARGS...]\n"
                                     "  trainbench run [options] train.py [ARGS...]   (runs with --python)\n"
                                     "The script's --key value arguments are recorded as params.");
  run->add_option("--store", ra.store, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();
  run->add_option("-e,--experiment", ra.experiment, "Experiment name; created on first use")
      ->capture_default_str();
  run->add_option("-w,--workload", ra.workload, "Workload id within the experiment");
  run->add_option("-n,--name", ra.name, "Run name (default: the script's file name)");
  run->add_option("-p,--param", ra.params, "Param KEY=VALUE (repeatable; overrides parsed arguments)")
      ->allow_extra_args(false);
  run->add_option("-t,--tag", ra.tags, "Tag KEY=VALUE (repeatable)")->allow_extra_args(false);
  run->add_option("-l,--listeners", ra.listeners,
                  "Listeners joined with '+': top, ps, iostat, net, nvml, smi, dcgmi "
                  "(default: top+iostat+net, plus nvml where NVML finds a GPU and dcgmi where a DCGM "
                  "host engine answers)");
  run->add_option("-d,--devices", ra.devices,
                  "GPUs the run uses: 0, 1+2, GPU-/MIG- UUIDs (default: CUDA_VISIBLE_DEVICES, else all); "
                  "sets CUDA_VISIBLE_DEVICES for the command");
  run->add_option("-i,--interval", ra.interval, "Sampling interval, at least 100ms (250ms, 1s, ...)")
      ->capture_default_str();
  run->add_option("--max-time", ra.max_time, "Stop the run after this long (SIGTERM, then SIGKILL)");
  run->add_option("--kill-grace", ra.kill_grace, "Time between SIGTERM and SIGKILL")->capture_default_str();
  run->add_option("--python", ra.python,
                  "Interpreter for .py scripts (env TRAINBENCH_PYTHON; default python3)");
  run->add_option("--proc-root", ra.proc_root, "Read /proc and /sys under this directory (for testing)")
      ->capture_default_str();
  run->add_flag("-q,--quiet", ra.quiet, "Do not echo the command's output (it is still stored)");
  run->add_option("--max-epochs", ra.max_epochs,
                  "End the script cleanly once it logs epoch N through the trainbench client");
  run->add_option("--run-id", ra.run_id, "The run's id, 32 hex digits (default: a new random one)");
  run->add_flag("--no-tracking", ra.no_tracking,
                "Do not serve the tracking API (MLFLOW_TRACKING_URI) to the script");
  run->prefix_command();

  CLI::App* devices =
      app.add_subcommand("devices", "GPUs and MIG devices found, driver and CUDA versions, usable listeners");

  std::string store_uri = StoreFromEnvironment();
  std::string ls_experiment;
  std::string migrate_from, migrate_to;
  CLI::App* migrate = app.add_subcommand(
      "migrate", "Copy the runs of one store into another (a SQLite file into the shared PostgreSQL store)");
  migrate->add_option("--from", migrate_from, "Store to read: a SQLite file or sqlite:///path")->required();
  migrate
      ->add_option("--to", migrate_to, "Store to write: postgresql://user@host/db (or another SQLite file)")
      ->required();
  std::string report_experiment, report_format = "table", report_output;
  CLI::App* report = app.add_subcommand(
      "report",
      "Per workload: throughput, epoch times, steady-state GPU figures, energy, collocation speed-up");
  report->add_option("experiment", report_experiment, "Experiment name")->required();
  report->add_option("--store", store_uri, "Store URI or SQLite file (env TRAINBENCH_STORE)");
  report->add_option("--format", report_format, "table (default), csv or html");
  report->add_option("-o,--output", report_output, "File to write (default: standard output)");
  CLI::App* ls = app.add_subcommand("ls", "List experiments, their workloads and runs");
  ls->add_option("experiment", ls_experiment, "Only this experiment");
  ls->add_option("--store", store_uri, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();

  std::string run_key;
  CLI::App* show =
      app.add_subcommand("show", "Show a run: params, status, events, artifacts, metric statistics");
  show->add_option("run", run_key, "Run id, unique id prefix, or run name")->required();
  show->add_option("--store", store_uri, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();

  std::string metric, format = "csv", output;
  CLI::App* exp = app.add_subcommand("export", "Export a run's samples at full resolution");
  exp->add_option("run", run_key, "Run id, unique id prefix, or run name")->required();
  exp->add_option("-m,--metric", metric, "Only this metric");
  exp->add_option("-f,--format", format, "csv or json")->capture_default_str();
  exp->add_option("-o,--output", output, "File to write (default: standard output)");
  exp->add_option("--store", store_uri, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();

  ScheduleOptions so;
  so.store = StoreFromEnvironment();
  CLI::App* schedule = app.add_subcommand(
      "schedule", "Run an experiment file (radT's CSV): workloads in order, the runs of each together");
  schedule
      ->add_option("file", so.file,
                   "Experiment CSV (Experiment,Workload,Status,Run,Devices,Collocation,File,...)")
      ->required();
  schedule->add_option("--store", so.store, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();
  schedule->add_option("--python", so.python, "Interpreter for the File column's scripts (default: python3)");
  schedule->add_flag("--dry-run", so.dry_run,
                     "Print the plan (workloads, runs, commands) and change nothing");
  schedule->add_flag("--rerun", so.rerun, "Run FAILED rows again (FINISHED rows are always skipped)");
  schedule->add_option("--max-epochs", so.max_epochs,
                       "End each run after N epochs (scripts that log epochs through trainbench's client)");
  schedule->add_option("--max-time", so.max_time,
                       "Each run's time limit (90s, 30m, 2h) unless its MaxTime cell says otherwise");
  schedule->add_flag("--drop-caches", so.drop_caches,
                     "Drop the page cache before each workload, so each reads its data cold (needs root)");

  ServeArgs sa;
  CLI::App* serve =
      app.add_subcommand("serve", "Serve the web UI, its JSON API (/api/v1) and the tracking API");
  serve->add_option("--store", sa.store, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();
  serve->add_option("--host", sa.host, "Address to listen on; other than loopback needs --token")
      ->capture_default_str();
  serve->add_option("--port", sa.port, "Port (0: a free one)")->capture_default_str();
  serve->add_option("--token", sa.token, "Access token every request must carry (env TRAINBENCH_TOKEN)");
  serve->add_option("--web", sa.web, "Directory of the web UI's files (default: web/ of this build)");

  // Everything after the first "--" is the command to run, untouched by option parsing.
  std::vector<std::string> args(argv + 1, argv + argc);
  // radT's form: `trainbench experiment.csv` schedules the file.
  if (!args.empty() && EndsWith(args[0], ".csv")) args.insert(args.begin(), "schedule");
  std::vector<std::string> command;
  auto dashes = std::find(args.begin(), args.end(), "--");
  bool has_dashes = dashes != args.end();
  if (has_dashes) {
    command.assign(dashes + 1, args.end());
    args.erase(dashes, args.end());
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (run->parsed()) {
    if (!has_dashes) command = run->remaining();
    return CommandRun(ra, command);
  }
  if (ls->parsed()) return CommandLs(store_uri, ls_experiment);
  if (migrate->parsed()) return CommandMigrate(migrate_from, migrate_to);
  if (report->parsed()) return CommandReport(store_uri, report_experiment, report_format, report_output);
  if (devices->parsed()) return CommandDevices();
  if (show->parsed()) return CommandShow(store_uri, run_key);
  if (serve->parsed()) return CommandServe(sa);
  if (schedule->parsed()) {
    if (so.python.empty()) {
      const char* python_env = std::getenv("TRAINBENCH_PYTHON");
      so.python = python_env != nullptr ? python_env : "";
    }
    so.color = isatty(STDOUT_FILENO) != 0;
    Result<int> code = RunSchedule(so);
    if (!code.ok()) return Fail(code.status());
    return *code;
  }
  if (exp->parsed()) return CommandExport(store_uri, run_key, metric, format, output);
  return 2;
}

}  // namespace
}  // namespace tb

int main(int argc, char** argv) {
  // A closed terminal or pipe (`trainbench run ... | head`) must not kill trainbench in the
  // middle of a run: writes then fail with EPIPE and the run's output still reaches its log.
  signal(SIGPIPE, SIG_IGN);
  try {
    return tb::Main(argc, argv);
  } catch (const std::exception& e) {
    tb::LogError(std::string("unexpected failure: ") + e.what());
    return 1;
  }
}
