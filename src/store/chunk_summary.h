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

// The group sizes written beside each sealed chunk: one level, 2,048 points (8 points for
// a chunk of 4,096). Finer levels cost more at rest than they save: a level of 256 and one
// of 2,048 took the recorded DCGM trace from 2.01 to 2.21 bytes a point, and the codec
// decodes well over 100 million points a second, so a range of up to a few thousand
// points per pixel is read whole in milliseconds.
inline constexpr int64_t kSummaryGroups[] = {2048};

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
