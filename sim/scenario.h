// The simulated GPU's world: one scenario file (JSON) describes the GPUs, their MIG
// layout, the processes using them, per-metric traces and the faults to inject. The fake
// NVML library, nvidia-smi and dcgmi all read it, so every tool reports the same GPU.
// See sim/README.md for the format. Values are a function of the time since the scenario
// started (TRAINBENCH_SIM_START, Unix seconds; else the scenario file's modification time),
// so separate processes agree on what the GPU is doing. Not thread-safe to load; const
// methods are safe from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tb::sim {

struct MetricSource {
  enum class Kind { kConstant, kSquare, kTrace } kind = Kind::kConstant;
  double value = 0;                        // constant
  double low = 0, high = 0, period_s = 1;  // square wave: `high` in the first half of each period
  std::string column;                      // trace column
  double scale = 1;                        // multiplies trace values (unit conversions)
};

struct MigInstance {
  std::string uuid;
  std::string profile;  // "3g.20gb"
  unsigned gpu_instance_id = 0;
  int compute_instance_id = 0;  // -1: a GPU instance without a compute instance (no device)
  bool created = false;         // by `nvidia-smi mig -cgi` (kept in the MIG state file), not the scenario
  uint64_t memory_total_bytes = 0;
  uint64_t memory_used_bytes = 0;
};

struct ProcessRule {
  std::string match;  // a process whose /proc/PID/comm equals this uses the GPU
  uint64_t memory_used_bytes = 0;
  bool memory_not_available = false;  // usedGpuMemory answers NVML_VALUE_NOT_AVAILABLE
  unsigned sm_util_percent = 0;
  // 0 % SM for this long after the process started: a PyTorch process is listed with its
  // CUDA context before its first kernel (the H200 showed a run at 0 % for seconds).
  double idle_first_s = 0;
};

// Where an AMD processor sits (scenario key "amd_gpus"; sim/README.md): its socket, its
// place among the socket's processors, and what its device reports.
struct AmdProcessor {
  unsigned socket = 0, partition = 0, partitions = 1;
  std::string compute_partition = "SPX", memory_partition = "NPS1";  // "N/A" on a part without them
  bool reports_power = true;        // false: power 0xFFFF and no energy counter (odd die, later partitions)
  bool average_power = false;       // MI200s report the average socket power, MI300s the current
  int energy_wrap_bits = 64;        // the accumulator wraps at 2^bits counts
  double energy_counter_scale = 1;  // a broken counter counts this times the true energy
};

struct Gpu {
  std::string name, uuid, pci_bus_id;
  uint64_t memory_total_bytes = 0;
  std::map<std::string, MetricSource> metrics;  // keys: see sim/README.md
  std::set<std::string> unsupported;            // metric keys the GPU does not support
  double lost_after_s = -1;                     // falls off the bus this long after start
  int call_delay_us = 0;                        // each NVML call on it takes this long (waiting)
  int pcie_call_ms = 0;                         // each PCIe throughput call blocks this long (NVIDIA: 20 ms)
  bool no_permission = false;                   // its handle answers NVML_ERROR_NO_PERMISSION (cgroup)
  uint64_t memory_reserved_bytes = 0;           // what the driver reserves (v1 `used` includes it)
  std::string mig_mode = "Disabled";            // "Enabled", "Disabled", or "[N/A]" (no MIG on this GPU)
  std::vector<MigInstance> mig;
  std::vector<ProcessRule> processes;
  // AMD's: one processor of amdsmi (a whole GPU, a die, or a compute partition).
  AmdProcessor amd;
};

// A MIG GPU instance profile of the A100 40GB (NVIDIA's MIG user guide): its name, GPU
// instance profile id, compute and memory slices, memory, and the compute instance
// profile id of a compute instance spanning the whole GPU instance.
struct MigProfile {
  const char* name;
  unsigned id, compute_slices, memory_slices, memory_mib, ci_profile_id;
};
// By name ("3g.20gb") or id ("9"); null when there is no such profile.
const MigProfile* FindMigProfile(const std::string& name_or_id);

// The CPU time each NVML call costs its caller, as timed on a real H200 (driver 580; see
// docs/GPU.md): the calls spin for it, so a listener's CPU time is what a real driver
// charges. Scenario key "nvml_cpu_us": {"energy", "process_utilization", "pcie", "init",
// "other"}, each defaulting to the H200's figure.
struct NvmlCpuCost {
  int energy_us = 3850;               // nvmlDeviceGetTotalEnergyConsumption
  int process_utilization_us = 2200;  // nvmlDeviceGetProcessUtilization
  int pcie_us = 700;                  // nvmlDeviceGetPcieThroughput (besides its 20 ms wait)
  int init_us = 5000;                 // nvmlInit
  int other_us = 4;                   // utilization, memory, power, clocks, process lists...
};

// A process on a GPU as NVML sees it: a client of a rule, or the MPS server.
struct GpuProcess {
  pid_t pid = 0;                      // the host PID NVML gives
  const ProcessRule* rule = nullptr;  // null for the MPS server
  bool mps_client = false;            // connected through a running MPS control daemon
  uint64_t memory_bytes = 0;
  unsigned sm_util_percent = 0;
};
// What NVML lists for the MPS server (nvidia-cuda-mps-server, "nvidia-cuda-mps" in
// /proc/PID/comm): 69 MB on the H200.
inline constexpr uint64_t kMpsServerMemoryBytes = 69206016;

struct Scenario {
  std::string driver_version = "535.104.05";
  int cuda_driver_version = 12020;
  std::vector<Gpu> gpus;
  std::vector<Gpu> amd;                              // AMD SMI's processors, in its enumeration order
  std::string amdsmi_version = "24.7.0";             // the library's (ROCm 6.3's): YEAR.MAJOR.MINOR
  std::map<std::string, std::vector<double>> trace;  // column -> values at 1 Hz
  bool dcgm_host_engine = true;                      // false: dcgmi cannot connect
  int dcgm_max_profiling_fields = 100;               // more than this: "Error setting watches"
  bool tool_garbage = false;                         // the tools print one malformed line first
  int nvml_init_ms = 0;                              // nvmlInit waits this long (the driver waking)
  NvmlCpuCost cpu_cost;
  // NVML gives host PIDs: with this set, trainbench runs "in a container" whose PIDs are
  // this much below the host's, so every PID NVML lists is this much above the one in /proc.
  long host_pid_offset = 0;
  double start_s = 0;  // Unix seconds the scenario started at
  std::string path;    // the scenario file

  // MIG instances created by the simulated nvidia-smi live in PATH.mig (one line each:
  // gpu gi ci profile uuid), so NVML and every tool see them; PATH.mig.log records each
  // `nvidia-smi mig` command with its outcome.
  std::string MigStateFile() const { return path + ".mig"; }

  // Loads the file named by TRAINBENCH_SIM_SCENARIO. Empty error string on success.
  static std::optional<Scenario> Load(std::string* error);
  static std::optional<Scenario> LoadFile(const std::string& path, std::string* error);

  double Elapsed() const;  // seconds since start
  bool Lost(const Gpu& gpu) const;
  // The value of a metric now; nullopt when the GPU does not support it or it has none.
  std::optional<double> Value(const Gpu& gpu, const std::string& key) const;
  // The value of a metric `seconds_ago` before now (for counters integrated over time).
  std::optional<double> ValueAt(const Gpu& gpu, const std::string& key, double elapsed) const;
  // Energy used since start in millijoules: the "energy_mj" metric, else power integrated.
  std::optional<double> EnergyMillijoules(const Gpu& gpu) const;
  // Live processes matching the GPU's rules, and under MPS (a rule's process whose
  // CUDA_MPS_PIPE_DIRECTORY holds a running control daemon is its client) the MPS server
  // first, with the clients' SM utilization as its own (NVML cannot tell them apart).
  // Only processes started with this scenario count (see OnThisMachine).
  std::vector<GpuProcess> Processes(const Gpu& gpu) const;
  bool OnThisMachine(long pid) const;
  // The processes on AMD processor `index` (its rule's, whose ROCR_VISIBLE_DEVICES,
  // HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES name the index, or which set none) with the
  // engine time each has spent: its rule's percent of its age, after its idle start.
  struct AmdProcess {
    pid_t pid;
    uint64_t memory_bytes;
    uint64_t engine_ns;
    double busy_percent;  // its rule's percent now (0 during its idle start)
  };
  std::vector<AmdProcess> AmdProcesses(size_t index) const;
};

// Joins the simulator's process scanner thread (see Processes): nvmlShutdown calls it
// before the library can be unloaded.
void StopProcessScanner();

}  // namespace tb::sim
