#include "collect/collector.h"

#include <cmath>

#include "collect/host_collectors.h"

namespace tb {

double RoundForStorage(double value) {
  if (!std::isfinite(value) || value == std::nearbyint(value) || value == 0) return value;
  int digits = 6 - static_cast<int>(std::ceil(std::log10(std::fabs(value))));
  if (digits <= 0) return std::nearbyint(value);
  if (digits > 15) return value;
  double scale = std::pow(10.0, digits);
  return std::nearbyint(value * scale) / scale;
}

std::string LabelValue(std::string_view raw) {
  std::string out(raw);
  for (char& c : out) {
    if (c == ',' || c == '=' || c == '\n') c = '_';
  }
  return out;
}

std::vector<std::string> HostListenerNames() { return {"top", "ps", "iostat", "net"}; }
std::vector<std::string> GpuListenerNames() { return {"nvml", "smi", "dcgmi"}; }

std::string AvailableListeners() {
  std::string out;
  for (const auto& list : {HostListenerNames(), GpuListenerNames()}) {
    for (const auto& n : list) out += (out.empty() ? "" : ", ") + n;
  }
  return out;
}

Result<std::unique_ptr<Collector>> MakeHostCollector(std::string_view name, const HostFiles& files) {
  if (name == "top") return MakeTopCollector(files);
  if (name == "ps") return MakePsCollector(files);
  if (name == "iostat") return MakeIostatCollector(files);
  if (name == "net") return MakeNetCollector(files);
  return Status::InvalidArgument("unknown listener '" + std::string(name) +
                                 "'; available listeners: " + AvailableListeners());
}

}  // namespace tb
