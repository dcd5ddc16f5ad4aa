// Copies a child's stdout and stderr, as they come, to our own stdout/stderr and into two
// log files. One thread polls both pipes and moves at most 64 KiB at a time, so a run that
// prints gigabytes uses constant memory and never blocks on a full pipe (the files take
// everything; the terminal gets what it can). The logs are written with write(2) straight
// away, so a crash of trainbench keeps them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "base/status.h"

namespace tb {

class OutputPump {
 public:
  // Takes ownership of the two pipe read ends.
  OutputPump(int stdout_fd, int stderr_fd, bool echo);
  ~OutputPump();

  // Also hands every piece of the child's stdout (stream 0) or stderr (1), with the wall
  // time it arrived, to `observer`, on the pump's thread. Call before Start.
  using Observer = std::function<void(std::string_view bytes, int64_t time_ms)>;
  void Observe(int stream, Observer observer) { observers_[stream] = std::move(observer); }

  // Opens (truncating) the log files and starts the thread. The thread runs even when a
  // log cannot be created (the error is returned), so the child never blocks.
  Status Start(const std::string& stdout_log, const std::string& stderr_log);
  // Waits until both pipes reach end-of-file or `wait_ms` passes (processes the run left
  // behind may hold them open), then stops the thread and closes everything.
  void Finish(int64_t wait_ms);

  int64_t stdout_bytes() const { return bytes_[0]; }
  int64_t stderr_bytes() const { return bytes_[1]; }

 private:
  void Loop();

  int pipes_[2];
  int logs_[2] = {-1, -1};
  bool echo_;
  Observer observers_[2];
  int wake_[2] = {-1, -1};  // self-pipe: Finish() writes to stop the loop
  std::atomic<int64_t> bytes_[2] = {0, 0};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace tb
