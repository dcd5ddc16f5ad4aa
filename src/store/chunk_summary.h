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

#include "store/chunk_codec.h"

namespace tb {

// The group sizes written beside each sealed chunk (4,096 points: 64 and 8 points, about
// 0.1 bytes per point at rest). Finer levels cost more than they save: the codec decodes
// some 100 million points a second, so a range of a few points per pixel is read whole.
inline constexpr int64_t kSummaryGroups[] = {256, 2048};

// The first, lowest, highest and last point of each group of `group` points.
std::vector<Point> SummarizeGroups(std::span<const Point> points, int64_t group);
// The blob for `points` (kSummaryGroups levels); "" when the chunk is too small to gain.
std::string EncodeSummary(std::span<const Point> points);
// The group sizes a blob holds.
std::vector<int64_t> SummaryLevels(std::string_view blob);
// Appends the points of the level with exactly `group` to `out`; NotFound when the blob
// has no such level, Corrupt when it is not a summary.
Status DecodeSummaryLevel(std::string_view blob, int64_t group, std::vector<Point>& out);
// The coarsest level whose groups are at most half of what one bucket of a chart covers
// (`points_per_bucket` raw points), so each bucket still sees two groups or more; nullopt:
// every point is needed.
std::optional<int64_t> SummaryLevelFor(double points_per_bucket);

}  // namespace tb
