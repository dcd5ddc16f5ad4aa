// Means over repeats with their 95 % intervals, against values worked by hand from a
// table of Student's t.
#include "analyze/estimate.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tb {
namespace {

TEST(Estimate, ThreeRepeatsGiveStudentsInterval) {
  Estimate e = EstimateOf({110, 120, 130}).value();
  EXPECT_DOUBLE_EQ(e.mean, 120);
  EXPECT_DOUBLE_EQ(e.sd, 10);
  EXPECT_EQ(e.n, 3);
  // t(0.975, 2) = 4.303: 120 +- 4.303 * 10 / sqrt(3) = 120 +- 24.84
  EXPECT_NEAR(e.low, 95.16, 0.01);
  EXPECT_NEAR(e.high, 144.84, 0.01);
  EXPECT_EQ(EstimateText(e, "%.1f"), "120.0 (95 % CI 95.2\u2013144.8, n = 3)");
}

TEST(Estimate, OneAttemptHasNoIntervalAndSaysSo) {
  Estimate e = EstimateOf({1.5}).value();
  EXPECT_FALSE(e.HasInterval());
  EXPECT_EQ(EstimateText(e, "%.2fx"), "1.50x (one attempt)");
  EXPECT_FALSE(EstimateOf({}).has_value());
  EXPECT_FALSE(EstimateOfAll({1.0, std::nullopt}).has_value()) << "a repeat without the figure";
}

TEST(Estimate, LargeSamplesApproachTheNormal) {
  EXPECT_DOUBLE_EQ(StudentT975(1), 12.706);
  EXPECT_DOUBLE_EQ(StudentT975(10), 2.228);
  EXPECT_NEAR(StudentT975(5000), 1.960, 1e-9);
}

// A speed-up: 120 +- sd 10 (n = 3) over 100 +- sd 5 (n = 4). Relative variance
// (10/120)^2/3 + (5/100)^2/4 = 0.002315 + 0.000625 = 0.002940; sd of the ratio
// 1.2 * sqrt(0.00294) = 0.06507; df = 2 (the side with fewer): +- 4.303 * 0.06507 = 0.280.
TEST(Estimate, ARatiosIntervalCarriesBothSidesSpread) {
  Estimate num = EstimateOf({110, 120, 130}).value();
  Estimate den{.mean = 100, .sd = 5, .n = 4, .low = 0, .high = 0};
  Estimate r = RatioEstimate(num, den).value();
  EXPECT_DOUBLE_EQ(r.mean, 1.2);
  EXPECT_NEAR(r.sd, 0.06507, 1e-4);
  EXPECT_NEAR(r.high - r.mean, 0.280, 1e-3);
  EXPECT_EQ(r.n, 3);
  Estimate one = RatioEstimate(EstimateOf({3}).value(), EstimateOf({2}).value()).value();
  EXPECT_FALSE(one.HasInterval());
  EXPECT_FALSE(RatioEstimate(num, EstimateOf({0}).value()).has_value());
}

}  // namespace
}  // namespace tb
