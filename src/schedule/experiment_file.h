// Experiment files: radT's CSV (header Experiment, Workload, Status, Run, Devices,
// Collocation, File, Listeners, Params, in any order, cells padded with spaces, quoted
// fields), plus optional columns trainbench understands: MaxTime (a run's time limit, as
// --max-time takes it) and Env (KEY=VALUE pairs separated by spaces for the run, and the
// directory of a venv or conda environment to run the File with) and Progress (the
// pattern of the progress lines the script prints, as `run --progress` takes it).
//
// Parsing keeps every line's raw text so that writing Status and Run back changes those
// two cells only: other cells, columns, padding, comments and rows stay as the user wrote
// them. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tb {

struct ExperimentRow {
  size_t line = 0;  // 1-based line in the file
  std::string experiment, workload, status, run, devices, collocation, file, listeners, params;
  std::string max_time, env, progress;  // optional columns; "" when absent
  std::string name;                     // optional Name column (radT 0.2.29): runs named "(W L) Name"
};

struct ExperimentFile {
  std::vector<std::string> lines;         // raw text of every line, without line ends
  std::map<std::string, size_t> columns;  // header name (trimmed) -> cell index
  std::vector<ExperimentRow> rows;        // data rows in file order
  bool byte_order_mark = false;           // the file began with UTF-8's (Excel writes one); kept
  bool crlf = false;                      // its lines end in CR LF (Windows, Excel); kept
};

// Parses `text`; errors name `path`, the line and the column, and say what is wrong.
Result<ExperimentFile> ParseExperimentFile(std::string_view text, const std::string& path);

// The cells of one CSV line as raw text (quotes and padding kept), split at commas
// outside double quotes.
std::vector<std::string> SplitRawCells(std::string_view line);
// A raw cell's value: trimmed, unquoted ("" inside quotes is one quote).
std::string CellValue(std::string_view raw);

// `line` with cell `column` holding `value`, keeping the cell's padding; quoted when the
// value needs it.
std::string ReplaceCell(std::string_view line, size_t column, std::string_view value);

// The file's text with Status and Run of the rows at the given 1-based lines replaced.
struct CellUpdate {
  size_t line = 0;
  std::string status, run;
};
std::string UpdateStatusAndRun(const ExperimentFile& file, const std::vector<CellUpdate>& updates);

// Splits a Params cell into words as a shell would (spaces separate, quotes group).
std::vector<std::string> SplitWords(std::string_view s);

// A Params cell as the script's arguments: its words as a shell splits them, each given to
// the script as written, as radT does ("--batch-size 64", "batch-size=64",
// "trainer.max_epochs=2").
std::vector<std::string> ParamsToArguments(std::string_view params);

// The line of `current` (the file as it is now) holding the row that was `original` when
// the experiment started: the same line if it still holds the same row (Status and Run
// aside), else the first such row elsewhere (the user inserted or removed lines above),
// skipping lines in `taken`; nullopt when the user deleted or changed it.
std::optional<size_t> MatchRow(const ExperimentFile& current, const ExperimentRow& original,
                               const std::set<size_t>& taken);

}  // namespace tb
