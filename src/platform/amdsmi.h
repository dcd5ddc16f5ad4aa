// AMD SMI, ROCm's management library for AMD Instinct GPUs, loaded at run time with dlopen
// so that trainbench builds and runs on machines without one (as NVML is: platform/nvml.h).
// The types and calls are platform/amdsmi_abi.h's. The library is chosen by
// TRAINBENCH_AMDSMI_LIBRARY (the simulated AMD GPU in sim/ sets it), else libamd_smi.so on
// the loader's path, else ROCm's /opt/rocm/lib/libamd_smi.so. Calls on one AmdSmi are
// serialized by the caller (the sampler).
//
// A processor is what amdsmi enumerates and ROCm's runtimes count as a device: a whole GPU,
// one die of a dual-die MI250X, or one compute partition of an MI300X (CPX mode makes 8 of
// one GPU); trainbench's AMD GPU indices are amdsmi's enumeration order, as amd-smi lists
// them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "platform/amdsmi_abi.h"

namespace tb {

namespace amdsmi {
// The calls trainbench uses (every one exists in ROCm 6.0 and later).
#define TB_AMDSMI_FUNCTIONS(X)        \
  X(amdsmi_init)                      \
  X(amdsmi_shut_down)                 \
  X(amdsmi_status_code_to_string)     \
  X(amdsmi_get_socket_handles)        \
  X(amdsmi_get_processor_handles)     \
  X(amdsmi_get_gpu_asic_info)         \
  X(amdsmi_get_gpu_device_uuid)       \
  X(amdsmi_get_gpu_compute_partition) \
  X(amdsmi_get_gpu_memory_partition)  \
  X(amdsmi_get_power_info)            \
  X(amdsmi_get_energy_count)          \
  X(amdsmi_get_gpu_activity)          \
  X(amdsmi_get_gpu_vram_usage)        \
  X(amdsmi_get_clock_info)            \
  X(amdsmi_get_temp_metric)           \
  X(amdsmi_get_gpu_process_list)      \
  X(amdsmi_get_lib_version)           \
  X(amdsmi_get_gpu_metrics_info)
struct Functions {
#define TB_AMDSMI_POINTER(name) decltype(&::name) name = nullptr;
  TB_AMDSMI_FUNCTIONS(TB_AMDSMI_POINTER)
#undef TB_AMDSMI_POINTER
};
}  // namespace amdsmi

class AmdSmi {
 public:
  // Loads and initializes AMD SMI for GPUs. Fails with a message naming the library and
  // what to do.
  static Result<std::unique_ptr<AmdSmi>> Open();
  ~AmdSmi();
  AmdSmi(const AmdSmi&) = delete;
  AmdSmi& operator=(const AmdSmi&) = delete;

  const amdsmi::Functions& fn() const { return fn_; }
  std::string Error(amdsmi::Status code) const;
  // True for the simulated AMD GPU of sim/ (it exports trainbench_simulated_gpu).
  bool simulated() const { return simulated_; }
  const std::string& library() const { return path_; }
  // The library's version, "24.7.0"; and whether its metrics table is laid out as
  // amdsmi::GpuMetrics declares (that version's year and major), so that it may be read.
  const std::string& version() const { return version_; }
  bool metrics_layout_known() const { return metrics_layout_known_; }

  struct Processor {
    amdsmi::ProcessorHandle handle = nullptr;
    unsigned index = 0;  // amdsmi's enumeration order over every socket
    unsigned socket = 0;
    unsigned partition = 0;   // its place among its socket's processors
    unsigned partitions = 1;  // processors on its socket
    std::string name, uuid;
    std::string compute_partition, memory_partition;  // "CPX", "NPS1"; empty when not reported
    uint64_t memory_total_bytes = 0;
  };
  // Every GPU processor, socket by socket. Fails only when the library cannot list them.
  Result<std::vector<Processor>> Processors() const;

 private:
  AmdSmi() = default;
  void* library_ = nullptr;
  bool simulated_ = false;
  bool metrics_layout_known_ = false;
  std::string path_, version_;
  amdsmi::Functions fn_;
};

}  // namespace tb
