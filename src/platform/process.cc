#include "platform/process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
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

// What the child reads between clone and exec, all prepared before the clone: the child
// shares this process's memory and must not allocate (another thread may hold malloc's lock).
struct ChildStart {
  const char* exe;
  char** argv;
  char** env;
  const char* working_directory;  // nullptr: ours
  bool new_process_group;
  int parent_death_signal;
  mode_t umask;
  pid_t parent;
  int stdio[3][2];            // per stdin, stdout, stderr: {mode, the pipe's end to give}
  int error = 0;              // set by the child when a step before exec, or exec, fails
  bool in_directory = false;  // the step that failed was entering the working directory
};

// The child, from clone to exec. The parent's thread waits (CLONE_VFORK) until exec or
// exit; every signal is blocked until the handlers, which are the parent's code, are gone.
__attribute__((no_sanitize("address", "undefined"))) int StartChild(void* arg) {
  auto* start = static_cast<ChildStart*>(arg);
  // Default dispositions, as a fresh process has: handled signals (their handlers would run
  // on the parent's memory) and the ones trainbench changes (an ignored SIGPIPE survives exec).
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction action {};
    if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, nullptr, &action) != 0) continue;
    bool ours = sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT || sig == SIGPIPE ||
                sig == SIGCHLD;
    if (action.sa_handler == SIG_DFL || (action.sa_handler == SIG_IGN && !ours)) continue;
    struct sigaction reset {};
    reset.sa_handler = SIG_DFL;
    sigaction(sig, &reset, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  umask(start->umask);  // the user's, not trainbench's own (RestrictFileModes)
  if (start->new_process_group && setpgid(0, 0) != 0) goto fail;
  if (start->parent_death_signal != 0) {
    if (prctl(PR_SET_PDEATHSIG, start->parent_death_signal) != 0) goto fail;
    if (getppid() != start->parent) _exit(127);  // the parent died before the line above
  }
  if (start->working_directory != nullptr && chdir(start->working_directory) != 0) {
    start->in_directory = true;
    goto fail;
  }
  for (int target = 0; target < 3; ++target) {
    auto mode = static_cast<Stdio>(start->stdio[target][0]);
    if (mode == Stdio::kPipe && dup2(start->stdio[target][1], target) < 0) goto fail;
    if (mode == Stdio::kDevNull) {
      int fd = open("/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY);
      if (fd < 0 || dup2(fd, target) < 0) goto fail;
      close(fd);
    }
  }
  execve(start->exe, start->argv, start->env);
fail:
  start->error = errno;
  _exit(127);
}

// Forks the guard of SpawnOptions::guard_group for the process group `group`. Between fork
// and _exit the guard makes async-signal-safe calls only (this process has threads).
void StartGroupGuard(pid_t group, pid_t& guard_pid, int& guard_fd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  pid_t pid = fork();
  if (pid == 0) {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);  // Ctrl-C and the like are trainbench's to handle
    dup2(fds[0], 0);
    close_range(1, ~0U, 0);  // holds no store, socket or pipe of trainbench's
    char byte;
    ssize_t n;
    do {
      n = read(0, &byte, 1);
    } while (n < 0 && errno == EINTR);
    if (n == 1) _exit(0);  // released: trainbench saw the child end
    kill(-group, SIGTERM);
    timespec grace{5, 0};
    while (nanosleep(&grace, &grace) != 0 && errno == EINTR) {
    }
    kill(-group, SIGKILL);
    _exit(0);
  }
  close(fds[0]);
  if (pid < 0) {
    close(fds[1]);
    return;
  }
  guard_pid = pid;
  guard_fd = fds[1];
}

}  // namespace

void ChildProcess::ReleaseGuard() {
  if (guard_pid_ < 0) return;
  (void)!write(guard_fd_, "x", 1);
  CloseFd(guard_fd_);
  while (waitpid(guard_pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  guard_pid_ = -1;
}

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

  // Everything the child touches is prepared before it starts.
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
  auto close_all = [&] {
    for (int* p : {out_pipe, err_pipe}) {
      CloseFd(p[0]);
      CloseFd(p[1]);
    }
  };
  if ((options.stdout_mode == Stdio::kPipe && pipe2(out_pipe, O_CLOEXEC) != 0) ||
      (options.stderr_mode == Stdio::kPipe && pipe2(err_pipe, O_CLOEXEC) != 0)) {
    int err = errno;
    close_all();
    return Status::FromErrno("cannot create pipes", err);
  }

  // Started as glibc's posix_spawn starts a program, with a vfork-like clone: this
  // process's page tables are not copied and its threads take no copy-on-write faults
  // afterwards (a fork of a process with dozens of threads costs it milliseconds of CPU
  // time, and TLB shootdowns on every core); unlike posix_spawn, the child can also ask
  // for a signal when trainbench dies (PR_SET_PDEATHSIG).
  ChildStart start{
      .exe = exe->c_str(),
      .argv = argv.data(),
      .env = env,
      .working_directory = options.working_directory.empty() ? nullptr : options.working_directory.c_str(),
      .new_process_group = options.new_process_group,
      .parent_death_signal = options.parent_death_signal,
      .umask = UserUmask(),
      .parent = getpid(),
      .stdio = {{static_cast<int>(options.stdin_mode), -1},
                {static_cast<int>(options.stdout_mode), out_pipe[1]},
                {static_cast<int>(options.stderr_mode), err_pipe[1]}}};
  constexpr size_t kStack = 256 << 10;
  void* stack = mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    int err = errno;
    close_all();
    return Status::FromErrno("cannot start " + options.argv[0], err);
  }
  sigset_t all, mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &mask);
  pid_t pid = clone(StartChild, static_cast<char*>(stack) + kStack, CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
  int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &mask, nullptr);
  munmap(stack, kStack);
  int child_errno = pid < 0 ? clone_errno : start.error;
  if (pid > 0 && child_errno != 0) {
    int status = 0;
    waitpid(pid, &status, 0);
  }
  // Also set the group from this side so a signal sent right away reaches it.
  if (pid > 0 && child_errno == 0 && options.new_process_group) setpgid(pid, pid);
  CloseFd(out_pipe[1]);
  CloseFd(err_pipe[1]);
  if (child_errno != 0) {
    CloseFd(out_pipe[0]);
    CloseFd(err_pipe[0]);
    if (start.in_directory) {
      return Status::FromErrno("cannot start " + options.argv[0] + " in " + options.working_directory,
                               child_errno);
    }
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
  if (options.guard_group && options.new_process_group)
    StartGroupGuard(child.pid_, child.guard_pid_, child.guard_fd_);
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
    guard_pid_ = other.guard_pid_;
    guard_fd_ = other.guard_fd_;
    other.pid_ = -1;
    other.stdout_fd_ = -1;
    other.stderr_fd_ = -1;
    other.guard_pid_ = -1;
    other.guard_fd_ = -1;
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
  ReleaseGuard();
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
  ReleaseGuard();
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
  o.guard_group = true;
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
                                     size_t max_bytes, const std::string& working_directory, int nice,
                                     const std::optional<std::vector<std::string>>& environment) {
  SpawnOptions options = SpawnOptions::Helper(argv);
  options.environment = environment;
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
      (void)child->Signal(SIGKILL);  // a tool that just ended needs none
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
  // Its output ended; the tool itself (or what it started, in its group) may still hang:
  // it has the rest of the time, then the group is killed.
  // Its output ended; the tool itself may still hang: it has the rest of the time. Then
  // its group is killed, which also ends what it started and left running (before the
  // tool is reaped, so that the group's id is still its own).
  while (!result.timed_out && !child->HasExited()) {
    if (MonotonicNanos() >= deadline) result.timed_out = true;
    poll(nullptr, 0, 10);
  }
  (void)child->Signal(SIGKILL);  // a group already gone needs none
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

namespace {
mode_t user_umask = 022;
bool umask_known = false;
}  // namespace

void RestrictFileModes() {
  user_umask = umask(077);
  umask_known = true;
  mode_t mine = user_umask | 077;
  if (const char* asked = std::getenv("TRAINBENCH_UMASK"); asked != nullptr && *asked != 0) {
    char* end = nullptr;
    unsigned long v = std::strtoul(asked, &end, 8);
    if (end != nullptr && *end == 0 && v <= 0777) {
      mine = static_cast<mode_t>(v);
    } else {
      std::fprintf(stderr, "trainbench: TRAINBENCH_UMASK=%s is not an octal umask (e.g. 027); using 077\n",
                   asked);
    }
  }
  umask(mine);
}

mode_t UserUmask() {
  if (!umask_known) {
    user_umask = umask(0);
    umask(user_umask);
    umask_known = true;
  }
  return user_umask;
}

int OpenForWriting(const std::string& path) {
  return open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
}

}  // namespace tb
