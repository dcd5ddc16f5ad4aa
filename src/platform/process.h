// Child processes behind one small interface: a SpawnOptions builder describes the
// program, arguments, environment, working directory and where stdio goes; ChildProcess
// owns the pid and pipe ends (RAII: the destructor closes pipes but never kills or waits:
// call Wait). Thread-safe to spawn from any thread: everything the child needs is built
// before it starts (a vfork-like clone that shares our memory until exec), and between
// clone and exec only async-signal-safe calls are made.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace tb {

enum class Stdio { kInherit, kPipe, kDevNull };

struct SpawnOptions {
  std::vector<std::string> argv;                        // argv[0] is looked up on PATH unless it contains '/'
  std::optional<std::vector<std::string>> environment;  // "K=V"; nullopt inherits ours
  std::string working_directory;                        // empty: ours
  bool new_process_group = false;                       // setpgid(0, 0) in the child
  // Sent to the child when the thread that spawned it dies (trainbench SIGKILLed): a
  // training command does not outlive the trainbench that records it. 0: none.
  int parent_death_signal = 0;
  Stdio stdin_mode = Stdio::kInherit;
  Stdio stdout_mode = Stdio::kInherit;
  Stdio stderr_mode = Stdio::kInherit;
  // Added to the child's niceness (setpriority): a helper that must not take CPU time
  // from the training it runs beside. 0: ours.
  int nice = 0;
  // With new_process_group: a small guard process (forked, it runs no code but a read and
  // kill) that, should trainbench die without ending the child (SIGKILL, the OOM killer),
  // sends the child's whole group SIGTERM and, 5 s later, SIGKILL. The parent death signal
  // reaches the child alone; a wrapper script's children (`sh train.sh` starting python)
  // would be orphaned. Wait() releases the guard.
  bool guard_group = false;

  // The command trainbench watches over (a run's, or a `trainbench run` under schedule):
  // its own process group, so that a signal reaches all it started; SIGTERM when
  // trainbench dies, to it and through the guard to its group; no terminal input; stdout
  // and stderr on pipes.
  static SpawnOptions Watched(std::vector<std::string> argv, std::vector<std::string> environment);
  // A helper tool whose output trainbench reads (nvidia-smi, dcgmi, pip): its own process
  // group, no terminal input, stdout on a pipe, stderr dropped unless asked for.
  static SpawnOptions Helper(std::vector<std::string> argv);
};

struct ExitInfo {
  bool signaled = false;
  int exit_code = 0;  // valid when !signaled
  int signal = 0;     // valid when signaled
  rusage usage{};     // resources of the child and the children it waited for
  // The shell's convention: the exit code, or 128 + signal number.
  int ShellCode() const { return signaled ? 128 + signal : exit_code; }
};

class ChildProcess {
 public:
  // Starts the program. Fails with NotFound ("command not found: NAME") when argv[0] is
  // not an executable on PATH, and with IoError when starting or exec fails otherwise; no
  // process is left behind on failure.
  static Result<ChildProcess> Spawn(const SpawnOptions& options);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  int stdout_fd() const { return stdout_fd_; }  // -1 unless piped
  int stderr_fd() const { return stderr_fd_; }
  // Hands the pipe ends to the caller, which then closes them.
  int ReleaseStdout();
  int ReleaseStderr();

  // Blocks until the child exits (retrying on EINTR).
  Result<ExitInfo> Wait();
  // Whether the child has exited, without reaping it: its /proc entry stays (a zombie)
  // so its final CPU times can still be read. Wait() reaps it afterwards.
  bool HasExited() const;
  // Returns the exit information if the child has exited, nullopt while it runs.
  std::optional<ExitInfo> TryWait();
  // Sends `sig` to the child, or to its whole process group when it has its own.
  Status Signal(int sig) const;

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  bool own_group_ = false;
  bool reaped_ = false;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  pid_t guard_pid_ = -1;  // SpawnOptions::guard_group
  int guard_fd_ = -1;     // closing it without a byte written makes the guard act
  void ReleaseGuard();
};

// Full path of an executable found on PATH (or `name` itself when it contains '/' and is
// executable); nullopt when there is none.
std::optional<std::string> FindExecutable(const std::string& name);

struct CapturedOutput {
  ExitInfo exit;
  std::string out;  // stdout, up to the limit given
  bool timed_out = false;
};

// Runs a helper tool to completion, capturing stdout (stderr is discarded). Kills it
// with SIGKILL after `timeout_ms`. For short informational tools (git, pip, nvidia-smi).
// `nice`: as in SpawnOptions.
Result<CapturedOutput> RunAndCapture(
    const std::vector<std::string>& argv, int64_t timeout_ms, size_t max_bytes = 64 << 20,
    const std::string& working_directory = "", int nice = 0,
    const std::optional<std::vector<std::string>>& environment = std::nullopt);

// This machine's host name (gethostname).
std::string HostName();

// Files and folders trainbench creates (stores, logs, artifacts, spooled uploads) are
// readable by their owner only: the process's umask gains 077, unless TRAINBENCH_UMASK (an
// octal umask, e.g. 027 for the owner's group to read) says otherwise. Commands trainbench
// starts (the training script, tools) get the user's own umask back. Call once, first.
void RestrictFileModes();
// The umask the user started trainbench with.
mode_t UserUmask();

// Opens `path` to write it from the start (created 0666 less the umask), never through a
// symbolic link at its end (another user's planted link in a shared folder): -1 with
// errno (ELOOP) then.
int OpenForWriting(const std::string& path);

}  // namespace tb
