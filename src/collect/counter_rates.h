// Turns monotonically increasing counters into per-second rates between two ticks.
// The first reading of a key yields nothing (absent, not 0); a counter that went
// backwards (device reset, pid reuse) restarts the key. Two readings closer than
// kMinRateWindowNs give no rate either: /proc counts CPU in 10 ms clock ticks, so one tick
// over a millisecond would read as ten cores; the older reading stays the baseline.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

namespace tb {

inline constexpr int64_t kMinRateWindowNs = 50000000;  // 50 ms, half the shortest interval

class CounterRates {
 public:
  // Records `counter` for `key` at `monotonic_ns`; returns the increase per second since
  // the key's previous reading.
  std::optional<double> Update(const std::string& key, double counter, int64_t monotonic_ns);
  // Drops keys not updated since `monotonic_ns` (processes and devices that went away).
  void ForgetOlderThan(int64_t monotonic_ns);

 private:
  struct Last {
    double counter;
    int64_t ns;       // when `counter` was read: the rate's baseline
    int64_t seen_ns;  // when the key was last updated
  };
  std::unordered_map<std::string, Last> last_;
};

}  // namespace tb
