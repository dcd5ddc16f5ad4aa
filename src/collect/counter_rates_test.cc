#include "collect/counter_rates.h"

#include <gtest/gtest.h>

namespace tb {
namespace {

constexpr int64_t kMs = 1000000;

TEST(CounterRates, RateBetweenTwoReadings) {
  CounterRates r;
  EXPECT_FALSE(r.Update("cpu", 100, 0).has_value());  // absent, not zero
  EXPECT_DOUBLE_EQ(*r.Update("cpu", 150, 500 * kMs), 100);
}

TEST(CounterRates, TooShortAWindowKeepsTheOlderBaseline) {
  // 10 ms clock ticks over 1 ms would read as ten cores; the final tick of a run often
  // comes right after a regular one.
  CounterRates r;
  r.Update("cpu", 100, 0);
  EXPECT_DOUBLE_EQ(*r.Update("cpu", 200, 1000 * kMs), 100);
  EXPECT_FALSE(r.Update("cpu", 201, 1001 * kMs).has_value());
  EXPECT_DOUBLE_EQ(*r.Update("cpu", 300, 2000 * kMs), 100);  // measured from the 1000 ms reading
}

TEST(CounterRates, CounterGoingBackRestartsAndForgottenKeysGo) {
  CounterRates r;
  r.Update("disk", 1000, 0);
  EXPECT_FALSE(r.Update("disk", 10, 100 * kMs).has_value());
  EXPECT_DOUBLE_EQ(*r.Update("disk", 20, 200 * kMs), 100);
  r.Update("gone", 1, 0);
  r.ForgetOlderThan(200 * kMs);
  EXPECT_FALSE(r.Update("gone", 5, 300 * kMs).has_value());  // started over
  EXPECT_TRUE(r.Update("disk", 30, 300 * kMs).has_value());
}

}  // namespace
}  // namespace tb
