#include "run/gpu_devices.h"

#include <algorithm>

#include "base/strings.h"

namespace tb {

Result<DeviceSelection> SelectDevices(const std::string& devices_option,
                                      const std::string& cuda_visible_devices,
                                      const std::vector<Nvml::DeviceInfo>* devices) {
  DeviceSelection out;
  std::string_view spec = devices_option;
  char separator = '+';
  if (Trim(spec).empty() || Trim(spec) == "-") {
    spec = cuda_visible_devices;
    separator = ',';
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
  for (const std::string& t : tokens) {
    if (std::optional<uint64_t> index = ParseUint(t)) {
      if (devices != nullptr && *index >= devices->size()) {
        return Status::InvalidArgument("device " + t + " does not exist: this machine has " +
                                       std::to_string(devices->size()) +
                                       " GPU(s); `trainbench devices` lists them");
      }
      add(static_cast<unsigned>(*index));
      continue;
    }
    if (!StartsWith(t, "GPU-") && !StartsWith(t, "MIG-")) {
      return Status::InvalidArgument("device '" + t + "' is neither a GPU index nor a GPU-/MIG- UUID");
    }
    if (devices == nullptr) continue;
    bool found = false;
    for (const Nvml::DeviceInfo& d : *devices) {
      bool match = d.uuid == t;
      for (const auto& m : d.mig) match |= m.uuid == t;
      if (match) {
        add(d.index);
        found = true;
      }
    }
    if (!found) {
      return Status::InvalidArgument("device " + t +
                                     " is not on this machine; `trainbench devices` lists them");
    }
  }
  // The child sees the devices it was given, by the names it was given.
  if (separator == '+') {
    for (const std::string& t : tokens)
      out.cuda_visible_devices += (out.cuda_visible_devices.empty() ? "" : ",") + t;
  }
  return out;
}

}  // namespace tb
