// The encoding of one chunk of a series: time-ordered points packed column by column.
//   times:  first value, then deltas of deltas (regular ticks cost about one byte)
//   values: when every value is a decimal with at most 15 digits after the point (what
//           tools print: 52.183 W), the exact scaled integers; otherwise (NaN, inf, -0.0,
//           binary fractions) the 64-bit patterns XOR-ed with the previous value's.
//           A chunk to be compressed (256 points or more) keeps them as byte planes (each
//           byte position of all values together, which zstd's entropy coder packs
//           apart), the integers after 0, 1 or 2 passes of differences, whichever
//           promises fewest bytes; a smaller or uncompressed one (a journal entry) as
//           varint deltas and interleaved bytes, which chunks of stores before schema 9
//           also use and which still decode.
//   steps:  absent, or first value then deltas
// (the times left out when several series share them: EncodeChunkTimes)
// as zigzag LEB128 varints where not planes, then compressed with zstd when that is
// smaller. Every value decodes to exactly the double that was encoded (bit for bit), which
// the codec checks before it picks the decimal form. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace tb {

inline constexpr int64_t kNoStep = std::numeric_limits<int64_t>::min();

struct Point {
  int64_t time_ms = 0;
  double value = 0;
  int64_t step = kNoStep;  // the training step for metrics a script logs

  bool operator==(const Point&) const = default;
};

// The most points a chunk holds: what SeriesWriter seals (series_writer.h). A stored chunk
// that says it holds more, or whose columns would unpack to more bytes than that many
// points can take, is refused as corrupt before anything is allocated for it: a hostile
// store (a planted SQLite file, any writer to a shared PostgreSQL) cannot make a reader
// allocate more than a chunk's worth (a 30 KB zstd frame once unpacked to 12 GB).
inline constexpr size_t kMaxChunkPoints = 4096;
// Bytes of columns a point takes at most: a time, a value and a step as 10-byte varints.
inline constexpr size_t kMaxChunkColumnBytes = kMaxChunkPoints * 30 + 64;

// Encodes `points` (any count up to kMaxChunkPoints, including 0). Times need not be increasing, but the
// encoding is smallest when they are.
// `compress` false skips zstd: for short-lived encodings such as journal entries.
// `with_times` false leaves the time column out (a flag says so): for series sampled on
// the same tick, whose chunks share one EncodeChunkTimes blob.
std::string EncodeChunk(std::span<const Point> points, bool compress = true, bool with_times = true);
// The times of `points` alone (a chunk whose values are all 0), for chunks encoded
// without theirs.
std::string EncodeChunkTimes(std::span<const Point> points);
// Appends the decoded points to `out`; `times` is the EncodeChunkTimes blob of a chunk
// encoded without its times (ignored otherwise). Corrupt when the bytes are not a chunk,
// or when its times are apart and `times` does not hold as many.
Status DecodeChunk(std::string_view data, std::vector<Point>& out, std::string_view times = {});

}  // namespace tb
