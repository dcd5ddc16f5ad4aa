#include "sample/sampler.h"

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
  for (const auto& c : collectors_) {
    ListenerHealth h;
    h.name = c->name();
    health_.push_back(h);
    listener_labels_.push_back(Labels{{"listener", h.name}});
  }
}

Sampler::~Sampler() { Stop(); }

void Sampler::WatchProcessTree(const HostFiles& files, pid_t root) {
  std::lock_guard lock(mu_);
  tree_.emplace(files, root);
}

void Sampler::Start() {
  last_flush_ns_ = MonotonicNanos();
  thread_ = std::thread([this] { Loop(); });
}

void Sampler::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Sampler::Loop() {
  int64_t start = MonotonicNanos();
  int64_t interval_ns = interval_ms_ * 1000000;
  for (int64_t k = 0;; ++k) {
    TickOnce(WallMillis(), MonotonicNanos());
    if (MonotonicNanos() - last_flush_ns_ >= kFlushIntervalNs) FlushWriter();
    // Next tick on the absolute schedule; ticks missed while busy are skipped.
    int64_t now = MonotonicNanos();
    int64_t next_k = std::max(k + 1, (now - start) / interval_ns + 1);
    k = next_k - 1;
    std::unique_lock lock(mu_);
    if (wake_.wait_for(lock, std::chrono::nanoseconds(start + next_k * interval_ns - now),
                       [this] { return stopping_; })) {
      break;
    }
  }
  // The final sample, so a short run still has its last state recorded.
  TickOnce(WallMillis(), MonotonicNanos(), /*final=*/true);
  FlushWriter();
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
  std::lock_guard lock(mu_);
  Tick tick{time_ms, monotonic_ns, tree_ ? &*tree_ : nullptr, on_event_ ? &on_event_ : nullptr, final};
  if (tree_) tree_->Invalidate();
  for (size_t i = 0; i < collectors_.size(); ++i) {
    ListenerHealth& h = health_[i];
    int64_t before = ThreadCpuNanos();
    Status s = collectors_[i]->Collect(tick, writer_);
    int64_t cost = ThreadCpuNanos() - before;
    ++h.ticks;
    h.cpu_ns += cost;
    writer_.Add({metric::kTrainbenchListenerCpuSeconds, listener_labels_[i], time_ms,
                 std::round(static_cast<double>(cost) / 1e3) / 1e6});
    if (!s.ok()) {
      ++h.failures;
      if (h.last_error.empty()) {
        std::string msg = "listener " + h.name + " failed: " + s.message();
        LogWarning(msg);
        if (on_event_) on_event_("listener", msg);
      }
      h.last_error = s.message();
    } else if (!h.last_error.empty()) {
      std::string msg = "listener " + h.name + " works again";
      LogInfo(msg);
      if (on_event_) on_event_("listener", msg);
      h.last_error.clear();
    }
  }
}

std::vector<ListenerHealth> Sampler::Health() const {
  std::lock_guard lock(mu_);
  return health_;
}

}  // namespace tb
