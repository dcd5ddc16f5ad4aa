// Watching over child processes until they end, with the stop signals taken synchronously.
// `trainbench run` watches its command; `trainbench schedule` watches the `trainbench run`
// processes of a workload. Both block the stop signals for the whole time (StopSignals),
// so that Ctrl-C, a closed terminal or a batch system's SIGTERM reach trainbench and are
// passed on in order, never killing trainbench itself before the runs are recorded.
#pragma once

#include <signal.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "platform/process.h"

namespace tb {

// Blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD in the calling thread and in the threads it
// starts afterwards (they inherit the mask); the previous mask comes back at scope end.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  const sigset_t& set() const { return set_; }

 private:
  sigset_t set_{};
  sigset_t previous_{};
};

struct SupervisorPolicy {
  // Named in messages: "the run", "the runs in flight".
  std::string what = "the run";
  // After this long the children get SIGTERM, as if interrupted. 0: no limit.
  int64_t max_time_ms = 0;
  // Whether trainbench ends a stop itself: SIGKILL once kill_grace_ms passed after the
  // first stop signal, or at once on a second SIGINT/SIGHUP. Without it every stop signal
  // is passed on and the children end themselves (each `trainbench run` under schedule
  // has its own grace period).
  bool escalate = true;
  int64_t kill_grace_ms = 0;
  // Told each signal sent, for the run's record ("interrupted by SIGINT: sent SIGINT").
  std::function<void(const std::string&)> on_signal;
};

class Supervisor {
 public:
  Supervisor(const StopSignals& signals, SupervisorPolicy policy);

  // Returns once every child has exited (not reaped: call Wait on each), passing on the
  // stop signals that arrive meanwhile as the policy says.
  void Watch(const std::vector<ChildProcess*>& children);

  bool stop_requested() const { return stop_requested_; }
  // Why the children were asked to stop: "interrupted by SIGINT", "maximum run time 2s reached".
  const std::string& stop_reason() const { return stop_reason_; }
  // Whether the stop was the maximum run time's (a planned end), not a signal's.
  bool time_limit_reached() const { return time_limit_reached_; }

 private:
  void RequestStop(int sig, const std::string& reason);
  void Send(int sig);

  const StopSignals& signals_;
  SupervisorPolicy policy_;
  std::vector<ChildProcess*> children_;
  bool stop_requested_ = false;
  bool kill_sent_ = false;
  bool time_limit_reached_ = false;
  int64_t kill_at_ns_ = 0;
  std::string stop_reason_;
};

// "SIGINT" for 2; "signal 99" for what has no name.
std::string SignalName(int sig);

}  // namespace tb
