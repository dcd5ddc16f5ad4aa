// /proc and /sys files as the kernel (or a hostile process name) may write them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collect/proc_parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<tb::CpuTimes> cpus;
  (void)tb::ParseProcStat(text, cpus);
  tb::MemInfo memory;
  (void)tb::ParseMemInfo(text, memory);
  (void)tb::ParseLoadAverage(text);
  tb::PidStat stat;
  (void)tb::ParsePidStat(text, stat);
  tb::ContextSwitches switches;
  (void)tb::ParseContextSwitches(text, switches);
  std::vector<tb::DiskCounters> disks;
  (void)tb::ParseDiskStats(text, disks);
  std::vector<tb::NetCounters> nets;
  (void)tb::ParseNetDev(text, nets);
  std::vector<pid_t> children;
  tb::ParseChildren(text, children);
  return 0;
}
