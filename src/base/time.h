// Clocks and durations. Sample times are Unix milliseconds (what MLflow and radT use);
// intervals are measured on the monotonic clock so a wall-clock step never stretches a
// tick. Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tb {

int64_t WallMillis();       // Unix time in milliseconds.
int64_t MonotonicNanos();   // CLOCK_MONOTONIC.
int64_t ThreadCpuNanos();   // CPU time of the calling thread.
int64_t ProcessCpuNanos();  // CPU time of the whole process (all threads).

// Parses "250ms", "1s", "1.5s", "2m", "3h" or a bare number of seconds into milliseconds.
// Fails on anything else, on negative values and on values that overflow.
Result<int64_t> ParseDurationMillis(std::string_view text);

// "1:02:03" for an hour or more, "2:03.4" (m:ss.tenths) below; "-" when negative.
std::string FormatDuration(int64_t millis);
// "2026-11-22 02:03:04" in local time.
std::string FormatWallTime(int64_t unix_millis);

}  // namespace tb
