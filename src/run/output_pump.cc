#include "run/output_pump.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <vector>

#include "base/time.h"
#include "platform/process.h"

namespace tb {
namespace {

// Writes all of `n` bytes unless the descriptor fails; returns false on failure.
bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

OutputPump::OutputPump(int stdout_fd, int stderr_fd, bool echo) : pipes_{stdout_fd, stderr_fd}, echo_(echo) {}

OutputPump::~OutputPump() { Finish(0); }

Status OutputPump::Start(const std::string& stdout_log, const std::string& stderr_log) {
  // The pipes are drained even when a log cannot be written, so the child never blocks.
  Status status;
  const std::string* paths[2] = {&stdout_log, &stderr_log};
  for (int i = 0; i < 2; ++i) {
    logs_[i] = OpenForWriting(*paths[i]);
    if (logs_[i] < 0 && status.ok()) status = Status::FromErrno("cannot create log " + *paths[i], errno);
  }
  if (pipe2(wake_, O_CLOEXEC) != 0) return Status::FromErrno("pipe", errno);
  thread_ = std::thread([this] { Loop(); });
  return status;
}

void OutputPump::Loop() {
  std::vector<char> storage(65536);
  char* buffer = storage.data();
  bool echo_ok[2] = {echo_, echo_};
  while (pipes_[0] >= 0 || pipes_[1] >= 0) {
    pollfd fds[3] = {{pipes_[0], POLLIN, 0}, {pipes_[1], POLLIN, 0}, {wake_[0], POLLIN, 0}};
    int r = poll(fds, 3, -1);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (pipes_[i] < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      ssize_t n = read(pipes_[i], buffer, storage.size());
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        close(pipes_[i]);
        pipes_[i] = -1;
        continue;
      }
      if (observers_[i]) observers_[i](std::string_view(buffer, static_cast<size_t>(n)), WallMillis());
      if (logs_[i] >= 0) WriteAll(logs_[i], buffer, static_cast<size_t>(n));
      if (echo_ok[i])
        echo_ok[i] = WriteAll(i == 0 ? STDOUT_FILENO : STDERR_FILENO, buffer, static_cast<size_t>(n));
      bytes_[i] += n;
    }
    if (fds[2].revents != 0) break;  // Finish() gave up waiting for end-of-file
  }
  done_ = true;
}

void OutputPump::Finish(int64_t wait_ms) {
  if (thread_.joinable()) {
    int64_t deadline = MonotonicNanos() + wait_ms * 1000000;
    while (!done_ && MonotonicNanos() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!done_) {
      char c = 1;
      WriteAll(wake_[1], &c, 1);
    }
    thread_.join();
  }
  for (int* fd : {&pipes_[0], &pipes_[1], &logs_[0], &logs_[1], &wake_[0], &wake_[1]}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

}  // namespace tb
