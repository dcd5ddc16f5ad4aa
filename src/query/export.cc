#include "query/export.h"

#include <cerrno>
#include <charconv>
#include <cmath>

#include "base/strings.h"
#include "metrics/catalog.h"

namespace tb {
namespace {

// Appends `v` as text; `json`: NaN and infinities as JSON strings.
char* WriteValue(char* w, double v, bool json) {
  if (std::isfinite(v)) return std::to_chars(w, w + 32, v).ptr;
  std::string_view text = std::isnan(v) ? (json ? "\"NaN\"" : "nan")
                          : v > 0       ? (json ? "\"Infinity\"" : "inf")
                                        : (json ? "\"-Infinity\"" : "-inf");
  return std::copy(text.begin(), text.end(), w);
}

}  // namespace

std::string FormatDouble(double v) {
  char buf[64];
  return std::string(buf, WriteValue(buf, v, false));
}

Result<ExportFormat> ParseExportFormat(std::string_view text) {
  if (text == "csv") return ExportFormat::kCsv;
  if (text == "json") return ExportFormat::kJson;
  return Status::InvalidArgument("the export format is csv or json, not '" + Printable(text) + "'");
}

std::string_view SeriesExport::ContentType() const {
  return format_ == ExportFormat::kCsv ? "text/csv" : "application/json";
}

std::string SeriesExport::Header() const {
  return format_ == ExportFormat::kCsv ? "run_id,metric,labels,time_ms,step,value\n" : "{\"series\":[";
}

std::string SeriesExport::Footer() const { return format_ == ExportFormat::kCsv ? "" : "]}\n"; }

void SeriesExport::Append(std::string& out, const SeriesInfo& s, const std::vector<Point>& points) {
  bool csv = format_ == ExportFormat::kCsv;
  std::string prefix;
  if (csv) {
    prefix = CsvField(s.run_id) + "," + CsvField(s.metric) + "," + CsvField(s.labels) + ",";
  } else {
    prefix = Concat({first_ ? "" : ",", "{\"run_id\":", JsonQuote(s.run_id),
                     ",\"metric\":", JsonQuote(s.metric), ",\"labels\":", JsonQuote(s.labels),
                     ",\"unit\":", JsonQuote(MetricUnit(s.metric)), ",\"points\":["});
  }
  first_ = false;
  // Sized once for the longest text a point can take, trimmed after.
  size_t at = out.size();
  out.resize(at + prefix.size() + points.size() * ((csv ? prefix.size() : 0) + 72) + 3);
  char* w = out.data() + at;
  if (!csv) w = std::copy(prefix.begin(), prefix.end(), w);
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    if (csv) {
      w = std::copy(prefix.begin(), prefix.end(), w);
      w = std::to_chars(w, w + 24, p.time_ms).ptr;
      *w++ = ',';
      if (p.step != kNoStep) w = std::to_chars(w, w + 24, p.step).ptr;
      *w++ = ',';
      w = WriteValue(w, p.value, false);
      *w++ = '\n';
      continue;
    }
    if (i > 0) *w++ = ',';
    *w++ = '[';
    w = std::to_chars(w, w + 24, p.time_ms).ptr;
    *w++ = ',';
    w = WriteValue(w, p.value, true);
    if (p.step != kNoStep) {
      *w++ = ',';
      w = std::to_chars(w, w + 24, p.step).ptr;
    }
    *w++ = ']';
  }
  if (!csv) {
    *w++ = ']';
    *w++ = '}';
  }
  out.resize(static_cast<size_t>(w - out.data()));
}

Result<std::vector<SeriesInfo>> SeriesToExport(Store& store, const std::string& run_id,
                                               const std::string& metric) {
  Result<std::vector<SeriesInfo>> all = store.ListSeries(run_id);
  if (!all.ok()) return all.status();
  std::vector<SeriesInfo> series;
  for (const SeriesInfo& s : *all) {
    if (metric.empty() || s.metric == metric) series.push_back(s);
  }
  if (series.empty() && !metric.empty()) {
    return Status::NotFound("run " + run_id + " has no metric '" + metric + "'; `trainbench show " +
                            run_id.substr(0, 8) + "` lists its metrics");
  }
  return series;
}

Status ExportRun(Store& store, const std::string& run_id, const std::string& metric, ExportFormat format,
                 std::FILE* out) {
  Result<std::vector<SeriesInfo>> series = SeriesToExport(store, run_id, metric);
  if (!series.ok()) return series.status();
  SeriesExport exporter(format);
  std::string piece = exporter.Header();
  for (const SeriesInfo& s : *series) {
    Result<std::vector<Point>> points = ReadSeriesPoints(store, s.id);
    if (!points.ok()) return points.status();
    exporter.Append(piece, s, *points);
    // A reader gone (`| head`) ends the export here, not after every series is read; errno
    // still says why when this returns.
    if (std::fwrite(piece.data(), 1, piece.size(), out) != piece.size())
      return Status::FromErrno("cannot write the export", errno);
    piece.clear();
  }
  piece += exporter.Footer();
  if (std::fwrite(piece.data(), 1, piece.size(), out) != piece.size() || std::fflush(out) != 0)
    return Status::FromErrno("cannot write the export", errno);
  return Status::Ok();
}

}  // namespace tb
