#include "query/workload_mean.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

namespace tb {

Status ReadAheadForWorkloadMeans(SeriesReader& reader, const std::vector<std::pair<SeriesInfo, bool>>& series,
                                 XAxis axis, bool ranged, size_t buckets) {
  if (axis != XAxis::kRelative) return reader.ReadAheadWhole(series);
  if (!ranged) TB_RETURN_IF_ERROR(reader.ReadAheadForMeans(series, buckets));
  return reader.ReadJournalsAhead(series);  // a live mean's refresh reads little else
}

Result<MeanPart> RunForMean(SeriesReader& reader, const RunRecord& run, int64_t series_id, XAxis axis,
                            std::optional<double> from, std::optional<double> to, size_t buckets) {
  bool finished = Finished(run);
  MeanPart part;
  if (axis != XAxis::kRelative) {
    Result<std::shared_ptr<const std::vector<Point>>> points = reader.Points(series_id, finished);
    if (!points.ok()) return points.status();
    part.xy = AlignedRun(**points, run.start_ms, axis);
  } else if (from) {
    double margin = to ? (*to - *from) / static_cast<double>(std::max<size_t>(buckets, 1)) : 0;
    auto at = [&](double seconds) {
      return run.start_ms + static_cast<int64_t>(std::floor(std::max(seconds, -9e12) * 1000));
    };
    Result<SeriesReader::Window> window =
        reader.PointsForChart(series_id, finished, at(*from - margin),
                              to ? at(*to + margin) : std::numeric_limits<int64_t>::max(), /*buckets=*/0);
    if (!window.ok()) return window.status();
    part.xy = AlignedRun(*window->points, run.start_ms, axis);
  } else {
    Result<SeriesReader::Window> window = reader.MeansForChart(series_id, finished, buckets);
    if (!window.ok()) return window.status();
    part.xy = AlignedRun(*window->points, run.start_ms, axis, window->spans);
    if (window->last_ms > 0 && !window->points->empty())
      part.length = static_cast<double>(window->last_ms - run.start_ms) / 1000.0;
  }
  if (!part.xy.x.empty()) part.length = std::max(part.length, part.xy.x.back());
  return part;
}

}  // namespace tb
