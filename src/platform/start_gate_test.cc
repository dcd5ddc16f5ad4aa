#include "platform/start_gate.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "base/strings.h"
#include "platform/process.h"

namespace tb {
namespace {

TEST(StartGateTest, ARunTakesTheGateAndNothingItStartsSeesIt) {
  setenv("TRAINBENCH_START_GATE", "7,9", 1);
  GatePass pass = TakeStartGate();
  EXPECT_EQ(pass.ready_fd, 7);
  EXPECT_EQ(pass.gate_fd, 9);
  EXPECT_EQ(std::getenv("TRAINBENCH_START_GATE"), nullptr);

  setenv("TRAINBENCH_START_GATE", "nonsense", 1);
  pass = TakeStartGate();
  EXPECT_EQ(pass.ready_fd, -1);
  EXPECT_EQ(pass.gate_fd, -1);
  EXPECT_EQ(std::getenv("TRAINBENCH_START_GATE"), nullptr);
  // Without a gate a run starts at once.
  WaitAtStartGate(pass);
}

// A child on the run's side of the gate: it gets ready after `delay`, prints when it was
// ready and when it went through the gate (nanoseconds).
ChildProcess GateChild(const StartGate& gate, const std::string& delay) {
  std::string script = "sleep " + delay +
                       "; r=${TRAINBENCH_START_GATE%,*}; g=${TRAINBENCH_START_GATE#*,}; "
                       "echo ready $(date +%s%N); eval \"printf r >&$r; exec $r>&-; cat <&$g\"; "
                       "echo go $(date +%s%N)";
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", gate.Environment()};
  Result<ChildProcess> child = ChildProcess::Spawn(SpawnOptions::Watched({"/bin/sh", "-c", script}, env));
  EXPECT_TRUE(child.ok()) << child.status().message();
  return std::move(child.value());
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

int64_t TimeOf(const std::string& out, const std::string& word) {
  size_t at = out.find(word + " ");
  if (at == std::string::npos) return -1;
  return ParseInt(Trim(std::string_view(out).substr(at + word.size() + 1, 19))).value_or(-1);
}

TEST(StartGateTest, NoRunGoesThroughBeforeTheSlowestIsReady) {
  StartGate gate;
  ASSERT_TRUE(gate.Create().ok());
  ChildProcess fast = GateChild(gate, "0");
  ChildProcess slow = GateChild(gate, "0.5");
  gate.OpenWhenReady(2);
  std::string fast_out = ReadAll(fast.stdout_fd()), slow_out = ReadAll(slow.stdout_fd());
  ASSERT_TRUE(fast.Wait().ok());
  ASSERT_TRUE(slow.Wait().ok());
  int64_t slow_ready = TimeOf(slow_out, "ready"), fast_go = TimeOf(fast_out, "go");
  ASSERT_GT(slow_ready, 0) << slow_out;
  ASSERT_GT(fast_go, 0) << fast_out;
  EXPECT_GE(fast_go, slow_ready);
}

TEST(StartGateTest, ARunThatEndsBeforeItIsReadyDoesNotHoldTheOthers) {
  StartGate gate;
  ASSERT_TRUE(gate.Create().ok());
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", gate.Environment()};
  Result<ChildProcess> gone = ChildProcess::Spawn(SpawnOptions::Watched({"/bin/sh", "-c", "exit 1"}, env));
  ASSERT_TRUE(gone.ok());
  // One of one never says ready: the gate opens when its READY end closes, not after a minute.
  gate.OpenWhenReady(1, 600'000);
  EXPECT_EQ(gone->Wait()->exit_code, 1);
}

}  // namespace
}  // namespace tb
