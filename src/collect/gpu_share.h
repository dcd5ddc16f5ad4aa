// A run's part of a GPU it may share (docs/GPU.md, "Runs that share a GPU"): the rule that
// gives every run on a GPU its share so that the shares add up to 1, and the account that
// turns the GPU's energy counter into the run's energy. Pure; used by the nvml listener
// (collect/nvml_collector.h), one per GPU. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "platform/host_files.h"

namespace tb {

// A process on the GPU other than the MPS server: a party to the GPU's work.
struct GpuParty {
  bool mine = false;                 // of the run's process tree
  bool mps_client = false;           // its activity is its equal part of the MPS server's
  std::optional<double> sm_percent;  // its own SM utilization, when NVML measured it
};

// Whether `pid` is the MPS server: /proc/PID/comm is nvidia-cuda-mps-server cut to 15 characters.
bool IsMpsServer(const HostFiles& files, unsigned pid);

struct GpuShare {
  double share = 1;                    // the run's part of the GPU, 0 to 1
  std::optional<double> tree_percent;  // the run's SM utilization, when measured
};

// The run's share: its parties' activity over all parties' (an MPS client's activity is
// `server_sm_percent` over the clients); with nothing measured or nothing computing, an
// equal part per party; alone, 1; with no party on the GPU, an equal part per run started
// on it (`runs_sharing`). `measured`: whether per-process utilization was read for this.
GpuShare RunShareOfGpu(const std::vector<GpuParty>& parties, std::optional<double> server_sm_percent,
                       bool measured, unsigned runs_sharing);

// The run's energy on one GPU: each tick's power and share, and now and then the GPU's
// cumulative energy counter, whose every increase is split by the run's power-weighted
// share over the ticks since the reading before. Without a counter, power times the share.
class RunEnergyAccount {
 public:
  // A tick's power (none when unread) and the run's share during the time since the last.
  void Tick(std::optional<double> power_watts, int64_t monotonic_ns, double share);
  // A reading of the GPU's counter (joules): the run's energy so far.
  double Counter(double joules);
  // Where the GPU has no counter: the power integrated so far is the run's energy.
  double Integrated();

 private:
  int64_t last_power_ns_ = 0;
  double power_joules_ = 0, share_power_joules_ = 0;  // since the last reading
  double last_share_ = 1;
  std::optional<double> counter_joules_;
  double run_joules_ = 0;
};

}  // namespace tb
