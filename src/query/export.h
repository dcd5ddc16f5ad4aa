// Export of samples at full resolution, one format for `trainbench export` and serve's
// /api/v1/export, written series by series (one series is decoded at a time, so memory
// stays bounded by the largest series):
//   csv:  header "run_id,metric,labels,time_ms,step,value"; fields quoted as CSV needs;
//         empty step when none; NaN and infinities as nan, inf, -inf
//   json: {"series":[{"run_id","metric","labels","unit","points":[[time_ms,value] or
//         [time_ms,value,step]]}]}; NaN and infinities as the strings "NaN", "Infinity",
//         "-Infinity" (JSON has no such numbers)
//   jsonl: one JSON object a point, a line each: {"run_id","metric","labels","time_ms",
//         "step" (null when none),"value"} (NaN and infinities as in json), for tools that
//         read JSON lines (jq, DuckDB, pandas.read_json(lines=True))
//   columnar: binary, for readers that map typed arrays without parsing (numpy.frombuffer):
//         "TBCOLS1\n", then a frame a series: its header's length (uint32, little endian),
//         the header (JSON: run_id, metric, labels, unit, count, steps, and start_ms: the run's start), zeros
//         up to a multiple of 8 bytes from the start, then `count` int64 time_ms, `count` float64 values and,
//         when "steps" is true, `count` int64 steps (-2^63, the smallest int64, where a point has none: a
//         script may log negative steps); all little endian, every array 8-byte aligned from the start of the
//         answer
// A series that cannot be read ends the export with an error, never a shorter answer.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace tb {

// The first bytes of a columnar export.
inline constexpr std::string_view kColumnarMagic = "TBCOLS1\n";

enum class ExportFormat { kCsv, kJson, kJsonLines, kColumnar };

// Parses "csv", "json", "jsonl" or "columnar".
Result<ExportFormat> ParseExportFormat(std::string_view text);

class SeriesExport {
 public:
  explicit SeriesExport(ExportFormat format) : format_(format) {}
  std::string_view ContentType() const;
  std::string_view FileExtension() const;  // "csv", "json", "jsonl", "tbcols"
  // The text before the first series, and after the last.
  std::string Header() const;
  std::string Footer() const;
  // The start of a run whose series follow (columnar headers carry it: a reader's elapsed).
  void SetRunStart(const std::string& run_id, int64_t start_ms) { run_start_[run_id] = start_ms; }
  // Appends one series with its points to `out`.
  void Append(std::string& out, const SeriesInfo& series, const std::vector<Point>& points);

 private:
  void AppendColumnar(std::string& out, const SeriesInfo& series, const std::vector<Point>& points);
  void AppendJsonLines(std::string& out, const SeriesInfo& series, const std::vector<Point>& points);

  ExportFormat format_;
  bool first_ = true;
  uint64_t written_ = 0;  // columnar: bytes of the answer so far (its arrays' alignment)
  std::map<std::string, int64_t> run_start_;
};

// The series of `run_id` to export: all, or those of `metric` (a script's metric also by the
// name the script logged: "loss" for train.loss); NotFound naming the command that lists
// the run's metrics when it has none of that name.
Result<std::vector<SeriesInfo>> SeriesToExport(Store& store, const std::string& run_id,
                                               const std::string& metric);

// Writes the runs' series (only `metric` when not empty) to `out`, in one answer; with a
// metric, a run without it is left out unless every run lacks it (NotFound then).
Status ExportRuns(Store& store, const std::vector<std::string>& run_ids, const std::string& metric,
                  ExportFormat format, std::FILE* out);

// Shortest text that reads back as exactly `v` ("52.183", "1e+20", "nan", "inf").
std::string FormatDouble(double v);

}  // namespace tb
