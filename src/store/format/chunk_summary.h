// Levels of detail beside a sealed chunk: for each group of `group` consecutive points,
// its first, lowest, highest and last point (real points, with their times and steps, in
// time order, each once). A chart whose pixels each cover many groups is drawn from these
// instead of every point: the line's envelope is the same, and a spike, being the lowest
// or highest point of its group, is kept exactly at every level.
//   blob: varint level count, then per level (finest first): varint group size,
//         varint byte length, EncodeChunk of the level's points.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/format/chunk_codec.h"

namespace tb {

// The group sizes written beside each sealed chunk: 128 and 2,048 points (32 + 2 groups, at
// most 136 points, for a chunk of 4,096). A chart asks for a bucket per two pixel columns,
// and a level serves buckets of at least its group. At 128, a 1,000-pixel-wide chart of 50
// runs of 100,000 points (2,000 points a run, 200 raw points a bucket) reads 3% of the
// points instead of all of them. What that saves a chart and costs at rest:
// docs/PERFORMANCE.md (bench/serve_query, bench/store_ingest).
// A store written with other group sizes keeps its own levels, read where they fit.
inline constexpr int64_t kSummaryGroups[] = {128, 2048};

// Beside the levels, the mean of each group of points (of its values that are not NaN; NaN
// when none is) as one point at the middle of the group's time, whose `step` is the number
// of values averaged, in groups of 128 and 2,048 points (where a chunk holds two such
// groups, as the levels): a workload's mean over a long range is made from these (a run's
// mean in a bucket is the weighted mean of its groups there), not from every point, wherever
// a bucket covers a group, as a chart's envelope is drawn from the levels. In the blob each is
// an entry like a level's whose group is kMeansEntry + its group, which no level lookup picks
// (readers that predate them skip them). Stores written before 2026-11-26 hold means of 256
// points only, read where a bucket covers 256 points or more.
inline constexpr int64_t kMeanGroups[] = {128, 2048};
inline constexpr int64_t kMeansEntry = int64_t{1} << 40;

// The first, lowest, highest and last point of each group of `group` points.
std::vector<Point> SummarizeGroups(std::span<const Point> points, int64_t group);
// Each group of `group` points as its mean, as described at kMeanGroups.
std::vector<Point> GroupMeans(std::span<const Point> points, int64_t group);
// The blob for `points` (kSummaryGroups levels and the group means); "" when the chunk is
// too small to gain.
std::string EncodeSummary(std::span<const Point> points);
// Appends the blob's coarsest group means whose group is at most `group` to `out` and gives
// that group; NotFound when it has none so fine (or none at all: written before there were
// any), Corrupt when it is not a summary.
Result<int64_t> DecodeSummaryMeans(std::string_view blob, int64_t group, std::vector<Point>& out);
// The group sizes of the levels a blob holds.
std::vector<int64_t> SummaryLevels(std::string_view blob);
// Appends the points of the level with exactly `group` to `out`; NotFound when the blob
// has no such level, Corrupt when it is not a summary.
Status DecodeSummaryLevel(std::string_view blob, int64_t group, std::vector<Point>& out);
// The same for the coarsest level the blob holds whose group is at most `group` (a chunk
// too short for a coarse level has the finer ones, which draw the same envelope); NotFound
// when it holds none.
Status DecodeSummaryUpTo(std::string_view blob, int64_t group, std::vector<Point>& out);
// What a sealed chunk keeps in its series' overview (Store::ReadSeriesOverview): its
// summary (its levels and group means); a chunk too short for any level keeps its points
// (`data`, its EncodeChunk) as a level of group 1, which DecodeSummaryUpTo picks for any
// group.
std::string OverviewLevels(std::string_view summary, std::string_view data);
// The coarsest level whose groups are at most what one bucket of a chart covers
// (`points_per_bucket` raw points), so each bucket sees a whole group or more; nullopt:
// every point is needed. A group that straddles two buckets gives its extremes to the one
// they fall in, so the drawn envelope is exact to within one bucket (about two pixels), and
// every spike is drawn at its own time and value.
std::optional<int64_t> SummaryLevelFor(double points_per_bucket);

}  // namespace tb
