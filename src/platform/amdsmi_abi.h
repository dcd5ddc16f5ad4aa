// AMD SMI's C interface as ROCm's amdsmi.h declares it (ROCm/amdsmi, include/amd_smi/amdsmi.h,
// ROCm 6.3): the types, codes and calls trainbench uses, said once, with the structures
// laid out as the library lays them out (reserved words included). trainbench never links
// these symbols (platform/amdsmi.h loads them with dlsym into pointers of these types); the
// simulated AMD GPU (sim/fake_amdsmi.cc) defines them, so a definition that differs from
// AMD's signature does not compile.
//
// Units, as amdsmi.h and its source say: power in W and voltages in mV (a field the device
// does not report is 0xFFFF), activity in percent, VRAM in MB, clocks in MHz, temperatures
// in degrees C, the energy counter a count of `counter_resolution` microjoules (15.3 on
// every ASIC so far) with a nanosecond timestamp, a process's engine usage the nanoseconds
// it has spent on the engine since it opened the device (read from /proc/PID/fdinfo).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tb::amdsmi {

using Status = uint32_t;  // amdsmi_status_t
inline constexpr Status kSuccess = 0;
inline constexpr Status kInval = 1;
inline constexpr Status kNotSupported = 2;
inline constexpr Status kNoPerm = 10;
inline constexpr Status kOutOfResources = 15;
inline constexpr Status kNotInit = 32;
inline constexpr Status kNoData = 40;

inline constexpr uint64_t kInitAmdGpus = 1U << 1;    // AMDSMI_INIT_AMD_GPUS
inline constexpr uint32_t kNotAvailable16 = 0xFFFF;  // a power or voltage field the device does not report

inline constexpr int kStringLength = 64;        // AMDSMI_MAX_STRING_LENGTH
inline constexpr int kNormalStringLength = 32;  // AMDSMI_NORMAL_STRING_LENGTH
inline constexpr int k256Length = 256;          // AMDSMI_256_LENGTH
inline constexpr int kUuidSize = 38;            // AMDSMI_GPU_UUID_SIZE

using ProcessorHandle = void*;  // amdsmi_processor_handle
using SocketHandle = void*;     // amdsmi_socket_handle

enum ClockType : int { kClockGfx = 0, kClockMem = 4 };  // AMDSMI_CLK_TYPE_SYS (= GFX), _MEM
enum TemperatureType : int {                            // amdsmi_temperature_type_t
  kTemperatureEdge = 0,
  kTemperatureHotspot = 1,
  kTemperatureVram = 2,
};
enum TemperatureMetric : int { kTemperatureCurrent = 0 };  // AMDSMI_TEMP_CURRENT

struct PowerInfo {  // amdsmi_power_info_t
  uint32_t current_socket_power;
  uint32_t average_socket_power;
  uint32_t gfx_voltage;
  uint32_t soc_voltage;
  uint32_t mem_voltage;
  uint32_t power_limit;
  uint32_t reserved[11];
};
struct EngineUsage {  // amdsmi_engine_usage_t
  uint32_t gfx_activity;
  uint32_t umc_activity;
  uint32_t mm_activity;
  uint32_t reserved[13];
};
struct VramUsage {  // amdsmi_vram_usage_t
  uint32_t vram_total;
  uint32_t vram_used;
  uint32_t reserved[2];
};
struct ClockInfo {  // amdsmi_clk_info_t
  uint32_t clk;
  uint32_t min_clk;
  uint32_t max_clk;
  uint8_t clk_locked;
  uint8_t clk_deep_sleep;
  uint32_t reserved[4];
};
struct ProcessInfo {  // amdsmi_proc_info_t
  char name[kNormalStringLength];
  uint32_t pid;
  uint64_t mem;
  struct {
    uint64_t gfx;
    uint64_t enc;
    uint32_t reserved[12];
  } engine_usage;
  struct {
    uint64_t gtt_mem;
    uint64_t cpu_mem;
    uint64_t vram_mem;
    uint32_t reserved[10];
  } memory_usage;
  char container_name[kNormalStringLength];
  uint32_t reserved[4];
};
struct AsicInfo {  // amdsmi_asic_info_t
  char market_name[k256Length];
  uint32_t vendor_id;
  char vendor_name[kStringLength];
  uint32_t subvendor_id;
  uint64_t device_id;
  uint32_t rev_id;
  char asic_serial[kNormalStringLength];
  uint32_t oam_id;
  uint32_t num_of_compute_units;
  uint64_t target_graphics_version;
  uint32_t reserved[15];
};

struct Version {  // amdsmi_version_t
  uint32_t year;
  uint32_t major;
  uint32_t minor;
  uint32_t release;
  const char* build;
};

// The device's metrics table (amdsmi_gpu_metrics_t, GPU metrics v1.6 as ROCm 6.3's library
// 24.7 lays it out: its layout changes between library versions, so it is read only from
// that version, kLayoutYear.kLayoutMajor). Fields the device does not fill hold their
// type's largest value. Per compute partition (XCP) its XCCs' instantaneous GFX busy % and
// their accumulated busy %, which grows by the busy % at each of the firmware's
// accumulation cycles (`accumulation_counter`).
inline constexpr uint32_t kLayoutYear = 24, kLayoutMajor = 7;
inline constexpr int kMaxXcc = 8, kMaxXcp = 8;  // AMDSMI_MAX_NUM_XCC, AMDSMI_MAX_NUM_XCP
struct XcpMetrics {                             // amdsmi_gpu_xcp_metrics_t
  uint32_t gfx_busy_inst[kMaxXcc];
  uint16_t jpeg_busy[32];
  uint16_t vcn_busy[4];
  uint64_t gfx_busy_acc[kMaxXcc];
};
struct GpuMetrics {  // amdsmi_gpu_metrics_t
  uint16_t structure_size;
  uint8_t format_revision, content_revision;
  uint16_t temperature_edge, temperature_hotspot, temperature_mem, temperature_vrgfx, temperature_vrsoc,
      temperature_vrmem;
  uint16_t average_gfx_activity, average_umc_activity, average_mm_activity;
  uint16_t average_socket_power;
  uint64_t energy_accumulator;
  uint64_t system_clock_counter;
  uint16_t average_clocks[7];  // gfx, soc, u, vclk0, dclk0, vclk1, dclk1
  uint16_t current_clocks[7];
  uint32_t throttle_status;
  uint16_t current_fan_speed;
  uint16_t pcie_link_width, pcie_link_speed;
  uint32_t gfx_activity_acc, mem_activity_acc;
  uint16_t temperature_hbm[4];
  uint64_t firmware_timestamp;
  uint16_t voltage_soc, voltage_gfx, voltage_mem;
  uint64_t indep_throttle_status;
  uint16_t current_socket_power;
  uint16_t vcn_activity[4];
  uint32_t gfxclk_lock_status;
  uint16_t xgmi_link_width, xgmi_link_speed;
  uint64_t pcie_bandwidth_acc, pcie_bandwidth_inst, pcie_l0_to_recov_count_acc, pcie_replay_count_acc,
      pcie_replay_rover_count_acc;
  uint64_t xgmi_read_data_acc[8], xgmi_write_data_acc[8];
  uint16_t current_gfxclks[8], current_socclks[4], current_vclk0s[4], current_dclk0s[4];
  uint16_t jpeg_activity[32];
  uint32_t pcie_nak_sent_count_acc, pcie_nak_rcvd_count_acc;
  uint64_t accumulation_counter;
  uint64_t prochot_residency_acc, ppt_residency_acc, socket_thm_residency_acc, vr_thm_residency_acc,
      hbm_thm_residency_acc;
  uint16_t num_partition;
  XcpMetrics xcp_stats[kMaxXcp];
  uint32_t pcie_lc_perf_other_end_recovery;
};
// As AMD's header compiles on LP64 Linux (x86-64 and arm64): its size and where the fields
// trainbench reads lie.
static_assert(sizeof(XcpMetrics) == 168);
static_assert(sizeof(GpuMetrics) == 1832);
static_assert(offsetof(GpuMetrics, current_socket_power) == 120);
static_assert(offsetof(GpuMetrics, accumulation_counter) == 424);
static_assert(offsetof(GpuMetrics, num_partition) == 472);
static_assert(offsetof(GpuMetrics, xcp_stats) == 480);

}  // namespace tb::amdsmi

extern "C" {
tb::amdsmi::Status amdsmi_get_lib_version(tb::amdsmi::Version* version);
tb::amdsmi::Status amdsmi_get_gpu_metrics_info(tb::amdsmi::ProcessorHandle processor_handle,
                                               tb::amdsmi::GpuMetrics* metrics);
tb::amdsmi::Status amdsmi_init(uint64_t init_flags);
tb::amdsmi::Status amdsmi_shut_down();
tb::amdsmi::Status amdsmi_status_code_to_string(tb::amdsmi::Status status, const char** status_string);
tb::amdsmi::Status amdsmi_get_socket_handles(uint32_t* socket_count,
                                             tb::amdsmi::SocketHandle* socket_handles);
tb::amdsmi::Status amdsmi_get_processor_handles(tb::amdsmi::SocketHandle socket_handle,
                                                uint32_t* processor_count,
                                                tb::amdsmi::ProcessorHandle* processor_handles);
tb::amdsmi::Status amdsmi_get_gpu_asic_info(tb::amdsmi::ProcessorHandle processor_handle,
                                            tb::amdsmi::AsicInfo* info);
tb::amdsmi::Status amdsmi_get_gpu_device_uuid(tb::amdsmi::ProcessorHandle processor_handle,
                                              unsigned int* uuid_length, char* uuid);
tb::amdsmi::Status amdsmi_get_gpu_compute_partition(tb::amdsmi::ProcessorHandle processor_handle,
                                                    char* compute_partition, uint32_t len);
tb::amdsmi::Status amdsmi_get_gpu_memory_partition(tb::amdsmi::ProcessorHandle processor_handle,
                                                   char* memory_partition, uint32_t len);
tb::amdsmi::Status amdsmi_get_power_info(tb::amdsmi::ProcessorHandle processor_handle,
                                         tb::amdsmi::PowerInfo* info);
tb::amdsmi::Status amdsmi_get_energy_count(tb::amdsmi::ProcessorHandle processor_handle,
                                           uint64_t* energy_accumulator, float* counter_resolution,
                                           uint64_t* timestamp);
tb::amdsmi::Status amdsmi_get_gpu_activity(tb::amdsmi::ProcessorHandle processor_handle,
                                           tb::amdsmi::EngineUsage* info);
tb::amdsmi::Status amdsmi_get_gpu_vram_usage(tb::amdsmi::ProcessorHandle processor_handle,
                                             tb::amdsmi::VramUsage* info);
tb::amdsmi::Status amdsmi_get_clock_info(tb::amdsmi::ProcessorHandle processor_handle,
                                         tb::amdsmi::ClockType clk_type, tb::amdsmi::ClockInfo* info);
tb::amdsmi::Status amdsmi_get_temp_metric(tb::amdsmi::ProcessorHandle processor_handle,
                                          tb::amdsmi::TemperatureType sensor_type,
                                          tb::amdsmi::TemperatureMetric metric, int64_t* temperature);
tb::amdsmi::Status amdsmi_get_gpu_process_list(tb::amdsmi::ProcessorHandle processor_handle,
                                               uint32_t* max_processes, tb::amdsmi::ProcessInfo* list);
}
