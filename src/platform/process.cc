#include "platform/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/strings.h"
#include "base/time.h"

namespace tb {
namespace {

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// In the child after fork: report errno through the error pipe and exit.
[[noreturn]] void ChildFail(int error_fd, int err) {
  ssize_t ignored = write(error_fd, &err, sizeof err);
  (void)ignored;
  _exit(127);
}

// Starts a helper with posix_spawn: glibc's is a vfork, so this process's page tables are
// not copied and its threads take no copy-on-write faults afterwards (a fork of a process
// with dozens of threads costs it milliseconds of CPU time, and TLB shootdowns on every
// core). Returns the errno of a start that failed, 0 on success.
int SpawnWithoutFork(const SpawnOptions& options, const std::string& exe, char** argv, char** env,
                     int out_write, int err_write, pid_t* pid) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  auto redirect = [&](Stdio mode, int pipe_write, int target) {
    if (mode == Stdio::kPipe) posix_spawn_file_actions_adddup2(&actions, pipe_write, target);
    if (mode == Stdio::kDevNull)
      posix_spawn_file_actions_addopen(&actions, target, "/dev/null",
                                       target == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0);
  };
  redirect(options.stdin_mode, -1, STDIN_FILENO);
  redirect(options.stdout_mode, out_write, STDOUT_FILENO);
  redirect(options.stderr_mode, err_write, STDERR_FILENO);
  if (!options.working_directory.empty())
    posix_spawn_file_actions_addchdir_np(&actions, options.working_directory.c_str());
  // Default signal handling and mask, as a fresh process would have.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (options.new_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawnattr_setflags(&attr, flags);
  int err = posix_spawn(pid, exe.c_str(), &actions, &attr, argv, env);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return err;
}

}  // namespace

std::optional<std::string> FindExecutable(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    if (IsExecutableFile(name)) return name;
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  for (std::string_view dir : Split(dirs, ':')) {
    std::string candidate = std::string(dir.empty() ? "." : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
  }
  return std::nullopt;
}

Result<ChildProcess> ChildProcess::Spawn(const SpawnOptions& options) {
  if (options.argv.empty()) return Status::InvalidArgument("no command given");
  std::optional<std::string> exe = FindExecutable(options.argv[0]);
  if (!exe) return Status::NotFound("command not found: " + options.argv[0]);

  // Everything the child touches is prepared before fork.
  std::vector<char*> argv;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  if (options.environment) {
    for (const auto& e : *options.environment) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  char** env = options.environment ? envp.data() : environ;

  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  int exec_error[2] = {-1, -1};
  auto close_all = [&] {
    for (int* p : {out_pipe, err_pipe, exec_error}) {
      CloseFd(p[0]);
      CloseFd(p[1]);
    }
  };
  if ((options.stdout_mode == Stdio::kPipe && pipe2(out_pipe, O_CLOEXEC) != 0) ||
      (options.stderr_mode == Stdio::kPipe && pipe2(err_pipe, O_CLOEXEC) != 0) ||
      pipe2(exec_error, O_CLOEXEC) != 0) {
    int err = errno;
    close_all();
    return Status::FromErrno("cannot create pipes", err);
  }

  pid_t pid = -1;
  int child_errno = 0;
  if (options.parent_death_signal == 0) {
    child_errno = SpawnWithoutFork(options, *exe, argv.data(), env, out_pipe[1], err_pipe[1], &pid);
  } else {
    // PR_SET_PDEATHSIG has no posix_spawn attribute: fork, and set it in the child.
    pid_t parent = getpid();
    pid = fork();
    if (pid < 0) {
      int err = errno;
      close_all();
      return Status::FromErrno("fork", err);
    }
    if (pid == 0) {
      // Child: default signal handling and mask, as a fresh process would have.
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) signal(sig, SIG_DFL);
      if (options.new_process_group && setpgid(0, 0) != 0) ChildFail(exec_error[1], errno);
      if (prctl(PR_SET_PDEATHSIG, options.parent_death_signal) != 0) ChildFail(exec_error[1], errno);
      if (getppid() != parent) _exit(127);  // the parent died before the line above
      if (!options.working_directory.empty() && chdir(options.working_directory.c_str()) != 0) {
        ChildFail(exec_error[1], errno);
      }
      auto redirect = [&](Stdio mode, int pipe_write, int target) {
        if (mode == Stdio::kPipe) {
          if (dup2(pipe_write, target) < 0) ChildFail(exec_error[1], errno);
        } else if (mode == Stdio::kDevNull) {
          int fd = open("/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY);
          if (fd < 0 || dup2(fd, target) < 0) ChildFail(exec_error[1], errno);
          close(fd);
        }
      };
      redirect(options.stdin_mode, -1, STDIN_FILENO);
      redirect(options.stdout_mode, out_pipe[1], STDOUT_FILENO);
      redirect(options.stderr_mode, err_pipe[1], STDERR_FILENO);
      execve(exe->c_str(), argv.data(), env);
      ChildFail(exec_error[1], errno);
    }
    // Parent. Also set the group from this side so a signal sent right away reaches it.
    if (options.new_process_group) setpgid(pid, pid);
    CloseFd(exec_error[1]);
    ssize_t n;
    do {
      n = read(exec_error[0], &child_errno, sizeof child_errno);
    } while (n < 0 && errno == EINTR);
    if (n == sizeof child_errno) {
      int status = 0;
      waitpid(pid, &status, 0);
    } else {
      child_errno = 0;
    }
  }
  CloseFd(out_pipe[1]);
  CloseFd(err_pipe[1]);
  CloseFd(exec_error[1]);
  CloseFd(exec_error[0]);
  if (child_errno != 0) {
    CloseFd(out_pipe[0]);
    CloseFd(err_pipe[0]);
    if (child_errno == ENOENT) return Status::NotFound("command not found: " + options.argv[0]);
    if (child_errno == E2BIG) {
      size_t bytes = 0, longest = 0;
      for (const std::string& a : options.argv) {
        bytes += a.size() + 1;
        longest = std::max(longest, a.size());
      }
      return Status::InvalidArgument(
          "cannot start " + options.argv[0] + ": its command line is too long for Linux (" +
          std::to_string(bytes) + " bytes, the longest argument " + std::to_string(longest) +
          "; one argument may be at most 128 KiB, all of them with the environment about 2 MiB): pass long "
          "settings in a file instead");
    }
    return Status::FromErrno("cannot start " + options.argv[0], child_errno);
  }
  // Set from this side: the new program has run for microseconds at most.
  if (options.nice != 0)
    setpriority(PRIO_PROCESS, static_cast<id_t>(pid), getpriority(PRIO_PROCESS, 0) + options.nice);

  ChildProcess child;
  child.pid_ = pid;
  child.own_group_ = options.new_process_group;
  child.stdout_fd_ = out_pipe[0];
  child.stderr_fd_ = err_pipe[0];
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept { *this = std::move(other); }

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    CloseFd(stdout_fd_);
    CloseFd(stderr_fd_);
    pid_ = other.pid_;
    own_group_ = other.own_group_;
    reaped_ = other.reaped_;
    stdout_fd_ = other.stdout_fd_;
    stderr_fd_ = other.stderr_fd_;
    other.pid_ = -1;
    other.stdout_fd_ = -1;
    other.stderr_fd_ = -1;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  CloseFd(stdout_fd_);
  CloseFd(stderr_fd_);
}

int ChildProcess::ReleaseStdout() {
  int fd = stdout_fd_;
  stdout_fd_ = -1;
  return fd;
}

int ChildProcess::ReleaseStderr() {
  int fd = stderr_fd_;
  stderr_fd_ = -1;
  return fd;
}

namespace {
ExitInfo DecodeStatus(int status, const rusage& usage) {
  ExitInfo info;
  info.usage = usage;
  if (WIFSIGNALED(status)) {
    info.signaled = true;
    info.signal = WTERMSIG(status);
  } else {
    info.exit_code = WEXITSTATUS(status);
  }
  return info;
}
}  // namespace

Result<ExitInfo> ChildProcess::Wait() {
  if (pid_ < 0 || reaped_) return Status::InvalidArgument("process already waited for");
  int status = 0;
  rusage usage{};
  while (wait4(pid_, &status, 0, &usage) < 0) {
    if (errno != EINTR) return Status::FromErrno("wait4", errno);
  }
  reaped_ = true;
  return DecodeStatus(status, usage);
}

bool ChildProcess::HasExited() const {
  if (pid_ < 0 || reaped_) return true;
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return false;
  return info.si_pid == pid_;
}

std::optional<ExitInfo> ChildProcess::TryWait() {
  if (pid_ < 0 || reaped_) return std::nullopt;
  int status = 0;
  rusage usage{};
  pid_t r = wait4(pid_, &status, WNOHANG, &usage);
  if (r != pid_) return std::nullopt;
  reaped_ = true;
  return DecodeStatus(status, usage);
}

Status ChildProcess::Signal(int sig) const {
  if (pid_ < 0 || reaped_) return Status::Ok();
  if (kill(own_group_ ? -pid_ : pid_, sig) != 0 && errno != ESRCH) {
    return Status::FromErrno("kill", errno);
  }
  return Status::Ok();
}

SpawnOptions SpawnOptions::Watched(std::vector<std::string> argv, std::vector<std::string> environment) {
  SpawnOptions o = Helper(std::move(argv));
  o.environment = std::move(environment);
  o.parent_death_signal = SIGTERM;
  o.stderr_mode = Stdio::kPipe;
  return o;
}

SpawnOptions SpawnOptions::Helper(std::vector<std::string> argv) {
  SpawnOptions o;
  o.argv = std::move(argv);
  o.new_process_group = true;
  o.stdin_mode = Stdio::kDevNull;
  o.stdout_mode = Stdio::kPipe;
  o.stderr_mode = Stdio::kDevNull;
  return o;
}

Result<CapturedOutput> RunAndCapture(const std::vector<std::string>& argv, int64_t timeout_ms,
                                     size_t max_bytes, const std::string& working_directory, int nice) {
  SpawnOptions options = SpawnOptions::Helper(argv);
  options.working_directory = working_directory;
  options.nice = nice;
  Result<ChildProcess> child = ChildProcess::Spawn(options);
  if (!child.ok()) return child.status();

  CapturedOutput result;
  int64_t deadline = MonotonicNanos() + timeout_ms * 1000000;
  char buf[65536];
  int fd = child->stdout_fd();
  while (true) {
    int64_t left_ms = (deadline - MonotonicNanos()) / 1000000;
    if (left_ms <= 0) {
      result.timed_out = true;
      child->Signal(SIGKILL);
      break;
    }
    pollfd p{fd, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 1000)));
    if (r < 0 && errno != EINTR) break;
    if (r <= 0) continue;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    size_t room = max_bytes - std::min(max_bytes, result.out.size());
    result.out.append(buf, std::min(room, static_cast<size_t>(n)));
  }
  Result<ExitInfo> exit = child->Wait();
  if (!exit.ok()) return exit.status();
  result.exit = *exit;
  return result;
}

std::string HostName() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace tb
