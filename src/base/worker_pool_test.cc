#include "base/worker_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <set>

namespace tb {
namespace {

using namespace std::chrono_literals;

// Waits (up to 10 s, for a loaded machine) until `pool` has `n` threads waiting for a job.
void WaitUntilIdle(const WorkerPool& pool, size_t n) {
  for (int i = 0; i < 5000 && pool.idle() != n; ++i) std::this_thread::sleep_for(2ms);
  ASSERT_EQ(pool.idle(), n);
}

TEST(WorkerPoolTest, JobsOneAfterAnotherGoToTheThreadLastIdle) {
  std::atomic<int64_t> cpu_ns{0};
  WorkerPool pool(8, cpu_ns);
  EXPECT_EQ(pool.threads(), 0u);  // nothing started before the first job
  // Three jobs at once start three threads.
  std::promise<void> release_promise;
  std::shared_future<void> release = release_promise.get_future().share();
  std::atomic<int> running{0};
  for (int i = 0; i < 3; ++i) {
    pool.Enqueue([&] {
      ++running;
      release.wait();
      --running;
    });
  }
  for (int i = 0; i < 5000 && running.load() < 3; ++i) std::this_thread::sleep_for(2ms);
  release_promise.set_value();
  WaitUntilIdle(pool, 3);
  EXPECT_EQ(pool.threads(), 3u);
  // Then one client at a time: handed out in turn, the jobs would go round the three.
  std::set<std::thread::id> ran_on;
  for (int i = 0; i < 12; ++i) {
    std::promise<std::thread::id> done;
    pool.Enqueue([&] {
      volatile double x = 0;
      for (int k = 0; k < 20000; ++k) x = x + k;  // a little CPU time to count
      done.set_value(std::this_thread::get_id());
    });
    ran_on.insert(done.get_future().get());
    WaitUntilIdle(pool, 3);  // the thread goes back to waiting
  }
  EXPECT_EQ(ran_on.size(), 1u) << "jobs one after another should go to the thread last idle";
  EXPECT_EQ(pool.threads(), 3u);
  pool.Shutdown();
  EXPECT_GT(cpu_ns.load(), 0);
}

TEST(WorkerPoolTest, StartsThreadsAsJobsNeedThemUpToItsLimitAndQueuesTheRest) {
  std::atomic<int64_t> cpu_ns{0};
  WorkerPool pool(3, cpu_ns);
  std::promise<void> release_promise;
  std::shared_future<void> release = release_promise.get_future().share();
  std::atomic<int> running{0}, finished{0};
  for (int i = 0; i < 5; ++i) {
    pool.Enqueue([&] {
      ++running;
      release.wait();
      ++finished;
    });
  }
  for (int i = 0; i < 5000 && running.load() < 3; ++i) std::this_thread::sleep_for(2ms);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(running.load(), 3) << "three threads busy; two jobs wait for one";
  EXPECT_EQ(pool.threads(), 3u);
  release_promise.set_value();
  pool.Shutdown();  // runs what was given before it ends the threads
  EXPECT_EQ(finished.load(), 5);
  EXPECT_EQ(running.load(), 5);
}

TEST(WorkerPoolTest, JobsGivenAfterShutdownAreDroppedAndShutdownEndsIdleThreads) {
  std::atomic<int64_t> cpu_ns{0};
  WorkerPool pool(4, cpu_ns);
  std::atomic<int> ran{0};
  for (int i = 0; i < 4; ++i) pool.Enqueue([&] { ++ran; });
  WaitUntilIdle(pool, pool.threads());
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 4);
  pool.Enqueue([&] { ++ran; });
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(ran.load(), 4);
}

}  // namespace
}  // namespace tb
