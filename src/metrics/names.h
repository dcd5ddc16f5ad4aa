// Every metric name trainbench writes or reads itself, defined once: code names a metric by
// these constants, never by the literal. metrics/catalog.h describes each; web/build.mjs
// generates the web UI's copy (web/src/generated/metric_names.ts) from this file.
#pragma once

#include <string_view>

namespace tb::metric {

inline constexpr std::string_view kHostCpuUtilizationRatio = "host.cpu.utilization_ratio";
inline constexpr std::string_view kHostMemoryUsedBytes = "host.memory.used_bytes";
inline constexpr std::string_view kHostMemoryAvailableBytes = "host.memory.available_bytes";
inline constexpr std::string_view kHostSwapUsedBytes = "host.swap.used_bytes";
// The rest of what `free` shows (radT's free listener): memory, swap and both together.
inline constexpr std::string_view kHostMemoryTotalBytes = "host.memory.total_bytes";
inline constexpr std::string_view kHostMemoryFreeBytes = "host.memory.free_bytes";
inline constexpr std::string_view kHostMemorySharedBytes = "host.memory.shared_bytes";
inline constexpr std::string_view kHostMemoryBuffCacheBytes = "host.memory.buff_cache_bytes";
inline constexpr std::string_view kHostSwapTotalBytes = "host.swap.total_bytes";
inline constexpr std::string_view kHostSwapFreeBytes = "host.swap.free_bytes";
inline constexpr std::string_view kHostMemorySwapTotalBytes = "host.memory_swap.total_bytes";
inline constexpr std::string_view kHostMemorySwapUsedBytes = "host.memory_swap.used_bytes";
inline constexpr std::string_view kHostMemorySwapFreeBytes = "host.memory_swap.free_bytes";
inline constexpr std::string_view kHostLoadAverage1m = "host.load.average_1m";
// The CPU package's and memory's energy (RAPL through powercap: the rapl listener).
inline constexpr std::string_view kHostEnergyConsumedJoules = "host.energy.consumed_joules";
inline constexpr std::string_view kHostPowerDrawWatts = "host.power.draw_watts";
inline constexpr std::string_view kProcCpuEnergyJoules = "proc.cpu.energy_joules";
// A board's power rail (a Jetson's INA3221 channels: the jetson and tegrastats listeners).
inline constexpr std::string_view kHostRailPowerWatts = "host.rail.power_watts";
inline constexpr std::string_view kHostCpuClockHertz = "host.cpu.clock_hertz";

inline constexpr std::string_view kProcCpuUtilizationRatio = "proc.cpu.utilization_ratio";
inline constexpr std::string_view kProcMemoryRssBytes = "proc.memory.rss_bytes";
inline constexpr std::string_view kProcMemoryShareRatio = "proc.memory.share_ratio";
inline constexpr std::string_view kProcThreadsCount = "proc.threads.count";
inline constexpr std::string_view kProcProcessesCount = "proc.processes.count";
inline constexpr std::string_view kProcSchedVoluntarySwitchesPerSecond =
    "proc.sched.voluntary_switches_per_second";
inline constexpr std::string_view kProcSchedInvoluntarySwitchesPerSecond =
    "proc.sched.involuntary_switches_per_second";
inline constexpr std::string_view kProcThreadCpuUtilizationRatio = "proc.thread.cpu_utilization_ratio";
inline constexpr std::string_view kProcThreadCoreIndex = "proc.thread.core_index";

inline constexpr std::string_view kDiskReadBytesPerSecond = "disk.read_bytes_per_second";
inline constexpr std::string_view kDiskWriteBytesPerSecond = "disk.write_bytes_per_second";
inline constexpr std::string_view kDiskReadOpsPerSecond = "disk.read_ops_per_second";
inline constexpr std::string_view kDiskWriteOpsPerSecond = "disk.write_ops_per_second";
inline constexpr std::string_view kDiskBusyRatio = "disk.busy_ratio";

inline constexpr std::string_view kNetReceiveBytesPerSecond = "net.receive_bytes_per_second";
inline constexpr std::string_view kNetTransmitBytesPerSecond = "net.transmit_bytes_per_second";

inline constexpr std::string_view kGpuUtilizationGpuRatio = "gpu.utilization.gpu_ratio";
inline constexpr std::string_view kGpuUtilizationMemoryRatio = "gpu.utilization.memory_ratio";
inline constexpr std::string_view kGpuMemoryUsedBytes = "gpu.memory.used_bytes";
inline constexpr std::string_view kGpuMemoryReservedBytes = "gpu.memory.reserved_bytes";
inline constexpr std::string_view kGpuMemoryTotalBytes = "gpu.memory.total_bytes";
inline constexpr std::string_view kGpuPowerDrawWatts = "gpu.power.draw_watts";
inline constexpr std::string_view kGpuEnergyConsumedJoules = "gpu.energy.consumed_joules";
inline constexpr std::string_view kGpuTemperatureGpuCelsius = "gpu.temperature.gpu_celsius";
inline constexpr std::string_view kGpuClockSmHertz = "gpu.clock.sm_hertz";
inline constexpr std::string_view kGpuClockMemoryHertz = "gpu.clock.memory_hertz";
inline constexpr std::string_view kGpuPerformanceStateIndex = "gpu.performance.state_index";
inline constexpr std::string_view kGpuPcieTransmitBytesPerSecond = "gpu.pcie.transmit_bytes_per_second";
inline constexpr std::string_view kGpuPcieReceiveBytesPerSecond = "gpu.pcie.receive_bytes_per_second";
inline constexpr std::string_view kGpuClockEventReasonsBitmask = "gpu.clock.event_reasons_bitmask";
// What AMD's GPUs report beside NVIDIA's figures (the amdsmi listener).
inline constexpr std::string_view kGpuUtilizationMultimediaRatio = "gpu.utilization.multimedia_ratio";
inline constexpr std::string_view kGpuTemperatureHotspotCelsius = "gpu.temperature.hotspot_celsius";
inline constexpr std::string_view kGpuTemperatureMemoryCelsius = "gpu.temperature.memory_celsius";

inline constexpr std::string_view kProcGpuMemoryUsedBytes = "proc.gpu.memory_used_bytes";
inline constexpr std::string_view kProcGpuSmUtilizationRatio = "proc.gpu.sm_utilization_ratio";
inline constexpr std::string_view kProcGpuTreeMemoryUsedBytes = "proc.gpu.tree_memory_used_bytes";
inline constexpr std::string_view kProcGpuTreeSmUtilizationRatio = "proc.gpu.tree_sm_utilization_ratio";
inline constexpr std::string_view kProcGpuShareRatio = "proc.gpu.share_ratio";
inline constexpr std::string_view kProcGpuEnergyJoules = "proc.gpu.energy_joules";

inline constexpr std::string_view kGpuMigMemoryUsedBytes = "gpu.mig.memory_used_bytes";
inline constexpr std::string_view kGpuMigMemoryTotalBytes = "gpu.mig.memory_total_bytes";
inline constexpr std::string_view kGpuGraphicsEngineActiveRatio = "gpu.graphics.engine_active_ratio";
inline constexpr std::string_view kGpuSmActiveRatio = "gpu.sm.active_ratio";
inline constexpr std::string_view kGpuSmOccupancyRatio = "gpu.sm.occupancy_ratio";
inline constexpr std::string_view kGpuPipeTensorActiveRatio = "gpu.pipe.tensor_active_ratio";
inline constexpr std::string_view kGpuDramActiveRatio = "gpu.dram.active_ratio";
inline constexpr std::string_view kGpuPipeFp64ActiveRatio = "gpu.pipe.fp64_active_ratio";
inline constexpr std::string_view kGpuPipeFp32ActiveRatio = "gpu.pipe.fp32_active_ratio";
inline constexpr std::string_view kGpuPipeFp16ActiveRatio = "gpu.pipe.fp16_active_ratio";
inline constexpr std::string_view kGpuPcieTxTotalBytesPerSecond = "gpu.pcie.tx_total_bytes_per_second";
inline constexpr std::string_view kGpuPcieRxTotalBytesPerSecond = "gpu.pcie.rx_total_bytes_per_second";
inline constexpr std::string_view kGpuNvlinkTransmitBytesPerSecond = "gpu.nvlink.transmit_bytes_per_second";
inline constexpr std::string_view kGpuNvlinkReceiveBytesPerSecond = "gpu.nvlink.receive_bytes_per_second";

inline constexpr std::string_view kTrainbenchListenerUnparsedLines = "trainbench.listener.unparsed_lines";
inline constexpr std::string_view kTrainbenchListenerCpuSeconds = "trainbench.listener.cpu_seconds";

inline constexpr std::string_view kTrainLoss = "train.loss";
inline constexpr std::string_view kTrainThroughputSamplesPerSecond = "train.throughput_samples_per_second";
// A step's time, as the trainbench client's run.steps() logs it (each with its step).
inline constexpr std::string_view kTrainStepComputeSeconds = "train.step.compute_seconds";
inline constexpr std::string_view kTrainStepDataWaitSeconds = "train.step.data_wait_seconds";
// The prefix of a script's own metrics (logged through the tracking API).
inline constexpr std::string_view kScriptPrefix = "train.";

}  // namespace tb::metric
