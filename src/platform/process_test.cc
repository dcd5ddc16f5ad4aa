#include "platform/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/strings.h"

namespace tb {
namespace {

// All of a child's stdout.
std::string Output(ChildProcess& child) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(child.stdout_fd(), buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

// The value of a /proc/PID/status line ("SigBlk:\t0000000000000000").
std::string StatusField(const std::string& status, const std::string& name) {
  for (std::string_view line : Split(status, '\n')) {
    if (StartsWith(line, name + ":")) return std::string(Trim(line.substr(name.size() + 1)));
  }
  return "";
}

void Noticed(int) {}

// A command starts as from a fresh shell, whatever trainbench's own signal handling: no
// signal blocked or ignored that trainbench blocks or ignores (a script that inherited an
// ignored SIGPIPE would not die on a closed pipe; one with SIGTERM blocked would not stop).
TEST(ProcessTest, ACommandStartsWithDefaultSignalsAndItsOwnGroup) {
  struct sigaction handled {};
  handled.sa_handler = Noticed;
  struct sigaction old_usr1 {
  }, old_pipe{};
  sigaction(SIGUSR1, &handled, &old_usr1);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);
  sigset_t term, old_mask;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &old_mask);

  SpawnOptions options;
  options.argv = {"cat", "/proc/self/status"};
  options.stdout_mode = Stdio::kPipe;
  options.stdin_mode = Stdio::kDevNull;
  options.new_process_group = true;
  options.parent_death_signal = SIGTERM;
  Result<ChildProcess> child = ChildProcess::Spawn(options);

  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGUSR1, &old_usr1, nullptr);
  sigaction(SIGPIPE, &old_pipe, nullptr);
  ASSERT_TRUE(child.ok()) << child.status().message();
  std::string status = Output(*child);
  pid_t pid = child->pid();
  ASSERT_TRUE(child->Wait().ok());
  EXPECT_EQ(StatusField(status, "SigBlk"), "0000000000000000") << status;
  uint64_t ignored = std::stoull(StatusField(status, "SigIgn"), nullptr, 16);
  EXPECT_EQ(ignored & (1ull << (SIGPIPE - 1)), 0u) << "SIGPIPE stays ignored in the command";
  EXPECT_EQ(StatusField(status, "Pid"), std::to_string(pid));
  // Its own process group, so that a signal to the group reaches all it started.
  EXPECT_EQ(StatusField(status, "NSpgid"), std::to_string(pid)) << status;
}

TEST(ProcessTest, TheWorkingDirectoryAndEnvironmentAreTheOnesGiven) {
  std::string dir = ::testing::TempDir() + "/process_test_dir";
  std::filesystem::create_directories(dir);
  SpawnOptions options;
  options.argv = {"sh", "-c", "pwd; echo \"$TB_PROCESS_TEST\""};
  options.environment = std::vector<std::string>{"TB_PROCESS_TEST=given", "PATH=/usr/bin:/bin"};
  options.working_directory = dir;
  options.stdout_mode = Stdio::kPipe;
  Result<ChildProcess> child = ChildProcess::Spawn(options);
  ASSERT_TRUE(child.ok()) << child.status().message();
  EXPECT_EQ(Output(*child), std::filesystem::canonical(dir).string() + "\ngiven\n");
  Result<ExitInfo> exit = child->Wait();
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->exit_code, 0);
}

// A start that fails says why and leaves no process behind.
TEST(ProcessTest, AStartThatFailsSaysWhyAndLeavesNoChild) {
  std::string dir = ::testing::TempDir() + "/process_test_fail";
  std::filesystem::create_directories(dir);
  std::string garbage = dir + "/not-a-program";
  std::ofstream(garbage) << "\x01\x02\x03 not an executable format";
  chmod(garbage.c_str(), 0755);
  SpawnOptions options;
  options.argv = {garbage};
  Result<ChildProcess> bad_format = ChildProcess::Spawn(options);
  ASSERT_FALSE(bad_format.ok());
  EXPECT_NE(bad_format.status().message().find("cannot start " + garbage), std::string::npos)
      << bad_format.status().message();
  options.argv = {"true"};
  options.working_directory = dir + "/missing";
  Result<ChildProcess> no_dir = ChildProcess::Spawn(options);
  ASSERT_FALSE(no_dir.ok());
  EXPECT_NE(no_dir.status().message().find("No such file"), std::string::npos) << no_dir.status().message();
  options.argv = {"no-such-command-anywhere"};
  EXPECT_EQ(ChildProcess::Spawn(options).status().code(), Status::Code::kNotFound);
  int status = 0;
  EXPECT_EQ(waitpid(-1, &status, WNOHANG), -1) << "a failed start left a child to reap";
}

}  // namespace
}  // namespace tb
