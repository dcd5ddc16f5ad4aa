#include "query/export.h"

#include <charconv>
#include <cmath>

#include "base/strings.h"
#include "metrics/catalog.h"

namespace tb {
namespace {

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string JsonNumber(double v) {
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  return FormatDouble(v);
}

}  // namespace

std::string FormatDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

Status ExportRun(Store& store, const std::string& run_id, const std::string& metric, ExportFormat format,
                 std::FILE* out) {
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
  if (format == ExportFormat::kCsv) {
    std::fputs("run_id,metric,labels,time_ms,step,value\n", out);
  } else {
    std::fprintf(out, "{\"run_id\":%s,\"series\":[", JsonQuote(run_id).c_str());
  }
  for (size_t i = 0; i < series.size(); ++i) {
    const SeriesInfo& s = series[i];
    Result<std::vector<Point>> points = ReadSeriesPoints(store, s.id);
    if (!points.ok()) return points.status();
    if (format == ExportFormat::kCsv) {
      std::string prefix = run_id + "," + CsvField(s.metric) + "," + CsvField(s.labels) + ",";
      for (const Point& p : *points) {
        std::string step = p.step == kNoStep ? "" : std::to_string(p.step);
        std::fprintf(out, "%s%lld,%s,%s\n", prefix.c_str(), static_cast<long long>(p.time_ms), step.c_str(),
                     FormatDouble(p.value).c_str());
      }
    } else {
      const MetricInfo* info = FindMetric(s.metric);
      std::fprintf(out, "%s{\"metric\":%s,\"labels\":%s,\"unit\":%s,\"points\":[", i ? "," : "",
                   JsonQuote(s.metric).c_str(), JsonQuote(s.labels).c_str(),
                   JsonQuote(info ? std::string(info->unit) : "").c_str());
      for (size_t j = 0; j < points->size(); ++j) {
        const Point& p = (*points)[j];
        std::fprintf(out, "%s[%lld,%s", j ? "," : "", static_cast<long long>(p.time_ms),
                     JsonNumber(p.value).c_str());
        if (p.step != kNoStep) std::fprintf(out, ",%lld", static_cast<long long>(p.step));
        std::fputc(']', out);
      }
      std::fputs("]}", out);
    }
  }
  if (format == ExportFormat::kJson) std::fputs("]}\n", out);
  if (std::ferror(out)) return Status::IoError("cannot write the export");
  return Status::Ok();
}

}  // namespace tb
