// The recorded DCGM trace of testdata/ (radT's JSON: one array per column, at 1 Hz, kept
// zstd-compressed): parsed, or written into a run, each column under its metric catalog
// name, label gpu=0.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/read_file.h"
#include "metrics/catalog.h"
#include "store/series_writer.h"

namespace tb {

#ifdef TRAINBENCH_RECORDED_DATA
inline const std::string kRecordedTrace = TRAINBENCH_RECORDED_DATA "/radt-dcgm-trace-1hz.json.zst";
#endif

struct RecordedTrace {
  int64_t start_ms = 0;
  std::vector<double> power_watts;  // the power column as written
};

// The file is testdata/radt-dcgm-trace-1hz.json.zst; throws when it cannot be read.
inline nlohmann::json ReadRecordedTrace(const std::string& path) {
  std::string text, error;
  if (!ReadWholeFile(path, &text, &error)) throw std::runtime_error(error);
  return nlohmann::json::parse(text);
}

inline RecordedTrace WriteRecordedTrace(SeriesWriter& writer, const std::string& path) {
  nlohmann::json trace = ReadRecordedTrace(path);
  std::vector<int64_t> times;
  for (const nlohmann::json& t : trace["Timestamp"]) times.push_back(t.get<int64_t>());
  RecordedTrace out;
  if (!times.empty()) out.start_ms = times.front();
  for (auto& [column, values] : trace.items()) {
    std::string metric = column == "DCGMI - Power Usage" ? "gpu.power.draw_watts" : "";
    for (const MetricInfo& m : MetricCatalog()) {
      if (m.radt_name == column) metric = std::string(m.name);
    }
    if (metric.empty()) continue;
    for (size_t i = 0; i < times.size(); ++i) {
      if (!values[i].is_number()) continue;
      writer.Append(metric, "gpu=0", Point{times[i], values[i].get<double>()});
      if (metric == "gpu.power.draw_watts") out.power_watts.push_back(values[i].get<double>());
    }
  }
  return out;
}

}  // namespace tb
