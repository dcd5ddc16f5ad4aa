#include "collect/proc_parsers.h"

#include <array>

#include "base/strings.h"

namespace tb {
namespace {

// Iterates over the lines of a text without copying.
template <typename Fn>
void ForEachLine(std::string_view text, Fn fn) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    fn(text.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace

Status ParseProcStat(std::string_view text, std::vector<CpuTimes>& out) {
  out.clear();
  bool bad = false;
  ForEachLine(text, [&](std::string_view line) {
    if (bad || !StartsWith(line, "cpu")) return;
    size_t pos = 3;
    CpuTimes t;
    if (pos < line.size() && line[pos] != ' ') {
      std::optional<uint64_t> core = ScanUint(line, pos);
      if (!core) {
        bad = true;
        return;
      }
      t.core = static_cast<int>(*core);
    }
    uint64_t f[8] = {};
    for (int i = 0; i < 8; ++i) {
      std::optional<uint64_t> v = ScanUint(line, pos);
      if (!v) {
        if (i < 4) bad = true;  // user nice system idle exist on every kernel
        break;
      }
      f[i] = *v;
    }
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    t.busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
    t.idle = f[3] + f[4];
    out.push_back(t);
  });
  if (bad || out.empty() || out[0].core != -1) {
    return Status::Corrupt("Malformed /proc/stat: no aggregate cpu line");
  }
  return Status::Ok();
}

Status ParseMemInfo(std::string_view text, MemInfo& out) {
  out = MemInfo{};
  int found = 0;
  ForEachLine(text, [&](std::string_view line) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    std::string_view key = line.substr(0, colon);
    uint64_t* target = nullptr;
    if (key == "MemTotal") target = &out.total_bytes;
    if (key == "MemAvailable") target = &out.available_bytes;
    if (key == "SwapTotal") target = &out.swap_total_bytes;
    if (key == "SwapFree") target = &out.swap_free_bytes;
    if (key == "MemFree") target = &out.free_bytes;
    if (key == "Shmem") target = &out.shared_bytes;
    bool cache = key == "Buffers" || key == "Cached" || key == "SReclaimable";  // summed, as free(1)
    if (cache) target = &out.buff_cache_bytes;
    if (target == nullptr) return;
    size_t pos = colon + 1;
    if (std::optional<uint64_t> kb = ScanUint(line, pos)) {
      *target = cache ? *target + *kb * 1024 : *kb * 1024;
      found += key == "MemTotal" || key == "MemAvailable" || StartsWith(key, "Swap") ? 1 : 0;
    }
  });
  if (found < 2 || out.total_bytes == 0) {
    return Status::Corrupt("Malformed /proc/meminfo: MemTotal or MemAvailable missing");
  }
  return Status::Ok();
}

Result<double> ParseLoadAverage(std::string_view text) {
  std::vector<std::string_view> f = SplitWhitespace(Trim(text));
  std::optional<double> v = f.empty() ? std::nullopt : ParseDouble(f[0]);
  if (!v) return Status::Corrupt("Malformed /proc/loadavg");
  return *v;
}

Status ParsePidStat(std::string_view text, PidStat& out) {
  // "PID (comm) S ppid ..."; comm may hold spaces and parentheses, so find the last ')'.
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Status::Corrupt("Malformed /proc/PID/stat: no (comm)");
  }
  std::optional<int64_t> pid = ParseInt(text.substr(0, open));
  // f[0] is field 3 (state); field N of proc(5) is f[N - 3]. Split without allocating:
  // this runs for every process and thread of a run on every tick.
  constexpr size_t kFields = 40;
  std::array<std::string_view, kFields> f;
  size_t count = 0;
  std::string_view rest = text.substr(close + 1);
  for (size_t i = 0; count < kFields;) {
    while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\n')) ++i;
    if (i >= rest.size()) break;
    size_t b = i;
    while (i < rest.size() && rest[i] != ' ' && rest[i] != '\n') ++i;
    f[count++] = rest.substr(b, i - b);
  }
  if (!pid || count < 22) return Status::Corrupt("Malformed /proc/PID/stat: too few fields");
  auto u = [&](int field) { return ParseUint(f[field - 3]).value_or(0); };
  auto i = [&](int field) { return ParseInt(f[field - 3]).value_or(0); };
  out.pid = static_cast<pid_t>(*pid);
  out.comm.assign(text.substr(open + 1, close - open - 1));
  out.state = f[0].empty() ? '?' : f[0][0];
  out.ppid = static_cast<pid_t>(i(4));
  out.pgrp = static_cast<pid_t>(i(5));
  out.utime = u(14);
  out.stime = u(15);
  out.cutime = static_cast<uint64_t>(std::max<int64_t>(0, i(16)));
  out.cstime = static_cast<uint64_t>(std::max<int64_t>(0, i(17)));
  out.num_threads = i(20);
  out.start_time = u(22);
  out.rss_pages = i(24);
  out.processor = count >= 37 ? static_cast<int>(i(39)) : -1;
  return Status::Ok();
}

Status ParseContextSwitches(std::string_view text, ContextSwitches& out) {
  int found = 0;
  ForEachLine(text, [&](std::string_view line) {
    uint64_t* target = nullptr;
    size_t pos = 0;
    if (StartsWith(line, "voluntary_ctxt_switches:")) {
      target = &out.voluntary;
      pos = sizeof("voluntary_ctxt_switches:") - 1;
    } else if (StartsWith(line, "nonvoluntary_ctxt_switches:")) {
      target = &out.involuntary;
      pos = sizeof("nonvoluntary_ctxt_switches:") - 1;
    } else {
      return;
    }
    while (pos < line.size() && line[pos] == '\t') ++pos;
    if (std::optional<uint64_t> v = ScanUint(line, pos)) {
      *target = *v;
      ++found;
    }
  });
  if (found != 2) return Status::Corrupt("Malformed /proc/PID/status: no ctxt_switches lines");
  return Status::Ok();
}

Status ParseDiskStats(std::string_view text, std::vector<DiskCounters>& out) {
  out.clear();
  bool bad = false;
  ForEachLine(text, [&](std::string_view line) {
    std::vector<std::string_view> f = SplitWhitespace(line);
    if (f.empty() || bad) return;
    // major minor name, then at least 11 counters (kernel 2.6.x); newer kernels add more.
    if (f.size() < 14) {
      bad = true;
      return;
    }
    DiskCounters d;
    d.device.assign(f[2]);
    d.reads = ParseUint(f[3]).value_or(0);
    d.sectors_read = ParseUint(f[5]).value_or(0);
    d.writes = ParseUint(f[7]).value_or(0);
    d.sectors_written = ParseUint(f[9]).value_or(0);
    d.io_ms = ParseUint(f[12]).value_or(0);
    out.push_back(std::move(d));
  });
  if (bad) return Status::Corrupt("Malformed /proc/diskstats: a line has fewer than 14 fields");
  return Status::Ok();
}

Status ParseNetDev(std::string_view text, std::vector<NetCounters>& out) {
  out.clear();
  bool bad = false;
  ForEachLine(text, [&](std::string_view line) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || bad) return;  // the two header lines
    std::vector<std::string_view> f = SplitWhitespace(line.substr(colon + 1));
    if (f.size() < 16) {
      bad = true;
      return;
    }
    NetCounters n;
    n.interface.assign(Trim(line.substr(0, colon)));
    n.rx_bytes = ParseUint(f[0]).value_or(0);
    n.tx_bytes = ParseUint(f[8]).value_or(0);
    out.push_back(std::move(n));
  });
  if (bad) return Status::Corrupt("Malformed /proc/net/dev: an interface has fewer than 16 counters");
  return Status::Ok();
}

void ParseChildren(std::string_view text, std::vector<pid_t>& out) {
  size_t pos = 0;
  while (std::optional<uint64_t> v = ScanUint(text, pos)) out.push_back(static_cast<pid_t>(*v));
}

}  // namespace tb
