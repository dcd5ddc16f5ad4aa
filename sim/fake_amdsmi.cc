// The simulated AMD GPU's AMD SMI: a shared library (libamd_smi.so) with the C interface of
// ROCm's amdsmi (platform/amdsmi_abi.h), answering from the "amd_gpus" of the scenario in
// TRAINBENCH_SIM_SCENARIO. It implements the calls trainbench makes, as the real library
// answers them: power in W with 0xFFFF for what a device does not report (the odd die of an
// MI250X, the later partitions of an MI300X, the socket power an MI200 or MI300 lacks), the
// energy counter in counts of 15.3 uJ with a nanosecond timestamp (wrapping where the
// scenario says, wrong by a factor where it says), activity in percent, VRAM in MB, clocks
// in MHz, temperatures in degrees C, each process's engine time in nanoseconds, and on a
// partitioned GPU the metrics table's per-partition busy accumulators; calls
// before amdsmi_init answer AMDSMI_STATUS_NOT_INIT, unsupported ones NOT_SUPPORTED.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "platform/amdsmi_abi.h"
#include "sim/scenario.h"

namespace {

using tb::amdsmi::kInval;
using tb::amdsmi::kNotAvailable16;
using tb::amdsmi::kNotInit;
using tb::amdsmi::kNotSupported;
using tb::amdsmi::kOutOfResources;
using tb::amdsmi::kSuccess;
using tb::amdsmi::Status;
using tb::sim::Gpu;
using tb::sim::Scenario;

constexpr float kCounterResolutionUj = 15.3F;  // rocm_smi_lib's kEnergyCounterResolution

std::mutex g_mu;
std::unique_ptr<Scenario> g_scenario;
// Handles are addresses in these arrays: socket s is &g_sockets[s], processor i &g_processors[i].
std::vector<int> g_sockets, g_processors;

// Runs `fn(processor, index)` for a valid processor handle, under the lock.
template <typename Fn>
Status OnProcessor(void* handle, Fn fn) {
  std::lock_guard lock(g_mu);
  if (!g_scenario) return kNotInit;
  auto* p = static_cast<int*>(handle);
  if (g_processors.empty() || p < g_processors.data() || p >= g_processors.data() + g_processors.size())
    return kInval;
  size_t index = static_cast<size_t>(p - g_processors.data());
  return fn(g_scenario->amd[index], index);
}

void Copy(const std::string& text, char* out, size_t size) {
  std::strncpy(out, text.c_str(), size - 1);
  out[size - 1] = '\0';
}

// A metric of the processor; nullopt when unsupported or absent.
std::optional<double> Value(const Gpu& gpu, const char* key) { return g_scenario->Value(gpu, key); }

// The metrics table's accumulators, per socket and partition: the busy % summed over the
// firmware's 1 ms accumulation cycles since the library started, as of the socket's
// g_accumulated_ms.
std::map<std::pair<unsigned, unsigned>, double> g_busy_acc;
std::map<unsigned, double> g_accumulated_ms;

double MonotonicMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// A compute partition's busy %: its processes' percents, at most 100.
double PartitionBusy(size_t index) {
  double busy = 0;
  for (const Scenario::AmdProcess& p : g_scenario->AmdProcesses(index)) busy += p.busy_percent;
  return std::min(busy, 100.0);
}

// The table of a partitioned GPU (metrics v1.6): per partition its XCCs (8 on the socket)
// busy as its processes are; the fields it does not fill at their type's largest value.
void FillPartitionMetrics(const Gpu& gpu, tb::amdsmi::GpuMetrics& m) {
  std::memset(&m, 0xFF, sizeof(m));
  m.structure_size = sizeof(m);
  m.format_revision = 1;
  m.content_revision = 6;
  double now = MonotonicMs();
  double& last = g_accumulated_ms[gpu.amd.socket];
  double cycles = last == 0 ? 0 : now - last;
  last = now;
  m.accumulation_counter = static_cast<uint64_t>(now);
  m.num_partition = static_cast<uint16_t>(gpu.amd.partitions);
  unsigned xccs = tb::amdsmi::kMaxXcc / gpu.amd.partitions;
  for (size_t i = 0; i < g_scenario->amd.size(); ++i) {
    const tb::sim::AmdProcessor& other = g_scenario->amd[i].amd;
    if (other.socket != gpu.amd.socket || other.partition >= tb::amdsmi::kMaxXcp) continue;
    double busy = PartitionBusy(i);
    double& acc = g_busy_acc[{other.socket, other.partition}];
    acc += busy * cycles;
    for (unsigned x = 0; x < xccs; ++x) {
      m.xcp_stats[other.partition].gfx_busy_inst[x] = static_cast<uint32_t>(std::lround(busy));
      m.xcp_stats[other.partition].gfx_busy_acc[x] = static_cast<uint64_t>(acc);
    }
  }
}

}  // namespace

extern "C" {

// Not part of AMD SMI: lets trainbench tell that this is the simulated GPU.
const char* trainbench_simulated_gpu(void) { return "trainbench simulated AMD GPU"; }

Status amdsmi_init(uint64_t init_flags) {
  std::lock_guard lock(g_mu);
  if ((init_flags & tb::amdsmi::kInitAmdGpus) == 0) return kNotSupported;
  if (g_scenario) return kSuccess;
  std::string error;
  std::optional<Scenario> s = Scenario::Load(&error);
  if (!s) return tb::amdsmi::kNoData;
  g_scenario = std::make_unique<Scenario>(std::move(*s));
  g_processors.assign(g_scenario->amd.size(), 0);
  g_sockets.assign(g_scenario->amd.empty() ? 0 : g_scenario->amd.back().amd.socket + 1, 0);
  return kSuccess;
}

Status amdsmi_shut_down() {
  std::lock_guard lock(g_mu);
  g_scenario.reset();
  tb::sim::StopProcessScanner();
  return kSuccess;
}

Status amdsmi_status_code_to_string(Status status, const char** status_string) {
  if (status_string == nullptr) return kInval;
  switch (status) {
    case kSuccess:
      *status_string = "AMDSMI_STATUS_SUCCESS: Call succeeded";
      break;
    case kInval:
      *status_string = "AMDSMI_STATUS_INVAL: Invalid parameters";
      break;
    case kNotSupported:
      *status_string = "AMDSMI_STATUS_NOT_SUPPORTED: Command not supported";
      break;
    case kNotInit:
      *status_string = "AMDSMI_STATUS_NOT_INIT: Device not initialized";
      break;
    case kOutOfResources:
      *status_string = "AMDSMI_STATUS_OUT_OF_RESOURCES: Not enough memory";
      break;
    default:
      *status_string = "AMDSMI_STATUS_UNKNOWN_ERROR: An unknown error occurred";
  }
  return kSuccess;
}

Status amdsmi_get_socket_handles(uint32_t* socket_count, void** socket_handles) {
  std::lock_guard lock(g_mu);
  if (!g_scenario) return kNotInit;
  if (socket_count == nullptr) return kInval;
  if (socket_handles == nullptr) {
    *socket_count = static_cast<uint32_t>(g_sockets.size());
    return kSuccess;
  }
  *socket_count = std::min(*socket_count, static_cast<uint32_t>(g_sockets.size()));
  for (uint32_t i = 0; i < *socket_count; ++i) socket_handles[i] = &g_sockets[i];
  return kSuccess;
}

Status amdsmi_get_processor_handles(void* socket_handle, uint32_t* processor_count,
                                    void** processor_handles) {
  std::lock_guard lock(g_mu);
  if (!g_scenario) return kNotInit;
  auto* s = static_cast<int*>(socket_handle);
  if (processor_count == nullptr || g_sockets.empty() || s < g_sockets.data() ||
      s >= g_sockets.data() + g_sockets.size())
    return kInval;
  unsigned socket = static_cast<unsigned>(s - g_sockets.data());
  std::vector<void*> found;
  for (size_t i = 0; i < g_scenario->amd.size(); ++i)
    if (g_scenario->amd[i].amd.socket == socket) found.push_back(&g_processors[i]);
  if (processor_handles == nullptr) {
    *processor_count = static_cast<uint32_t>(found.size());
    return kSuccess;
  }
  *processor_count = std::min(*processor_count, static_cast<uint32_t>(found.size()));
  for (uint32_t i = 0; i < *processor_count; ++i) processor_handles[i] = found[i];
  return kSuccess;
}

Status amdsmi_get_gpu_asic_info(void* handle, tb::amdsmi::AsicInfo* info) {
  if (info == nullptr) return kInval;
  return OnProcessor(handle, [&](const Gpu& gpu, size_t) {
    *info = {};
    Copy(gpu.name, info->market_name, sizeof(info->market_name));
    Copy("Advanced Micro Devices Inc. [AMD/ATI]", info->vendor_name, sizeof(info->vendor_name));
    info->vendor_id = 0x1002;
    info->oam_id = 0xFFFF;
    return kSuccess;
  });
}

Status amdsmi_get_gpu_device_uuid(void* handle, unsigned int* uuid_length, char* uuid) {
  if (uuid_length == nullptr || uuid == nullptr) return kInval;
  return OnProcessor(handle, [&](const Gpu& gpu, size_t) {
    if (*uuid_length < gpu.uuid.size() + 1) return tb::amdsmi::Status{41};  // AMDSMI_STATUS_INSUFFICIENT_SIZE
    Copy(gpu.uuid, uuid, *uuid_length);
    *uuid_length = static_cast<unsigned>(gpu.uuid.size());
    return kSuccess;
  });
}

Status amdsmi_get_gpu_compute_partition(void* handle, char* compute_partition, uint32_t len) {
  if (compute_partition == nullptr || len == 0) return kInval;
  return OnProcessor(handle, [&](const Gpu& gpu, size_t) {
    if (gpu.amd.compute_partition == "N/A") return kNotSupported;
    Copy(gpu.amd.compute_partition, compute_partition, len);
    return kSuccess;
  });
}

Status amdsmi_get_gpu_memory_partition(void* handle, char* memory_partition, uint32_t len) {
  if (memory_partition == nullptr || len == 0) return kInval;
  return OnProcessor(handle, [&](const Gpu& gpu, size_t) {
    if (gpu.amd.memory_partition == "N/A") return kNotSupported;
    Copy(gpu.amd.memory_partition, memory_partition, len);
    return kSuccess;
  });
}

// As the real library does: every field 0xFFFF first, then what the metrics table has.
Status amdsmi_get_power_info(void* handle, tb::amdsmi::PowerInfo* info) {
  if (info == nullptr) return kInval;
  return OnProcessor(handle, [&](const Gpu& gpu, size_t) {
    *info = {};
    info->current_socket_power = info->average_socket_power = kNotAvailable16;
    info->gfx_voltage = info->soc_voltage = info->mem_voltage = info->power_limit = kNotAvailable16;
    std::optional<double> watts = gpu.amd.reports_power ? Value(gpu, "power_w") : std::nullopt;
    if (watts)
      (gpu.amd.average_power ? info->average_socket_power : info->current_socket_power) =
          static_cast<uint32_t>(std::lround(*watts));
    return kSuccess;
  });
}

Status amdsmi_get_energy_count(void* handle, uint64_t* energy_accumulator, float* counter_resolution,
                               uint64_t* timestamp) {
  if (energy_accumulator == nullptr || counter_resolution == nullptr || timestamp == nullptr) return kInval;
  return OnProcessor(handle, [&](const Gpu& gpu, size_t) {
    std::optional<double> mj = gpu.amd.reports_power ? g_scenario->EnergyMillijoules(gpu) : std::nullopt;
    if (!mj) return kNotSupported;
    long double counts =
        static_cast<long double>(*mj) * 1000 * gpu.amd.energy_counter_scale / kCounterResolutionUj;
    uint64_t value = static_cast<uint64_t>(counts);
    if (gpu.amd.energy_wrap_bits < 64) value &= (uint64_t{1} << gpu.amd.energy_wrap_bits) - 1;
    *energy_accumulator = value;
    *counter_resolution = kCounterResolutionUj;
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *timestamp = static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
    return kSuccess;
  });
}

Status amdsmi_get_gpu_activity(void* handle, tb::amdsmi::EngineUsage* info) {
  if (info == nullptr) return kInval;
  return OnProcessor(handle, [&](const Gpu& gpu, size_t) {
    *info = {};
    auto percent = [&](const char* key) {
      std::optional<double> v = Value(gpu, key);
      return v ? static_cast<uint32_t>(std::lround(*v)) : kNotAvailable16;
    };
    info->gfx_activity = percent("util_gpu_pct");
    info->umc_activity = percent("util_mem_pct");
    info->mm_activity = percent("util_mm_pct");
    return kSuccess;
  });
}

Status amdsmi_get_gpu_vram_usage(void* handle, tb::amdsmi::VramUsage* info) {
  if (info == nullptr) return kInval;
  return OnProcessor(handle, [&](const Gpu& gpu, size_t) {
    *info = {};
    info->vram_total = static_cast<uint32_t>(gpu.memory_total_bytes / 1048576);
    info->vram_used = static_cast<uint32_t>(std::lround(Value(gpu, "mem_used_mib").value_or(0)));
    return kSuccess;
  });
}

Status amdsmi_get_clock_info(void* handle, tb::amdsmi::ClockType clk_type, tb::amdsmi::ClockInfo* info) {
  if (info == nullptr) return kInval;
  return OnProcessor(handle, [&](const Gpu& gpu, size_t) {
    const char* key = clk_type == tb::amdsmi::kClockGfx   ? "clock_sm_mhz"
                      : clk_type == tb::amdsmi::kClockMem ? "clock_mem_mhz"
                                                          : nullptr;
    std::optional<double> mhz = key != nullptr ? Value(gpu, key) : std::nullopt;
    if (!mhz) return kNotSupported;
    *info = {};
    info->clk = info->max_clk = static_cast<uint32_t>(std::lround(*mhz));
    return kSuccess;
  });
}

Status amdsmi_get_temp_metric(void* handle, tb::amdsmi::TemperatureType sensor_type,
                              tb::amdsmi::TemperatureMetric metric, int64_t* temperature) {
  if (temperature == nullptr || metric != tb::amdsmi::kTemperatureCurrent) return kInval;
  return OnProcessor(handle, [&](const Gpu& gpu, size_t) {
    const char* key = sensor_type == tb::amdsmi::kTemperatureEdge      ? "temp_c"
                      : sensor_type == tb::amdsmi::kTemperatureHotspot ? "temp_hotspot_c"
                      : sensor_type == tb::amdsmi::kTemperatureVram    ? "temp_mem_c"
                                                                       : nullptr;
    std::optional<double> c = key != nullptr ? Value(gpu, key) : std::nullopt;
    if (!c) return kNotSupported;
    *temperature = std::lround(*c);
    return kSuccess;
  });
}

// The scenario's "amdsmi_version" (ROCm 6.3's 24.7.0 unless it says).
Status amdsmi_get_lib_version(tb::amdsmi::Version* version) {
  if (version == nullptr) return kInval;
  std::lock_guard lock(g_mu);
  if (!g_scenario) return kNotInit;
  static std::string build;
  build = g_scenario->amdsmi_version;
  *version = {};
  std::sscanf(build.c_str(), "%u.%u.%u", &version->year, &version->major, &version->minor);
  version->build = build.c_str();
  return kSuccess;
}

// Partitioned GPUs (compute partition SPX..CPX) have the per-partition table of an MI300;
// others (an MI250X's dies, "N/A") answer NOT_SUPPORTED here.
Status amdsmi_get_gpu_metrics_info(void* handle, tb::amdsmi::GpuMetrics* metrics) {
  if (metrics == nullptr) return kInval;
  return OnProcessor(handle, [&](const Gpu& gpu, size_t) {
    if (gpu.amd.compute_partition == "N/A") return kNotSupported;
    FillPartitionMetrics(gpu, *metrics);
    return kSuccess;
  });
}

// Asked with 0 (or a short list), answers how many there are; OUT_OF_RESOURCES when the
// list given was too short, as the real library does.
Status amdsmi_get_gpu_process_list(void* handle, uint32_t* max_processes, tb::amdsmi::ProcessInfo* list) {
  if (max_processes == nullptr) return kInval;
  return OnProcessor(handle, [&](const Gpu&, size_t index) {
    std::vector<Scenario::AmdProcess> procs = g_scenario->AmdProcesses(index);
    uint32_t room = *max_processes;
    *max_processes = static_cast<uint32_t>(procs.size());
    if (room == 0 || list == nullptr) return kSuccess;
    for (uint32_t i = 0; i < room && i < procs.size(); ++i) {
      list[i] = {};
      Copy("python3", list[i].name, sizeof(list[i].name));
      list[i].pid = static_cast<uint32_t>(procs[i].pid);
      list[i].mem = list[i].memory_usage.vram_mem = procs[i].memory_bytes;
      list[i].engine_usage.gfx = procs[i].engine_ns;
    }
    return room >= procs.size() ? kSuccess : kOutOfResources;
  });
}

}  // extern "C"
