#include "base/time.h"

#include <cmath>
#include <cstdio>
#include <ctime>

#include "base/strings.h"

namespace tb {
namespace {
int64_t ClockNanos(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
}  // namespace

int64_t WallMillis() { return ClockNanos(CLOCK_REALTIME) / 1000000; }
int64_t MonotonicNanos() { return ClockNanos(CLOCK_MONOTONIC); }
int64_t ThreadCpuNanos() { return ClockNanos(CLOCK_THREAD_CPUTIME_ID); }
int64_t ProcessCpuNanos() { return ClockNanos(CLOCK_PROCESS_CPUTIME_ID); }

Result<int64_t> ParseDurationMillis(std::string_view text) {
  std::string_view t = Trim(text);
  double scale = 1000;  // bare numbers are seconds
  auto strip = [&](std::string_view suffix, double s) {
    if (t.size() > suffix.size() && t.substr(t.size() - suffix.size()) == suffix) {
      t.remove_suffix(suffix.size());
      scale = s;
      return true;
    }
    return false;
  };
  strip("ms", 1) || strip("s", 1000) || strip("m", 60000) || strip("h", 3600000);
  std::optional<double> number = ParseDouble(t);
  if (!number || !std::isfinite(*number) || *number < 0 || *number * scale > 1e15) {
    return Status::InvalidArgument("'" + std::string(text) +
                                   "' is not a duration; write it like 250ms, 1s, 1.5s, 2m or 3h");
  }
  return static_cast<int64_t>(std::llround(*number * scale));
}

std::string FormatDuration(int64_t millis) {
  if (millis < 0) return "-";
  int64_t s = millis / 1000;
  char buf[64];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld.%01lld", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60), static_cast<long long>(millis % 1000 / 100));
  }
  return buf;
}

std::string FormatWallTime(int64_t unix_millis) {
  time_t secs = static_cast<time_t>(unix_millis / 1000);
  tm local{};
  localtime_r(&secs, &local);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &local);
  return buf;
}

}  // namespace tb
