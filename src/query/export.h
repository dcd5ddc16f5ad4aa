// Export of samples at full resolution, one format for `trainbench export` and serve's
// /api/v1/export, written series by series (one series is decoded at a time, so memory
// stays bounded by the largest series):
//   csv:  header "run_id,metric,labels,time_ms,step,value"; fields quoted as CSV needs;
//         empty step when none; NaN and infinities as nan, inf, -inf
//   json: {"series":[{"run_id","metric","labels","unit","points":[[time_ms,value] or
//         [time_ms,value,step]]}]}; NaN and infinities as the strings "NaN", "Infinity",
//         "-Infinity" (JSON has no such numbers)
// A series that cannot be read ends the export with an error, never a shorter answer.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace tb {

enum class ExportFormat { kCsv, kJson };

// Parses "csv" or "json".
Result<ExportFormat> ParseExportFormat(std::string_view text);

class SeriesExport {
 public:
  explicit SeriesExport(ExportFormat format) : format_(format) {}
  std::string_view ContentType() const;
  // The text before the first series, and after the last.
  std::string Header() const;
  std::string Footer() const;
  // Appends one series with its points to `out`.
  void Append(std::string& out, const SeriesInfo& series, const std::vector<Point>& points);

 private:
  ExportFormat format_;
  bool first_ = true;
};

// The series of `run_id` to export: all, or those of `metric`; NotFound naming the command
// that lists the run's metrics when it has none of that name.
Result<std::vector<SeriesInfo>> SeriesToExport(Store& store, const std::string& run_id,
                                               const std::string& metric);

// Writes the run's series (only `metric` when not empty) to `out`.
Status ExportRun(Store& store, const std::string& run_id, const std::string& metric, ExportFormat format,
                 std::FILE* out);

// Shortest text that reads back as exactly `v` ("52.183", "1e+20", "nan", "inf").
std::string FormatDouble(double v);

}  // namespace tb
