#include "base/spare_thread.h"

#include <atomic>

namespace tb {

SpareThread::SpareThread() : thread_([this] { Loop(); }) {}

SpareThread::~SpareThread() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void SpareThread::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || (offered_ != nullptr && !taken_); });
    if (stop_) return;
    taken_ = true;
    const std::function<void()>* work = offered_;
    lock.unlock();
    std::exception_ptr error;
    try {
      (*work)();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    error_ = error;
    finished_ = true;
    done_.notify_all();
  }
}

void SpareThread::ForEachItem(size_t count, const std::function<void(size_t, int)>& item) {
  std::atomic<size_t> next{0};
  std::thread::id caller = std::this_thread::get_id();
  std::function<void()> work = [&] {
    int worker = std::this_thread::get_id() == caller ? 0 : 1;
    for (size_t i; (i = next++) < count;) item(i, worker);
  };
  if (count > 1) {
    Share(work);
  } else {
    work();
  }
}

SpareThread& SpareThread::OfProcess() {
  static auto* spare = new SpareThread();  // never destroyed: its thread waits until exit
  return *spare;
}

void SpareThread::Share(const std::function<void()>& work) {
  bool offered = false;
  {
    std::lock_guard lock(mu_);
    if (offered_ == nullptr && !stop_) {
      offered_ = &work;
      offered = true;
    }
  }
  if (offered) wake_.notify_one();
  std::exception_ptr mine;
  try {
    work();
  } catch (...) {
    mine = std::current_exception();
  }
  std::exception_ptr theirs;
  if (offered) {
    std::unique_lock lock(mu_);
    // Not begun yet: taken back (the work is done). Begun: wait for it to return.
    if (taken_) done_.wait(lock, [&] { return finished_; });
    theirs = taken_ ? error_ : nullptr;
    offered_ = nullptr;
    taken_ = false;
    finished_ = false;
    error_ = nullptr;
  }
  if (mine) std::rethrow_exception(mine);
  if (theirs) std::rethrow_exception(theirs);
}

}  // namespace tb
