#include "collect/listeners.h"

#include <array>

#include "collect/amdsmi_collector.h"
#include "collect/gpu_tool_collectors.h"
#include "collect/host_collectors.h"
#include "collect/jetson.h"
#include "collect/nvml_collector.h"
#include "collect/rapl.h"

namespace tb {
namespace {

std::unique_ptr<Collector> MakeNvml(const ListenerContext& c) {
  return c.nvml ? MakeNvmlCollector(c.nvml, c.devices) : nullptr;
}
std::unique_ptr<Collector> MakeAmdSmi(const ListenerContext& c) {
  return c.amdsmi ? MakeAmdSmiCollector(c.amdsmi, c.devices) : nullptr;
}

constexpr std::array kListeners = {
    ListenerInfo{"top", false, "", [](const ListenerContext& c) { return MakeTopCollector(c.files); }},
    ListenerInfo{"ps", false, "", [](const ListenerContext& c) { return MakePsCollector(c.files); }},
    ListenerInfo{"iostat", false, "", [](const ListenerContext& c) { return MakeIostatCollector(c.files); }},
    ListenerInfo{"net", false, "", [](const ListenerContext& c) { return MakeNetCollector(c.files); }},
    ListenerInfo{"free", false, "", [](const ListenerContext& c) { return MakeFreeCollector(c.files); }},
    ListenerInfo{"rapl", false, "", [](const ListenerContext& c) { return MakeRaplCollector(c.files); }},
    ListenerInfo{
        "jetson", false, "",
        [](const ListenerContext& c) { return MakeJetsonCollector(c.files, c.devices.runs_sharing); }},
    ListenerInfo{"tegrastats", false, "tegrastats",
                 [](const ListenerContext& c) {
                   return MakeTegrastatsCollector(c.interval_ms, c.devices.runs_sharing);
                 }},
    // radT's `none`: no listener at all (not the default set an empty list means).
    ListenerInfo{"none", false, "", [](const ListenerContext&) { return std::unique_ptr<Collector>(); }},
    ListenerInfo{"nvml", true, "", MakeNvml},
    ListenerInfo{"smi", true, "nvidia-smi",
                 [](const ListenerContext& c) { return MakeSmiCollector(c.devices, c.interval_ms); }},
    ListenerInfo{"dcgmi", true, "dcgmi",
                 [](const ListenerContext& c) { return MakeDcgmiCollector(c.devices, c.interval_ms); }},
    ListenerInfo{"amdsmi", true, "", MakeAmdSmi},
};

}  // namespace

std::span<const ListenerInfo> Listeners() { return kListeners; }

const ListenerInfo* FindListener(std::string_view name) {
  for (const ListenerInfo& l : kListeners) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

std::string AvailableListeners() {
  std::string out;
  for (const ListenerInfo& l : kListeners) out += (out.empty() ? "" : ", ") + std::string(l.name);
  return out;
}

Result<std::unique_ptr<Collector>> MakeListener(std::string_view name, const ListenerContext& context) {
  const ListenerInfo* info = FindListener(name);
  if (info == nullptr) {
    return Status::InvalidArgument("unknown listener '" + std::string(name) +
                                   "'; available listeners: " + AvailableListeners());
  }
  std::unique_ptr<Collector> collector = info->make(context);
  if (!collector) return Status::Unavailable("the " + std::string(name) + " listener cannot work here");
  return collector;
}

}  // namespace tb
