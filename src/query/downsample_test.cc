#include "query/downsample.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tb {
namespace {

XYSeries Flat(size_t n, double value = 1.0) {
  XYSeries s;
  for (size_t i = 0; i < n; ++i) {
    s.x.push_back(static_cast<double>(i));
    s.y.push_back(value);
  }
  return s;
}

TEST(Downsample, KeepsEverySpikeAndDipWithinTheBudget) {
  XYSeries s = Flat(100000, 50.0);
  s.y[12345] = 100.0;  // a one-sample spike
  s.y[77777] = 0.0;    // a one-sample stall
  XYSeries d = Downsample(s, 0, 99999, 2000);
  EXPECT_LE(d.size(), 2000u);
  EXPECT_EQ(*std::max_element(d.y.begin(), d.y.end()), 100.0);
  EXPECT_EQ(*std::min_element(d.y.begin(), d.y.end()), 0.0);
  // The extremes keep their x, and x stays increasing.
  EXPECT_NE(std::find(d.x.begin(), d.x.end(), 12345.0), d.x.end());
  EXPECT_TRUE(std::is_sorted(d.x.begin(), d.x.end()));
  EXPECT_EQ(d.x.front(), 0.0);
  EXPECT_EQ(d.x.back(), 99999.0);
}

TEST(Downsample, ARangeThatFitsComesBackWhole) {
  XYSeries s = Flat(10000);
  XYSeries d = Downsample(s, 100, 199, 2000);
  ASSERT_EQ(d.size(), 100u);
  EXPECT_EQ(d.x.front(), 100.0);
  EXPECT_EQ(d.x.back(), 199.0);
}

TEST(Downsample, NanIsAGapNotAnExtreme) {
  XYSeries s = Flat(1000, 5.0);
  for (size_t i = 400; i < 600; ++i) s.y[i] = std::nan("");
  XYSeries d = Downsample(s, 0, 999, 40);  // 10 buckets of 100
  int nan_points = 0;
  for (double v : d.y) {
    if (std::isnan(v)) {
      ++nan_points;
    } else {
      EXPECT_EQ(v, 5.0);
    }
  }
  EXPECT_EQ(nan_points, 2);  // one per all-NaN bucket
}

TEST(Aggregate, MeanAndBandMatchADirectComputation) {
  XYSeries a, b;
  for (int i = 0; i < 10; ++i) {
    a.x.push_back(i);
    a.y.push_back(i);
    b.x.push_back(i);
    b.y.push_back(2.0 * i);
  }
  Band band = Aggregate(std::vector<XYSeries>{a, b}, 0, 10, 5);  // buckets of 2
  ASSERT_EQ(band.x.size(), 5u);
  // Bucket 1 holds x = 2, 3: run a's mean 2.5, run b's 5.
  EXPECT_DOUBLE_EQ(band.mean[1], 3.75);
  EXPECT_DOUBLE_EQ(band.min[1], 2.5);
  EXPECT_DOUBLE_EQ(band.max[1], 5.0);
  EXPECT_EQ(band.runs[1], 2);
  EXPECT_DOUBLE_EQ(band.x[1], 3.0);
}

// A metric logged now and then (a loss every few seconds), at other moments by each run:
// the mean follows both runs everywhere instead of jumping to whichever logged in a bucket.
TEST(Aggregate, SparseRunsAreInterpolatedNotAlternated) {
  XYSeries a{{0, 10, 20}, {1, 1, 1}};                             // run a: flat at 1, logged at 0, 10, 20 s
  XYSeries b{{5, 15, 25}, {3, 3, 3}};                             // run b: flat at 3, logged at 5, 15, 25 s
  Band band = Aggregate(std::vector<XYSeries>{a, b}, 0, 20, 20);  // 1-second buckets
  ASSERT_FALSE(band.x.empty());
  for (size_t i = 0; i < band.x.size(); ++i) {
    if (band.x[i] < 5 || band.x[i] > 20) continue;  // where both runs have begun
    EXPECT_EQ(band.runs[i], 2) << "at " << band.x[i];
    EXPECT_DOUBLE_EQ(band.mean[i], 2.0) << "at " << band.x[i];
    EXPECT_DOUBLE_EQ(band.min[i], 1.0);
    EXPECT_DOUBLE_EQ(band.max[i], 3.0);
  }
  // Before run b's first point only run a stands behind the mean: no band there.
  EXPECT_EQ(band.runs[0], 1);
  EXPECT_DOUBLE_EQ(band.mean[0], 1.0);
  EXPECT_TRUE(std::isnan(band.min[0]) && std::isnan(band.max[0]));
}

TEST(Aggregate, NoInterpolationAcrossAGap) {
  XYSeries a{{0, 1, 2, 8, 9}, {1, 1, NAN, 1, 1}};
  Band band = Aggregate(std::vector<XYSeries>{a}, 0, 10, 10);
  for (size_t i = 0; i < band.x.size(); ++i) EXPECT_FALSE(band.x[i] > 3 && band.x[i] < 7) << band.x[i];
}

}  // namespace
}  // namespace tb
