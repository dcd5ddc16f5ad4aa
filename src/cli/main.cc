// trainbench's command line: radT's form (cli/radt_form.h), else the subcommands, each
// added to the parser by its own file in cli/ (cli.h: Subcommand), which also runs it.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <optional>
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
      "-i EPOCHS -t MINUTES] train.py [ARGS...], and trainbench [-r -i EPOCHS -t MINUTES] "
      "exp.csv|sweep.yaml."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trainbench " TRAINBENCH_VERSION);

  std::vector<Subcommand> subcommands;
  for (auto add : {AddRunCommands, AddScheduleCommand, AddStoreCommands, AddImportCommand, AddPlotCommand,
                   AddServeCommand})
    add(app, subcommands);

  std::vector<std::string> args(argv + 1, argv + argc);
  // radT's per-run form (radt run -l L -c FILE -p PARAMS), as trainbench's run.
  if (std::optional<Result<std::vector<std::string>>> per_run = RadtRunForm(args)) {
    if (!per_run->ok()) return Fail(per_run->status());
    args = std::move(**per_run);
  }
  // radT's form: no subcommand, radT's options before a .py, .csv or .yaml file.
  if (std::optional<Result<RadtCommand>> radt = ParseRadtForm(args)) {
    if (!radt->ok()) return Fail(radt->status());
    return CommandRadt(**radt);
  }
  // Everything after the first "--" is the command to run, untouched by option parsing.
  DashedCommand command;
  if (auto dashes = std::find(args.begin(), args.end(), "--"); dashes != args.end()) {
    command.emplace(dashes + 1, args.end());
    args.erase(dashes, args.end());
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (Subcommand& s : subcommands) {
    if (s.parser->parsed()) return s.run(command);
  }
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
