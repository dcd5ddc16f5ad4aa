// NVIDIA Jetson boards: their power rails and GPU, read from sysfs by the `jetson` listener
// or from `tegrastats` by the `tegrastats` listener (its fallback where sysfs is closed).
//
// Rails: the board's INA3221 monitors, /sys/bus/i2c/devices/*/hwmon/hwmon*/in{N}_label with
// in{N}_input (mV) and curr{N}_input (mA) on current kernels, or on older JetPacks
// /sys/bus/i2c/devices/*/iio:device*/rail_name_{N} with in_power{N}_input (mW); the
// unconnected ("NC") and "sum of shunt voltages" channels are left out. The GPU: its devfreq
// node (a /sys/class/devfreq entry named for the GPU: gpu-gpc-0, 17000000.ga10b, ...),
// device/load in per mille and cur_freq in Hz.
//
// What is recorded each tick: host.rail.power_watts{rail}, the board's input power as
// host.power.draw_watts{domain=board} (VDD_IN or POM_5V_IN where the board has one, else the
// sum of its rails, as jtop takes it) and its energy host.energy.consumed_joules{domain=board}
// (Jetson has no energy counter: power integrated between ticks), the GPU's load, clock and
// rail power under gpu=0 (gpu.utilization.gpu_ratio, gpu.clock.sm_hertz,
// gpu.power.draw_watts: on Orin the rail is VDD_GPU_SOC, the GPU with the SoC), the EMC (the
// memory controller CPU and GPU share) as the GPU's memory clock and memory utilization
// (gpu.clock.memory_hertz from debugfs' bpmp clock, root only, or tegrastats' EMC_FREQ;
// gpu.utilization.memory_ratio from tegrastats only), each core's clock as
// host.cpu.clock_hertz{cpu} (cpufreq's scaling_cur_freq, or tegrastats' CPU list), and for a
// run its energy proc.gpu.energy_joules{gpu=0}: the GPU rail's integrated power, an equal
// part per run started on the board (Jetson's GPU lists no processes to tell runs apart).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collect/collector.h"
#include "platform/host_files.h"

namespace tb {

struct JetsonRail {
  std::string name;                        // "VDD_GPU_SOC"
  std::string voltage_path, current_path;  // mV and mA (hwmon)
  std::string power_path;                  // mW (older iio)
};

struct JetsonBoard {
  std::vector<JetsonRail> rails;
  std::string gpu_devfreq;  // "/sys/class/devfreq/17000000.ga10b"; empty when not found
  unsigned cpus = 0;        // cores with a cpufreq directory: cpu0 .. cpuN-1
  std::string absent;       // why this is no Jetson: "no INA3221 rails under /sys/bus/i2c/devices"
};

JetsonBoard FindJetsonBoard(const HostFiles& files);

// One reading of a board, however it was read.
struct JetsonReading {
  std::vector<std::pair<std::string, double>> rails_mw;
  std::optional<double> gpu_load_ratio, gpu_hertz;
  std::optional<double> emc_load_ratio, emc_hertz;  // the memory controller the GPU shares
  std::vector<std::optional<double>> cpu_hertz;     // per core; absent while it is off
};

std::unique_ptr<Collector> MakeJetsonCollector(const HostFiles& files, unsigned runs_sharing);
// `tegrastats --interval MS`, kept running; a line a tick is recorded.
std::unique_ptr<Collector> MakeTegrastatsCollector(int64_t interval_ms, unsigned runs_sharing);

// `nvpmodel -q`'s power mode ("MAXN", 0): what Jetson studies compare; nullopt where there is
// no nvpmodel or it says nothing readable. Its first line is "NV Power Mode: NAME", the
// next the mode's number (warnings may come first).
std::optional<std::pair<std::string, int>> ParseNvpmodelQuery(std::string_view output);
std::optional<std::pair<std::string, int>> JetsonPowerMode();

}  // namespace tb
