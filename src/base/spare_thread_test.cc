#include "base/spare_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <stdexcept>
#include <vector>

namespace tb {
namespace {

using std::chrono::seconds;

// Threads meeting in a piece of work: Arrive waits (at most 10 s, so that a spare thread
// that never helps fails the test rather than hanging it) until `count` threads have.
struct Meeting {
  bool Arrive(int count) {
    std::unique_lock lock(mu);
    ++arrived;
    cv.notify_all();
    return cv.wait_for(lock, seconds(10), [&] { return arrived >= count; });
  }
  // Waits without arriving.
  bool Wait(int count) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, seconds(10), [&] { return arrived >= count; });
  }
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
};

TEST(SpareThreadTest, AnIdleSpareThreadTakesItemsAlongsideTheCaller) {
  SpareThread spare;
  Meeting meeting;
  std::atomic<size_t> next{0};
  std::vector<std::atomic<int>> done(100);
  std::set<std::thread::id> threads;
  std::atomic<bool> met{true};
  spare.Share([&] {
    {
      std::lock_guard lock(meeting.mu);
      threads.insert(std::this_thread::get_id());
    }
    if (!meeting.Arrive(2)) met = false;  // both threads in the work at once
    for (size_t i; (i = next++) < done.size();) ++done[i];
  });
  EXPECT_TRUE(met);
  EXPECT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 1u);
  for (size_t i = 0; i < done.size(); ++i) EXPECT_EQ(done[i], 1) << i;  // each item once
}

TEST(SpareThreadTest, ShareReturnsOnlyOnceTheSpareThreadsRunHasReturned) {
  SpareThread spare;
  Meeting meeting;
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<size_t> next{0};
  std::vector<std::atomic<int>> done(2);
  spare.Share([&] {
    size_t mine = next++;  // each thread one item, the spare's finished late
    meeting.Arrive(2);
    if (std::this_thread::get_id() != caller) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (mine < done.size()) ++done[mine];
  });
  EXPECT_EQ(done[0], 1);
  EXPECT_EQ(done[1], 1);
}

TEST(SpareThreadTest, WhatTheSpareThreadThrowsReachesTheCallerAfterBothAreDone) {
  SpareThread spare;
  Meeting meeting;
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> returned{0};
  EXPECT_THROW(spare.Share([&] {
    meeting.Arrive(2);
    if (std::this_thread::get_id() != caller) throw std::runtime_error("store failed");
    ++returned;
  }),
               std::runtime_error);
  EXPECT_EQ(returned, 1);
  // And the spare thread serves the next caller.
  std::atomic<int> runs{0};
  meeting.arrived = 0;
  spare.Share([&] {
    meeting.Arrive(2);
    ++runs;
  });
  EXPECT_EQ(runs, 2);
}

TEST(SpareThreadTest, ABusySpareThreadLeavesAnotherCallerToDoItsWorkAlone) {
  SpareThread spare;
  std::promise<void> second_done;
  std::shared_future<void> released = second_done.get_future().share();
  Meeting meeting;
  std::atomic<bool> first_met{true};
  // The first caller's work holds the spare thread until the second caller is done.
  std::thread first([&] {
    std::thread::id caller = std::this_thread::get_id();
    spare.Share([&] {
      if (!meeting.Arrive(2)) first_met = false;
      if (std::this_thread::get_id() != caller && released.wait_for(seconds(10)) != std::future_status::ready)
        first_met = false;
    });
  });
  ASSERT_TRUE(meeting.Wait(2));
  std::set<std::thread::id> second_threads;
  spare.Share([&] { second_threads.insert(std::this_thread::get_id()); });
  EXPECT_EQ(second_threads, std::set<std::thread::id>{std::this_thread::get_id()});
  second_done.set_value();
  first.join();
  EXPECT_TRUE(first_met);
}

// ForEachItem: every item once, each told which thread took it (0 the caller, 1 the spare),
// so that state a thread keeps between items is its own.
TEST(SpareThreadTest, EachItemIsTakenOnceAndToldItsThread) {
  SpareThread spare;
  Meeting meeting;
  std::vector<std::atomic<int>> done(200);
  std::thread::id by_worker[2];
  std::atomic<bool> met{true}, consistent{true};
  spare.ForEachItem(done.size(), [&](size_t i, int worker) {
    if (i < 2 && !meeting.Arrive(2)) met = false;  // the first two items taken at once
    {
      std::lock_guard lock(meeting.mu);
      if (by_worker[worker] == std::thread::id()) by_worker[worker] = std::this_thread::get_id();
      if (by_worker[worker] != std::this_thread::get_id()) consistent = false;
    }
    ++done[i];
  });
  EXPECT_TRUE(met);
  EXPECT_TRUE(consistent) << "a worker number is one thread";
  EXPECT_EQ(by_worker[0], std::this_thread::get_id());
  EXPECT_NE(by_worker[1], std::this_thread::get_id());
  for (size_t i = 0; i < done.size(); ++i) EXPECT_EQ(done[i], 1) << i;
  int one = 0;
  spare.ForEachItem(1, [&](size_t, int worker) { one += worker == 0 ? 1 : 100; });
  EXPECT_EQ(one, 1) << "a single item on the calling thread";
}

TEST(SpareThreadTest, ManyShortSharesEachFinishEveryItem) {
  SpareThread spare;
  for (int round = 0; round < 2000; ++round) {
    std::atomic<size_t> next{0};
    std::atomic<int> done{0};
    spare.Share([&] {
      while (next++ < 5) ++done;
    });
    ASSERT_EQ(done, 5) << "round " << round;
  }
}

}  // namespace
}  // namespace tb
