// One series as a chart draws it (serve's /api/v1/series): its points on the chosen x
// axis, within a range, downsampled to a budget (DownsampleIndices: spikes kept), as JSON
// {run, metric, labels, unit, total_points, in_range, last_ms, x: [...], y: [...]} with
// NaN and infinities as null (a gap in the chart); on a shared grid with place_steps,
// "x_place_steps" in place of "x".
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "query/downsample.h"
#include "store/store.h"

namespace tb {

// x values: seconds since the run started, Unix milliseconds, or the logged step.
enum class XAxis { kRelative, kWall, kStep };
std::optional<XAxis> ParseXAxis(std::string_view text);  // "relative", "wall", "step"
std::string_view XAxisName(XAxis axis);

struct ChartWindow {
  XAxis axis = XAxis::kRelative;
  std::optional<double> from, to;                      // x range; the series' own ends when absent
  std::optional<double> since;                         // only points stored after this time (Unix ms)
  size_t budget = std::numeric_limits<size_t>::max();  // points at most; max: every point
  // Buckets the series of one answer share (with a budget): each series keeps at most its
  // first, lowest, highest and last point per bucket, each moved onto one of four places a
  // quarter of a bucket apart. A chart of many runs then has one x per place instead of the
  // union of every run's times, which it walks once per line; a point moves by less than a
  // bucket (two pixels when the budget is twice the chart's width).
  std::optional<Buckets> grid;
  // The texts of the grid's places in the window (GridPlaceTexts), made once for every
  // series of an answer; absent: each series writes its own.
  std::shared_ptr<const struct GridTexts> grid_texts{};
  // On the grid, x as "x_place_steps" (the first point's place, then how many places each
  // point is after the one before: x = origin + place * width / 4) instead of numbers:
  // a step is mostly one digit where a number is four to ten.
  bool place_steps = false;
  // Every x and y as stored: no shared grid and, thinned too, every digit of y (a chart's
  // thinned values have 6 significant digits): what a notebook's thinning asks for.
  bool exact = false;
};

// The x of a grid's places 0..count-1 (origin + i * width / 4) as JSON numbers to `digits`
// significant digits, one after another in `text`, place i ending at ends[i]; `text` goes
// on 24 bytes past the last (a place's text is copied 24 bytes at a time).
struct GridTexts {
  int digits = 0;
  std::string text{};
  std::vector<uint32_t> ends{};
};
// The significant digits x is written with on `grid` when the largest x is `span` away
// from 0: enough to tell places a quarter of a bucket apart.
int GridDigits(const Buckets& grid, double span);
// The texts of the `count` places from the grid's origin.
std::shared_ptr<const GridTexts> GridPlaceTexts(const Buckets& grid, size_t count);

// `points` are the series' in storage order (time order from listeners; a script may log
// out of order, and steps may repeat or be absent). `total_points`: the series' when
// `points` are a part of it (a summary level, the chunks in range); -1: points.size().
std::string ChartSeriesJson(const RunRecord& run, const SeriesInfo& series, const std::vector<Point>& points,
                            const ChartWindow& window, int64_t total_points = -1);

// The time range (Unix ms) of a window on a time axis; the whole of int64 where open.
std::pair<int64_t, int64_t> WindowMillis(const ChartWindow& window, int64_t start_ms);

// A run's points on the x axis a workload mean aligns runs by: seconds since `start_ms`, or
// the logged step (points without one left out); sorted by x (a script may log steps out of
// order). Wall time is taken as seconds since the start. With `spans` (one per point, on a
// time axis): group means (SeriesReader::MeansForChart), each point's step the number of
// points it stands for, spanning those times.
XYSeries AlignedRun(const std::vector<Point>& points, int64_t start_ms, XAxis axis,
                    std::span<const std::pair<int64_t, int64_t>> spans = {});

// A time in ms as int64, saturating: 1e300 is "after everything", not undefined.
int64_t SaturatedInt64(double ms);

}  // namespace tb
