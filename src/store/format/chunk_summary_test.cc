#include "store/format/chunk_summary.h"

#include <gtest/gtest.h>

#include <cmath>

#include "store/format/varint.h"

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
  for (int i = 300; i < 350; ++i) points[i].value = std::nan("");    // a gap in the third group
  for (int i = 1024; i < 1152; ++i) points[i].value = std::nan("");  // the ninth group all gap
  std::string blob = EncodeSummary(points);
  // Each group of `group` points as its values' mean at the middle of its time, `step` the
  // values it averages.
  auto expect_means_of = [&](int64_t group, const std::vector<Point>& means) {
    ASSERT_EQ(static_cast<int64_t>(means.size()), 4096 / group) << group;
    for (size_t g = 0; g < means.size(); ++g) {
      size_t first = g * static_cast<size_t>(group), last = first + static_cast<size_t>(group) - 1;
      double sum = 0;
      int64_t count = 0;
      for (size_t i = first; i <= last; ++i) {
        if (std::isnan(points[i].value)) continue;
        sum += points[i].value;
        ++count;
      }
      EXPECT_EQ(means[g].step, count) << group << " " << g;
      if (count == 0) {
        EXPECT_TRUE(std::isnan(means[g].value)) << group << " " << g;
      } else {
        EXPECT_DOUBLE_EQ(means[g].value, sum / static_cast<double>(count)) << group << " " << g;
      }
      EXPECT_EQ(means[g].time_ms, points[first].time_ms + (points[last].time_ms - points[first].time_ms) / 2);
    }
  };
  // The coarsest means whose group is at most what is asked.
  std::vector<Point> fine, coarse, none;
  EXPECT_EQ(DecodeSummaryMeans(blob, 128, fine).value(), 128);
  expect_means_of(128, fine);
  EXPECT_EQ(fine[2].step, 78);
  EXPECT_EQ(fine[8].step, 0);
  fine.clear();
  EXPECT_EQ(DecodeSummaryMeans(blob, 2047, fine).value(), 128);
  expect_means_of(128, fine);
  EXPECT_EQ(DecodeSummaryMeans(blob, 5000, coarse).value(), 2048);
  expect_means_of(2048, coarse);
  EXPECT_EQ(DecodeSummaryMeans(blob, 127, none).status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(none.empty());
  // A chunk too short for two groups of 2,048 has means of 128 only.
  std::vector<Point> shorter;
  EXPECT_EQ(DecodeSummaryMeans(EncodeSummary(Wave(4000)), 1 << 20, shorter).value(), 128);
  EXPECT_EQ(shorter.size(), 32u);
  // The levels are as before: a chart never draws the means.
  EXPECT_EQ(SummaryLevels(blob), (std::vector<int64_t>{128, 2048}));
  std::vector<Point> level;
  ASSERT_TRUE(DecodeSummaryUpTo(blob, int64_t{1} << 50, level).ok());
  EXPECT_EQ(level, SummarizeGroups(points, 2048));
  // A blob written before the means (one level of 256): NotFound, its level read as ever.
  std::string levels = EncodeChunk(SummarizeGroups(points, 256));
  std::string older;
  PutVarint(older, 1);
  PutVarint(older, 256);
  PutVarint(older, levels.size());
  older += levels;
  EXPECT_EQ(DecodeSummaryMeans(older, 1 << 20, none).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(SummaryLevels(older), (std::vector<int64_t>{256}));
  // One written with means of 256 (before 2026-11-26): read where 256 points are asked for.
  std::string means256 = EncodeChunk(GroupMeans(points, 256));
  std::string with_means;
  PutVarint(with_means, 2);
  PutVarint(with_means, 256);
  PutVarint(with_means, levels.size());
  with_means += levels;
  PutVarint(with_means, static_cast<uint64_t>(kMeansEntry + 256));
  PutVarint(with_means, means256.size());
  with_means += means256;
  EXPECT_EQ(DecodeSummaryMeans(with_means, 255, none).status().code(), Status::Code::kNotFound);
  std::vector<Point> old_means;
  EXPECT_EQ(DecodeSummaryMeans(with_means, 300, old_means).value(), 256);
  expect_means_of(256, old_means);
  EXPECT_EQ(DecodeSummaryMeans("\x05garbage", 128, none).status().code(), Status::Code::kCorrupt);
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
