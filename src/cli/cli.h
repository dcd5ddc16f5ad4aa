// What trainbench's subcommands share: the store they open, how they fail, how they print
// runs. One file per subcommand (or family) beside it; main.cc parses the command line.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cli/radt_form.h"
#include "schedule/scheduler.h"
#include "store/store.h"

namespace CLI {
class App;
}

namespace tb::cli {

// What followed "--" on the command line (run's command), if there was one.
using DashedCommand = std::optional<std::vector<std::string>>;

// A subcommand as main() sees it. Each command file adds its own to the parser (the
// options, their help, the values they fill, kept alive by `run`) and says what runs once
// it was chosen.
struct Subcommand {
  CLI::App* parser = nullptr;
  std::function<int(const DashedCommand& command)> run;
};
void AddRunCommands(CLI::App& app, std::vector<Subcommand>& out);  // run, devices
void AddStoreCommands(CLI::App& app,
                      std::vector<Subcommand>& out);  // ls, show, export, report, migrate
void AddImportCommand(CLI::App& app, std::vector<Subcommand>& out);
void AddPlotCommand(CLI::App& app, std::vector<Subcommand>& out);
void AddScheduleCommand(CLI::App& app, std::vector<Subcommand>& out);
void AddServeCommand(CLI::App& app, std::vector<Subcommand>& out);

inline constexpr const char* kDefaultStore = "trainbench.db";
inline constexpr int64_t kMinIntervalMs = 100;

std::string StoreFromEnvironment();

// Parses "k=v" options; the error names the option and the bad text.
Result<KeyValues> ParseKeyValues(const std::vector<std::string>& items, const char* option);

bool EndsWith(const std::string& s, const std::string& suffix);

std::string FormatValue(double v, std::string_view unit);

int Fail(const Status& s);

Result<std::unique_ptr<Store>> OpenStore(const std::string& uri);

// For commands that read: a SQLite store that does not exist is a mistyped path, not a
// new empty store.
Result<std::unique_ptr<Store>> OpenStoreToRead(const std::string& uri);

// A run's duration as ls and show print it: until now while it runs; unknown when its
// trainbench is gone without finishing it (it must not keep growing), and for a run
// imported while it was RUNNING elsewhere (`import` again brings its end).
std::string RunDuration(const RunRecord& r, const std::string& status);

struct RunArgs {
  std::string store = StoreFromEnvironment();
  std::string experiment{kDefaultExperiment};
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
  std::string progress;  // --progress PATTERN
  bool no_tracking = false;
  std::string run_id;
  // One run across several nodes (run/distributed.h).
  bool distributed = false;
  int nodes = 0;
  int node_rank = -1;
  std::string node;
};

struct ServeArgs {
  std::string store = StoreFromEnvironment();
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string token;
  std::string token_file;
  std::string web;
  bool allow_other_users = false;
  std::vector<std::string> allowed_hosts;
};

// trainbench plot: options as given (empty: the figure file's value, else the default).
struct PlotArgs {
  std::string store = StoreFromEnvironment();
  std::vector<std::string> runs, workloads;
  std::string spec_file, output;
  std::string metric, labels, x, from, to, smoothing;
  std::string width, height, font_size, line_width, dpi;
  std::string title, x_title, y_title, legend;
  std::string y_min, y_max, phases_of, font, color_by;
  std::string bars;                 // an experiment: its collocation bars rather than lines
  std::vector<std::string> panels;  // which bars (plot --panels)
  bool mono = false, log_y = false, events = false, no_events = false, phases = false, no_legend = false,
       ratio = false;
  bool csv = false, save_spec = false;
};

int CommandRun(const RunArgs& a, std::vector<std::string> command);
// `call_costs`: also times each NVML call on the first GPU (platform/nvml_call_costs.h).
int CommandDevices(bool call_costs, const std::string& root = "/");
int CommandMigrate(const std::string& from_uri, const std::string& to_uri);
int CommandReport(const std::string& store_uri, const std::string& experiment, const std::string& format,
                  const std::string& output);
int CommandLs(const std::string& store_uri, const std::string& experiment, bool all);
int CommandShow(const std::string& store_uri, const std::string& key);
int CommandServe(ServeArgs a);
int CommandPlot(const PlotArgs& a);
int CommandSchedule(ScheduleOptions o);
int CommandRadt(const RadtCommand& c);
int CommandExport(const std::string& store_uri, const std::string& key, const std::string& metric,
                  const std::string& format, const std::string& output);

}  // namespace tb::cli
