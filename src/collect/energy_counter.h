// A device's cumulative energy counter as trainbench keeps it (docs/GPU.md, "Other
// accelerators"): the raw counts turned into joules that only grow, across the counter's
// wrap, and checked against the device's power integrated over the same time before it is
// trusted. Pure; one per device; not thread-safe.
//
// Why the check: AMD's counter is known to be wrong on some parts and ROCm versions (an
// MI100 under ROCm 6.2 counts nonsense; Zeus rejects a counter outside 0.1x to 10x of power
// times time). trainbench compares the counter's increase with the power integrated over
// the first kCheckSeconds of a run and trusts it only within kTolerance either way (power
// is a 1 s average and the counter is exact, so over seconds the two agree within a few
// percent on a sound device: 2.5 % on trainbench's H200); otherwise the device's energy is
// the integral of its power, and the run is told which was used.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tb {

// Counts of `resolution_uj` microjoules that may wrap: a reading below the last is taken as
// a wrap at 2^32 counts when the last fitted in 32 bits (older firmware's accumulator),
// else at 2^64.
class WrappingEnergyCounter {
 public:
  // Joules since the first reading.
  double Read(uint64_t counts, double resolution_uj);
  int wraps() const { return wraps_; }

 private:
  std::optional<uint64_t> last_;
  double joules_ = 0;
  int wraps_ = 0;
};

class EnergyCounterCheck {
 public:
  static constexpr double kCheckSeconds = 5;
  static constexpr double kTolerance = 1.25;  // counter / power integral within 1/1.25 .. 1.25

  enum class Verdict { kPending, kCounter, kPowerIntegral };

  // A reading at `monotonic_ns`: the counter's joules (none when unread) and power (none
  // when unread). Decides once kCheckSeconds of both have been seen.
  void Add(int64_t monotonic_ns, std::optional<double> counter_joules, std::optional<double> power_watts);
  Verdict verdict() const { return verdict_; }
  // Once decided: "the energy counter (1204 J over 5.0 s) agrees with power integrated
  // (1187 J) within 25 %: energy from the counter", or why power is integrated instead.
  std::string Explanation() const;

 private:
  Verdict verdict_ = Verdict::kPending;
  int64_t first_ns_ = 0, last_ns_ = 0;
  std::optional<double> first_counter_, last_counter_;
  std::optional<double> last_power_;
  double power_joules_ = 0;
};

}  // namespace tb
