#include "schedule/experiment_file.h"

#include <algorithm>
#include <cctype>

#include "base/strings.h"

namespace tb {
namespace {

const char* const kRequired[] = {"Experiment",  "Workload", "Status",    "Run",   "Devices",
                                 "Collocation", "File",     "Listeners", "Params"};

// What radT writes or accepts in a Collocation cell, in trainbench's words: an empty cell
// or pandas' "nan" is "-", any case of "mps" is "MPS".
std::string CollocationCell(const std::string& cell) {
  if (cell.empty() || cell == "nan" || cell == "NaN") return "-";
  std::string upper = cell;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (upper == "MPS" || StartsWith(upper, "MPS:")) return upper;
  return cell;
}

}  // namespace

std::vector<std::string> SplitRawCells(std::string_view line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) {
      cells.emplace_back();
      continue;
    }
    cells.back() += c;
  }
  return cells;
}

std::string CellValue(std::string_view raw) {
  std::string_view v = Trim(raw);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
    std::string out;
    v = v.substr(1, v.size() - 2);
    for (size_t i = 0; i < v.size(); ++i) {
      out += v[i];
      if (v[i] == '"' && i + 1 < v.size() && v[i + 1] == '"') ++i;
    }
    return out;
  }
  return std::string(v);
}

std::string ReplaceCell(std::string_view line, size_t column, std::string_view value) {
  std::vector<std::string> cells = SplitRawCells(line);
  if (column >= cells.size()) cells.resize(column + 1);
  const std::string& raw = cells[column];
  size_t lead = raw.find_first_not_of(" \t");
  size_t trail = raw.find_last_not_of(" \t");
  std::string before = lead == std::string::npos ? raw : raw.substr(0, lead);
  std::string after = trail == std::string::npos ? "" : raw.substr(trail + 1);
  // A value is one line of the file: control characters (a run name set through the API
  // may hold a newline) become spaces.
  std::string text(value);
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  text = CsvField(text);
  // Padded cells keep their width where the new value fits: radT's files line up columns.
  bool padded = lead == std::string::npos || lead > 0;
  size_t width = raw.size() - after.size();
  if (padded && text.size() <= width) {
    before = std::string(width - text.size(), ' ');
  } else if (lead == std::string::npos) {
    before.clear();  // an empty padded cell too narrow for the value
  }
  cells[column] = before + text + after;
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) out += (i > 0 ? "," : "") + cells[i];
  return out;
}

Result<ExperimentFile> ParseExperimentFile(std::string_view text, const std::string& path) {
  ExperimentFile file;
  if (StartsWith(text, "\xEF\xBB\xBF")) {
    file.byte_order_mark = true;
    text.remove_prefix(3);
  }
  size_t lf = text.find('\n');
  file.crlf = lf != std::string_view::npos && lf > 0 && text[lf - 1] == '\r';
  for (std::string_view line : Split(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    file.lines.emplace_back(line);
  }
  while (!file.lines.empty() && Trim(file.lines.back()).empty()) file.lines.pop_back();
  size_t header = 0;
  while (header < file.lines.size() && (Trim(file.lines[header]).empty() || file.lines[header][0] == '#'))
    ++header;
  if (header == file.lines.size()) {
    return Status::InvalidArgument(
        path + ": empty; an experiment file starts with the header " +
        "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params");
  }
  std::vector<std::string> names = SplitRawCells(file.lines[header]);
  for (size_t i = 0; i < names.size(); ++i) file.columns[CellValue(names[i])] = i;
  for (const char* required : kRequired) {
    if (!file.columns.count(required)) {
      constexpr std::string_view kNeeded =
          "'; the header must name Experiment, Workload, Status, Run, Devices, Collocation, File, Listeners "
          "and "
          "Params (in any order)";
      return Status::InvalidArgument(
          Concat({path, ":", std::to_string(header + 1), ": no column '", required, kNeeded}));
    }
  }
  for (size_t n = header + 1; n < file.lines.size(); ++n) {
    const std::string& line = file.lines[n];
    if (Trim(line).empty() || line[0] == '#') continue;
    if (std::count(line.begin(), line.end(), '"') % 2 != 0) {
      return Status::InvalidArgument(Concat({path, ":", std::to_string(n + 1),
                                             ": a quote is not closed; a quoted cell ends with a second \" "
                                             "(a \" inside it is written \"\")"}));
    }
    std::vector<std::string> cells = SplitRawCells(line);
    if (cells.size() != names.size()) {
      return Status::InvalidArgument(
          Concat({path, ":", std::to_string(n + 1), ": ", std::to_string(cells.size()),
                  " cells, but the header has ", std::to_string(names.size()),
                  " (a comma too many or too few, or an unclosed quote?)"}));
    }
    auto cell = [&](const char* name) {
      auto it = file.columns.find(name);
      return it == file.columns.end() ? std::string() : CellValue(cells[it->second]);
    };
    ExperimentRow row;
    row.line = n + 1;
    row.experiment = cell("Experiment");
    row.workload = cell("Workload");
    row.status = cell("Status");
    row.run = cell("Run");
    row.devices = cell("Devices");
    row.collocation = CollocationCell(cell("Collocation"));
    row.file = cell("File");
    row.listeners = cell("Listeners");
    row.params = cell("Params");
    row.max_time = cell("MaxTime");
    row.env = cell("Env");
    row.progress = cell("Progress");
    row.name = cell("Name");
    auto bad = [&](const char* column, const std::string& what) {
      return Status::InvalidArgument(
          Concat({path, ":", std::to_string(row.line), ": column ", column, ": ", what}));
    };
    if (row.experiment.empty()) return bad("Experiment", "empty; every row names its experiment");
    if (row.workload.empty()) return bad("Workload", "empty; rows sharing a workload run together");
    if (row.file.empty()) return bad("File", "empty; name the script to run");
    file.rows.push_back(std::move(row));
  }
  if (file.rows.empty()) return Status::InvalidArgument(path + ": no rows below the header: nothing to run");
  return file;
}

std::string UpdateStatusAndRun(const ExperimentFile& file, const std::vector<CellUpdate>& updates) {
  std::vector<std::string> lines = file.lines;
  size_t status = file.columns.at("Status"), run = file.columns.at("Run");
  for (const CellUpdate& u : updates) {
    if (u.line == 0 || u.line > lines.size()) continue;
    std::string& line = lines[u.line - 1];
    line = ReplaceCell(line, status, u.status);
    line = ReplaceCell(line, run, u.run);
  }
  std::string out = file.byte_order_mark ? "\xEF\xBB\xBF" : "";
  for (const std::string& line : lines) out += line + (file.crlf ? "\r\n" : "\n");
  return out;
}

std::vector<std::string> SplitWords(std::string_view s) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : s) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

}  // namespace tb

namespace tb {

std::vector<std::string> ParamsToArguments(std::string_view params) { return SplitWords(params); }

std::optional<size_t> MatchRow(const ExperimentFile& current, const ExperimentRow& original,
                               const std::set<size_t>& taken) {
  auto same = [&](const ExperimentRow& r) {
    return r.experiment == original.experiment && r.workload == original.workload &&
           r.devices == original.devices && r.collocation == original.collocation &&
           r.file == original.file && r.listeners == original.listeners && r.params == original.params &&
           taken.count(r.line) == 0;
  };
  for (const ExperimentRow& r : current.rows) {
    if (r.line == original.line && same(r)) return r.line;
  }
  for (const ExperimentRow& r : current.rows) {
    if (same(r)) return r.line;
  }
  return std::nullopt;
}

}  // namespace tb
