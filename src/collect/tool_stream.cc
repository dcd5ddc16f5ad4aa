#include "collect/tool_stream.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace tb {

Status ToolStream::Start(const std::vector<std::string>& argv, LineFn on_line) {
  Stop();
  finished_ = false;
  SpawnOptions o = SpawnOptions::Helper(argv);
  o.stderr_mode = Stdio::kPipe;  // its complaints become the listener's
  Result<ChildProcess> child = ChildProcess::Spawn(o);
  if (!child.ok()) return child.status();
  int out_fd = child->ReleaseStdout();
  int err_fd = child->ReleaseStderr();
  child_.emplace(std::move(child.value()));
  reader_ = std::thread([this, out_fd, err_fd, on_line = std::move(on_line)] {
    std::string partial[2];
    char buf[8192];
    int open = 2;
    int f[2] = {out_fd, err_fd};
    while (open > 0) {
      pollfd p[2] = {{f[0], POLLIN, 0}, {f[1], POLLIN, 0}};
      if (poll(p, 2, -1) < 0 && errno != EINTR) break;
      for (int i = 0; i < 2; ++i) {
        if (f[i] < 0 || (p[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        ssize_t n = read(f[i], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          if (!partial[i].empty()) on_line(partial[i]);
          close(f[i]);
          f[i] = -1;
          --open;
          continue;
        }
        partial[i].append(buf, static_cast<size_t>(n));
        size_t start = 0, nl;
        while ((nl = partial[i].find('\n', start)) != std::string::npos) {
          on_line(std::string_view(partial[i]).substr(start, nl - start));
          start = nl + 1;
        }
        partial[i].erase(0, start);
      }
    }
    for (int fd : f) {
      if (fd >= 0) close(fd);
    }
    finished_ = true;
  });
  return Status::Ok();
}

void ToolStream::Stop() {
  if (child_) {
    (void)child_->Signal(SIGTERM);  // gone already: nothing to stop
    for (int i = 0; i < 50 && !child_->HasExited(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!child_->HasExited()) (void)child_->Signal(SIGKILL);
    (void)child_->Wait();
    child_.reset();
  }
  if (reader_.joinable()) reader_.join();
}

}  // namespace tb
