#include "query/export.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include "base/strings.h"
#include "metrics/catalog.h"
#include "metrics/names.h"

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

namespace {

// Each format's name, media type, file extension and the text before its first series.
struct FormatInfo {
  ExportFormat format;
  std::string_view name, content_type, extension, header;
};
constexpr FormatInfo kFormats[] = {
    {ExportFormat::kCsv, "csv", "text/csv", "csv", "run_id,metric,labels,time_ms,step,value\n"},
    {ExportFormat::kJson, "json", "application/json", "json", "{\"series\":["},
    {ExportFormat::kJsonLines, "jsonl", "application/jsonl", "jsonl", ""},
    {ExportFormat::kColumnar, "columnar", "application/octet-stream", "tbcols", kColumnarMagic},
};

const FormatInfo& InfoOf(ExportFormat format) {
  for (const FormatInfo& f : kFormats) {
    if (f.format == format) return f;
  }
  return kFormats[0];
}

}  // namespace

Result<ExportFormat> ParseExportFormat(std::string_view text) {
  for (const FormatInfo& f : kFormats) {
    if (f.name == text) return f.format;
  }
  return Status::InvalidArgument("the export format is csv, json, jsonl or columnar, not '" +
                                 Printable(text) + "'");
}

std::string_view SeriesExport::ContentType() const { return InfoOf(format_).content_type; }

std::string_view SeriesExport::FileExtension() const { return InfoOf(format_).extension; }

std::string SeriesExport::Header() const { return std::string(InfoOf(format_).header); }

std::string SeriesExport::Footer() const { return format_ == ExportFormat::kJson ? "]}\n" : ""; }

void SeriesExport::AppendColumnar(std::string& out, const SeriesInfo& s, const std::vector<Point>& points) {
  if (written_ == 0) written_ = kColumnarMagic.size();
  bool steps = std::any_of(points.begin(), points.end(), [](const Point& p) { return p.step != kNoStep; });
  std::string header =
      Concat({"{\"run_id\":", JsonQuote(s.run_id), ",\"metric\":", JsonQuote(s.metric),
              ",\"labels\":", JsonQuote(s.labels), ",\"unit\":", JsonQuote(MetricUnit(s.metric)),
              ",\"count\":", std::to_string(points.size()), ",\"steps\":", steps ? "true" : "false"});
  if (auto start = run_start_.find(s.run_id); start != run_start_.end())
    header += Concat({",\"start_ms\":", std::to_string(start->second)});
  header += "}";
  size_t at = out.size();
  size_t head = 4 + header.size();
  size_t pad = (8 - (written_ + head) % 8) % 8;
  size_t arrays = points.size() * 8 * (steps ? 3 : 2);
  out.resize(at + head + pad + arrays, '\0');
  char* w = out.data() + at;
  auto put = [&w](const void* v, size_t n) {  // little endian: this build's x86-64 and arm64
    std::memcpy(w, v, n);
    w += n;
  };
  uint32_t length = static_cast<uint32_t>(header.size());
  put(&length, 4);
  put(header.data(), header.size());
  w += pad;
  for (const Point& p : points) put(&p.time_ms, 8);
  for (const Point& p : points) put(&p.value, 8);
  if (steps) {
    for (const Point& p : points) {
      put(&p.step, 8);  // kNoStep where none
    }
  }
  written_ += head + pad + arrays;
}

void SeriesExport::AppendJsonLines(std::string& out, const SeriesInfo& s, const std::vector<Point>& points) {
  std::string prefix = Concat({"{\"run_id\":", JsonQuote(s.run_id), ",\"metric\":", JsonQuote(s.metric),
                               ",\"labels\":", JsonQuote(s.labels), ",\"time_ms\":"});
  size_t at = out.size();
  out.resize(at + points.size() * (prefix.size() + 96));
  char* w = out.data() + at;
  for (const Point& p : points) {
    w = std::copy(prefix.begin(), prefix.end(), w);
    w = std::to_chars(w, w + 24, p.time_ms).ptr;
    static constexpr std::string_view kStep = ",\"step\":", kNull = "null", kValue = ",\"value\":";
    w = std::copy(kStep.begin(), kStep.end(), w);
    w = p.step == kNoStep ? std::copy(kNull.begin(), kNull.end(), w) : std::to_chars(w, w + 24, p.step).ptr;
    w = std::copy(kValue.begin(), kValue.end(), w);
    w = WriteValue(w, p.value, true);
    *w++ = '}';
    *w++ = '\n';
  }
  out.resize(static_cast<size_t>(w - out.data()));
}

void SeriesExport::Append(std::string& out, const SeriesInfo& s, const std::vector<Point>& points) {
  if (format_ == ExportFormat::kColumnar) return AppendColumnar(out, s, points);
  if (format_ == ExportFormat::kJsonLines) return AppendJsonLines(out, s, points);
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
  // A script's metric by the name the script logged ("loss" for train.loss), unless a metric
  // of that very name exists.
  if (series.empty() && !metric.empty()) {
    std::string logged = Concat({metric::kScriptPrefix, metric});
    for (const SeriesInfo& s : *all) {
      if (s.metric == logged) series.push_back(s);
    }
  }
  if (series.empty() && !metric.empty()) {
    return Status::NotFound("run " + run_id + " has no metric '" + metric + "'; `trainbench show " +
                            run_id.substr(0, 8) + "` lists its metrics");
  }
  return series;
}

Status ExportRuns(Store& store, const std::vector<std::string>& run_ids, const std::string& metric,
                  ExportFormat format, std::FILE* out) {
  std::vector<SeriesInfo> series;
  Status missing = Status::Ok();
  for (const std::string& id : run_ids) {
    Result<std::vector<SeriesInfo>> of_run = SeriesToExport(store, id, metric);
    if (!of_run.ok()) {
      if (of_run.status().code() != Status::Code::kNotFound) return of_run.status();
      missing = of_run.status();
      continue;
    }
    series.insert(series.end(), of_run->begin(), of_run->end());
  }
  if (series.empty() && !missing.ok()) {
    if (run_ids.size() == 1) return missing;
    return Status::NotFound(Concat({"none of the ", std::to_string(run_ids.size()), " runs has the metric '",
                                    metric, "'; `trainbench show RUN` lists a run's metrics"}));
  }
  SeriesExport exporter(format);
  Result<std::vector<RunRecord>> runs = store.FindRunsById(run_ids);
  if (!runs.ok()) return runs.status();
  for (const RunRecord& r : *runs) exporter.SetRunStart(r.id, r.start_ms);
  std::string piece = exporter.Header();
  for (const SeriesInfo& s : series) {
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
