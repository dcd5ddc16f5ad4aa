#include "collect/gpu_devices.h"

#include <algorithm>

#include "base/strings.h"

namespace tb {
namespace {

const Nvml::DeviceInfo* ByIndex(const std::vector<Nvml::DeviceInfo>& devices, unsigned index) {
  for (const Nvml::DeviceInfo& d : devices) {
    if (d.index == index) return &d;
  }
  return nullptr;
}

}  // namespace

Result<DeviceSelection> SelectDevices(const std::string& devices_option,
                                      const std::string& cuda_visible_devices,
                                      const std::vector<Nvml::DeviceInfo>* devices) {
  DeviceSelection out;
  out.resolved = devices != nullptr;
  std::string_view spec = devices_option;
  char separator = '+';
  bool from_option = true;
  if (Trim(spec).empty() || Trim(spec) == "-") {
    spec = cuda_visible_devices;
    separator = ',';
    from_option = false;
  }
  std::vector<std::string> tokens;
  for (std::string_view part : Split(spec, separator)) {
    if (!Trim(part).empty()) tokens.emplace_back(Trim(part));
  }
  if (tokens.empty()) return out;
  auto add = [&](unsigned index) {
    if (std::find(out.gpu_indices.begin(), out.gpu_indices.end(), index) == out.gpu_indices.end()) {
      out.gpu_indices.push_back(index);
    }
  };
  std::vector<std::string> child;  // what CUDA_VISIBLE_DEVICES names, in order
  for (const std::string& t : tokens) {
    if (std::optional<uint64_t> index = ParseUint(t)) {
      if (devices != nullptr) {
        const Nvml::DeviceInfo* d = ByIndex(*devices, static_cast<unsigned>(*index));
        if (d == nullptr) {
          return Status::InvalidArgument("device " + t + " is not a GPU this process may use (" +
                                         std::to_string(devices->size()) +
                                         " found); `trainbench devices` lists them");
        }
        child.push_back(d->uuid.empty() ? t : d->uuid);
      } else {
        child.push_back(t);
      }
      add(static_cast<unsigned>(*index));
      continue;
    }
    if (!StartsWith(t, "GPU-") && !StartsWith(t, "MIG-")) {
      return Status::InvalidArgument("device '" + t + "' is neither a GPU index nor a GPU-/MIG- UUID");
    }
    child.push_back(t);
    if (devices == nullptr) continue;
    bool found = false;
    for (const Nvml::DeviceInfo& d : *devices) {
      if (d.uuid == t) {
        add(d.index);
        found = true;
      }
      for (const auto& m : d.mig) {
        if (m.uuid != t) continue;
        add(d.index);
        out.mig.push_back({d.index, m.gpu_instance_id, m.uuid});
        found = true;
      }
    }
    if (!found) {
      return Status::InvalidArgument("device " + t +
                                     " is not on this machine; `trainbench devices` lists them");
    }
  }
  // The child sees the devices it was given; indices become UUIDs. CUDA_VISIBLE_DEVICES
  // inherited from trainbench's own environment is left as it is (already CUDA's).
  if (from_option) {
    for (const std::string& c : child)
      out.cuda_visible_devices += (out.cuda_visible_devices.empty() ? "" : ",") + c;
  }
  return out;
}

}  // namespace tb
