// The subcommands that read the store: migrate, report, ls, show, export.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "analyze/phases.h"
#include "analyze/report.h"
#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"
#include "cli/cli.h"
#include "collect/gpu_tool_collectors.h"
#include "http/http_server.h"
#include "import/migrate.h"
#include "import/mlflow_import.h"
#include "metrics/catalog.h"
#include "platform/nvml.h"
#include "platform/process.h"
#include "query/energy.h"
#include "query/export.h"
#include "query/summary.h"
#include "report/report_document.h"
#include "run/launcher.h"
#include "run/run_cost.h"
#include "schedule/scheduler.h"
#include "serve/serve_api.h"
#include "store/run_tags.h"
#include "store/store.h"
#include "track/tracking_api.h"

namespace tb::cli {

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
    std::printf("  %.8s  %s/%s  %s\n", r.id.c_str(), Printable(r.experiment).c_str(),
                r.workload.empty() ? "-" : Printable(r.workload).c_str(), Printable(r.name).c_str());
    std::fflush(stdout);
  });
  if (!done.ok()) return Fail(done.status());
  std::printf("trainbench: %d run%s copied (%lld points), %d already there, from %s to %s\n", done->copied,
              done->copied == 1 ? "" : "s", static_cast<long long>(done->points), done->skipped,
              (*from)->Describe().c_str(), (*to)->Describe().c_str());
  return 0;
}

// --- report ------------------------------------------------------------------------------

int CommandReport(const std::string& store_uri, const std::string& experiment,
                  const std::string& format_asked, const std::string& output) {
  std::string format = format_asked;
  if (format.empty()) {  // from the file's extension: report.pdf, report.html, report.csv
    std::string extension = std::filesystem::path(output).extension().string();
    format =
        extension == ".pdf" || extension == ".html" || extension == ".csv" ? extension.substr(1) : "table";
  }
  if (format != "table" && format != "csv" && format != "html" && format != "pdf")
    return Fail(Status::InvalidArgument("--format must be table, csv, html or pdf"));
  bool to_stdout = output.empty() || output == "-";
  if (format == "pdf" && to_stdout && isatty(STDOUT_FILENO))
    return Fail(Status::InvalidArgument("a PDF report goes to a file: add -o report.pdf"));
  Result<std::unique_ptr<Store>> store = OpenStoreToRead(store_uri);
  if (!store.ok()) return Fail(store.status());
  Result<ExperimentReport> report = BuildReport(**store, experiment);
  if (!report.ok()) return Fail(report.status());
  std::string text;
  if (format == "html" || format == "pdf") {
    SeriesReader reader(**store);
    Result<std::vector<ReportFigure>> figures = CollectReportFigures(**store, reader, *report);
    if (!figures.ok()) return Fail(figures.status());
    Result<std::string> document =
        format == "pdf" ? ReportPdf(*report, *figures) : Result<std::string>(ReportHtml(*report, *figures));
    if (!document.ok()) return Fail(document.status());
    text = std::move(*document);
  } else {
    text = format == "csv" ? ReportCsv(*report) : ReportTable(*report);
  }
  if (to_stdout) {
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

// Runs by workload, in order of each workload's first run; runs without one under "-".
void PrintWorkloads(const std::vector<RunRecord>& runs, const std::string& indent) {
  std::vector<std::string> workloads;
  for (const RunRecord& r : runs) {
    if (std::find(workloads.begin(), workloads.end(), r.workload) == workloads.end())
      workloads.push_back(r.workload);
  }
  for (const std::string& w : workloads) {
    std::printf("%sworkload %s\n", indent.c_str(), w.empty() ? "-" : Printable(w).c_str());
    for (const RunRecord& r : runs) {
      if (r.workload != w) continue;
      std::string status = IsDeleted(r) ? "DELETED" : ShownStatus(r);
      std::printf("%s  %.8s  %-10s  %s  %s  %9s  %s\n", indent.c_str(), r.id.c_str(), status.c_str(),
                  PadRight(Printable(r.name), 20).c_str(), FormatWallTime(r.start_ms).c_str(),
                  RunDuration(r, ShownStatus(r)).c_str(), Printable(r.command).c_str());
    }
  }
}

int CommandLs(const std::string& store_uri, const std::string& experiment, bool all) {
  Result<std::unique_ptr<Store>> store = OpenStoreToRead(store_uri);
  if (!store.ok()) return Fail(store.status());
  Result<std::vector<ExperimentInfo>> experiments = (*store)->ListExperiments();
  if (!experiments.ok()) return Fail(experiments.status());
  bool any = false;
  int hidden_experiments = 0, hidden_runs = 0;
  for (const ExperimentInfo& e : *experiments) {
    if (!experiment.empty() && e.name != experiment) continue;
    // A deleted experiment named on the command line is shown: it was asked for.
    if (IsDeleted(e) && !all && experiment.empty()) {
      ++hidden_experiments;
      continue;
    }
    Result<std::vector<RunRecord>> listed = (*store)->ListRuns(e.name);
    if (!listed.ok()) return Fail(listed.status());
    std::vector<RunRecord> runs;
    for (RunRecord& r : *listed) {
      if (IsDeleted(r) && !IsDeleted(e) && !all) {
        ++hidden_runs;
      } else {
        runs.push_back(std::move(r));
      }
    }
    any = true;
    std::printf("experiment %s  (%zu run%s)%s\n", Printable(e.name).c_str(), runs.size(),
                runs.size() == 1 ? "" : "s", IsDeleted(e) ? "  [deleted]" : "");
    // A sweep's or group's runs under their parent run (mlflow.parentRunId), the others
    // after; each set by workload.
    std::set<std::string> parents;
    for (const RunRecord& r : runs) {
      std::string parent = TagValue(r, kParentRunTag);
      if (!parent.empty() &&
          std::any_of(runs.begin(), runs.end(), [&](const RunRecord& p) { return p.id == parent; }))
        parents.insert(parent);
    }
    auto parent_of = [&](const RunRecord& r) {
      std::string parent = TagValue(r, kParentRunTag);
      return parents.count(parent) != 0 ? parent : std::string();
    };
    for (const RunRecord& p : runs) {
      if (parents.count(p.id) == 0) continue;
      std::vector<RunRecord> nested;
      for (const RunRecord& r : runs) {
        if (parent_of(r) == p.id) nested.push_back(r);
      }
      std::printf("  parent run %.8s  %s  %s  (%zu nested run%s)\n", p.id.c_str(), ShownStatus(p).c_str(),
                  Printable(p.name).c_str(), nested.size(), nested.size() == 1 ? "" : "s");
      PrintWorkloads(nested, "    ");
    }
    std::vector<RunRecord> rest;
    for (const RunRecord& r : runs) {
      if (parent_of(r).empty() && parents.count(r.id) == 0) rest.push_back(r);
    }
    PrintWorkloads(rest, "  ");
  }
  if (hidden_experiments + hidden_runs > 0) {
    std::printf("(%d deleted experiment%s and %d deleted run%s not shown; --all shows them)\n",
                hidden_experiments, hidden_experiments == 1 ? "" : "s", hidden_runs,
                hidden_runs == 1 ? "" : "s");
  }
  if (!any && hidden_experiments == 0) {
    std::printf(experiment.empty() ? "no runs in %s yet; start one with `trainbench run`\n"
                                   : "no experiment named %s in this store\n",
                experiment.empty() ? (*store)->Describe().c_str() : experiment.c_str());
    return experiment.empty() ? 0 : 1;
  }
  return 0;
}

// --- export ------------------------------------------------------------------------------

// The runs named (ids, prefixes, names), or every run of `experiment` not deleted.
static Result<std::vector<std::string>> RunsToExport(Store& store, const std::vector<std::string>& keys,
                                                     const std::string& experiment) {
  if (keys.empty() == experiment.empty())
    return Status::InvalidArgument("name the runs to export, or --experiment NAME for all of one experiment");
  std::vector<std::string> ids;
  for (const std::string& key : keys) {
    Result<RunRecord> run = store.FindRun(key);
    if (!run.ok()) return run.status();
    ids.push_back(run->id);
  }
  if (!experiment.empty()) {
    Result<std::vector<RunRecord>> runs = store.ListRuns(experiment);
    if (!runs.ok()) return runs.status();
    for (const RunRecord& r : *runs) {
      if (!IsDeleted(r)) ids.push_back(r.id);
    }
    if (ids.empty())
      return Status::NotFound("experiment '" + experiment +
                              "' has no runs (trainbench ls lists the experiments)");
  }
  return ids;
}

int CommandExport(const std::string& store_uri, const std::vector<std::string>& keys,
                  const std::string& experiment, const std::string& metric, const std::string& format,
                  const std::string& output) {
  Result<ExportFormat> f = ParseExportFormat(format);
  if (!f.ok()) return Fail(f.status());
  Result<std::unique_ptr<Store>> store = OpenStoreToRead(store_uri);
  if (!store.ok()) return Fail(store.status());
  Result<std::vector<std::string>> ids = RunsToExport(**store, keys, experiment);
  if (!ids.ok()) return Fail(ids.status());
  std::FILE* out = stdout;
  if (!output.empty() && output != "-") {
    out = std::fopen(output.c_str(), "w");
    if (out == nullptr) return Fail(Status::FromErrno("cannot write " + output, errno));
  }
  Status s = ExportRuns(**store, *ids, metric, *f, out);
  int write_error = errno;  // as the failed write left it
  if (out != stdout && std::fclose(out) != 0 && s.ok())
    s = Status::FromErrno("cannot write " + output, errno);
  // The reader stopped reading (`trainbench export ... | head`): quietly, as other tools do.
  if (!s.ok() && out == stdout && write_error == EPIPE) return 128 + SIGPIPE;
  return s.ok() ? 0 : Fail(s);
}

void AddStoreCommands(CLI::App& app, std::vector<Subcommand>& out) {
  auto ls_store = std::make_shared<std::string>(StoreFromEnvironment());
  auto experiment = std::make_shared<std::string>();
  auto all = std::make_shared<bool>(false);
  CLI::App* ls = app.add_subcommand("ls", "List experiments, their workloads and runs");
  ls->add_option("experiment", *experiment, "Only this experiment");
  ls->add_flag("-a,--all", *all, "Also the runs and experiments deleted through the tracking API");
  ls->add_option("--store", *ls_store, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();

  out.push_back({ls, [ls_store, experiment, all](const DashedCommand&) {
                   return CommandLs(*ls_store, *experiment, *all);
                 }});

  auto show_store = std::make_shared<std::string>(StoreFromEnvironment());
  auto run = std::make_shared<std::string>();
  CLI::App* show =
      app.add_subcommand("show", "Show a run: params, status, events, artifacts, metric statistics");
  show->add_option("run", *run, "Run id, unique id prefix, or run name")->required();
  show->add_option("--store", *show_store, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();

  out.push_back({show, [show_store, run](const DashedCommand&) { return CommandShow(*show_store, *run); }});

  struct Export {
    std::string store = StoreFromEnvironment(), experiment, metric, format = "csv", output;
    std::vector<std::string> runs;
  };
  auto e = std::make_shared<Export>();
  CLI::App* exp = app.add_subcommand("export", "Export runs' samples at full resolution, in one file");
  exp->add_option("runs", e->runs, "Run ids, unique id prefixes, or run names");
  exp->add_option("-e,--experiment", e->experiment, "Every run of this experiment (a long table of all)");
  exp->add_option("-m,--metric", e->metric, "Only this metric");
  exp->add_option("-f,--format", e->format,
                  "csv, json, jsonl (a JSON object a point) or columnar (typed arrays: numpy.frombuffer)")
      ->capture_default_str();
  exp->add_option("-o,--output", e->output, "File to write (default: standard output)");
  exp->add_option("--store", e->store, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();

  out.push_back({exp, [e](const DashedCommand&) {
                   return CommandExport(e->store, e->runs, e->experiment, e->metric, e->format, e->output);
                 }});

  struct Report {
    std::string store = StoreFromEnvironment(), experiment, format, output;
  };
  auto r = std::make_shared<Report>();
  CLI::App* report = app.add_subcommand(
      "report",
      "Per workload: throughput, epoch times, steady-state GPU figures, energy, collocation speed-up");
  report->add_option("experiment", r->experiment, "Experiment name")->required();
  report->add_option("--store", r->store, "Store URI or SQLite file (env TRAINBENCH_STORE)");
  report->add_option("--format", r->format,
                     "table, csv, html (charts as SVG) or pdf (A4 pages, fonts embedded); default: from the "
                     "--output file's extension, else table");
  report->add_option("-o,--output", r->output,
                     "File to write (default: standard output; a PDF needs a file or a pipe)");
  out.push_back({report, [r](const DashedCommand&) {
                   return CommandReport(r->store, r->experiment, r->format, r->output);
                 }});

  auto from = std::make_shared<std::string>(), to = std::make_shared<std::string>();
  CLI::App* migrate = app.add_subcommand(
      "migrate", "Copy the runs of one store into another (a SQLite file into the shared PostgreSQL store)");
  migrate->add_option("--from", *from, "Store to read: a SQLite file or sqlite:///path")->required();
  migrate->add_option("--to", *to, "Store to write: postgresql://user@host/db (or another SQLite file)")
      ->required();
  out.push_back({migrate, [from, to](const DashedCommand&) { return CommandMigrate(*from, *to); }});
}

}  // namespace tb::cli
