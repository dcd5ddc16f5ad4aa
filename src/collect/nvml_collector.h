// `nvml`: per GPU each tick, utilization, memory, power, the energy counter, temperature,
// clocks, performance state, PCIe throughput and clock-event (throttle) reasons; per
// process of the run's tree on those GPUs, GPU memory and SM utilization; per MIG device,
// its memory. A metric the GPU does not support is learnt on the first NOT_SUPPORTED and
// never asked for again; a GPU that falls off the bus is reported once as an event and
// skipped from then on, while the other GPUs go on.
#pragma once

#include <memory>
#include <vector>

#include "collect/collector.h"
#include "platform/nvml.h"

namespace tb {

// Samples the GPUs with the given indices (all when empty).
std::unique_ptr<Collector> MakeNvmlCollector(std::shared_ptr<Nvml> nvml, std::vector<unsigned> gpu_indices);

}  // namespace tb
