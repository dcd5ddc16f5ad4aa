#include "collect/gpu_share.h"

#include <algorithm>
#include <string>

#include "base/strings.h"

namespace tb {

bool IsMpsServer(const HostFiles& files, unsigned pid) {
  std::string comm;
  if (!files.Read("/proc/" + std::to_string(pid) + "/comm", comm).ok()) return false;
  return Trim(comm) == "nvidia-cuda-mps";
}

GpuShare RunShareOfGpu(const std::vector<GpuParty>& parties, std::optional<double> server_sm_percent,
                       bool measured, unsigned runs_sharing) {
  GpuShare out;
  if (parties.empty()) {
    out.share = 1.0 / std::max(1U, runs_sharing);
    return out;
  }
  size_t clients = 0, mine = 0;
  for (const GpuParty& p : parties) {
    clients += p.mps_client;
    mine += p.mine;
  }
  double tree = 0, all = 0;
  bool known = false;
  for (const GpuParty& p : parties) {
    double sm = p.mps_client ? server_sm_percent.value_or(0) / static_cast<double>(clients)
                             : p.sm_percent.value_or(0);
    known |= p.mps_client ? server_sm_percent.has_value() : p.sm_percent.has_value();
    all += sm;
    if (p.mine) tree += sm;
  }
  if (measured && known) out.tree_percent = tree;
  if (mine == parties.size()) {
    out.share = 1;
  } else if (measured && all > 0) {
    out.share = tree / all;
  } else {
    out.share = static_cast<double>(mine) / static_cast<double>(parties.size());
  }
  return out;
}

void RunEnergyAccount::Tick(std::optional<double> power_watts, int64_t monotonic_ns, double share) {
  if (power_watts) {
    if (last_power_ns_ != 0) {
      double joules = *power_watts * static_cast<double>(monotonic_ns - last_power_ns_) / 1e9;
      power_joules_ += joules;
      share_power_joules_ += joules * share;
    }
    last_power_ns_ = monotonic_ns;
  }
  last_share_ = share;
}

double RunEnergyAccount::Counter(double joules) {
  if (counter_joules_) {
    double part = power_joules_ > 0 ? share_power_joules_ / power_joules_ : last_share_;
    run_joules_ += (joules - *counter_joules_) * part;
  }
  counter_joules_ = joules;
  power_joules_ = share_power_joules_ = 0;
  return run_joules_;
}

double RunEnergyAccount::Integrated() {
  run_joules_ += share_power_joules_;
  power_joules_ = share_power_joules_ = 0;
  return run_joules_;
}

}  // namespace tb
