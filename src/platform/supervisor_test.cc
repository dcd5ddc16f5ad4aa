#include "platform/supervisor.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <chrono>
#include <thread>

namespace tb {
namespace {

ChildProcess Shell(const std::string& script) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", script};
  o.new_process_group = true;
  Result<ChildProcess> child = ChildProcess::Spawn(o);
  EXPECT_TRUE(child.ok()) << child.status().message();
  return std::move(child.value());
}

// Sends `sig` to this thread after `ms`, from a thread of its own (which has the stop
// signals blocked too, so only the supervisor's sigtimedwait takes it).
std::thread SignalLater(int sig, int ms) {
  pthread_t self = pthread_self();
  return std::thread([self, sig, ms] {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    pthread_kill(self, sig);
  });
}

TEST(SupervisorTest, TheMaximumTimeSendsTermThenKillAfterTheGrace) {
  StopSignals signals;
  // Ignores SIGTERM (and so does the sleep it starts): only SIGKILL ends it.
  ChildProcess child = Shell("trap '' TERM; while :; do sleep 0.05; done");
  std::vector<std::string> said;
  Supervisor supervisor(signals, {.what = "the run",
                                  .max_time_ms = 200,
                                  .escalate = true,
                                  .kill_grace_ms = 300,
                                  .on_signal = [&](const std::string& s) { said.push_back(s); }});
  supervisor.Watch({&child});
  Result<ExitInfo> exit = child.Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_TRUE(exit->signaled);
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_TRUE(supervisor.stop_requested());
  EXPECT_NE(supervisor.stop_reason().find("maximum run time"), std::string::npos);
  EXPECT_TRUE(supervisor.time_limit_reached());
  ASSERT_EQ(said.size(), 2u);
  EXPECT_NE(said[0].find("sent SIGTERM"), std::string::npos);
  EXPECT_EQ(said[1], "grace period over: sent SIGKILL");
}

TEST(SupervisorTest, ASecondCtrlCKillsAtOnce) {
  StopSignals signals;
  ChildProcess child = Shell("trap '' INT; while :; do sleep 0.05; done");
  std::vector<std::string> said;
  Supervisor supervisor(signals, {.what = "the run",
                                  .max_time_ms = 0,
                                  .escalate = true,
                                  .kill_grace_ms = 600'000,
                                  .on_signal = [&](const std::string& s) { said.push_back(s); }});
  std::thread first = SignalLater(SIGINT, 100), second = SignalLater(SIGINT, 400);
  supervisor.Watch({&child});
  first.join();
  second.join();
  Result<ExitInfo> exit = child.Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_EQ(supervisor.stop_reason(), "interrupted by SIGINT");
  ASSERT_EQ(said.size(), 2u);
  EXPECT_EQ(said[0], "interrupted by SIGINT: sent SIGINT");
  EXPECT_EQ(said[1], "sent SIGKILL");
}

TEST(SupervisorTest, WithoutEscalationEverySignalIsPassedOnAndNothingIsKilled) {
  StopSignals signals;
  // Ends itself on the second SIGINT, as a `trainbench run` under schedule does.
  ChildProcess a = Shell("n=0; trap 'n=$((n+1)); [ $n -ge 2 ] && exit 7' INT; while :; do sleep 0.05; done");
  ChildProcess b = Shell("trap '' INT; trap 'exit 3' HUP; while :; do sleep 0.05; done");
  Supervisor supervisor(signals, {.what = "the runs in flight",
                                  .max_time_ms = 0,
                                  .escalate = false,
                                  .kill_grace_ms = 0,
                                  .on_signal = nullptr});
  std::thread first = SignalLater(SIGINT, 100), second = SignalLater(SIGINT, 400);
  std::thread hangup = SignalLater(SIGHUP, 700);
  supervisor.Watch({&a, &b});
  for (std::thread* t : {&first, &second, &hangup}) t->join();
  Result<ExitInfo> ea = a.Wait(), eb = b.Wait();
  ASSERT_TRUE(ea.ok() && eb.ok());
  EXPECT_FALSE(ea->signaled);
  EXPECT_EQ(ea->exit_code, 7);
  EXPECT_FALSE(eb->signaled);
  EXPECT_EQ(eb->exit_code, 3);
}

TEST(SupervisorTest, ChildrenThatEndOnTheirOwnAreNotSignalled) {
  StopSignals signals;
  ChildProcess child = Shell("exit 4");
  bool told = false;
  Supervisor supervisor(signals, {.what = "the run",
                                  .max_time_ms = 60'000,
                                  .escalate = true,
                                  .kill_grace_ms = 1000,
                                  .on_signal = [&](const std::string&) { told = true; }});
  supervisor.Watch({&child});
  Result<ExitInfo> exit = child.Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->exit_code, 4);
  EXPECT_FALSE(supervisor.stop_requested());
  EXPECT_FALSE(told);
}

TEST(SupervisorTest, SignalsHaveNames) {
  EXPECT_EQ(SignalName(SIGINT), "SIGINT");
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
  EXPECT_EQ(SignalName(1000), "signal 1000");
}

}  // namespace
}  // namespace tb
