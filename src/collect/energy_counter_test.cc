// The energy counter kept across its wrap and checked against integrated power before it is
// trusted (collect/energy_counter.h), with the figures of AMD's counter: 15.3 uJ counts.
#include "collect/energy_counter.h"

#include <gtest/gtest.h>

namespace tb {
namespace {

constexpr double kResolution = 15.3;  // uJ a count

TEST(WrappingEnergyCounterTest, A32BitAccumulatorWrapsAndTheEnergyGoesOnGrowing) {
  WrappingEnergyCounter c;
  EXPECT_EQ(c.Read(4294967000ULL, kResolution), 0);
  // 296 counts to the wrap, then 704 after it: 1000 counts.
  EXPECT_NEAR(c.Read(704, kResolution), 1000 * kResolution / 1e6, 1e-12);
  EXPECT_EQ(c.wraps(), 1);
  EXPECT_NEAR(c.Read(1704, kResolution), 2000 * kResolution / 1e6, 1e-12);
}

TEST(WrappingEnergyCounterTest, A64BitAccumulatorWrapsAtItsOwnWidth) {
  WrappingEnergyCounter c;
  c.Read(0xFFFFFFFFFFFFFF00ULL, 1);
  EXPECT_NEAR(c.Read(0x100, 1), 512 / 1e6, 1e-12);  // 256 counts either side of 2^64
}

// Power read every second while the counter grows with it: over 5 s they agree.
TEST(EnergyCounterCheckTest, ACounterThatGrowsAsPowerDoesIsTrusted) {
  EnergyCounterCheck check;
  for (int s = 0; s <= 5; ++s) check.Add(1'000'000'000LL * (s + 1), 1000.0 + 500.0 * s, 500.0);
  EXPECT_EQ(check.verdict(), EnergyCounterCheck::Verdict::kCounter);
  EXPECT_NE(check.Explanation().find("agrees with"), std::string::npos) << check.Explanation();
}

TEST(EnergyCounterCheckTest, ACounterOutsideTheToleranceIsNotTrustedAndTheReasonIsGiven) {
  for (double factor : {0.01, 0.7, 1.4, 10.0}) {
    EnergyCounterCheck check;
    for (int s = 0; s <= 5; ++s) check.Add(1'000'000'000LL * (s + 1), 500.0 * s * factor, 500.0);
    EXPECT_EQ(check.verdict(), EnergyCounterCheck::Verdict::kPowerIntegral) << factor;
    EXPECT_NE(check.Explanation().find("disagrees with power integrated over the same time (2500 J)"),
              std::string::npos)
        << check.Explanation();
  }
}

TEST(EnergyCounterCheckTest, WithoutACounterPowerIsIntegratedAndBeforeFiveSecondsNothingIsDecided) {
  EnergyCounterCheck check;
  check.Add(1'000'000'000LL, std::nullopt, 300.0);
  check.Add(4'000'000'000LL, std::nullopt, 300.0);
  EXPECT_EQ(check.verdict(), EnergyCounterCheck::Verdict::kPending);
  check.Add(6'000'000'000LL, std::nullopt, 300.0);
  EXPECT_EQ(check.verdict(), EnergyCounterCheck::Verdict::kPowerIntegral);
  EXPECT_NE(check.Explanation().find("no energy counter"), std::string::npos);
}

}  // namespace
}  // namespace tb
