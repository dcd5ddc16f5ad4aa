#include "metrics/catalog.h"

#include <array>
#include <utility>

#include "metrics/names.h"

namespace tb {
namespace {

constexpr MetricKind G = MetricKind::kGauge;

constexpr std::array kCatalog = {
    MetricInfo{metric::kHostCpuUtilizationRatio, "Host CPU utilization", "ratio", G, "top", "[cpu]",
               "Busy share of all cores (no label) or of one core (cpu=N), 0..1", "TOP - CPU Utilization"},
    MetricInfo{metric::kHostMemoryUsedBytes, "Host memory used", "bytes", G, "top", "",
               "MemTotal - MemAvailable", "TOP - Memory Usage"},
    MetricInfo{metric::kHostMemoryAvailableBytes, "Host memory available", "bytes", G, "top", "",
               "MemAvailable: memory usable without swapping", ""},
    MetricInfo{metric::kHostSwapUsedBytes, "Swap used", "bytes", G, "top", "", "SwapTotal - SwapFree", ""},
    MetricInfo{metric::kHostMemoryTotalBytes, "Host memory total", "bytes", G, "free", "listener",
               "MemTotal (free's total)", "Free - Mem Total GB"},
    MetricInfo{metric::kHostMemoryFreeBytes, "Host memory free", "bytes", G, "free", "listener",
               "MemFree: memory not used at all (free's free)", "Free - Mem Free GB"},
    MetricInfo{metric::kHostMemorySharedBytes, "Host memory shared", "bytes", G, "free", "listener",
               "Shmem: tmpfs and shared memory (free's shared)", "Free - Mem Shared GB"},
    MetricInfo{metric::kHostMemoryBuffCacheBytes, "Host buffers and cache", "bytes", G, "free", "listener",
               "Buffers + Cached + SReclaimable (free's buff/cache)", "Free - Mem Buff/Cache GB"},
    MetricInfo{metric::kHostSwapTotalBytes, "Swap total", "bytes", G, "free", "listener", "SwapTotal",
               "Free - Swap Total GB"},
    MetricInfo{metric::kHostSwapFreeBytes, "Swap free", "bytes", G, "free", "listener", "SwapFree",
               "Free - Swap Free GB"},
    MetricInfo{metric::kHostMemorySwapTotalBytes, "Memory and swap total", "bytes", G, "free", "listener",
               "MemTotal + SwapTotal (free --total)", "Free - Total Total GB"},
    MetricInfo{metric::kHostMemorySwapUsedBytes, "Memory and swap used", "bytes", G, "free", "listener",
               "Memory used + swap used (free --total)", "Free - Total Used GB"},
    MetricInfo{metric::kHostMemorySwapFreeBytes, "Memory and swap free", "bytes", G, "free", "listener",
               "MemFree + SwapFree (free --total)", "Free - Total Free GB"},
    MetricInfo{metric::kHostLoadAverage1m, "Load average (1 min)", "1", G, "top", "",
               "One-minute load average (the kernel updates it every 5 s; sampled as often)",
               "TOP - Load Average"},
    MetricInfo{metric::kHostEnergyConsumedJoules, "CPU energy", "J", MetricKind::kCounter, "rapl", "domain",
               "Energy of a RAPL domain (package-0, dram) since the first reading, across the counter's wrap",
               ""},
    MetricInfo{metric::kHostPowerDrawWatts, "CPU power", "W", G, "rapl", "domain",
               "Power of a RAPL domain: its energy counter's increase over the tick", ""},
    MetricInfo{metric::kProcCpuEnergyJoules, "Run CPU energy", "J", MetricKind::kCounter, "rapl", "domain",
               "A RAPL domain's energy attributed to the run: each increase times the run's share of the "
               "CPU time all processes used over it",
               ""},
    MetricInfo{
        metric::kHostRailPowerWatts, "Rail power", "W", G, "jetson", "rail",
        "Power of one of the board's rails (a Jetson's INA3221 channels: VDD_GPU_SOC, VDD_CPU_CV, ...)", ""},
    MetricInfo{metric::kHostCpuClockHertz, "CPU clock", "Hz", G, "jetson", "cpu",
               "One core's clock (cpu=N; a Jetson's cpufreq or tegrastats' CPU list); none while it is off",
               ""},
    MetricInfo{metric::kProcCpuUtilizationRatio, "Run CPU", "cores", G, "top", "",
               "CPU of the run's whole process tree in cores (1.0 = one core fully busy)",
               "TOP - CPU Utilization (run)"},
    MetricInfo{metric::kProcMemoryRssBytes, "Run memory (RSS)", "bytes", G, "top", "",
               "Resident memory summed over the run's process tree", "TOP - Memory Usage (run)"},
    MetricInfo{metric::kProcMemoryShareRatio, "Run memory share", "ratio", G, "top", "",
               "The run's resident memory as a share of the host's (top's %MEM, summed)",
               "TOP - Memory Utilization"},
    MetricInfo{metric::kProcThreadsCount, "Run threads", "1", G, "top", "",
               "Threads in the run's process tree", ""},
    MetricInfo{metric::kProcProcessesCount, "Run processes", "1", G, "top", "",
               "Processes in the run's process tree", ""},
    MetricInfo{metric::kProcSchedVoluntarySwitchesPerSecond, "Voluntary context switches", "1/s", G, "top",
               "", "Voluntary context switches of the tree's threads (waiting for I/O, locks)", ""},
    MetricInfo{metric::kProcSchedInvoluntarySwitchesPerSecond, "Involuntary context switches", "1/s", G,
               "top", "", "Involuntary context switches (preempted: a sign of CPU contention)", ""},
    MetricInfo{metric::kProcThreadCpuUtilizationRatio, "Thread CPU", "cores", G, "ps", "pid,tid,name",
               "CPU of one thread of the run's tree", "PS - CPU"},
    MetricInfo{metric::kProcThreadCoreIndex, "Thread core", "1", G, "ps", "pid,tid,name",
               "Core the thread last ran on", "PS - Core"},
    MetricInfo{metric::kDiskReadBytesPerSecond, "Disk read", "bytes/s", G, "iostat", "device", "Bytes read",
               "IOSTAT - Read"},
    MetricInfo{metric::kDiskWriteBytesPerSecond, "Disk write", "bytes/s", G, "iostat", "device",
               "Bytes written", "IOSTAT - Write"},
    MetricInfo{metric::kDiskReadOpsPerSecond, "Disk reads", "1/s", G, "iostat", "device",
               "Read requests completed", ""},
    MetricInfo{metric::kDiskWriteOpsPerSecond, "Disk writes", "1/s", G, "iostat", "device",
               "Write requests completed", ""},
    MetricInfo{metric::kDiskBusyRatio, "Disk busy", "ratio", G, "iostat", "device",
               "Share of time the device had I/O in flight (%util)", "IOSTAT - Utilization"},
    MetricInfo{metric::kNetReceiveBytesPerSecond, "Network received", "bytes/s", G, "net", "interface",
               "Bytes received", "NET - Received"},
    MetricInfo{metric::kNetTransmitBytesPerSecond, "Network sent", "bytes/s", G, "net", "interface",
               "Bytes sent", "NET - Sent"},
    MetricInfo{metric::kGpuUtilizationGpuRatio, "GPU utilization", "ratio", G, "nvml", "gpu",
               "Share of time a kernel ran on the GPU (nvidia-smi's utilization.gpu)",
               "SMI - GPU Utilization"},
    MetricInfo{metric::kGpuUtilizationMemoryRatio, "GPU memory utilization", "ratio", G, "nvml", "gpu",
               "Share of time device memory was read or written", "SMI - Memory Utilization"},
    MetricInfo{metric::kGpuMemoryUsedBytes, "GPU memory used", "bytes", G, "nvml", "gpu",
               "Device memory in use, without what the driver reserves (as nvidia-smi shows it)",
               "SMI - Memory Used"},
    MetricInfo{metric::kGpuMemoryReservedBytes, "GPU memory reserved", "bytes", G, "nvml", "gpu",
               "Device memory the driver reserves for itself (drivers with nvmlMemory_v2)", ""},
    MetricInfo{metric::kGpuMemoryTotalBytes, "GPU memory total", "bytes", G, "nvml", "gpu",
               "Device memory in all", ""},
    MetricInfo{metric::kGpuPowerDrawWatts, "GPU power", "W", G, "nvml", "gpu", "Power draw of the board",
               "SMI - Power Draw"},
    MetricInfo{metric::kGpuEnergyConsumedJoules, "GPU energy", "J", MetricKind::kCounter, "nvml", "gpu",
               "Energy used since the driver loaded (counter)", "DCGMI - Total Energy Consumption"},
    MetricInfo{metric::kGpuUtilizationMultimediaRatio, "GPU multimedia utilization", "ratio", G, "amdsmi",
               "gpu", "Share of time the video and JPEG engines were busy (AMD's mm_activity)", ""},
    MetricInfo{metric::kGpuTemperatureHotspotCelsius, "GPU hotspot temperature", "°C", G, "amdsmi", "gpu",
               "The die's hottest point (AMD's junction sensor)", ""},
    MetricInfo{metric::kGpuTemperatureMemoryCelsius, "GPU memory temperature", "°C", G, "amdsmi", "gpu",
               "Device memory (VRAM, HBM) temperature", ""},
    MetricInfo{metric::kGpuTemperatureGpuCelsius, "GPU temperature", "°C", G, "nvml", "gpu",
               "GPU core temperature", "SMI - Temperature"},
    MetricInfo{metric::kGpuClockSmHertz, "SM clock", "Hz", G, "nvml", "gpu", "SM clock", "SMI - SM Clock"},
    MetricInfo{metric::kGpuClockMemoryHertz, "Memory clock", "Hz", G, "nvml", "gpu", "Memory clock",
               "SMI - Memory Clock"},
    MetricInfo{metric::kGpuPerformanceStateIndex, "Performance state", "1", G, "nvml", "gpu",
               "Performance state: 0 is the fastest, 15 the slowest", "SMI - Performance State"},
    MetricInfo{metric::kGpuPcieTransmitBytesPerSecond, "PCIe sent", "bytes/s", G, "nvml", "gpu",
               "PCIe traffic out of the GPU", "DCGMI - PCIE TX Throughput"},
    MetricInfo{metric::kGpuPcieReceiveBytesPerSecond, "PCIe received", "bytes/s", G, "nvml", "gpu",
               "PCIe traffic into the GPU", "DCGMI - PCIE RX Throughput"},
    MetricInfo{metric::kGpuClockEventReasonsBitmask, "Clock event reasons", "1", G, "nvml", "gpu",
               "Why clocks are held down (NVML clock event / throttle reason bits; 0: none)", ""},
    MetricInfo{metric::kProcGpuMemoryUsedBytes, "Process GPU memory", "bytes", G, "nvml", "gpu,pid",
               "GPU memory of one process of the run", ""},
    MetricInfo{metric::kProcGpuSmUtilizationRatio, "Process SM utilization", "ratio", G, "nvml", "gpu,pid",
               "Share of time one process of the run had kernels on the SMs", ""},
    MetricInfo{metric::kProcGpuTreeMemoryUsedBytes, "Run GPU memory", "bytes", G, "nvml", "gpu",
               "GPU memory of the run's whole process tree on one GPU", ""},
    MetricInfo{metric::kProcGpuTreeSmUtilizationRatio, "Run SM utilization", "ratio", G, "nvml", "gpu",
               "SM utilization of the run's whole process tree on one GPU (sum over its processes; under MPS "
               "its equal part of the server's), while it shares the GPU",
               ""},
    MetricInfo{metric::kProcGpuShareRatio, "Run share of the GPU", "ratio", G, "nvml", "gpu",
               "The run's share of a GPU it may share with other runs: its SM utilization over all "
               "processes' (the MPS server's split equally among its clients; an equal part per process "
               "when none computes); 1 when alone",
               ""},
    MetricInfo{metric::kProcGpuEnergyJoules, "Run GPU energy", "J", MetricKind::kCounter, "nvml", "gpu",
               "Energy of one GPU attributed to the run: power times its share, summed over ticks (the "
               "shares of all runs on a GPU add up to the GPU's energy)",
               ""},
    MetricInfo{metric::kGpuMigMemoryUsedBytes, "MIG memory used", "bytes", G, "nvml", "gpu,mig",
               "Memory in use on one MIG device", ""},
    MetricInfo{metric::kGpuMigMemoryTotalBytes, "MIG memory total", "bytes", G, "nvml", "gpu,mig",
               "Memory of one MIG device", ""},
    MetricInfo{metric::kGpuGraphicsEngineActiveRatio, "Graphics engine active", "ratio", G, "dcgmi",
               "gpu,listener", "Share of time the graphics or compute engine was busy (DCGM 1001)",
               "DCGMI - GR Engine Active"},
    MetricInfo{metric::kGpuSmActiveRatio, "SM active", "ratio", G, "dcgmi", "gpu,listener",
               "Share of time at least one warp was resident on an SM, averaged over SMs (DCGM 1002)",
               "DCGMI - SM Active"},
    MetricInfo{metric::kGpuSmOccupancyRatio, "SM occupancy", "ratio", G, "dcgmi", "gpu,listener",
               "Resident warps relative to the SMs' maximum (DCGM 1003)", "DCGMI - SM Occupancy"},
    MetricInfo{metric::kGpuPipeTensorActiveRatio, "Tensor pipe active", "ratio", G, "dcgmi", "gpu,listener",
               "Share of cycles the tensor cores were busy (DCGM 1004)", "DCGMI - Tensor Active"},
    MetricInfo{metric::kGpuDramActiveRatio, "DRAM active", "ratio", G, "dcgmi", "gpu,listener",
               "Share of cycles device memory was sending or receiving data (DCGM 1005)",
               "DCGMI - DRAM Active"},
    MetricInfo{metric::kGpuPipeFp64ActiveRatio, "FP64 pipe active", "ratio", G, "dcgmi", "gpu,listener",
               "FP64 pipe busy (DCGM 1006)", "DCGMI - FP64 Active"},
    MetricInfo{metric::kGpuPipeFp32ActiveRatio, "FP32 pipe active", "ratio", G, "dcgmi", "gpu,listener",
               "FP32 pipe busy (DCGM 1007)", "DCGMI - FP32 Active"},
    MetricInfo{metric::kGpuPipeFp16ActiveRatio, "FP16 pipe active", "ratio", G, "dcgmi", "gpu,listener",
               "FP16 pipe busy (DCGM 1008)", "DCGMI - FP16 Active"},
    MetricInfo{metric::kGpuPcieTxTotalBytesPerSecond, "PCIe sent (DCGM)", "bytes/s", G, "dcgmi",
               "gpu,listener", "PCIe bytes sent, headers included (DCGM 1009)", "DCGMI - PCIE TX Bytes"},
    MetricInfo{metric::kGpuPcieRxTotalBytesPerSecond, "PCIe received (DCGM)", "bytes/s", G, "dcgmi",
               "gpu,listener", "PCIe bytes received, headers included (DCGM 1010)", "DCGMI - PCIE RX Bytes"},
    MetricInfo{metric::kGpuNvlinkTransmitBytesPerSecond, "NVLink sent", "bytes/s", G, "dcgmi", "gpu,listener",
               "NVLink bytes sent (DCGM 1011)", "DCGMI - NVlink TX Bytes"},
    MetricInfo{metric::kGpuNvlinkReceiveBytesPerSecond, "NVLink received", "bytes/s", G, "dcgmi",
               "gpu,listener", "NVLink bytes received (DCGM 1012)", "DCGMI - NVlink RX Bytes"},
    MetricInfo{metric::kTrainbenchListenerUnparsedLines, "Unparsed listener lines", "1", MetricKind::kCounter,
               "", "listener", "Lines of a tool's output that could not be read, so far", ""},
    MetricInfo{metric::kTrainbenchListenerCpuSeconds, "Listener CPU time", "s", G, "", "listener",
               "CPU time one listener spent in one tick: trainbench's own cost", ""},
};

// Titles of the script's metrics a report or figure names (catalog metrics have theirs).
constexpr std::pair<std::string_view, std::string_view> kScriptTitles[] = {
    {metric::kTrainThroughputSamplesPerSecond, "Throughput"},
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
  if (const MetricInfo* m = FindMetric(metric)) return std::string(m->title);
  for (const auto& [name, title] : kScriptTitles) {
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

int SourceRank(std::string_view labels) {
  for (size_t at = 0; at < labels.size();) {
    size_t comma = labels.find(',', at);
    std::string_view part =
        labels.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    if (part.starts_with("listener=")) {
      std::string_view l = part.substr(9);
      return l == "nvml" ? 0 : l == "smi" ? 1 : l == "dcgmi" ? 2 : 3;
    }
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return 0;
}

}  // namespace tb
