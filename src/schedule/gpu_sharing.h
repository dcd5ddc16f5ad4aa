// How the scheduler shares GPUs between the runs of a workload, through NVIDIA's own
// tools: the GPUs as nvidia-smi lists them (index, UUID, MIG mode, MIG devices), MIG GPU
// and compute instances created for a workload and destroyed after it (`nvidia-smi mig`),
// an MPS control daemon per workload (`nvidia-cuda-mps-control`), and pausing DCGM's
// profiling while Nsight tools hold the GPU's counters (`dcgmi profile --pause`).
// Every helper that changes the GPU undoes it in its destructor, so a workload that
// fails or is interrupted leaves the GPU as it found it. Not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tb {

struct SmiGpu {
  unsigned index = 0;
  std::string uuid;
  std::string mig_mode;  // "Enabled", "Disabled", "[N/A]"
  struct MigDevice {
    std::string profile;  // "2g.10gb"
    std::string uuid;     // "MIG-..."
  };
  std::vector<MigDevice> mig;
};

// `nvidia-smi --query-gpu=index,uuid,mig.mode.current --format=csv,noheader` and
// `nvidia-smi -L`; where there is no nvidia-smi, AMD SMI's GPUs. Fails with a message that
// says what to do when neither is there or nvidia-smi cannot talk to the driver.
Result<std::vector<SmiGpu>> ListGpus();
// The parsers behind it (for tests).
std::vector<SmiGpu> ParseGpuQuery(std::string_view csv);
void AddMigDevices(std::string_view list_output, std::vector<SmiGpu>& gpus);

// Whether this process may create and destroy MIG instances: root, or granted NVIDIA's
// MIG configuration capability.
bool MayConfigureMig();
// Whether `profile` is written as a MIG GPU instance profile: 3g.20gb, 1g.10gb+me.
bool IsMigProfile(std::string_view profile);

// GPU and compute instances created on one GPU for a workload.
class MigInstances {
 public:
  // Creates one instance per profile on GPU `gpu` (`nvidia-smi mig -cgi ... -C`) and
  // returns their MIG UUIDs in the order of `profiles`. On failure nothing stays created.
  Result<std::vector<std::string>> Create(unsigned gpu, const std::vector<std::string>& profiles);
  // Destroys what Create made: compute instances first, then GPU instances.
  void Destroy();
  ~MigInstances() { Destroy(); }

 private:
  unsigned gpu_ = 0;
  std::vector<std::pair<unsigned, int>> created_;  // (GPU instance id, compute instance id or -1)
};

// An MPS control daemon for one workload, with its own pipe and log directories.
// NVIDIA's MPS guide: the daemon's CUDA_VISIBLE_DEVICES remaps the devices its clients see,
// so the daemon is given the GPUs' UUIDs (comma-separated, CUDA's syntax), and clients name
// their GPUs by UUID too (which the remapping keeps meaning the same GPU).
class MpsDaemon {
 public:
  // Starts it for `devices` (indices or GPU UUIDs joined with '+', as a Devices cell; ""
  // for all GPUs) and waits until its front end answers (the daemon starts in the
  // background and is ready a moment later).
  Status Start(const std::string& devices);
  // Stops it ("quit" on its control front end) and removes its pipe directory; the logs
  // stay until RemoveDirectory().
  void Stop();
  ~MpsDaemon() { Stop(); }
  // The daemon's log files (control.log, and server.log once a client connected), after Stop().
  std::vector<std::string> LogFiles() const;
  // Removes its directory in /tmp, logs included: once the runs keep them.
  void RemoveDirectory();
  // What the runs' environment gains.
  const std::vector<std::string>& env() const { return env_; }

 private:
  std::string dir_;
  std::vector<std::string> env_;
  bool started_ = false;
};

// DCGM's profiling paused while Nsight Systems or Nsight Compute profile a workload (they
// cannot share the counters); resumed by Resume() or the destructor.
class DcgmProfilingPause {
 public:
  // Pauses when dcgmi is installed; says once why not otherwise. True when paused.
  bool Pause();
  void Resume();
  ~DcgmProfilingPause() { Resume(); }

 private:
  bool paused_ = false;
};

struct ToolResult {
  int code = -1;
  std::string out;
};
// How long a GPU tool (nvidia-smi mig, nvidia-cuda-mps-control, dcgmi) may take: MIG
// changes take seconds; a tool still running after this is killed with its process group
// and RunTool fails saying so, so a hung driver never hangs the scheduler.
inline constexpr int64_t kToolTimeoutMs = 30000;
// Runs argv with our environment plus `extra` (KEY=VALUE overriding ours), stdin from
// /dev/null; its exit code and its stdout and stderr together.
Result<ToolResult> RunTool(const std::vector<std::string>& argv, const std::vector<std::string>& extra = {},
                           int64_t timeout_ms = kToolTimeoutMs);

// A Devices cell ("1", "1+2", GPU UUIDs) as CUDA_VISIBLE_DEVICES names them unambiguously:
// each GPU's UUID, comma-separated, looked up with nvidia-smi. InvalidArgument for a GPU
// nvidia-smi does not list.
Result<std::string> DevicesAsUuids(const std::string& devices);

// Our environment with `extra` (KEY=VALUE) replacing or adding variables.
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& extra);

}  // namespace tb
