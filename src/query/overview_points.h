// What SeriesReader asks of a series' overview (store/format/chunk_summary.h) for a chart of
// `buckets`: a bucket covering the smallest summary level's group (PointsForChart), or the
// smallest group of means (MeansForChart). Shared by series_reader.cc and
// series_read_ahead.cc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "store/format/chunk_summary.h"

namespace tb {

inline int64_t ChartOverviewPoints(size_t buckets) {
  return static_cast<int64_t>(buckets) * kSummaryGroups[0];
}
inline int64_t MeansOverviewPoints(size_t buckets) { return static_cast<int64_t>(buckets) * kMeanGroups[0]; }

}  // namespace tb
