#include "run/sampler.h"

#include <cmath>

#include "base/log.h"
#include "base/time.h"
#include "metrics/names.h"

namespace tb {
namespace {
constexpr int64_t kFlushIntervalNs = 1000000000;

}  // namespace

Sampler::Sampler(std::vector<std::unique_ptr<Collector>> collectors, SeriesWriter& writer,
                 int64_t interval_ms, EventCallback on_event)
    : collectors_(std::move(collectors)),
      writer_(writer),
      interval_ms_(interval_ms),
      on_event_(std::move(on_event)) {
  lanes_.push_back(std::make_unique<Lane>());
  for (size_t i = 0; i < collectors_.size(); ++i) {
    ListenerHealth h;
    h.name = collectors_[i]->name();
    health_.push_back(h);
    listener_labels_.push_back(Labels{{"listener", h.name}});
    if (collectors_[i]->may_block()) {
      lanes_.push_back(std::make_unique<Lane>());
      lanes_.back()->collectors.push_back(i);
    } else {
      lanes_[0]->collectors.push_back(i);
    }
  }
}

Sampler::~Sampler() { Stop(); }

void Sampler::WatchProcessTree(const HostFiles& files, pid_t root) {
  for (auto& lane : lanes_) {
    std::lock_guard lock(lane->mu);
    lane->tree.emplace(files, root);
  }
}

void Sampler::Start() {
  last_flush_ns_ = MonotonicNanos();
  for (size_t i = 0; i < lanes_.size(); ++i) {
    Lane& lane = *lanes_[i];
    lane.thread = std::thread([this, &lane, i] { Loop(lane, i == 0); });
  }
}

void Sampler::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  // The slow lanes first, so the writer's last flush (lane 0's) holds their final samples.
  for (size_t i = lanes_.size(); i-- > 0;) {
    if (lanes_[i]->thread.joinable()) lanes_[i]->thread.join();
  }
  FlushWriter();  // every lane's final samples, whichever lanes there are
}

void Sampler::Loop(Lane& lane, bool flush) {
  int64_t start = MonotonicNanos();
  int64_t interval_ns = interval_ms_ * 1000000;
  for (int64_t k = 0;; ++k) {
    int64_t began = MonotonicNanos();
    TickLane(lane, WallMillis(), began, /*final=*/false);
    int64_t now = MonotonicNanos();
    if (now - began > interval_ns && !lane.reported_late && !lane.collectors.empty()) {
      lane.reported_late = true;
      std::string msg = "listener " + health_[lane.collectors[0]].name + " is late: one tick took " +
                        std::to_string((now - began) / 1'000'000) + " ms, longer than the " +
                        std::to_string(interval_ms_) +
                        " ms interval (its ticks are fewer; the other listeners keep theirs)";
      LogWarning(msg);
      if (on_event_) on_event_("listener", msg);
    }
    if (flush && now - last_flush_ns_ >= kFlushIntervalNs) FlushWriter();
    // Next tick on the absolute schedule; ticks missed while busy are skipped.
    int64_t next_k = std::max(k + 1, (now - start) / interval_ns + 1);
    k = next_k - 1;
    std::unique_lock lock(mu_);
    if (wake_.wait_for(lock, std::chrono::nanoseconds(start + next_k * interval_ns - now),
                       [this] { return stopping_; })) {
      break;
    }
  }
  // The final sample, so a short run still has its last state recorded; not from a lane
  // whose ticks outlast the interval (a slow driver), which would hold the run's exit.
  if (!lane.reported_late) TickLane(lane, WallMillis(), MonotonicNanos(), /*final=*/true);
}

void Sampler::FlushWriter() {
  Status s = writer_.Flush();
  last_flush_ns_ = MonotonicNanos();
  if (!s.ok() && !flush_failing_) {
    LogWarning("cannot write samples (kept in memory and retried every second): " + s.message());
  } else if (s.ok() && flush_failing_) {
    LogInfo("writing samples again");
  }
  flush_failing_ = !s.ok();
}

void Sampler::TickOnce(int64_t time_ms, int64_t monotonic_ns, bool final) {
  for (auto& lane : lanes_) TickLane(*lane, time_ms, monotonic_ns, final);
}

void Sampler::TickLane(Lane& lane, int64_t time_ms, int64_t monotonic_ns, bool final) {
  std::lock_guard lane_lock(lane.mu);
  Tick tick{time_ms, monotonic_ns, lane.tree ? &*lane.tree : nullptr, on_event_ ? &on_event_ : nullptr,
            final};
  if (lane.tree) lane.tree->Invalidate();
  for (size_t i : lane.collectors) {
    int64_t before = ThreadCpuNanos();
    Status s = collectors_[i]->Collect(tick, writer_);
    int64_t cost = ThreadCpuNanos() - before;
    writer_.Add({metric::kTrainbenchListenerCpuSeconds, listener_labels_[i], time_ms,
                 std::round(static_cast<double>(cost) / 1e3) / 1e6});
    std::string notice;
    {
      std::lock_guard lock(mu_);
      ListenerHealth& h = health_[i];
      ++h.ticks;
      h.cpu_ns += cost;
      if (!s.ok()) {
        ++h.failures;
        if (h.last_error.empty()) notice = "listener " + h.name + " failed: " + s.message();
        h.last_error = s.message();
      } else if (!h.last_error.empty()) {
        notice = "listener " + h.name + " works again";
        h.last_error.clear();
      }
    }
    if (notice.empty()) continue;
    if (s.ok()) {
      LogInfo(notice);
    } else {
      LogWarning(notice);
    }
    if (on_event_) on_event_("listener", notice);
  }
}

std::vector<ListenerHealth> Sampler::Health() const {
  std::lock_guard lock(mu_);
  return health_;
}

}  // namespace tb
