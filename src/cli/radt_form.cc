#include "cli/radt_form.h"

#include <algorithm>
#include <array>

#include "base/strings.h"
#include "schedule/experiment_file.h"

namespace tb::cli {
namespace {

constexpr std::array<std::string_view, 10> kSubcommands = {
    "run", "schedule", "ls", "show", "export", "report", "serve", "migrate", "devices", "help"};

bool IsFile(std::string_view word) {
  return word.ends_with(".py") || word.ends_with(".csv") || word.ends_with(".yaml") || word.ends_with(".yml");
}

// The script's words as a Params cell that SplitWords gives back unchanged (a word with
// both kinds of quote cannot be written so; it is refused before).
std::string ParamsCell(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += ' ';
    bool plain = !w.empty() && w.find_first_of(" \t\"'") == std::string::npos;
    char quote = w.find('"') == std::string::npos ? '"' : '\'';
    out += plain ? w : quote + w + quote;
  }
  return out;
}

}  // namespace

bool RadtCommand::is_script() const { return file.ends_with(".py"); }

std::optional<Result<RadtCommand>> ParseRadtForm(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "--version") return std::nullopt;
  if (std::find(kSubcommands.begin(), kSubcommands.end(), args[0]) != kSubcommands.end()) return std::nullopt;
  auto file = std::find_if(args.begin(), args.end(), [](const std::string& a) { return IsFile(a); });
  if (file == args.end() || std::find(args.begin(), file, "--") != file) return std::nullopt;

  RadtCommand c;
  c.file = *file;
  c.script_args.assign(file + 1, args.end());
  auto refuse = [](const std::string& what) -> std::optional<Result<RadtCommand>> {
    return Result<RadtCommand>(Status::InvalidArgument(what));
  };
  for (auto it = args.begin(); it != file; ++it) {
    std::string option = *it, value;
    bool inline_value = false;
    if (size_t eq = option.find('='); StartsWith(option, "--") && eq != std::string::npos) {
      value = option.substr(eq + 1);
      option = option.substr(0, eq);
      inline_value = true;
    }
    auto take = [&]() -> bool {
      if (inline_value) return true;
      if (it + 1 == file) return false;
      value = *++it;
      return true;
    };
    auto number = [&](int& out, const char* what) -> std::optional<std::string> {
      std::optional<uint64_t> n = ParseUint(value);
      if (!n || *n == 0 || *n > 1000000)
        return Concat({option, " takes a positive number of ", what, ", not '", value, "'"});
      out = static_cast<int>(*n);
      return std::nullopt;
    };
    static const std::array<std::pair<std::string_view, std::string_view>, 5> kRowOptions = {
        {{"-e", "--experiment"},
         {"-w", "--workload"},
         {"-d", "--devices"},
         {"-c", "--collocation"},
         {"-l", "--listeners"}}};
    auto row_option = std::find_if(kRowOptions.begin(), kRowOptions.end(),
                                   [&](const auto& o) { return option == o.first || option == o.second; });
    if (row_option != kRowOptions.end()) {
      if (!take()) return refuse(option + " needs a value");
      std::string_view longname = row_option->second;
      if (longname == "--experiment") c.experiment = value;
      if (longname == "--workload") c.workload = value;
      if (longname == "--devices") c.devices = value;
      if (longname == "--collocation") c.collocation = value;
      if (longname == "--listeners") c.listeners = value;
      c.row_options.push_back(option);
    } else if (option == "-r" || option == "--rerun") {
      c.rerun = true;
    } else if (option == "-i" || option == "--epoch") {
      if (!take()) return refuse(option + " needs a number of epochs");
      if (auto bad = number(c.max_epochs, "epochs")) return refuse(*bad);
    } else if (option == "-t" || option == "--time") {
      if (!take()) return refuse(option + " needs a number of minutes");
      if (auto bad = number(c.max_minutes, "minutes")) return refuse(*bad);
    } else if (option == "--store") {
      if (!take()) return refuse("--store needs a store URI or SQLite file");
      c.store = value;
    } else if (option == "--group") {
      if (!take()) return refuse("--group needs a parent run's name or id");
      c.group = value;
    } else if (option == "--local") {
      // The script runs in the current environment: what trainbench always does.
    } else if (option == "-n" || option == "--name") {
      if (!take()) return refuse(option + " needs a name");
      c.name = value;
    } else if (option == "--conda") {
      c.notes.push_back(
          "--conda: trainbench runs the script with the interpreter you choose (activate the environment "
          "first, or an experiment file's Env column), not a conda environment built from conda.yaml");
    } else if (option == "--manual") {
      c.notes.push_back(
          "--manual: trainbench tracks the whole run from its start; a RADTBenchmark block logs into it");
    } else if (option == "--buffered") {
      c.buffered = true;
    } else if (option == "--poll_interval" || option == "--poll-interval") {
      if (!take()) return refuse(option + " needs a number of seconds");
      if (!ParseDouble(value) || *ParseDouble(value) <= 0)
        return refuse(Concat({option, " takes a positive number of seconds, not '", value, "'"}));
      c.notes.push_back(Concat({option,
                                ": trainbench's scheduler waits on each run's end rather than polling; "
                                "listeners sample every second (trainbench run -i changes it)"}));
    } else {
      return refuse("unknown option '" + option + "' before " + c.file +
                    "; radT's options are -e, -w, -d, -n, -c, -l, -r, -i, -t, --local, --conda, --manual, "
                    "--buffered and "
                    "--poll_interval (see trainbench --help)");
    }
  }
  for (const std::string& w : c.script_args) {
    if (w.find('"') != std::string::npos && w.find('\'') != std::string::npos)
      return refuse("the script argument '" + w +
                    "' holds both kinds of quote; write it without one of them");
  }
  if (!c.is_script()) {
    if (!c.row_options.empty()) {
      return refuse(c.row_options.front() +
                    " describes a run of a script; an experiment file's rows say that "
                    "themselves (its Experiment, Workload, Devices, Collocation and "
                    "Listeners columns)");
    }
    if (!c.script_args.empty()) {
      return refuse("nothing may follow the experiment file " + c.file + " (found '" + c.script_args[0] +
                    "'); put options before it");
    }
  }
  return Result<RadtCommand>(std::move(c));
}

std::string ScriptAsExperiment(const RadtCommand& c, bool has_gpu) {
  std::string devices = !c.devices.empty() ? c.devices : has_gpu ? "0" : "-";
  return Concat({"Experiment,Workload,Name,Status,Run,Devices,Collocation,File,Listeners,Params\n",
                 CsvField(c.experiment), ",", CsvField(c.workload), ",", CsvField(c.name), ",,,",
                 CsvField(devices), ",", CsvField(c.collocation), ",", CsvField(c.file), ",",
                 CsvField(c.listeners), ",", CsvField(ParamsCell(c.script_args)), "\n"});
}

std::optional<Result<std::vector<std::string>>> RadtRunForm(const std::vector<std::string>& args) {
  if (args.empty() || args[0] != "run") return std::nullopt;
  auto dashes = std::find(args.begin(), args.end(), "--");
  bool radt = std::any_of(args.begin(), dashes, [](const std::string& a) {
    return a == "-c" || a == "--command" || StartsWith(a, "--command=");
  });
  if (!radt) return std::nullopt;
  std::string listeners, file, params;
  for (auto it = args.begin() + 1; it != args.end(); ++it) {
    std::string option = *it, value;
    if (size_t eq = option.find('='); StartsWith(option, "--") && eq != std::string::npos) {
      value = option.substr(eq + 1);
      option = option.substr(0, eq);
    } else if (it + 1 != args.end()) {
      value = *++it;
    } else {
      return Result<std::vector<std::string>>(Status::InvalidArgument(option + " needs a value"));
    }
    if (option == "-l" || option == "--listeners") {
      listeners = value;
    } else if (option == "-c" || option == "--command") {
      file = value;
    } else if (option == "-p" || option == "--params") {
      params = value;
    } else {
      return Result<std::vector<std::string>>(Status::InvalidArgument(
          "radT's `run` takes -l LISTENERS, -c FILE and -p PARAMS; '" + option + "' is not one of them"));
    }
  }
  std::vector<std::string> out = {"run"};
  if (!listeners.empty()) out.insert(out.end(), {"-l", listeners});
  out.push_back(file);
  for (std::string& word : ParamsToArguments(params)) out.push_back(std::move(word));
  return Result<std::vector<std::string>>(std::move(out));
}

ScheduleOptions ScheduleFor(const RadtCommand& c, bool has_gpu) {
  ScheduleOptions o;
  o.rerun = c.rerun;
  o.max_epochs = c.max_epochs;
  if (c.max_minutes > 0) o.max_time = std::to_string(c.max_minutes) + "m";
  if (c.is_script()) {
    o.file = "the command line";
    o.text = ScriptAsExperiment(c, has_gpu);
  } else {
    o.file = c.file;
  }
  o.group = c.group;
  return o;
}

}  // namespace tb::cli
