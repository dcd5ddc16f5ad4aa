#include "platform/start_gate.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "base/strings.h"
#include "base/time.h"

namespace tb {
namespace {

constexpr char kVariable[] = "TRAINBENCH_START_GATE";

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

StartGate::~StartGate() { CloseAll(); }

void StartGate::CloseAll() {
  for (int* fd : {&ready_[0], &ready_[1], &gate_[0], &gate_[1]}) CloseFd(*fd);
}

Status StartGate::Create() {
  CloseAll();
  if (pipe2(ready_, O_CLOEXEC) != 0 || pipe2(gate_, O_CLOEXEC) != 0) {
    Status s = Status::FromErrno("cannot create the start gate", errno);
    CloseAll();
    return s;
  }
  // Inherited by the children: READY's write end and GATE's read end.
  fcntl(ready_[1], F_SETFD, 0);
  fcntl(gate_[0], F_SETFD, 0);
  return Status::Ok();
}

std::string StartGate::Environment() const {
  return std::string(kVariable) + "=" + std::to_string(ready_[1]) + "," + std::to_string(gate_[0]);
}

void StartGate::OpenWhenReady(size_t runs, int64_t timeout_ms) {
  CloseFd(ready_[1]);
  CloseFd(gate_[0]);
  size_t said = 0;
  int64_t deadline = MonotonicNanos() + timeout_ms * 1'000'000;
  while (ready_[0] >= 0 && said < runs && MonotonicNanos() < deadline) {
    pollfd p{ready_[0], POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0) continue;
    char buf[64];
    ssize_t n = read(ready_[0], buf, sizeof buf);
    if (n == 0) break;  // every child said so or ended
    if (n > 0) said += static_cast<size_t>(n);
  }
  CloseAll();  // GATE's write end: the runs go
}

GatePass TakeStartGate() {
  GatePass pass;
  const char* value = std::getenv(kVariable);
  if (value == nullptr) return pass;
  std::vector<std::string_view> fds = Split(value, ',');
  if (fds.size() == 2) {
    pass.ready_fd = static_cast<int>(ParseInt(fds[0]).value_or(-1));
    pass.gate_fd = static_cast<int>(ParseInt(fds[1]).value_or(-1));
    // Tools the listeners start must not hold them open.
    for (int fd : {pass.ready_fd, pass.gate_fd}) {
      if (fd >= 0) fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
  }
  unsetenv(kVariable);
  return pass;
}

void WaitAtStartGate(GatePass pass, int64_t timeout_ms) {
  if (pass.ready_fd >= 0) {
    while (write(pass.ready_fd, "r", 1) < 0 && errno == EINTR) {
    }
    CloseFd(pass.ready_fd);
  }
  if (pass.gate_fd < 0) return;
  pollfd p{pass.gate_fd, POLLIN, 0};
  int64_t deadline = MonotonicNanos() + timeout_ms * 1'000'000;
  while (MonotonicNanos() < deadline && poll(&p, 1, 1000) == 0) {
  }
  CloseFd(pass.gate_fd);
}

}  // namespace tb
