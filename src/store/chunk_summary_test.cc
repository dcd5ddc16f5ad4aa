#include "store/chunk_summary.h"

#include <gtest/gtest.h>

#include <cmath>

#include "store/varint.h"

namespace tb {
namespace {

std::vector<Point> Wave(size_t n) {
  std::vector<Point> points;
  for (size_t i = 0; i < n; ++i)
    points.push_back({1763777000000 + static_cast<int64_t>(i) * 100,
                      50 + 10 * std::sin(static_cast<double>(i) / 30), static_cast<int64_t>(i)});
  return points;
}

TEST(ChunkSummaryTest, EachGroupKeepsItsFirstLowestHighestAndLastPoint) {
  std::vector<Point> points = Wave(256);
  points[77].value = 1000;  // a spike
  points[150].value = -5;   // a dip
  points[200].value = NAN;  // a gap is neither lowest nor highest
  std::vector<Point> s = SummarizeGroups(points, 64);
  ASSERT_LE(s.size(), 16u);
  for (size_t i = 1; i < s.size(); ++i) EXPECT_LT(s[i - 1].time_ms, s[i].time_ms) << "time order, each once";
  auto has = [&](const Point& p) {
    for (const Point& q : s)
      if (q.time_ms == p.time_ms && (q.value == p.value || (std::isnan(q.value) && std::isnan(p.value))) &&
          q.step == p.step)
        return true;
    return false;
  };
  EXPECT_TRUE(has(points[77])) << "the spike, exactly where it was";
  EXPECT_TRUE(has(points[150]));
  for (size_t g = 0; g < 256; g += 64) {
    EXPECT_TRUE(has(points[g])) << g;
    EXPECT_TRUE(has(points[g + 63])) << g;
  }
  for (const Point& q : s) EXPECT_FALSE(q.time_ms == points[200].time_ms) << "NaN is not an extreme";
}

TEST(ChunkSummaryTest, ASealedChunkCarriesItsLevelsAndASmallOneNone) {
  std::vector<Point> points = Wave(4096);
  points[3000].value = 99;
  std::string blob = EncodeSummary(points);
  EXPECT_EQ(SummaryLevels(blob), (std::vector<int64_t>{128, 2048}));
  for (int64_t group : {128, 2048}) {
    std::vector<Point> level;
    ASSERT_TRUE(DecodeSummaryLevel(blob, group, level).ok());
    EXPECT_LE(level.size(), 4096 / static_cast<size_t>(group) * 4);
    EXPECT_EQ(level, SummarizeGroups(points, group));
    bool spike = false;
    for (const Point& p : level) spike |= p.time_ms == points[3000].time_ms && p.value == 99;
    EXPECT_TRUE(spike) << "level " << group;
  }
  std::vector<Point> none;
  EXPECT_EQ(DecodeSummaryLevel(blob, 64, none).code(), Status::Code::kNotFound);
  EXPECT_EQ(DecodeSummaryLevel("\x05garbage", 2048, none).code(), Status::Code::kCorrupt);
  EXPECT_EQ(SummaryLevels(EncodeSummary(Wave(4000))), (std::vector<int64_t>{128}))
      << "a level needs two groups of points";
  EXPECT_EQ(EncodeSummary(Wave(255)), "") << "too few points to gain anything";
}

TEST(ChunkSummaryTest, ASealedChunkCarriesItsGroupsMeansWhichNoLevelLookupPicks) {
  std::vector<Point> points = Wave(4096);
  for (int i = 600; i < 700; ++i) points[i].value = std::nan("");    // a gap in the third group
  for (int i = 1024; i < 1280; ++i) points[i].value = std::nan("");  // the fifth group all gap
  std::string blob = EncodeSummary(points);
  std::vector<Point> means;
  ASSERT_TRUE(DecodeSummaryMeans(blob, means).ok());
  ASSERT_EQ(means.size(), 16u);
  for (size_t g = 0; g < 16; ++g) {
    double sum = 0;
    int64_t count = 0;
    for (size_t i = g * 256; i < (g + 1) * 256; ++i) {
      if (std::isnan(points[i].value)) continue;
      sum += points[i].value;
      ++count;
    }
    EXPECT_EQ(means[g].step, count) << g;
    if (count == 0) {
      EXPECT_TRUE(std::isnan(means[g].value)) << g;
    } else {
      EXPECT_DOUBLE_EQ(means[g].value, sum / static_cast<double>(count)) << g;
    }
    EXPECT_EQ(means[g].time_ms,
              points[g * 256].time_ms + (points[g * 256 + 255].time_ms - points[g * 256].time_ms) / 2);
  }
  EXPECT_EQ(means[2].step, 156);
  // The levels are as before: a chart never draws the means.
  EXPECT_EQ(SummaryLevels(blob), (std::vector<int64_t>{128, 2048}));
  std::vector<Point> coarse;
  ASSERT_TRUE(DecodeSummaryUpTo(blob, int64_t{1} << 50, coarse).ok());
  EXPECT_EQ(coarse, SummarizeGroups(points, 2048));
  // A blob written before the means (one level of 256): NotFound, its level read as ever.
  std::string level = EncodeChunk(SummarizeGroups(points, 256));
  std::string older;
  PutVarint(older, 1);
  PutVarint(older, 256);
  PutVarint(older, level.size());
  older += level;
  std::vector<Point> none;
  EXPECT_EQ(DecodeSummaryMeans(older, none).code(), Status::Code::kNotFound);
  EXPECT_EQ(SummaryLevels(older), (std::vector<int64_t>{256}));
}

TEST(ChunkSummaryTest, TheLevelLeavesEachBucketAWholeGroupOrMore) {
  EXPECT_EQ(SummaryLevelFor(100), std::nullopt);  // a bucket of 100 points: every point
  EXPECT_EQ(SummaryLevelFor(127), std::nullopt);
  EXPECT_EQ(SummaryLevelFor(128), 128);
  EXPECT_EQ(SummaryLevelFor(200), 128);  // a 2,000-point budget over 100,000 points
  EXPECT_EQ(SummaryLevelFor(413), 128);  // what a 50-run chart on a laptop screen asks for
  EXPECT_EQ(SummaryLevelFor(2047), 128);
  EXPECT_EQ(SummaryLevelFor(2048), 2048);
  EXPECT_EQ(SummaryLevelFor(1e7), 2048);
}

}  // namespace
}  // namespace tb
