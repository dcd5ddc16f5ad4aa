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
  // Messages carry what scripts and tools wrote (names, their errors): control characters
  // other than line breaks and tabs are shown as \xHH, never sent to the terminal, where
  // an escape sequence could recolour, move the cursor or retitle the window.
  static const char* kHex = "0123456789abcdef";
  for (unsigned char c : message) {
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      line += "\\x";
      line += kHex[c >> 4];
      line += kHex[c & 15];
    } else {
      line += static_cast<char>(c);
    }
  }
  line += '\n';
  ssize_t ignored = write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

void WarnIfFailed(const Status& s, std::string_view doing) {
  if (!s.ok()) LogWarning("cannot " + std::string(doing) + ": " + s.message());
}

}  // namespace tb
