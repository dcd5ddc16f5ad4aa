// Turns monotonically increasing counters into per-second rates between two ticks.
// The first reading of a key yields nothing (absent, not 0); a counter that went
// backwards (device reset, pid reuse) restarts the key. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

namespace tb {

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
    int64_t ns;
  };
  std::unordered_map<std::string, Last> last_;
};

}  // namespace tb
