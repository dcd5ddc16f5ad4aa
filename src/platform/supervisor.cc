#include "platform/supervisor.h"

#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "base/time.h"

namespace tb {
namespace {

// The longest wait between looks at the clocks. A child's end (SIGCHLD) and the stop
// signals end a wait at once; a deadline (the maximum run time, the kill after the grace
// period) ends it when due, so the watch wakes about once a second, not ten times.
constexpr int64_t kWaitSliceNs = 1'000'000'000;

bool IsStopSignal(int sig) { return sig == SIGINT || sig == SIGTERM || sig == SIGHUP; }

}  // namespace

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

StopSignals::StopSignals() {
  sigemptyset(&set_);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&set_, sig);
  pthread_sigmask(SIG_BLOCK, &set_, &previous_);
}

StopSignals::~StopSignals() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

Supervisor::Supervisor(const StopSignals& signals, SupervisorPolicy policy)
    : signals_(signals), policy_(std::move(policy)) {}

void Supervisor::Watch(const std::vector<ChildProcess*>& children) {
  children_ = children;
  auto running = [&] {
    for (const ChildProcess* c : children_) {
      if (!c->HasExited()) return true;
    }
    return false;
  };
  int64_t start_ns = MonotonicNanos();
  while (running()) {
    int64_t wait_ns = kWaitSliceNs;
    int64_t now_ns = MonotonicNanos();
    if (policy_.max_time_ms > 0 && !stop_requested_)
      wait_ns = std::min(wait_ns, start_ns + policy_.max_time_ms * 1'000'000 - now_ns);
    if (policy_.escalate && stop_requested_ && !kill_sent_) wait_ns = std::min(wait_ns, kill_at_ns_ - now_ns);
    wait_ns = std::max<int64_t>(wait_ns, 1'000'000);
    timespec slice{wait_ns / 1'000'000'000, static_cast<long>(wait_ns % 1'000'000'000)};
    siginfo_t info{};
    // SIGCHLD ends the wait early; the stop signals are acted on.
    int sig = sigtimedwait(&signals_.set(), &info, &slice);
    if (IsStopSignal(sig)) RequestStop(sig, "interrupted by " + SignalName(sig));
    int64_t now = MonotonicNanos();
    if (policy_.max_time_ms > 0 && !stop_requested_ && now - start_ns >= policy_.max_time_ms * 1'000'000) {
      time_limit_reached_ = true;
      RequestStop(SIGTERM, "maximum run time " + FormatDuration(policy_.max_time_ms) + " reached");
    }
    if (policy_.escalate && stop_requested_ && !kill_sent_ && now >= kill_at_ns_) {
      kill_sent_ = true;
      LogWarning(policy_.what + " did not stop within the grace period: sending SIGKILL");
      Send(SIGKILL);
      if (policy_.on_signal) policy_.on_signal("grace period over: sent SIGKILL");
    }
  }
}

void Supervisor::RequestStop(int sig, const std::string& reason) {
  if (!stop_requested_) {
    stop_requested_ = true;
    stop_reason_ = reason;
    kill_at_ns_ = MonotonicNanos() + policy_.kill_grace_ms * 1'000'000;
    LogWarning(reason + ": sending " + SignalName(sig) + " to " + policy_.what +
               (policy_.escalate ? "; SIGKILL follows in " + FormatDuration(policy_.kill_grace_ms) : ""));
    Send(sig);
    if (policy_.on_signal) policy_.on_signal(reason + ": sent " + SignalName(sig));
  } else if (!policy_.escalate) {
    Send(sig);  // each child decides what a second one means
  } else if (!kill_sent_ && sig != SIGTERM) {
    kill_sent_ = true;  // a second Ctrl-C means now
    Send(SIGKILL);
    if (policy_.on_signal) policy_.on_signal("sent SIGKILL");
  }
}

void Supervisor::Send(int sig) {
  for (ChildProcess* c : children_) {
    if (!c->HasExited()) (void)c->Signal(sig);  // one already gone needs none
  }
}

}  // namespace tb
