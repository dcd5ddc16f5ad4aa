// A listener is a Collector: it reads one source each tick and adds samples to a sink.
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
#include "platform/host_files.h"

namespace tb {

class SampleSink {
 public:
  virtual ~SampleSink() = default;
  // `labels` is "key=value[,key=value]" or "" (see LabelValue for values).
  virtual void Add(std::string_view metric, std::string_view labels, double value) = 0;
  // A sample with its own time (Unix ms): a tool's row stamped when the tool printed it.
  virtual void AddAt(int64_t time_ms, std::string_view metric, std::string_view labels, double value) = 0;
};

// What listeners keep derived values (rates, ratios) as: integers as they are,
// other values to 6 significant digits, which is beyond what a tick-to-tick rate can
// resolve and lets the store keep them as exact scaled integers (about 1 byte a point).
double RoundForStorage(double value);

// Makes a string safe as a label value: ',' and '=' become '_'.
std::string LabelValue(std::string_view raw);

// The processes of a run found this tick, shared by the listeners that need them.
class ProcessTree;

// Notices worth keeping with the run ("gpu", "GPU 1 is lost: ..."); may be empty.
using EventFn = std::function<void(const std::string& kind, const std::string& label)>;

struct Tick {
  int64_t time_ms = 0;          // wall time of the tick (Unix ms)
  int64_t monotonic_ns = 0;     // for rates
  ProcessTree* tree = nullptr;  // null when no run is watched
  const EventFn* event = nullptr;
};

class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::string_view name() const = 0;
  // Reads the source once. On failure nothing partial is promised; the sampler records
  // the failure and calls again on the next tick.
  virtual Status Collect(const Tick& tick, SampleSink& sink) = 0;
};

// The host listeners by name: "top", "ps", "iostat", "net".
std::vector<std::string> HostListenerNames();
// The GPU listeners by name: "nvml".
std::vector<std::string> GpuListenerNames();
// "top, ps, iostat, net, nvml": for messages.
std::string AvailableListeners();
// Builds a host listener reading under `files`' root; InvalidArgument naming the
// available listeners when `name` is unknown.
Result<std::unique_ptr<Collector>> MakeHostCollector(std::string_view name, const HostFiles& files);

}  // namespace tb
