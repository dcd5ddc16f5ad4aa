// The recorded DCGM trace of ../shared/data (radT's JSON: one array per column, at 1 Hz)
// written into a run: each column under its metric catalog name, label gpu=0.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "metrics/catalog.h"
#include "store/series_writer.h"

namespace tb {

struct RecordedTrace {
  int64_t start_ms = 0;
  std::vector<double> power_watts;  // the power column as written
};

inline RecordedTrace WriteRecordedTrace(SeriesWriter& writer, const std::string& path) {
  std::ifstream in(path);
  nlohmann::json trace = nlohmann::json::parse(in);
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
