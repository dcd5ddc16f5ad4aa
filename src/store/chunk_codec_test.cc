#include "store/chunk_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "tests/helpers/recorded_trace.h"

namespace tb {
namespace {

uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

void ExpectRoundTrip(const std::vector<Point>& points) {
  std::string data = EncodeChunk(points);
  std::vector<Point> back;
  ASSERT_TRUE(DecodeChunk(data, back).ok());
  ASSERT_EQ(back.size(), points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(back[i].time_ms, points[i].time_ms) << i;
    EXPECT_EQ(Bits(back[i].value), Bits(points[i].value)) << i << ": " << points[i].value;
    EXPECT_EQ(back[i].step, points[i].step) << i;
  }
}

TEST(ChunkCodec, EmptyAndSingle) {
  ExpectRoundTrip({});
  ExpectRoundTrip({{1763777000123, 52.183, kNoStep}});
}

TEST(ChunkCodec, DecimalsDecodeExactly) {
  std::vector<Point> points;
  int64_t t = 1763777000000;
  for (int i = 0; i < 5000; ++i) {
    t += 1000 + (i % 7) - 3;  // jittered 1 Hz
    points.push_back({t, std::round((50 + 200 * std::sin(i * 0.1)) * 1000) / 1000, kNoStep});
  }
  ExpectRoundTrip(points);
  // Decimal values with jittered timestamps pack to a few bytes a point, not 16.
  EXPECT_LT(EncodeChunk(points).size(), points.size() * 4);
}

TEST(ChunkCodec, SpecialValuesAreKept) {
  std::vector<Point> points = {{1, std::numeric_limits<double>::quiet_NaN()},
                               {2, std::numeric_limits<double>::infinity()},
                               {3, -std::numeric_limits<double>::infinity()},
                               {4, -0.0},
                               {5, 0.1 + 0.2},
                               {6, std::numeric_limits<double>::denorm_min()},
                               {7, 1e300},
                               {8, -123.456}};
  ExpectRoundTrip(points);
  // -0.0 among integers, where every other value scales at exponent 0.
  ExpectRoundTrip({{1, 0.0}, {2, -0.0}, {3, 1.0}});
  ExpectRoundTrip({{1, -0.0}});
}

// Times, mantissas and steps at the ends of int64: the deltas wrap and come back exactly.
TEST(ChunkCodec, ExtremeIntegersRoundTrip) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  ExpectRoundTrip(
      {{kMin, 1, kMax}, {kMax, -9007199254740992.0, kMin}, {kMin, 9007199254740992.0, kMax}, {0, 0, 0}});
}

TEST(ChunkCodec, RandomBinaryFractionsAndLargeIntegers) {
  std::mt19937_64 rng(42);
  std::vector<Point> points;
  for (int i = 0; i < 2000; ++i) {
    double v = i % 2 ? std::uniform_real_distribution<double>(-1e6, 1e6)(rng)
                     : static_cast<double>(static_cast<int64_t>(rng() >> 11));  // up to 2^53
    points.push_back({i * 100, v, kNoStep});
  }
  ExpectRoundTrip(points);
  std::vector<Point> integers;
  for (int i = 0; i < 2000; ++i) integers.push_back({i * 1000, 356133763110.0 + i * 52183.0, kNoStep});
  ExpectRoundTrip(integers);
}

TEST(ChunkCodec, StepsAndNonMonotonicTimes) {
  std::vector<Point> points;
  for (int i = 0; i < 300; ++i) points.push_back({(i * 7919) % 1000, 0.5 * i, i * 32});
  points[10].step = kNoStep;
  ExpectRoundTrip(points);
}

TEST(ChunkCodec, CorruptInputIsAnErrorNotACrash) {
  std::vector<Point> out;
  EXPECT_FALSE(DecodeChunk("", out).ok());
  EXPECT_FALSE(DecodeChunk("\x07\x00", out).ok());
  std::string data = EncodeChunk(std::vector<Point>{{1, 1.5}, {2, 2.5}, {3, 3.5}});
  for (size_t cut = 0; cut < data.size(); ++cut) {
    out.clear();
    EXPECT_FALSE(DecodeChunk(std::string_view(data).substr(0, cut), out).ok()) << cut;
  }
  // A header claiming 2^30 points (and 2^30 bytes) in a few bytes: refused before anything
  // is allocated for them.
  std::string huge("\x01\x00", 2);
  for (uint64_t v : {uint64_t{1} << 30, uint64_t{1} << 30}) {
    for (; v >= 0x80; v >>= 7) huge.push_back(static_cast<char>(v | 0x80));
    huge.push_back(static_cast<char>(v));
  }
  huge += "\x00\x00\x00";
  out.clear();
  EXPECT_FALSE(DecodeChunk(huge, out).ok());
  EXPECT_EQ(out.capacity(), 0u);
  // The same claim in a compressed chunk whose frame says otherwise.
  std::string packed = EncodeChunk(std::vector<Point>(1000, Point{1, 1.5}));
  ASSERT_EQ(packed[1], 1);  // zstd
  std::string claim =
      packed.substr(0, 2) + huge.substr(2, huge.size() - 5) + packed.substr(packed.size() - 20);
  EXPECT_FALSE(DecodeChunk(claim, out).ok());
  EXPECT_EQ(out.capacity(), 0u);
}

// Chunks of series sampled on the same ticks keep their values only; their shared times
// are a blob of their own, without which they cannot be read.
TEST(ChunkCodec, AChunkWithoutItsTimesDecodesOnlyWithThem) {
  std::vector<Point> gpu0, gpu1;
  for (int i = 0; i < 3000; ++i) {
    int64_t t = 1763777000000 + int64_t{1000} * i + (i * 7919) % 5;  // jitter of a few ms
    gpu0.push_back({t, 40.0 + (i * 31) % 17, kNoStep});
    gpu1.push_back({t, 0.25 * (i % 9), i});
  }
  std::string times = EncodeChunkTimes(gpu0);
  for (const std::vector<Point>& points : {gpu0, gpu1}) {
    std::string apart = EncodeChunk(points, true, /*with_times=*/false);
    EXPECT_LT(apart.size(), EncodeChunk(points).size());
    std::vector<Point> out;
    ASSERT_TRUE(DecodeChunk(apart, out, times).ok());
    EXPECT_EQ(out, points);
    out.clear();
    Status missing = DecodeChunk(apart, out);
    EXPECT_FALSE(missing.ok());
    EXPECT_NE(missing.message().find("times are kept apart"), std::string::npos) << missing.message();
    EXPECT_FALSE(DecodeChunk(apart, out, EncodeChunkTimes(std::span(points).first(2999))).ok());
  }
  // A chunk that holds its own times ignores any given.
  std::vector<Point> out;
  ASSERT_TRUE(DecodeChunk(EncodeChunk(gpu1), out, times).ok());
  EXPECT_EQ(out, gpu1);
}

// The recorded DCGM trace: every column round-trips exactly and the whole trace packs
// well below the 2.7 bytes a point that general compression of raw doubles reaches.
TEST(ChunkCodec, RecordedTraceRoundTripsCompactly) {
  nlohmann::json trace = ReadRecordedTrace(kRecordedTrace);
  const auto& stamps = trace["Timestamp"];
  size_t total_points = 0, total_bytes = 0;
  for (auto& [name, column] : trace.items()) {
    if (name == "Timestamp" || name == "MSPast") continue;
    std::vector<Point> points;
    for (size_t i = 0; i < column.size(); ++i) {
      if (!column[i].is_number()) continue;
      points.push_back({stamps[i].get<int64_t>(), column[i].get<double>(), kNoStep});
    }
    for (size_t start = 0; start < points.size(); start += 4096) {
      std::vector<Point> chunk(points.begin() + start,
                               points.begin() + std::min(points.size(), start + 4096));
      ExpectRoundTrip(chunk);
      total_bytes += EncodeChunk(chunk).size();
      total_points += chunk.size();
    }
  }
  ASSERT_GT(total_points, 100000u);
  double bytes_per_point = static_cast<double>(total_bytes) / static_cast<double>(total_points);
  EXPECT_LT(bytes_per_point, 2.0) << bytes_per_point;
  std::printf("recorded trace: %zu points, %.3f bytes a point\n", total_points, bytes_per_point);
}

}  // namespace
}  // namespace tb
