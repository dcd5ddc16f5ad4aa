// trainbench's command line: radT's form (cli/radt_form.h), else the subcommands (run,
// schedule, ls, show, export, report, serve, migrate, devices), each handed to its file
// in cli/. The only place that knows every layer.
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

#include "base/log.h"
#include "cli/cli.h"
#include "platform/process.h"

namespace tb::cli {

int Main(int argc, char** argv) {
  CLI::App app{
      "trainbench: benchmark deep-learning training on real hardware.\n"
      "Runs a training command (or a whole experiment file), samples host and GPU metrics\n"
      "while it trains, takes the script's own metrics (MLflow's API or the trainbench\n"
      "client), stores everything in a SQLite file (trainbench.db) or a shared PostgreSQL\n"
      "database (--store / TRAINBENCH_STORE), finds each run's phases, reports per workload\n"
      "(trainbench report) and serves it all to a browser (trainbench serve).\n"
      "radT's form works too: trainbench [-e N -w N -d DEVICES -c COLLOCATION -l LISTENERS\n"
      "-i EPOCHS -t MINUTES] train.py [ARGS...], and trainbench [-r -i EPOCHS -t MINUTES] exp.csv."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trainbench " TRAINBENCH_VERSION);

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
  run->add_flag("--distributed", ra.distributed,
                "This node's part of one run across several nodes: start it on every node "
                "(srun --ntasks-per-node=1 trainbench run --distributed ...); series get a node label");
  run->add_option("--nodes", ra.nodes, "With --distributed outside Slurm: how many nodes run it");
  run->add_option("--node-rank", ra.node_rank,
                  "With --distributed outside Slurm: this node's rank, 0 to --nodes - 1 (0 records the run)");
  run->add_option("--node", ra.node,
                  "With --distributed: this node's name on its series (default: Slurm's node name, "
                  "else the host name)");
  run->prefix_command();

  CLI::App* devices =
      app.add_subcommand("devices", "GPUs and MIG devices found, driver and CUDA versions, usable listeners");
  bool call_costs = false;
  devices->add_flag(
      "--call-costs", call_costs,
      "Also time each NVML call trainbench makes on GPU 0 (CPU and wall time per call, this driver)");

  std::string store_uri = StoreFromEnvironment();
  std::string ls_experiment;
  std::string migrate_from, migrate_to;
  CLI::App* migrate = app.add_subcommand(
      "migrate", "Copy the runs of one store into another (a SQLite file into the shared PostgreSQL store)");
  migrate->add_option("--from", migrate_from, "Store to read: a SQLite file or sqlite:///path")->required();
  migrate
      ->add_option("--to", migrate_to, "Store to write: postgresql://user@host/db (or another SQLite file)")
      ->required();
  std::string import_mlflow;
  CLI::App* import = app.add_subcommand(
      "import", "Bring in the runs of an MLflow tracking database (radT's runs become workloads and runs)");
  import
      ->add_option(
          "--mlflow", import_mlflow,
          "MLflow's database: an SQLite file (sqlite:///path/mlflow.db) or postgresql://user@host/db")
      ->required();
  import->add_option("--store", store_uri, "Store URI or SQLite file to write (env TRAINBENCH_STORE)");
  std::string report_experiment, report_format, report_output;
  CLI::App* report = app.add_subcommand(
      "report",
      "Per workload: throughput, epoch times, steady-state GPU figures, energy, collocation speed-up");
  report->add_option("experiment", report_experiment, "Experiment name")->required();
  report->add_option("--store", store_uri, "Store URI or SQLite file (env TRAINBENCH_STORE)");
  report->add_option("--format", report_format,
                     "table, csv, html (charts as SVG) or pdf (A4 pages, fonts embedded); default: from the "
                     "--output file's extension, else table");
  report->add_option("-o,--output", report_output,
                     "File to write (default: standard output; a PDF needs a file or a pipe)");
  PlotArgs pa;
  CLI::App* plot =
      app.add_subcommand("plot", "Draw one figure for a paper (PDF, SVG or PNG) from runs or workload means");
  plot->add_option("runs", pa.runs, "Runs to plot: ids, unique id prefixes or names");
  plot->add_option("-w,--workload", pa.workloads,
                   "EXPERIMENT:WORKLOAD: the mean of its runs with a min-max band (repeatable)");
  plot->add_option("-m,--metric", pa.metric, "Metric to plot (trainbench show RUN lists a run's)");
  plot->add_option("--labels", pa.labels, "Only the series with these labels (gpu=0); default: every series");
  plot->add_option("-o,--output", pa.output, "Figure file: .pdf, .svg or .png")->required();
  plot->add_option("--spec", pa.spec_file,
                   "Figure description (JSON, as --save-spec writes it); options override it");
  plot->add_option("--x", pa.x, "x axis: relative (time since start, default), wall or step");
  plot->add_option("--from", pa.from, "x range start (seconds, Unix ms or step)");
  plot->add_option("--to", pa.to, "x range end");
  plot->add_option("--smooth", pa.smoothing, "Exponential moving average weight, 0-99 (as on screen)");
  plot->add_option("--width", pa.width, "Figure width: 3.3in (default), 8.4cm, 85mm, 240pt");
  plot->add_option("--height", pa.height,
                   "Figure height (default: 0.62 of the width, taller for a legend of many lines)");
  plot->add_option("--font-size", pa.font_size, "Text size in points (default 8)");
  plot->add_option("--line-width", pa.line_width, "Line width in points (default 1)");
  plot->add_option("--dpi", pa.dpi, "PNG resolution (default 300)");
  plot->add_option("--title", pa.title, "Title above the plot (default: none)");
  plot->add_option("--x-title", pa.x_title, "x axis title (default: from the axis, with its unit)");
  plot->add_option("--y-title", pa.y_title, "y axis title (default: the metric's name and unit)");
  plot->add_option("--legend", pa.legend,
                   "Legend names from params and fields: '{batch-size}', '{name}', '{letter}', '{workload}'");
  plot->add_option("--y-min", pa.y_min, "y axis minimum, in the units shown (values below are clipped)");
  plot->add_option("--y-max", pa.y_max, "y axis maximum, in the units shown");
  plot->add_flag("--log-y", pa.log_y, "Logarithmic y axis");
  plot->add_flag("--mono", pa.mono, "Black and grey lines with dash patterns, for print");
  plot->add_flag("--no-events", pa.no_events, "Leave out the runs' events (epochs, signals)");
  plot->add_flag("--phases", pa.phases, "Shade the runs' phases (warm-up, idle, stalls)");
  plot->add_flag("--no-legend", pa.no_legend, "Leave out the legend");
  plot->add_flag("--ratio", pa.ratio, "Show ratios as 0-1 instead of percent");
  plot->add_flag("--csv", pa.csv, "Also write the plotted values beside the figure (fig.csv)");
  plot->add_flag("--save-spec", pa.save_spec,
                 "Also write the figure description (fig.figure.json) to rerun it");
  plot->add_option("--store", pa.store, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();

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
  schedule->add_flag("--rerun", so.rerun,
                     "Run workloads with a FAILED row again, all their rows together (as radT)");
  schedule->add_option("--max-epochs", so.max_epochs,
                       "End each run after N epochs (scripts that log epochs through trainbench's client)");
  schedule->add_option("--max-time", so.max_time,
                       "Each run's time limit (90s, 30m, 2h) unless its MaxTime cell says otherwise");
  schedule->add_flag("--drop-caches", so.drop_caches,
                     "Drop the page cache before each workload, so each reads its data cold (needs root)");
  schedule->add_flag(
      "--slurm", so.slurm,
      "Each workload as a Slurm job (sbatch), its runs together on one node; needs a PostgreSQL "
      "--store the nodes reach (docs/SLURM.md)");
  schedule->add_option("--partition", so.slurm_partition, "With --slurm: the partition to submit to");
  schedule->add_option("--account", so.slurm_account, "With --slurm: the account to charge");
  schedule->add_option("--time-limit", so.slurm_time,
                       "With --slurm: each job's time limit, as sbatch --time takes it");
  schedule->add_option("--sbatch-arg", so.sbatch_args, "With --slurm: one more sbatch argument (repeatable)")
      ->allow_extra_args(false);
  schedule
      ->add_option("--max-jobs", so.slurm_max_jobs,
                   "With --slurm: workloads queued or running at once (default 1: one after another, so "
                   "that no two interfere)")
      ->check(CLI::PositiveNumber);

  ServeArgs sa;
  CLI::App* serve =
      app.add_subcommand("serve", "Serve the web UI, its JSON API (/api/v1) and the tracking API");
  serve->add_option("--store", sa.store, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();
  serve->add_option("--host", sa.host, "Address to listen on; other than loopback needs a token")
      ->capture_default_str();
  serve->add_option("--port", sa.port, "Port (0: a free one)")->capture_default_str();
  serve->add_option(
      "--token-file", sa.token_file,
      "File whose first line is the access token every request must carry (or env TRAINBENCH_TOKEN)");
  serve->add_option("--token", sa.token, "The access token itself (visible in ps; prefer --token-file)");
  serve->add_option("--web", sa.web, "Directory of the web UI's files (default: web/ of this build)");

  std::vector<std::string> args(argv + 1, argv + argc);
  // radT's form: no subcommand, radT's options before a .py or .csv file.
  if (std::optional<Result<RadtCommand>> radt = ParseRadtForm(args)) {
    if (!radt->ok()) return Fail(radt->status());
    return CommandRadt(**radt);
  }
  // Everything after the first "--" is the command to run, untouched by option parsing.
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
  if (import->parsed()) return CommandImportMlflow(import_mlflow, store_uri);
  if (report->parsed()) return CommandReport(store_uri, report_experiment, report_format, report_output);
  if (devices->parsed()) return CommandDevices(call_costs);
  if (plot->parsed()) return CommandPlot(pa);
  if (show->parsed()) return CommandShow(store_uri, run_key);
  if (serve->parsed()) return CommandServe(sa);
  if (schedule->parsed()) return CommandSchedule(so);
  if (exp->parsed()) return CommandExport(store_uri, run_key, metric, format, output);
  return 2;
}

}  // namespace tb::cli

int main(int argc, char** argv) {
  // A closed terminal or pipe (`trainbench run ... | head`) must not kill trainbench in the
  // middle of a run: writes then fail with EPIPE and the run's output still reaches its log.
  signal(SIGPIPE, SIG_IGN);
  tb::RestrictFileModes();  // a store, its logs and artifacts are their owner's to read
  try {
    return tb::cli::Main(argc, argv);
  } catch (const std::exception& e) {
    tb::LogError(std::string("unexpected failure: ") + e.what());
    return 1;
  }
}
