#include "run/gpu_setup.h"

#include <climits>
#include <cstdlib>
#include <set>

#include "base/log.h"
#include "base/strings.h"
#include "collect/gpu_tool_collectors.h"
#include "collect/jetson.h"
#include "collect/listeners.h"
#include "collect/rapl.h"
#include "platform/process.h"
#include "store/run_tags.h"

namespace tb {

// Whether the tool on PATH is the simulated GPU's (sim/bin links to sim_tool).
bool IsSimulatedTool(const std::string& tool) {
  std::optional<std::string> path = FindExecutable(tool);
  if (!path) return false;
  char resolved[4096];
  if (realpath(path->c_str(), resolved) == nullptr) return false;
  return BaseName(resolved) == "sim_tool";
}

// Opens AMD SMI when the amdsmi listener is asked for, or for the default set or named
// devices where NVML found no GPU; its processors as the device list indices resolve
// against (the child is given indices: ROCm's runtimes count partitions as devices too).
// Returns the processors it found.
static std::vector<AmdSmi::Processor> SetUpAmdSmi(bool automatic, bool chosen, GpuSetup& setup,
                                                  std::vector<Nvml::DeviceInfo>& devices, bool& have_devices,
                                                  std::vector<std::string>& notices) {
  Result<std::unique_ptr<AmdSmi>> amdsmi = AmdSmi::Open();
  if (!amdsmi.ok()) {
    if (chosen) {
      std::string msg = "GPU listener amdsmi skipped: " + amdsmi.status().message();
      LogWarning(msg);
      notices.push_back(msg);
    }
    return {};
  }
  Result<std::vector<AmdSmi::Processor>> found = (*amdsmi)->Processors();
  if (!found.ok() || (found->empty() && !chosen)) return {};
  setup.amdsmi = std::move(amdsmi.value());
  if (!have_devices || devices.empty()) {
    devices.clear();
    for (const AmdSmi::Processor& p : *found) {
      Nvml::DeviceInfo d;
      d.index = p.index;
      d.name = p.name;
      d.memory_total_bytes = p.memory_total_bytes;
      devices.push_back(std::move(d));
    }
    have_devices = true;
  }
  if (automatic && !found->empty()) setup.listeners.emplace_back("amdsmi");
  return std::move(found.value());
}

// The tags of a run on named AMD processors that are partitions of a larger GPU: their
// sockets and partition mode (store/run_tags.h). None for whole GPUs or every GPU.
static std::vector<std::pair<std::string, std::string>> PartitionTags(
    const std::vector<AmdSmi::Processor>& processors, const DeviceSelection& selection) {
  std::set<unsigned> sockets;
  std::set<std::string> modes;
  for (unsigned index : selection.gpu_indices) {
    for (const AmdSmi::Processor& p : processors) {
      if (p.index != index || p.partitions <= 1) continue;
      sockets.insert(p.socket);
      if (!p.compute_partition.empty()) modes.insert(p.compute_partition);
    }
  }
  if (sockets.empty()) return {};
  std::string joined;
  for (unsigned s : sockets) joined += (joined.empty() ? "" : "+") + std::to_string(s);
  std::vector<std::pair<std::string, std::string>> tags{{kGpuSocketsTag, joined}};
  if (modes.size() == 1) tags.emplace_back(kGpuPartitionTag, *modes.begin());
  return tags;
}

// Opens NVML when any GPU listener is wanted or devices are named (nvidia-smi and dcgmi
// are NVML clients too: NVML resolves the run's devices for all three) and resolves the
// run's devices. A machine without NVML is not an error: the GPU listeners are skipped
// with one message. With no listeners given, chooses the machine's default set from the
// same NVML it opens (opening NVML can take a while on a real GPU machine, so it is
// opened once). GPUs NVML may not open are told once and left out.
GpuSetup SetUpGpuListeners(const RunOptions& options, std::vector<std::string>& notices) {
  GpuSetup setup;
  bool automatic = options.listeners.empty();
  setup.listeners = options.listeners;
  auto chosen = [&](const char* name) {
    return std::find(options.listeners.begin(), options.listeners.end(), name) != options.listeners.end();
  };
  bool wants_gpu =
      automatic || chosen("nvml") || chosen("smi") || chosen("dcgmi") || !Trim(options.devices).empty();
  std::vector<Nvml::DeviceInfo> devices;
  bool have_devices = false;
  if (wants_gpu) {
    Result<std::unique_ptr<Nvml>> nvml = Nvml::Open();
    if (!nvml.ok()) {
      if (!automatic && chosen("nvml")) {  // no GPU is normal for the default set; asking for nvml is not
        std::string msg = "GPU listener nvml skipped: " + nvml.status().message();
        LogWarning(msg);
        notices.push_back(msg);
      }
    } else {
      setup.nvml = std::move(nvml.value());
      Result<Nvml::DeviceList> found = setup.nvml->Devices();
      if (found.ok()) {
        devices = std::move(found->gpus);
        have_devices = true;
        for (const std::string& why : found->skipped) {
          LogWarning(why);
          notices.push_back(why);
        }
      }
    }
  }
  if (automatic) {
    setup.listeners = {"top", "iostat", "net"};
    // The CPU's energy where RAPL is there and readable (most virtual machines have none).
    RaplDomains rapl = FindRaplDomains(HostFiles(options.proc_root));
    if (std::any_of(rapl.domains.begin(), rapl.domains.end(),
                    [](const RaplDomain& d) { return d.counted && d.unreadable.empty(); }))
      setup.listeners.emplace_back("rapl");
    // A Jetson's rails from sysfs, else from tegrastats.
    if (!FindJetsonBoard(HostFiles(options.proc_root)).rails.empty())
      setup.listeners.emplace_back("jetson");
    else if (FindExecutable("tegrastats"))
      setup.listeners.emplace_back("tegrastats");
    if (have_devices && !devices.empty()) setup.listeners.emplace_back("nvml");
    // DCGM's profiling fields (SM, tensor, DRAM active) where a host engine answers.
    if (DcgmHostEngineAnswers()) setup.listeners.emplace_back("dcgmi");
  }
  std::vector<AmdSmi::Processor> processors;
  if (chosen("amdsmi") || ((automatic || !Trim(options.devices).empty()) && devices.empty()))
    processors = SetUpAmdSmi(automatic, chosen("amdsmi"), setup, devices, have_devices, notices);
  bool nvml_listener =
      std::find(setup.listeners.begin(), setup.listeners.end(), "nvml") != setup.listeners.end();
  setup.simulated = setup.nvml != nullptr && nvml_listener && setup.nvml->simulated();
  setup.simulated |= setup.amdsmi != nullptr && setup.amdsmi->simulated();
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  Result<DeviceSelection> selection =
      SelectDevices(options.devices, visible != nullptr ? visible : "", have_devices ? &devices : nullptr);
  if (!selection.ok()) {
    setup.status = selection.status();
    return setup;
  }
  setup.selection = std::move(selection.value());
  setup.tags = PartitionTags(processors, setup.selection);
  // How many runs a schedule started together on these GPUs (for the idle energy's split).
  if (const char* runs = std::getenv("TRAINBENCH_GPU_RUNS"); runs != nullptr && std::atoi(runs) > 0)
    setup.selection.runs_sharing = static_cast<unsigned>(std::atoi(runs));
  if (!setup.selection.resolved && !Trim(options.devices).empty() && (chosen("smi") || chosen("dcgmi"))) {
    std::string msg = "NVML cannot tell which GPUs " + options.devices +
                      " are, so nvidia-smi and dcgmi watch every GPU of this machine";
    LogWarning(msg);
    notices.push_back(msg);
  }
  return setup;
}

}  // namespace tb
