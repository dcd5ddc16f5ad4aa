// The one logging facade: short lines on stderr prefixed "trainbench: ". Kept tiny so
// that no heavy logging header reaches the many files that log. Thread-safe (one write(2)
// per line).
#pragma once

#include <string_view>

#include "base/status.h"

namespace tb {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

void SetLogLevel(LogLevel level);
void Log(LogLevel level, std::string_view message);
inline void LogInfo(std::string_view m) { Log(LogLevel::kInfo, m); }
inline void LogWarning(std::string_view m) { Log(LogLevel::kWarning, m); }
inline void LogError(std::string_view m) { Log(LogLevel::kError, m); }
// For a failure that must not stop what is under way (a record of a run that goes on): a
// warning "cannot DOING: why" when `s` failed.
void WarnIfFailed(const Status& s, std::string_view doing);

}  // namespace tb
