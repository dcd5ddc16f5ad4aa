// Export of a run's samples at full resolution, streamed series by series (one series
// is decoded at a time, so memory stays bounded by the largest series).
//   csv:  header "run_id,metric,labels,time_ms,step,value"; empty step when none;
//         NaN and infinities as nan, inf, -inf
//   json: {"run_id":..., "series":[{"metric","labels","unit","points":[[time_ms,value]
//         or [time_ms,value,step]]}]}; NaN and infinities as the strings "NaN",
//         "Infinity", "-Infinity" (JSON has no such numbers)
#pragma once

#include <cstdio>
#include <string>

#include "store/store.h"

namespace tb {

enum class ExportFormat { kCsv, kJson };

// Writes the run's series (only `metric` when not empty) to `out`. NotFound when the run
// has no such metric.
Status ExportRun(Store& store, const std::string& run_id, const std::string& metric, ExportFormat format,
                 std::FILE* out);

// Shortest text that reads back as exactly `v` ("52.183", "1e+20", "nan", "inf").
std::string FormatDouble(double v);

}  // namespace tb
