#include "collect/energy_counter.h"

#include <cstdio>

namespace tb {

double WrappingEnergyCounter::Read(uint64_t counts, double resolution_uj) {
  if (last_) {
    uint64_t step = counts - *last_;  // modulo 2^64: right across a 64-bit wrap
    if (counts < *last_) {
      ++wraps_;
      if (*last_ <= 0xFFFFFFFFULL) step = (0x100000000ULL - *last_) + counts;
    }
    joules_ += static_cast<double>(step) * resolution_uj / 1e6;
  }
  last_ = counts;
  return joules_;
}

void EnergyCounterCheck::Add(int64_t monotonic_ns, std::optional<double> counter_joules,
                             std::optional<double> power_watts) {
  if (verdict_ != Verdict::kPending) return;
  if (first_ns_ == 0) {
    first_ns_ = monotonic_ns;
    first_counter_ = counter_joules;
  } else if (last_power_ && power_watts) {
    // Trapezoids between power readings.
    power_joules_ += (*last_power_ + *power_watts) / 2 * static_cast<double>(monotonic_ns - last_ns_) / 1e9;
  }
  if (!first_counter_) first_counter_ = counter_joules;
  last_ns_ = monotonic_ns;
  if (counter_joules) last_counter_ = counter_joules;
  if (power_watts) last_power_ = power_watts;
  if (static_cast<double>(monotonic_ns - first_ns_) / 1e9 < kCheckSeconds) return;
  if (!first_counter_ || !last_counter_) {
    verdict_ = Verdict::kPowerIntegral;
    return;
  }
  double counted = *last_counter_ - *first_counter_;
  bool agree =
      power_joules_ > 0 && counted >= power_joules_ / kTolerance && counted <= power_joules_ * kTolerance;
  verdict_ = agree ? Verdict::kCounter : Verdict::kPowerIntegral;
}

std::string EnergyCounterCheck::Explanation() const {
  char text[320];
  double seconds = static_cast<double>(last_ns_ - first_ns_) / 1e9;
  if (!first_counter_ || !last_counter_) return "no energy counter: energy is its power integrated over time";
  double counted = *last_counter_ - *first_counter_;
  std::snprintf(
      text, sizeof(text),
      "the energy counter (%.0f J over %.1f s) %s power integrated over the same time (%.0f J) within "
      "%.0f %%: energy %s",
      counted, seconds, verdict_ == Verdict::kCounter ? "agrees with" : "disagrees with", power_joules_,
      (kTolerance - 1) * 100,
      verdict_ == Verdict::kCounter ? "from the counter" : "is its power integrated over time instead");
  return text;
}

}  // namespace tb
