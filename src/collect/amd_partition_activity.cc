#include "collect/amd_partition_activity.h"

#include <algorithm>
#include <limits>

namespace tb {

std::optional<double> PartitionActivity::Read(const amdsmi::GpuMetrics& table, unsigned xcp) {
  constexpr uint16_t kNone16 = std::numeric_limits<uint16_t>::max();
  constexpr uint32_t kNone32 = std::numeric_limits<uint32_t>::max();
  constexpr uint64_t kNone64 = std::numeric_limits<uint64_t>::max();
  if (table.num_partition == kNone16 || xcp >= table.num_partition || xcp >= amdsmi::kMaxXcp)
    return std::nullopt;
  const amdsmi::XcpMetrics& x = table.xcp_stats[xcp];
  unsigned instant_count = 0, acc_count = 0;
  double instant = 0;
  Reading now{table.accumulation_counter, 0};
  for (int i = 0; i < amdsmi::kMaxXcc; ++i) {
    if (x.gfx_busy_inst[i] != kNone32 && x.gfx_busy_inst[i] <= 100) {
      instant += x.gfx_busy_inst[i];
      ++instant_count;
    }
    if (x.gfx_busy_acc[i] != kNone64) {
      now.busy_acc += x.gfx_busy_acc[i];
      ++acc_count;
    }
  }
  std::optional<Reading> before = last_;
  bool counted = acc_count > 0 && now.cycles != kNone64;
  last_ = counted ? std::optional(now) : std::nullopt;
  if (counted && before && now.cycles > before->cycles && now.busy_acc >= before->busy_acc) {
    double busy = static_cast<double>(now.busy_acc - before->busy_acc) /
                  (static_cast<double>(now.cycles - before->cycles) * acc_count * 100);
    return std::clamp(busy, 0.0, 1.0);
  }
  if (instant_count == 0) return std::nullopt;
  return instant / instant_count / 100;
}

}  // namespace tb
