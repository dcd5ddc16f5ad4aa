// `trainbench import --mlflow SOURCE`: an MLflow tracking database's runs into the store,
// once (a pass), or kept in step with a database MLflow still writes (--follow: a pass
// every --every seconds until Ctrl-C or SIGTERM, each saying what it brought). Each run
// that has ended is analysed and its analysis kept with it, as `trainbench run` keeps one.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analyze/phases.h"
#include "base/strings.h"
#include "base/time.h"
#include "cli/cli.h"
#include "import/mlflow_import.h"
#include "store/store.h"

namespace tb::cli {
namespace {

struct ImportArgs {
  std::string source;
  std::string store = StoreFromEnvironment();
  bool follow = false;
  double every_seconds = 5;
};

// One pass; prints the runs it imports as it goes, then what it updated and a summary (a
// pass of --follow that finds nothing new says nothing). False when it failed.
bool ImportPass(const std::string& source, Store& to, bool quiet_when_idle) {
  Result<ImportResult> done = ImportMlflow(source, to, [](const RunRecord& r) {
    std::printf("  %.8s  %s/%s  %s\n", r.id.c_str(), Printable(r.experiment).c_str(),
                r.workload.empty() ? "-" : Printable(r.workload).c_str(), Printable(r.name).c_str());
    std::fflush(stdout);
  });
  if (!done.ok()) {
    Fail(done.status());
    return false;
  }
  // Each finished run's analysis kept with it, as a run `trainbench run` ends carries one:
  // tables of runs (store.runs(), the report) read it rather than the run's points. Not
  // kept is only slower later.
  for (const std::string& id : done->changed) {
    if (Result<RunRecord> run = to.FindRun(id); run.ok() && run->end_ms > 0 && run->status != kRunning)
      (void)AnalyseAndKeep(to, *run);
  }
  for (const std::string& what : done->updates) std::printf("  %s\n", what.c_str());
  for (const std::string& why : done->refused) std::fprintf(stderr, "trainbench: left out %s\n", why.c_str());
  if (quiet_when_idle && done->imported == 0 && done->updated == 0 && done->refused.empty()) return true;
  std::printf(
      "trainbench: %d run%s imported (%lld points), %d brought up to date, %d already there, %d deleted in "
      "MLflow left out, into %s%s\n",
      done->imported, done->imported == 1 ? "" : "s", static_cast<long long>(done->points), done->updated,
      done->skipped, done->deleted, to.Describe().c_str(),
      done->refused.empty() ? ""
                            : ("; " + std::to_string(done->refused.size()) + " left out (above)").c_str());
  std::fflush(stdout);
  return true;
}

int CommandImportMlflow(const ImportArgs& a) {
  if (a.follow && !(a.every_seconds >= 0.1 && a.every_seconds <= 86400))
    return Fail(Status::InvalidArgument("--every is seconds between passes, 0.1 to 86400"));
  if (Status readable = CheckMlflowSource(a.source); !readable.ok()) return Fail(readable);
  Result<std::unique_ptr<Store>> to = Store::Open(a.store);
  if (!to.ok()) return Fail(to.status());
  if (Result<std::vector<ExperimentInfo>> probe = (*to)->ListExperiments(); !probe.ok())
    return Fail(probe.status());
  if (!a.follow) return ImportPass(a.source, **to, false) ? 0 : 1;
  // Signals are taken here, between passes: a pass is never cut short by one.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  if (!ImportPass(a.source, **to, false)) return 1;
  std::printf("trainbench: following %s every %gs (Ctrl-C stops)\n", a.source.c_str(), a.every_seconds);
  std::fflush(stdout);
  auto whole = static_cast<int64_t>(a.every_seconds);
  timespec wait{whole, static_cast<long>(std::lround((a.every_seconds - static_cast<double>(whole)) * 1e9))};
  for (;;) {
    int sig = sigtimedwait(&signals, nullptr, &wait);
    if (sig > 0) break;
    if (sig < 0 && errno != EAGAIN && errno != EINTR) return Fail(Status::FromErrno("cannot wait", errno));
    // A source that went away for a moment (the server restarting) is tried again next pass.
    ImportPass(a.source, **to, true);
  }
  std::printf("trainbench: stopped following %s\n", a.source.c_str());
  return 0;
}

}  // namespace

void AddImportCommand(CLI::App& app, std::vector<Subcommand>& out) {
  auto a = std::make_shared<ImportArgs>();
  CLI::App* import_mlflow = app.add_subcommand(
      "import",
      "Bring in the runs of an MLflow tracking database (radT's runs become workloads and runs); again to "
      "bring them up to date");
  import_mlflow
      ->add_option(
          "--mlflow", a->source,
          "MLflow's database: an SQLite file (sqlite:///path/mlflow.db) or postgresql://user@host/db")
      ->required();
  import_mlflow->add_option("--store", a->store, "Store URI or SQLite file to write (env TRAINBENCH_STORE)");
  import_mlflow->add_flag("--follow", a->follow,
                          "Keep importing what MLflow logs (new runs, points, status) until Ctrl-C");
  import_mlflow->add_option("--every", a->every_seconds, "With --follow: seconds between passes")
      ->capture_default_str();
  out.push_back({import_mlflow, [a](const DashedCommand&) { return CommandImportMlflow(*a); }});
}

}  // namespace tb::cli
