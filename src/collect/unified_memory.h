// A GPU with no memory of its own (DGX Spark's GB10 shares the system's: NVML answers
// NOT_SUPPORTED to nvmlDeviceGetMemoryInfo and its _v2, nvidia-smi prints [N/A]) as the nvml
// listener records it: its memory used is the sum of its processes' (NVML reports those),
// its total the system's MemTotal. Thread-safe.
#pragma once

#include <utility>
#include <vector>

#include "collect/collector.h"

namespace tb {

// `processes`: (pid, usedGpuMemory) as NVML lists them; NVML_VALUE_NOT_AVAILABLE counts 0.
void RecordUnifiedMemory(const Labels& gpu,
                         const std::vector<std::pair<unsigned, unsigned long long>>& processes,
                         const Tick& tick, SampleSink& sink);

}  // namespace tb
