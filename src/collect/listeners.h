// Every listener, by name, in one table: what `--listeners top+nvml` and an experiment
// file's Listeners cell name. A listener is built from a ListenerContext; the launcher,
// the scheduler's checks, the tests and the benchmarks all go through this table.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "collect/collector.h"
#include "collect/gpu_devices.h"
#include "platform/amdsmi.h"
#include "platform/host_files.h"
#include "platform/nvml.h"

namespace tb {

// What listeners are built from.
struct ListenerContext {
  HostFiles files{};                 // host listeners read /proc and /sys under its root
  std::shared_ptr<Nvml> nvml{};      // the nvml listener's library; without one it is not built
  std::shared_ptr<AmdSmi> amdsmi{};  // the amdsmi listener's library; likewise
  DeviceSelection devices{};         // the run's GPUs (all when empty)
  int64_t interval_ms = 1000;        // the period the smi and dcgmi tools print at
};

struct ListenerInfo {
  std::string_view name;
  bool gpu;               // reads GPUs: its devices are resolved through NVML (AMD SMI for amdsmi) first
  std::string_view tool;  // the program it keeps running ("nvidia-smi", "dcgmi"), "" for none
  // Null when the listener cannot be built here (nvml without the library).
  std::unique_ptr<Collector> (*make)(const ListenerContext& context);
};

// top, ps, iostat, net, free, rapl, jetson, tegrastats, none, nvml, smi, dcgmi, amdsmi.
std::span<const ListenerInfo> Listeners();
// nullptr when no listener has this name.
const ListenerInfo* FindListener(std::string_view name);
// "top, ps, iostat, net, free, rapl, jetson, tegrastats, none, nvml, smi, dcgmi, amdsmi": for messages.
std::string AvailableListeners();
// The listener `name` built from `context`; InvalidArgument naming the available ones when
// `name` is unknown, Unavailable when it cannot be built here.
Result<std::unique_ptr<Collector>> MakeListener(std::string_view name, const ListenerContext& context);

}  // namespace tb
