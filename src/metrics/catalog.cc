#include "metrics/catalog.h"

#include <array>
#include <utility>

#include "metrics/names.h"

namespace tb {
namespace {

constexpr MetricKind G = MetricKind::kGauge;

constexpr std::array kCatalog = {
    MetricInfo{metric::kHostCpuUtilizationRatio, "ratio", G, "top", "[cpu]",
               "Busy share of all cores (no label) or of one core (cpu=N), 0..1", "TOP - CPU Utilization"},
    MetricInfo{metric::kHostMemoryUsedBytes, "bytes", G, "top", "", "MemTotal - MemAvailable",
               "TOP - Memory Usage"},
    MetricInfo{metric::kHostMemoryAvailableBytes, "bytes", G, "top", "",
               "MemAvailable: memory usable without swapping", ""},
    MetricInfo{metric::kHostSwapUsedBytes, "bytes", G, "top", "", "SwapTotal - SwapFree", ""},
    MetricInfo{metric::kHostLoadAverage1m, "1", G, "top", "",
               "One-minute load average (the kernel updates it every 5 s; sampled as often)",
               "TOP - Load Average"},
    MetricInfo{metric::kProcCpuUtilizationRatio, "cores", G, "top", "",
               "CPU of the run's whole process tree in cores (1.0 = one core fully busy)",
               "TOP - CPU Utilization (run)"},
    MetricInfo{metric::kProcMemoryRssBytes, "bytes", G, "top", "",
               "Resident memory summed over the run's process tree", "TOP - Memory Usage (run)"},
    MetricInfo{metric::kProcThreadsCount, "1", G, "top", "", "Threads in the run's process tree", ""},
    MetricInfo{metric::kProcProcessesCount, "1", G, "top", "", "Processes in the run's process tree", ""},
    MetricInfo{metric::kProcSchedVoluntarySwitchesPerSecond, "1/s", G, "top", "",
               "Voluntary context switches of the tree's threads (waiting for I/O, locks)", ""},
    MetricInfo{metric::kProcSchedInvoluntarySwitchesPerSecond, "1/s", G, "top", "",
               "Involuntary context switches (preempted: a sign of CPU contention)", ""},
    MetricInfo{metric::kProcThreadCpuUtilizationRatio, "cores", G, "ps", "pid,tid,name",
               "CPU of one thread of the run's tree", "PS - CPU"},
    MetricInfo{metric::kProcThreadCoreIndex, "1", G, "ps", "pid,tid,name", "Core the thread last ran on",
               "PS - Core"},
    MetricInfo{metric::kDiskReadBytesPerSecond, "bytes/s", G, "iostat", "device", "Bytes read",
               "IOSTAT - Read"},
    MetricInfo{metric::kDiskWriteBytesPerSecond, "bytes/s", G, "iostat", "device", "Bytes written",
               "IOSTAT - Write"},
    MetricInfo{metric::kDiskReadOpsPerSecond, "1/s", G, "iostat", "device", "Read requests completed", ""},
    MetricInfo{metric::kDiskWriteOpsPerSecond, "1/s", G, "iostat", "device", "Write requests completed", ""},
    MetricInfo{metric::kDiskBusyRatio, "ratio", G, "iostat", "device",
               "Share of time the device had I/O in flight (%util)", "IOSTAT - Utilization"},
    MetricInfo{metric::kNetReceiveBytesPerSecond, "bytes/s", G, "net", "interface", "Bytes received",
               "NET - Received"},
    MetricInfo{metric::kNetTransmitBytesPerSecond, "bytes/s", G, "net", "interface", "Bytes sent",
               "NET - Sent"},
    MetricInfo{metric::kGpuUtilizationGpuRatio, "ratio", G, "nvml", "gpu",
               "Share of time a kernel ran on the GPU (nvidia-smi's utilization.gpu)",
               "SMI - GPU Utilization"},
    MetricInfo{metric::kGpuUtilizationMemoryRatio, "ratio", G, "nvml", "gpu",
               "Share of time device memory was read or written", "SMI - Memory Utilization"},
    MetricInfo{metric::kGpuMemoryUsedBytes, "bytes", G, "nvml", "gpu",
               "Device memory in use, without what the driver reserves (as nvidia-smi shows it)",
               "SMI - Memory Used"},
    MetricInfo{metric::kGpuMemoryReservedBytes, "bytes", G, "nvml", "gpu",
               "Device memory the driver reserves for itself (drivers with nvmlMemory_v2)", ""},
    MetricInfo{metric::kGpuMemoryTotalBytes, "bytes", G, "nvml", "gpu", "Device memory in all", ""},
    MetricInfo{metric::kGpuPowerDrawWatts, "W", G, "nvml", "gpu", "Power draw of the board",
               "SMI - Power Draw"},
    MetricInfo{metric::kGpuEnergyConsumedJoules, "J", MetricKind::kCounter, "nvml", "gpu",
               "Energy used since the driver loaded (counter)", "DCGMI - Total Energy Consumption"},
    MetricInfo{metric::kGpuTemperatureGpuCelsius, "°C", G, "nvml", "gpu", "GPU core temperature",
               "SMI - Temperature"},
    MetricInfo{metric::kGpuClockSmHertz, "Hz", G, "nvml", "gpu", "SM clock", "SMI - SM Clock"},
    MetricInfo{metric::kGpuClockMemoryHertz, "Hz", G, "nvml", "gpu", "Memory clock", "SMI - Memory Clock"},
    MetricInfo{metric::kGpuPerformanceStateIndex, "1", G, "nvml", "gpu",
               "Performance state: 0 is the fastest, 15 the slowest", "SMI - Performance State"},
    MetricInfo{metric::kGpuPcieTransmitBytesPerSecond, "bytes/s", G, "nvml", "gpu",
               "PCIe traffic out of the GPU", "DCGMI - PCIE TX Throughput"},
    MetricInfo{metric::kGpuPcieReceiveBytesPerSecond, "bytes/s", G, "nvml", "gpu",
               "PCIe traffic into the GPU", "DCGMI - PCIE RX Throughput"},
    MetricInfo{metric::kGpuClockEventReasonsBitmask, "1", G, "nvml", "gpu",
               "Why clocks are held down (NVML clock event / throttle reason bits; 0: none)", ""},
    MetricInfo{metric::kProcGpuMemoryUsedBytes, "bytes", G, "nvml", "gpu,pid",
               "GPU memory of one process of the run", ""},
    MetricInfo{metric::kProcGpuSmUtilizationRatio, "ratio", G, "nvml", "gpu,pid",
               "Share of time one process of the run had kernels on the SMs", ""},
    MetricInfo{metric::kProcGpuTreeMemoryUsedBytes, "bytes", G, "nvml", "gpu",
               "GPU memory of the run's whole process tree on one GPU", ""},
    MetricInfo{metric::kProcGpuTreeSmUtilizationRatio, "ratio", G, "nvml", "gpu",
               "SM utilization of the run's whole process tree on one GPU (sum over its processes; under MPS "
               "its equal part of the server's), while it shares the GPU",
               ""},
    MetricInfo{metric::kProcGpuShareRatio, "ratio", G, "nvml", "gpu",
               "The run's share of a GPU it may share with other runs: its SM utilization over all "
               "processes' (the MPS server's split equally among its clients; an equal part per process "
               "when none computes); 1 when alone",
               ""},
    MetricInfo{metric::kProcGpuEnergyJoules, "J", MetricKind::kCounter, "nvml", "gpu",
               "Energy of one GPU attributed to the run: power times its share, summed over ticks (the "
               "shares of all runs on a GPU add up to the GPU's energy)",
               ""},
    MetricInfo{metric::kGpuMigMemoryUsedBytes, "bytes", G, "nvml", "gpu,mig",
               "Memory in use on one MIG device", ""},
    MetricInfo{metric::kGpuMigMemoryTotalBytes, "bytes", G, "nvml", "gpu,mig", "Memory of one MIG device",
               ""},
    MetricInfo{metric::kGpuGraphicsEngineActiveRatio, "ratio", G, "dcgmi", "gpu,listener",
               "Share of time the graphics or compute engine was busy (DCGM 1001)",
               "DCGMI - GR Engine Active"},
    MetricInfo{metric::kGpuSmActiveRatio, "ratio", G, "dcgmi", "gpu,listener",
               "Share of time at least one warp was resident on an SM, averaged over SMs (DCGM 1002)",
               "DCGMI - SM Active"},
    MetricInfo{metric::kGpuSmOccupancyRatio, "ratio", G, "dcgmi", "gpu,listener",
               "Resident warps relative to the SMs' maximum (DCGM 1003)", "DCGMI - SM Occupancy"},
    MetricInfo{metric::kGpuPipeTensorActiveRatio, "ratio", G, "dcgmi", "gpu,listener",
               "Share of cycles the tensor cores were busy (DCGM 1004)", "DCGMI - Tensor Active"},
    MetricInfo{metric::kGpuDramActiveRatio, "ratio", G, "dcgmi", "gpu,listener",
               "Share of cycles device memory was sending or receiving data (DCGM 1005)",
               "DCGMI - DRAM Active"},
    MetricInfo{metric::kGpuPipeFp64ActiveRatio, "ratio", G, "dcgmi", "gpu,listener",
               "FP64 pipe busy (DCGM 1006)", "DCGMI - FP64 Active"},
    MetricInfo{metric::kGpuPipeFp32ActiveRatio, "ratio", G, "dcgmi", "gpu,listener",
               "FP32 pipe busy (DCGM 1007)", "DCGMI - FP32 Active"},
    MetricInfo{metric::kGpuPipeFp16ActiveRatio, "ratio", G, "dcgmi", "gpu,listener",
               "FP16 pipe busy (DCGM 1008)", "DCGMI - FP16 Active"},
    MetricInfo{metric::kGpuPcieTxTotalBytesPerSecond, "bytes/s", G, "dcgmi", "gpu,listener",
               "PCIe bytes sent, headers included (DCGM 1009)", "DCGMI - PCIE TX Bytes"},
    MetricInfo{metric::kGpuPcieRxTotalBytesPerSecond, "bytes/s", G, "dcgmi", "gpu,listener",
               "PCIe bytes received, headers included (DCGM 1010)", "DCGMI - PCIE RX Bytes"},
    MetricInfo{metric::kGpuNvlinkTransmitBytesPerSecond, "bytes/s", G, "dcgmi", "gpu,listener",
               "NVLink bytes sent (DCGM 1011)", "DCGMI - NVlink TX Bytes"},
    MetricInfo{metric::kGpuNvlinkReceiveBytesPerSecond, "bytes/s", G, "dcgmi", "gpu,listener",
               "NVLink bytes received (DCGM 1012)", "DCGMI - NVlink RX Bytes"},
    MetricInfo{metric::kTrainbenchListenerUnparsedLines, "1", MetricKind::kCounter, "", "listener",
               "Lines of a tool's output that could not be read, so far", ""},
    MetricInfo{metric::kTrainbenchListenerCpuSeconds, "s", G, "", "listener",
               "CPU time one listener spent in one tick: trainbench's own cost", ""},
};

constexpr std::pair<std::string_view, std::string_view> kTitles[] = {
    {"host.cpu.utilization_ratio", "Host CPU utilization"},
    {"host.memory.used_bytes", "Host memory used"},
    {"host.memory.available_bytes", "Host memory available"},
    {"host.swap.used_bytes", "Swap used"},
    {"host.load.average_1m", "Load average (1 min)"},
    {"proc.cpu.utilization_ratio", "Run CPU"},
    {"proc.memory.rss_bytes", "Run memory (RSS)"},
    {"proc.threads.count", "Run threads"},
    {"proc.processes.count", "Run processes"},
    {"proc.sched.voluntary_switches_per_second", "Voluntary context switches"},
    {"proc.sched.involuntary_switches_per_second", "Involuntary context switches"},
    {"proc.thread.cpu_utilization_ratio", "Thread CPU"},
    {"proc.thread.core_index", "Thread core"},
    {"disk.read_bytes_per_second", "Disk read"},
    {"disk.write_bytes_per_second", "Disk write"},
    {"disk.read_ops_per_second", "Disk reads"},
    {"disk.write_ops_per_second", "Disk writes"},
    {"disk.busy_ratio", "Disk busy"},
    {"net.receive_bytes_per_second", "Network received"},
    {"net.transmit_bytes_per_second", "Network sent"},
    {"gpu.utilization.gpu_ratio", "GPU utilization"},
    {"gpu.utilization.memory_ratio", "GPU memory utilization"},
    {"gpu.memory.used_bytes", "GPU memory used"},
    {"gpu.memory.reserved_bytes", "GPU memory reserved"},
    {"gpu.memory.total_bytes", "GPU memory total"},
    {"gpu.power.draw_watts", "GPU power"},
    {"gpu.energy.consumed_joules", "GPU energy"},
    {"gpu.temperature.gpu_celsius", "GPU temperature"},
    {"gpu.clock.sm_hertz", "SM clock"},
    {"gpu.clock.memory_hertz", "Memory clock"},
    {"gpu.performance.state_index", "Performance state"},
    {"gpu.pcie.transmit_bytes_per_second", "PCIe sent"},
    {"gpu.pcie.receive_bytes_per_second", "PCIe received"},
    {"gpu.clock.event_reasons_bitmask", "Clock event reasons"},
    {"proc.gpu.memory_used_bytes", "Process GPU memory"},
    {"proc.gpu.sm_utilization_ratio", "Process SM utilization"},
    {"proc.gpu.tree_memory_used_bytes", "Run GPU memory"},
    {"proc.gpu.tree_sm_utilization_ratio", "Run SM utilization"},
    {"proc.gpu.share_ratio", "Run share of the GPU"},
    {"proc.gpu.energy_joules", "Run GPU energy"},
    {"gpu.mig.memory_used_bytes", "MIG memory used"},
    {"gpu.mig.memory_total_bytes", "MIG memory total"},
    {"gpu.graphics.engine_active_ratio", "Graphics engine active"},
    {"gpu.sm.active_ratio", "SM active"},
    {"gpu.sm.occupancy_ratio", "SM occupancy"},
    {"gpu.pipe.tensor_active_ratio", "Tensor pipe active"},
    {"gpu.dram.active_ratio", "DRAM active"},
    {"gpu.pipe.fp64_active_ratio", "FP64 pipe active"},
    {"gpu.pipe.fp32_active_ratio", "FP32 pipe active"},
    {"gpu.pipe.fp16_active_ratio", "FP16 pipe active"},
    {"gpu.pcie.tx_total_bytes_per_second", "PCIe sent (DCGM)"},
    {"gpu.pcie.rx_total_bytes_per_second", "PCIe received (DCGM)"},
    {"gpu.nvlink.transmit_bytes_per_second", "NVLink sent"},
    {"gpu.nvlink.receive_bytes_per_second", "NVLink received"},
    {"trainbench.listener.unparsed_lines", "Unparsed listener lines"},
    {"trainbench.listener.cpu_seconds", "Listener CPU time"},
    {"train.throughput_samples_per_second", "Throughput"},
};

}  // namespace

std::span<const MetricInfo> MetricCatalog() { return kCatalog; }

const MetricInfo* FindMetric(std::string_view name) {
  for (const auto& m : kCatalog) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::string MetricTitle(std::string_view metric) {
  for (const auto& [name, title] : kTitles) {
    if (name == metric) return std::string(title);
  }
  std::string out(metric.starts_with("train.") ? metric.substr(6) : metric);
  for (char& c : out) c = c == '_' ? ' ' : c;
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 'a' + 'A');
  return out;
}

std::string_view MetricUnit(std::string_view name) {
  const MetricInfo* info = FindMetric(name);
  if (info != nullptr) return info->unit;
  // A script's metric named by trainbench's grammar carries its unit at the end
  // (train.throughput_samples_per_second, train.step.compute_seconds).
  static constexpr std::pair<std::string_view, std::string_view> kSuffixes[] = {
      {"_samples_per_second", "samples/s"},
      {"_bytes_per_second", "bytes/s"},
      {"_per_second", "1/s"},
      {"_seconds", "s"},
      {"_bytes", "bytes"},
      {"_ratio", "ratio"},
      {"_watts", "W"},
      {"_joules", "J"},
      {"_celsius", "°C"},
  };
  if (name.starts_with("train.")) {
    for (const auto& [suffix, unit] : kSuffixes) {
      if (name.ends_with(suffix)) return unit;
    }
  }
  return "";
}

}  // namespace tb
