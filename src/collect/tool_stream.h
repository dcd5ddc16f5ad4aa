// A long-running measuring tool (nvidia-smi -l, dcgmi dmon) whose output lines are read
// on a thread of their own and handed to a callback. The tool runs in its own process
// group and is stopped (SIGTERM, then SIGKILL) when the stream is.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "platform/process.h"

namespace tb {

class ToolStream {
 public:
  using LineFn = std::function<void(std::string_view line)>;

  ToolStream() = default;
  ~ToolStream() { Stop(); }
  ToolStream(const ToolStream&) = delete;
  ToolStream& operator=(const ToolStream&) = delete;

  // Starts `argv`; every line of its stdout and stderr goes to `on_line` (on the reader
  // thread). Fails when the tool cannot start (not on PATH).
  Status Start(const std::vector<std::string>& argv, LineFn on_line);
  // True once the tool exited (its output fully read).
  bool Finished() const { return finished_; }
  void Stop();

 private:
  std::optional<ChildProcess> child_;
  std::thread reader_;
  std::atomic<bool> finished_{false};
};

}  // namespace tb
