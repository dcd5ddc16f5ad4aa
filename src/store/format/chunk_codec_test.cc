#include "store/format/chunk_codec.h"

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
  for (size_t i = 0; i < kMaxChunkPoints; ++i) {
    t += 1000 + static_cast<int64_t>(i % 7) - 3;  // jittered 1 Hz
    points.push_back(
        {t, std::round((50 + 200 * std::sin(static_cast<double>(i) * 0.1)) * 1000) / 1000, kNoStep});
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

// A hostile store's chunk: a few KB of zstd that would unpack to gigabytes, or a chunk of
// more points than trainbench writes, is refused before anything is allocated for it.
TEST(ChunkCodec, AChunkLargerThanTrainbenchWritesIsRefused) {
  std::vector<Point> out;
  std::vector<Point> most(kMaxChunkPoints, Point{1, 1.5});
  ASSERT_TRUE(DecodeChunk(EncodeChunk(most), out).ok());
  EXPECT_EQ(out.size(), kMaxChunkPoints);

  std::vector<Point> none;
  std::vector<Point> more(kMaxChunkPoints + 1, Point{1, 1.5});
  Status refused = DecodeChunk(EncodeChunk(more), none);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("at most 4096 points"), std::string::npos) << refused.message();
  EXPECT_EQ(none.capacity(), 0u);

  // The bomb: 3 million points of one repeated value, which zstd packs into a few KB.
  std::vector<Point> bomb(3'000'000, Point{1, 1.5});
  std::string packed = EncodeChunk(bomb);
  ASSERT_LT(packed.size(), 64u << 10);
  ASSERT_EQ(packed[1], 1);  // zstd
  EXPECT_FALSE(DecodeChunk(packed, none).ok());
  EXPECT_EQ(none.capacity(), 0u);
}

// Values past the ends of what a varint form saw: whole int64 mantissas and times as byte
// planes (a chunk of 256 points or more), each pass of differences wrapping and coming back.
TEST(ChunkCodec, ExtremeIntegersRoundTripAsPlanes) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  std::vector<Point> points;
  for (int i = 0; i < 300; ++i) {
    points.push_back(
        {i % 2 ? kMin : kMax, i % 3 ? -9007199254740992.0 : 9007199254740992.0, i % 2 ? kMin : kMax});
  }
  ExpectRoundTrip(points);
}

// The shapes GPU and host series take, each as byte planes after the differences that
// suit it, read back exactly, and in few bytes: a utilization jumping between a few
// levels, a temperature drifting, an energy counter, a counter that never moves.
TEST(ChunkCodec, GpuSeriesShapesPackAsPlanes) {
  std::mt19937 rng(7);
  std::vector<Point> levels, drift, energy, idle;
  double temperature = 40, joules = 356133763.110;
  for (int i = 0; i < 4096; ++i) {
    int64_t t = 1763777000000 + int64_t{1000} * i + static_cast<int64_t>(rng() % 5);
    double busy = rng() % 3 == 0 ? 0.0 : static_cast<double>(95 + rng() % 5);
    levels.push_back({t, busy, kNoStep});
    temperature += (static_cast<int>(rng() % 3) - 1) * 0.5;
    drift.push_back({t, temperature, kNoStep});
    joules += (78 + 180 * (busy > 0)) + static_cast<double>(rng() % 1000) / 1000;
    energy.push_back({t, std::round(joules * 1000) / 1000, kNoStep});
    idle.push_back({t, 0.0, kNoStep});
  }
  std::string times = EncodeChunkTimes(levels);
  for (const auto* points : {&levels, &drift, &energy, &idle}) {
    ExpectRoundTrip(*points);
    std::string apart = EncodeChunk(*points, true, /*with_times=*/false);
    std::vector<Point> out;
    ASSERT_TRUE(DecodeChunk(apart, out, times).ok());
    EXPECT_EQ(out, *points);
  }
  // Bytes for the 4,096 values, their times apart: about what their entropy allows.
  EXPECT_LT(EncodeChunk(levels, true, false).size(), 4096u * 4 / 8);  // 0 or 95..99: 2.5 bits (varints: 4.7)
  EXPECT_LT(EncodeChunk(drift, true, false).size(), 4096u * 3 / 8);   // 1.6 bits: -0.5, 0, +0.5
  EXPECT_LT(EncodeChunk(energy, true, false).size(), 4096u * 2);      // 10 bits of jitter, 1 of level
  EXPECT_LT(EncodeChunk(idle, true, false).size(), 32u);
}

// Chunks written by trainbench before its byte planes (schema 8 and older): zstd over
// varint deltas, and interleaved 8-byte XORs. A store keeps them, and they read back
// exactly as written.
TEST(ChunkCodec, ChunksOfEarlierStoresStillDecode) {
  const std::string decimal(
      "\x01\x01\x28\xd1\x02\x28\xb5\x2f\xfd\x60\x51\x00\xdd\x04\x00\x34\x06\xba\x80\xc7\xc4\xdd\x60\xe5"
      "\xf0\xc6\xc4\xdd\x60\x00\x05\x06\x00\x03\x84\xc8\x1f\xcf\xff\x15\xd8\x04\xd8\x04\xa0\xf6\x15\xef"
      "\xec\xc0\xe3\x15\x8f\xda\xe0\xd0\x15\xaf\xc7\x80\xbe\x15\xcf\xb4\xa0\xab\x15\xef\xa1\xc0\x98\x15"
      "\x8f\x8f\xe0\x85\x15\xaf\xfc\x14\x80\xf3\x14\xcf\xe9\xa0\xe0\x14\xef\xd6\x01\xff\x01\xfd\xff\x01"
      "\x02\x02\x02\xf8\xff\x01\xf3\xff\xee\xe9\xe4\xdf\xda\xd5\xd0\xcb\xc6\xc1\xbc\xb7\x1b\x00\x80\x0b"
      "\x28\x0e\x70\x06\x0a\x01\xfc\x40\xc1\x00\x17\x50\x1c\xe0\x0c\x14\x02\xf8\x81\x62\x9d\xc1\x82\x3c"
      "\x40\x2e\x20\x0f\x1c\x61\x70\x1a\xb4\x06\xab\x00\xd1\xe0\x34\x68\x1a\x88\x06\xa7\xb7\xb4\x0b\x49"
      "\x57\x07",
      170);
  std::vector<Point> expected;
  for (int i = 0; i < 40; ++i) {
    expected.push_back({1661821575197LL + 1001 * i + (i % 3),
                        std::round((78.062 + (i % 4 == 0 ? 180.5 : 0.3 * i)) * 1000) / 1000,
                        i % 5 == 0 ? kNoStep : i});
  }
  std::vector<Point> out;
  ASSERT_TRUE(DecodeChunk(decimal, out).ok());
  EXPECT_EQ(out, expected);
  const std::string binary(
      "\x01\x01\x14\xb7\x01\x28\xb5\x2f\xfd\x20\xb7\xed\x04\x00\xd4\x08\x00\xf4\x03\x00\x01\x00\x42\x60"
      "\xe5\xd0\x22\xdb\xb9\x3f\xa8\x46\xd4\xd8\x8e\xc7\x73\x00\xc4\x94\xac\xe7\x0b\xda\x19\x00\x14\x06"
      "\x55\x99\x19\x59\x09\x00\xf7\x78\x04\xba\x72\x53\x3a\x00\xe5\xfd\xc4\x60\xd0\x96\x04\x00\x04\xb6"
      "\x1e\x75\xd2\xad\x03\x00\xf6\x49\xe1\x8a\x2d\x52\x0c\x00\xeb\xc6\x5b\x4f\xb9\xc1\x04\x00\xab\x91"
      "\x35\x85\xc3\xfd\x1e\x00\x6a\x3e\x5f\xd2\xae\x10\x02\x00\xec\x88\x1b\x6f\x31\x08\x06\x00\x07\x00"
      "\x02\x00\xeb\x0e\x83\x9d\xcf\x97\xb4\x2b\x06\x00\x74\xe3\xad\xa7\xdc\x60\x02\x00\xa6\x46\xbe\x1f"
      "\x02\x2f\xff\x7f\x81\xad\x47\x9d\x74\xeb\x02\x00\x00\x05\x00\x43\x95\x98\x79\x23\x02\x6b\x40\xd6"
      "\x66\x90\x05",
      171);
  expected.clear();
  for (int i = 0; i < 20; ++i) expected.push_back({i * 250, 0.1 * i + 1e-3 * (i * i), kNoStep});
  out.clear();
  ASSERT_TRUE(DecodeChunk(binary, out).ok());
  ASSERT_EQ(out.size(), expected.size());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(Bits(out[i].value), Bits(expected[i].value)) << i;
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
// well below the 2.7 bytes a point that general compression of raw doubles reaches, and
// below Gorilla's 1.37 (the varint form before byte planes packed it in 1.37).
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
  EXPECT_LT(bytes_per_point, 1.25) << bytes_per_point;
  std::printf("recorded trace: %zu points, %.3f bytes a point\n", total_points, bytes_per_point);
}

}  // namespace
}  // namespace tb
