// Threads that take jobs, started as jobs need them and handed the next job most recently
// idle first. A server's pool: a job is a connection's requests, answered until it goes
// quiet. Started as needed, a server that one client talks to has one thread, not the
// dozens it may need under load; most recently idle first, the thread that just finished
// takes the next job with its memory and caches still warm, where a pool that hands jobs
// out in turn (cpp-httplib's) wakes each of its threads in rotation, and each one's first
// job faults in memory of its own (docs/PERFORMANCE.md, "Figures once kept in headers").
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tb {

class WorkerPool {
 public:
  // The CPU time of the threads running jobs is added to `cpu_ns`, which outlives the pool.
  WorkerPool(size_t max_threads, std::atomic<int64_t>& cpu_ns);
  ~WorkerPool();  // Shutdown()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs `job` on an idle thread (the one idle for the shortest time), on a new thread
  // while there are fewer than `max_threads`, or else when a thread is free, in the order
  // given.
  void Enqueue(std::function<void()> job);
  // Runs every job already given, then ends the threads; later jobs are dropped.
  void Shutdown();

  size_t threads() const;  // started so far and not ended by Shutdown()
  size_t idle() const;     // of which waiting for a job

 private:
  struct Idle {
    std::condition_variable wake;
    std::function<void()> job;
  };
  void Loop(std::function<void()> job);

  const size_t max_threads_;
  mutable std::mutex mu_;
  std::vector<Idle*> idle_;                    // the most recently idle last
  std::deque<std::function<void()>> waiting_;  // when every thread is busy
  std::vector<std::thread> threads_;
  bool shutdown_ = false;
  std::atomic<int64_t>& cpu_ns_;
};

}  // namespace tb
