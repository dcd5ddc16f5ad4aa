// What a workload's mean reads of its runs, for serve's /api/v1/aggregate and the figures
// the server draws: each run's series aligned on the mean's x axis, read as the mean's
// buckets need (group means over a whole run, the chunks in range when zoomed, every point
// by step), so its cost follows the buckets, not the runs' length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "query/chart_series.h"
#include "query/series_reader.h"

namespace tb {

// Before RunForMean of many series (each with whether its run has ended), what they read
// in a few queries for all of them: over time and a whole run, the finished runs'
// overviews (and the chunks of those too short for their means); by step, the finished
// runs' chunks; over time, the running runs' journals. `ranged`: the mean has a `from`.
Status ReadAheadForWorkloadMeans(SeriesReader& reader, const std::vector<std::pair<SeriesInfo, bool>>& series,
                                 XAxis axis, bool ranged, size_t buckets);

// One run's series aligned for a workload's mean in `buckets` buckets over [from, to]
// (x: seconds since the run's start, or the step):
//  - over time and the whole run: its chunks' group means where a bucket covers a group,
//    else the points (SeriesReader::MeansForChart);
//  - over time within a range: the points of the chunks that reach into it, from a bucket
//    before it to a bucket after (a run without a point in a bucket is interpolated there);
//  - by step: every point.
struct MeanPart {
  XYSeries xy;
  double length = 0;  // the x of the run's newest point (0 when it has none)
};
Result<MeanPart> RunForMean(SeriesReader& reader, const RunRecord& run, int64_t series_id, XAxis axis,
                            std::optional<double> from, std::optional<double> to, size_t buckets);

}  // namespace tb
