// A compute partition's GFX activity from AMD's metrics table (amdsmi_gpu_metrics_t's
// xcp_stats, GPU metrics v1.6 and later: MI300). amdsmi_get_gpu_activity answers a
// partition with the whole GPU's activity; the table has, per partition (XCP), each of its
// XCCs' instantaneous busy % and accumulated busy %, which grows by the busy % at each of
// the firmware's accumulation cycles (`accumulation_counter`). Between two readings the
// partition's activity is its XCCs' accumulated increase over the cycles that passed x 100,
// counted as the firmware saw it, not sampled; on the first reading, or where the table
// has no accumulators, it is the mean of the instantaneous figures.
#pragma once

#include <cstdint>
#include <optional>

#include "platform/amdsmi_abi.h"

namespace tb {

class PartitionActivity {
 public:
  // The partition `xcp`'s busy ratio (0..1); nullopt where the table has no figure for it
  // (no partitions, an index past them, every XCC unfilled).
  std::optional<double> Read(const amdsmi::GpuMetrics& table, unsigned xcp);

 private:
  struct Reading {
    uint64_t cycles = 0;
    uint64_t busy_acc = 0;  // summed over the partition's XCCs
  };
  std::optional<Reading> last_;
};

}  // namespace tb
