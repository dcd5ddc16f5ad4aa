// A listener is a Collector: it reads one source each tick and adds samples to a sink
// (metrics/sample.h).
// Collectors keep the previous tick's counters to turn them into rates; a rate needs two
// ticks, so the first tick emits gauges only (a missing value is absent, never 0).
// A collector is used by one thread at a time (the sampler's).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "metrics/sample.h"
#include "platform/host_files.h"

namespace tb {

// What listeners keep derived values (rates, ratios) as: integers as they are,
// other values to 6 significant digits, which is beyond what a tick-to-tick rate can
// resolve and lets the store keep them as exact scaled integers (about 1 byte a point).
double RoundForStorage(double value);

// The processes of a run found this tick, shared by the listeners that need them.
class ProcessTree;

// Notices worth keeping with the run ("gpu", "GPU 1 is lost: ..."); may be empty.
using EventFn = std::function<void(const std::string& kind, const std::string& label)>;

struct Tick {
  int64_t time_ms = 0;          // wall time of the tick (Unix ms)
  int64_t monotonic_ns = 0;     // for rates
  ProcessTree* tree = nullptr;  // null when no run is watched
  const EventFn* event = nullptr;
  bool final = false;  // the run's last tick (taken as sampling stops)
};

class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::string_view name() const = 0;
  // Reads the source once. On failure nothing partial is promised; the sampler records
  // the failure and calls again on the next tick.
  virtual Status Collect(const Tick& tick, SampleSink& sink) = 0;
  // True for a listener whose reading can block for long (a driver call that may take a
  // second: NVML): the sampler gives it a thread of its own, so it never holds up the
  // others' ticks.
  virtual bool may_block() const { return false; }
};

}  // namespace tb
