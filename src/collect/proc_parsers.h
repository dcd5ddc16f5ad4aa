// Pure parsers for the /proc files the host listeners read. Each takes the file's text and
// fails loudly (Status::Corrupt naming the file) on a shape it does not know, rather than
// guessing. Tested on literal text captured from real machines (testdata/proc).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tb {

// One "cpu" line of /proc/stat, in clock ticks.
struct CpuTimes {
  int core = -1;      // -1 for the aggregate "cpu" line
  uint64_t busy = 0;  // user + nice + system + irq + softirq + steal
  uint64_t idle = 0;  // idle + iowait
  uint64_t Total() const { return busy + idle; }
};
Status ParseProcStat(std::string_view text, std::vector<CpuTimes>& out);

struct MemInfo {
  uint64_t total_bytes = 0;
  uint64_t available_bytes = 0;
  uint64_t swap_total_bytes = 0;
  uint64_t swap_free_bytes = 0;
  // What `free` shows besides: MemFree, Shmem, and Buffers + Cached + SReclaimable.
  uint64_t free_bytes = 0;
  uint64_t shared_bytes = 0;
  uint64_t buff_cache_bytes = 0;
};
Status ParseMemInfo(std::string_view text, MemInfo& out);

// First field of /proc/loadavg ("0.21 0.37 0.39 1/719 19737").
Result<double> ParseLoadAverage(std::string_view text);

// The fields of /proc/PID/stat (or /proc/PID/task/TID/stat) that listeners use.
struct PidStat {
  pid_t pid = 0;
  std::string comm;
  char state = '?';
  pid_t ppid = 0;
  pid_t pgrp = 0;
  uint64_t utime = 0, stime = 0;    // clock ticks
  uint64_t cutime = 0, cstime = 0;  // of waited-for children, clock ticks
  int64_t num_threads = 0;
  uint64_t start_time = 0;  // clock ticks since boot
  int64_t rss_pages = 0;
  int processor = -1;  // core last run on
};
Status ParsePidStat(std::string_view text, PidStat& out);

struct ContextSwitches {
  uint64_t voluntary = 0;
  uint64_t involuntary = 0;
};
// voluntary_ctxt_switches / nonvoluntary_ctxt_switches of /proc/PID/task/TID/status.
Status ParseContextSwitches(std::string_view text, ContextSwitches& out);

// One device of /proc/diskstats.
struct DiskCounters {
  std::string device;
  uint64_t reads = 0, sectors_read = 0;
  uint64_t writes = 0, sectors_written = 0;
  uint64_t io_ms = 0;  // time with I/O in flight
};
Status ParseDiskStats(std::string_view text, std::vector<DiskCounters>& out);

// One interface of /proc/net/dev.
struct NetCounters {
  std::string interface;
  uint64_t rx_bytes = 0, tx_bytes = 0;
};
Status ParseNetDev(std::string_view text, std::vector<NetCounters>& out);

// Pids listed in a /proc/PID/task/TID/children file ("123 456 ").
void ParseChildren(std::string_view text, std::vector<pid_t>& out);

}  // namespace tb
