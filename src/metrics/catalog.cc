#include "metrics/catalog.h"

#include <array>

namespace tb {
namespace {

constexpr MetricKind G = MetricKind::kGauge;

constexpr std::array kCatalog = {
    MetricInfo{"host.cpu.utilization_ratio", "ratio", G, "top", "[cpu]",
               "Busy share of all cores (no label) or of one core (cpu=N), 0..1", "TOP - CPU Utilization"},
    MetricInfo{"host.memory.used_bytes", "bytes", G, "top", "", "MemTotal - MemAvailable",
               "TOP - Memory Usage"},
    MetricInfo{"host.memory.available_bytes", "bytes", G, "top", "",
               "MemAvailable: memory usable without swapping", ""},
    MetricInfo{"host.swap.used_bytes", "bytes", G, "top", "", "SwapTotal - SwapFree", ""},
    MetricInfo{"host.load.average_1m", "1", G, "top", "",
               "One-minute load average (the kernel updates it every 5 s; sampled as often)",
               "TOP - Load Average"},
    MetricInfo{"proc.cpu.utilization_ratio", "cores", G, "top", "",
               "CPU of the run's whole process tree in cores (1.0 = one core fully busy)",
               "TOP - CPU Utilization (run)"},
    MetricInfo{"proc.memory.rss_bytes", "bytes", G, "top", "",
               "Resident memory summed over the run's process tree", "TOP - Memory Usage (run)"},
    MetricInfo{"proc.threads.count", "1", G, "top", "", "Threads in the run's process tree", ""},
    MetricInfo{"proc.processes.count", "1", G, "top", "", "Processes in the run's process tree", ""},
    MetricInfo{"proc.sched.voluntary_switches_per_second", "1/s", G, "top", "",
               "Voluntary context switches of the tree's threads (waiting for I/O, locks)", ""},
    MetricInfo{"proc.sched.involuntary_switches_per_second", "1/s", G, "top", "",
               "Involuntary context switches (preempted: a sign of CPU contention)", ""},
    MetricInfo{"proc.thread.cpu_utilization_ratio", "cores", G, "ps", "pid,tid,name",
               "CPU of one thread of the run's tree", "PS - CPU"},
    MetricInfo{"proc.thread.core_index", "1", G, "ps", "pid,tid,name", "Core the thread last ran on",
               "PS - Core"},
    MetricInfo{"disk.read_bytes_per_second", "bytes/s", G, "iostat", "device", "Bytes read", "IOSTAT - Read"},
    MetricInfo{"disk.write_bytes_per_second", "bytes/s", G, "iostat", "device", "Bytes written",
               "IOSTAT - Write"},
    MetricInfo{"disk.read_ops_per_second", "1/s", G, "iostat", "device", "Read requests completed", ""},
    MetricInfo{"disk.write_ops_per_second", "1/s", G, "iostat", "device", "Write requests completed", ""},
    MetricInfo{"disk.busy_ratio", "ratio", G, "iostat", "device",
               "Share of time the device had I/O in flight (%util)", "IOSTAT - Utilization"},
    MetricInfo{"net.receive_bytes_per_second", "bytes/s", G, "net", "interface", "Bytes received",
               "NET - Received"},
    MetricInfo{"net.transmit_bytes_per_second", "bytes/s", G, "net", "interface", "Bytes sent", "NET - Sent"},
    MetricInfo{"gpu.utilization.gpu_ratio", "ratio", G, "nvml", "gpu",
               "Share of time a kernel ran on the GPU (nvidia-smi's utilization.gpu)",
               "SMI - GPU Utilization"},
    MetricInfo{"gpu.utilization.memory_ratio", "ratio", G, "nvml", "gpu",
               "Share of time device memory was read or written", "SMI - Memory Utilization"},
    MetricInfo{"gpu.memory.used_bytes", "bytes", G, "nvml", "gpu", "Device memory in use",
               "SMI - Memory Used"},
    MetricInfo{"gpu.memory.total_bytes", "bytes", G, "nvml", "gpu", "Device memory in all", ""},
    MetricInfo{"gpu.power.draw_watts", "W", G, "nvml", "gpu", "Power draw of the board", "SMI - Power Draw"},
    MetricInfo{"gpu.energy.consumed_joules", "J", MetricKind::kCounter, "nvml", "gpu",
               "Energy used since the driver loaded (counter)", "DCGMI - Total Energy Consumption"},
    MetricInfo{"gpu.temperature.gpu_celsius", "°C", G, "nvml", "gpu", "GPU core temperature",
               "SMI - Temperature"},
    MetricInfo{"gpu.clock.sm_hertz", "Hz", G, "nvml", "gpu", "SM clock", "SMI - SM Clock"},
    MetricInfo{"gpu.clock.memory_hertz", "Hz", G, "nvml", "gpu", "Memory clock", "SMI - Memory Clock"},
    MetricInfo{"gpu.performance.state_index", "1", G, "nvml", "gpu",
               "Performance state: 0 is the fastest, 15 the slowest", "SMI - Performance State"},
    MetricInfo{"gpu.pcie.transmit_bytes_per_second", "bytes/s", G, "nvml", "gpu",
               "PCIe traffic out of the GPU", "DCGMI - PCIE TX Throughput"},
    MetricInfo{"gpu.pcie.receive_bytes_per_second", "bytes/s", G, "nvml", "gpu", "PCIe traffic into the GPU",
               "DCGMI - PCIE RX Throughput"},
    MetricInfo{"gpu.clock.event_reasons_bitmask", "1", G, "nvml", "gpu",
               "Why clocks are held down (NVML clock event / throttle reason bits; 0: none)", ""},
    MetricInfo{"proc.gpu.memory_used_bytes", "bytes", G, "nvml", "gpu,pid",
               "GPU memory of one process of the run", ""},
    MetricInfo{"proc.gpu.sm_utilization_ratio", "ratio", G, "nvml", "gpu,pid",
               "Share of time one process of the run had kernels on the SMs", ""},
    MetricInfo{"gpu.mig.memory_used_bytes", "bytes", G, "nvml", "gpu,mig", "Memory in use on one MIG device",
               ""},
    MetricInfo{"gpu.mig.memory_total_bytes", "bytes", G, "nvml", "gpu,mig", "Memory of one MIG device", ""},
    MetricInfo{"gpu.graphics.engine_active_ratio", "ratio", G, "dcgmi", "gpu,listener",
               "Share of time the graphics or compute engine was busy (DCGM 1001)",
               "DCGMI - GR Engine Active"},
    MetricInfo{"gpu.sm.active_ratio", "ratio", G, "dcgmi", "gpu,listener",
               "Share of time at least one warp was resident on an SM, averaged over SMs (DCGM 1002)",
               "DCGMI - SM Active"},
    MetricInfo{"gpu.sm.occupancy_ratio", "ratio", G, "dcgmi", "gpu,listener",
               "Resident warps relative to the SMs' maximum (DCGM 1003)", "DCGMI - SM Occupancy"},
    MetricInfo{"gpu.pipe.tensor_active_ratio", "ratio", G, "dcgmi", "gpu,listener",
               "Share of cycles the tensor cores were busy (DCGM 1004)", "DCGMI - Tensor Active"},
    MetricInfo{"gpu.dram.active_ratio", "ratio", G, "dcgmi", "gpu,listener",
               "Share of cycles device memory was sending or receiving data (DCGM 1005)",
               "DCGMI - DRAM Active"},
    MetricInfo{"gpu.pipe.fp64_active_ratio", "ratio", G, "dcgmi", "gpu,listener",
               "FP64 pipe busy (DCGM 1006)", "DCGMI - FP64 Active"},
    MetricInfo{"gpu.pipe.fp32_active_ratio", "ratio", G, "dcgmi", "gpu,listener",
               "FP32 pipe busy (DCGM 1007)", "DCGMI - FP32 Active"},
    MetricInfo{"gpu.pipe.fp16_active_ratio", "ratio", G, "dcgmi", "gpu,listener",
               "FP16 pipe busy (DCGM 1008)", "DCGMI - FP16 Active"},
    MetricInfo{"gpu.pcie.tx_total_bytes_per_second", "bytes/s", G, "dcgmi", "gpu,listener",
               "PCIe bytes sent, headers included (DCGM 1009)", "DCGMI - PCIE TX Bytes"},
    MetricInfo{"gpu.pcie.rx_total_bytes_per_second", "bytes/s", G, "dcgmi", "gpu,listener",
               "PCIe bytes received, headers included (DCGM 1010)", "DCGMI - PCIE RX Bytes"},
    MetricInfo{"gpu.nvlink.transmit_bytes_per_second", "bytes/s", G, "dcgmi", "gpu,listener",
               "NVLink bytes sent (DCGM 1011)", "DCGMI - NVlink TX Bytes"},
    MetricInfo{"gpu.nvlink.receive_bytes_per_second", "bytes/s", G, "dcgmi", "gpu,listener",
               "NVLink bytes received (DCGM 1012)", "DCGMI - NVlink RX Bytes"},
    MetricInfo{"trainbench.listener.unparsed_lines", "1", MetricKind::kCounter, "", "listener",
               "Lines of a tool's output that could not be read, so far", ""},
    MetricInfo{"trainbench.listener.cpu_seconds", "s", G, "", "listener",
               "CPU time one listener spent in one tick: trainbench's own cost", ""},
};

}  // namespace

std::span<const MetricInfo> MetricCatalog() { return kCatalog; }

const MetricInfo* FindMetric(std::string_view name) {
  for (const auto& m : kCatalog) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace tb
