#include "base/worker_pool.h"

#include <algorithm>

#include "base/time.h"

namespace tb {

WorkerPool::WorkerPool(size_t max_threads, std::atomic<int64_t>& cpu_ns)
    : max_threads_(std::max<size_t>(1, max_threads)), cpu_ns_(cpu_ns) {}

WorkerPool::~WorkerPool() { Shutdown(); }

void WorkerPool::Enqueue(std::function<void()> job) {
  std::lock_guard lock(mu_);
  if (shutdown_) return;
  if (!idle_.empty()) {
    Idle* idle = idle_.back();
    idle_.pop_back();
    idle->job = std::move(job);
    idle->wake.notify_one();
  } else if (threads_.size() < max_threads_) {
    threads_.emplace_back([this, job = std::move(job)]() mutable { Loop(std::move(job)); });
  } else {
    waiting_.push_back(std::move(job));
  }
}

void WorkerPool::Loop(std::function<void()> job) {
  Idle self;
  std::unique_lock lock(mu_);
  for (;;) {
    lock.unlock();
    int64_t start = ThreadCpuNanos();
    job();
    cpu_ns_.fetch_add(ThreadCpuNanos() - start, std::memory_order_relaxed);
    job = nullptr;
    lock.lock();
    if (!waiting_.empty()) {
      job = std::move(waiting_.front());
      waiting_.pop_front();
      continue;
    }
    if (shutdown_) return;
    idle_.push_back(&self);
    self.wake.wait(lock, [&] { return self.job != nullptr || shutdown_; });
    if (self.job == nullptr) {  // shut down while idle: no longer offered jobs
      idle_.erase(std::find(idle_.begin(), idle_.end(), &self));
      return;
    }
    job = std::move(self.job);
    self.job = nullptr;
  }
}

void WorkerPool::Shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    shutdown_ = true;
    for (Idle* idle : idle_) idle->wake.notify_one();
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

size_t WorkerPool::threads() const {
  std::lock_guard lock(mu_);
  return threads_.size();
}

size_t WorkerPool::idle() const {
  std::lock_guard lock(mu_);
  return idle_.size();
}

}  // namespace tb
