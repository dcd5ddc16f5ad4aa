#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <string>

namespace tb {
namespace {
std::atomic<LogLevel> g_level{LogLevel::kInfo};
}

void SetLogLevel(LogLevel level) { g_level = level; }

void Log(LogLevel level, std::string_view message) {
  if (level < g_level.load()) return;
  std::string line = "trainbench: ";
  if (level == LogLevel::kWarning) line += "warning: ";
  if (level == LogLevel::kError) line += "error: ";
  line.append(message);
  line += '\n';
  ssize_t ignored = write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace tb
