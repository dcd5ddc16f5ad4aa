#include "collect/unified_memory.h"

#include <string>

#include "collect/process_tree.h"
#include "metrics/names.h"
#include "platform/nvml_abi.h"

namespace tb {

void RecordUnifiedMemory(const Labels& gpu,
                         const std::vector<std::pair<unsigned, unsigned long long>>& processes,
                         const Tick& tick, SampleSink& sink) {
  double used = 0;
  for (const auto& [pid, memory] : processes)
    used += memory == nvml::kValueNotAvailable ? 0 : static_cast<double>(memory);
  sink.Add({metric::kGpuMemoryUsedBytes, gpu, tick.time_ms, used});
  std::string text;
  MemInfo mem;
  if (tick.tree != nullptr && tick.tree->files().Read("/proc/meminfo", text).ok() &&
      ParseMemInfo(text, mem).ok())
    sink.Add({metric::kGpuMemoryTotalBytes, gpu, tick.time_ms, static_cast<double>(mem.total_bytes)});
}

}  // namespace tb
