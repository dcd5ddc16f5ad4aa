// The sampling loop: on its own thread, every interval, asks each listener for samples,
// measures what each listener cost (thread CPU time, recorded as the series
// trainbench.listener.cpu_seconds), and flushes the writer about once a second.
// A listener whose calls may block (Collector::may_block: NVML) ticks on a thread of its
// own on the same schedule, so a slow driver never starves the others; when one of its
// ticks takes longer than the interval, that is reported once (log line and event: which
// listener, how long), and its missed ticks are skipped. A failing listener is reported
// once and retried every tick; it never stops the others. Ticks follow an absolute
// schedule, so a slow tick does not shift the ones after it. Start/Stop from one
// controlling thread; Stop takes every listener's final tick, the slow ones' beside the
// others'.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "collect/collector.h"
#include "collect/process_tree.h"
#include "store/series_writer.h"

namespace tb {

struct ListenerHealth {
  std::string name;
  int64_t ticks = 0;
  int64_t failures = 0;
  int64_t cpu_ns = 0;  // total CPU time spent in this listener
  std::string last_error;
};

class Sampler {
 public:
  // Called with ("listener", "top failed: ...") and similar notices worth keeping.
  using EventCallback = EventFn;

  Sampler(std::vector<std::unique_ptr<Collector>> collectors, SeriesWriter& writer, int64_t interval_ms,
          EventCallback on_event);
  ~Sampler();

  // Watches the process tree rooted at `root` from the next tick on (the tree is read
  // under `files`' root).
  void WatchProcessTree(const HostFiles& files, pid_t root);

  void Start();
  // Takes one last sample, flushes and joins the thread. Safe to call twice.
  void Stop();

  // One tick, on the caller's thread (tests drive the sampler with fixed clocks).
  // `final`: the last tick, as Stop() takes it.
  void TickOnce(int64_t time_ms, int64_t monotonic_ns, bool final = false);

  std::vector<ListenerHealth> Health() const;

 private:
  // Collectors ticked together on one thread, with their own view of the process tree.
  struct Lane {
    std::vector<size_t> collectors;  // indexes into collectors_
    std::optional<ProcessTree> tree;
    std::mutex mu;  // held while the lane ticks
    std::thread thread;
    bool reported_late = false;
  };

  // Ticks the lane's collectors; `flush`: the lane that writes the writer out.
  void Loop(Lane& lane, bool flush);
  void TickLane(Lane& lane, int64_t time_ms, int64_t monotonic_ns, bool final);
  void FlushWriter();

  std::vector<std::unique_ptr<Collector>> collectors_;
  std::vector<Labels> listener_labels_;  // listener=NAME, per collector
  SeriesWriter& writer_;
  int64_t interval_ms_;
  EventCallback on_event_;
  // lanes_[0]: the listeners that do not block; then one for each that may.
  std::vector<std::unique_ptr<Lane>> lanes_;

  mutable std::mutex mu_;  // guards stopping_ and health_
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<ListenerHealth> health_;
  int64_t last_flush_ns_ = 0;
  bool flush_failing_ = false;
};

}  // namespace tb
