// A long-lived thread that lends a second core to whoever asks while it is idle: a chart of
// 50 runs answers each series on whichever of two threads is free, without starting a
// thread per request (a new thread waits to be scheduled and faults its memory in afresh:
// docs/PERFORMANCE.md, "Figures once kept in headers").
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace tb {

class SpareThread {
 public:
  SpareThread();
  ~SpareThread();
  SpareThread(const SpareThread&) = delete;
  SpareThread& operator=(const SpareThread&) = delete;

  // Runs `work` on the calling thread and, when the spare thread is idle, on it too at the
  // same time: `work` must be safe to run once or twice at once (each run takes items from
  // a shared counter until none are left). Returns when every run of it has returned;
  // rethrows what either threw. When the spare thread is busy with another caller's work,
  // the caller's thread does it all.
  void Share(const std::function<void()>& work);

  // Calls `item(i, worker)` once for every i below `count`, through Share: each thread takes
  // the next i from a shared counter. `worker` is 0 on the calling thread and 1 on the spare
  // one, for state a thread keeps from item to item. Rethrows what either threw.
  void ForEachItem(size_t count, const std::function<void(size_t item, int worker)>& item);

  // The process's spare thread, started on first use and kept until the process ends:
  // every server in a process (tests and benchmarks start many) lends the same one, whose
  // memory is then already in use rather than faulted in afresh.
  static SpareThread& OfProcess();

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable wake_;  // the spare thread: work to take, or stop
  std::condition_variable done_;  // the caller: the spare thread's run returned
  const std::function<void()>* offered_ = nullptr;
  bool taken_ = false;     // the spare thread began the offered work
  bool finished_ = false;  // and returned from it
  std::exception_ptr error_;
  bool stop_ = false;
  std::thread thread_;  // last: started once the state above exists
};

}  // namespace tb
