// radT's command line, for its users' habits: no subcommand, radT's options before the
// file, and the file either a script (a one-run experiment, the words after it given to
// the script unchanged) or an experiment file (scheduled as `trainbench schedule` would):
//
//   trainbench [-e N] [-w N] [-d DEVICES] [-c COLLOCATION] [-l LISTENERS] train.py [ARGS...]
//   trainbench [-r] [-i EPOCHS] [-t MINUTES] experiment.csv|sweep.yaml
//
// -r/--rerun reruns workloads with a FAILED run, -i/--epoch ends each script after N epochs
// (scripts that log epochs through trainbench's client), -t/--time gives each run that many
// minutes, -n/--name names the runs as radT does, --group nests them under a parent run (radT's
// schedule_external group_name); --local is what trainbench always does.
// --buffered leaves the script's output buffered; radT's options whose job trainbench does
// otherwise (--conda, --manual, --poll_interval) are accepted, each with a note (RadtCommand::notes) of what
// it does.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "schedule/scheduler.h"
#include "store/store.h"

namespace tb::cli {

struct RadtCommand {
  std::string file;                            // the .py, .csv or .yaml, as given
  std::vector<std::string> script_args;        // after a .py: its own words
  std::string experiment{kDefaultExperiment};  // -e (radT's 0 is MLflow's Default experiment)
  std::string workload = "0";                  // -w
  std::string devices;                         // -d; "" picks GPU 0 where there is one, else none
  std::string collocation = "-";               // -c
  std::string listeners;                       // -l; "" is trainbench's default set
  bool rerun = false;                          // -r
  int max_epochs = 0;                          // -i
  int max_minutes = 0;                         // -t
  std::string store;                           // --store (trainbench's own)
  std::string name;                            // -n: runs named "(workload letter) name"
  std::string group;                           // --group: radT's group_name, a parent run
  bool buffered = false;                       // --buffered: Python's own buffering (no PYTHONUNBUFFERED=1)
  std::vector<std::string> notes;              // what trainbench does instead of a radT option
  std::vector<std::string> row_options;        // the -e/-w/-d/-c/-l given, to refuse with a .csv

  bool is_script() const;
};

// radT's form, or nullopt when `args` (argv without the program) is not radT's form: it
// starts with a subcommand or --help/--version, or names no .py, .csv or .yaml file.
std::optional<Result<RadtCommand>> ParseRadtForm(const std::vector<std::string>& args);

// The experiment file radT makes of a script command: one row, its Params the script's
// words quoted so that they come back unchanged.
std::string ScriptAsExperiment(const RadtCommand& c, bool has_gpu);

// radT's per-run form, which its scheduler runs for each run (`radt run -l LISTENERS -c FILE
// -p "PARAMS"`, radt/radt.py): as trainbench's `run` arguments (`run -l LISTENERS FILE
// PARAMS...`, the params split as the Params column is); nullopt when `args` is not it
// (`run` without -c/--command is trainbench's own).
std::optional<Result<std::vector<std::string>>> RadtRunForm(const std::vector<std::string>& args);

// What `trainbench schedule` is given for the command.
ScheduleOptions ScheduleFor(const RadtCommand& c, bool has_gpu);

}  // namespace tb::cli
