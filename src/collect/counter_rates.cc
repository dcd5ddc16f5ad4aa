#include "collect/counter_rates.h"

namespace tb {

std::optional<double> CounterRates::Update(const std::string& key, double counter, int64_t monotonic_ns) {
  auto [it, inserted] = last_.try_emplace(key, Last{counter, monotonic_ns, monotonic_ns});
  if (inserted) return std::nullopt;
  Last previous = it->second;
  it->second.seen_ns = monotonic_ns;
  if (counter >= previous.counter && monotonic_ns - previous.ns < kMinRateWindowNs) return std::nullopt;
  it->second = Last{counter, monotonic_ns, monotonic_ns};
  if (counter < previous.counter || monotonic_ns <= previous.ns) return std::nullopt;
  return (counter - previous.counter) * 1e9 / static_cast<double>(monotonic_ns - previous.ns);
}

void CounterRates::ForgetOlderThan(int64_t monotonic_ns) {
  std::erase_if(last_, [&](const auto& kv) { return kv.second.seen_ns < monotonic_ns; });
}

}  // namespace tb
