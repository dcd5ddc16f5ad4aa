#include "collect/rapl.h"

#include <algorithm>
#include <map>

#include "base/strings.h"
#include "collect/proc_parsers.h"
#include "collect/process_tree.h"
#include "metrics/names.h"

namespace tb {
namespace {

constexpr std::string_view kPowercap = "/sys/class/powercap";

std::string ReadLine(const HostFiles& files, const std::string& path) {
  std::string text;
  if (!files.Read(path, text).ok()) return "";
  return std::string(Trim(text));
}

// A zone's name: "package-0", "dram", "core", "psys".
RaplDomain Describe(const HostFiles& files, const std::string& zone, const std::string& parent_label) {
  RaplDomain d;
  d.path = std::string(kPowercap) + "/" + zone;
  std::string name = ReadLine(files, d.path + "/name");
  d.label = parent_label.empty() ? name : parent_label + "/" + name;
  d.max_energy_range_uj = ParseUint(ReadLine(files, d.path + "/max_energy_range_uj")).value_or(0);
  d.counted = parent_label.empty() ? StartsWith(name, "package") : name == "dram";
  std::string energy;
  Status read = files.Read(d.path + "/energy_uj", energy);
  if (!read.ok()) {
    d.unreadable = read.message().find("ermission") != std::string::npos
                       ? "energy_uj is readable by root only (Linux 5.10 and later); run as root, or "
                         "chmod o+r it"
                       : read.message();
  }
  return d;
}

}  // namespace

RaplDomains FindRaplDomains(const HostFiles& files) {
  RaplDomains out;
  std::vector<std::string> zones;
  if (!files.List(kPowercap, zones).ok()) {
    out.absent = "no RAPL here (no /sys/class/powercap: a virtual machine, or a kernel without powercap)";
    return out;
  }
  std::sort(zones.begin(), zones.end());
  std::map<std::string, std::string> package_label;  // "intel-rapl:0" -> "package-0"
  for (const std::string& zone : zones) {
    // Packages are intel-rapl:N, their subzones intel-rapl:N:M (listed after them).
    if (!StartsWith(zone, "intel-rapl:")) continue;
    size_t colons = static_cast<size_t>(std::count(zone.begin(), zone.end(), ':'));
    std::string parent = colons == 2 ? zone.substr(0, zone.rfind(':')) : "";
    if (colons == 2 && package_label.count(parent) == 0) continue;
    RaplDomain d = Describe(files, zone, colons == 2 ? package_label[parent] : "");
    if (colons == 1) package_label[zone] = d.label;
    out.domains.push_back(std::move(d));
  }
  if (out.domains.empty()) out.absent = "no RAPL here (/sys/class/powercap has no intel-rapl zone)";
  return out;
}

namespace {

class RaplCollector : public Collector {
 public:
  explicit RaplCollector(const HostFiles& files) : files_(files) {}
  std::string_view name() const override { return "rapl"; }

  Status Collect(const Tick& tick, SampleSink& sink) override {
    if (!found_) {
      found_ = true;
      RaplDomains found = FindRaplDomains(files_);
      why_none_ = found.absent;
      for (RaplDomain& d : found.domains) {
        if (!d.counted) continue;
        if (!d.unreadable.empty()) {
          why_none_ = d.label + ": " + d.unreadable;
          continue;
        }
        domains_.emplace_back().info = std::move(d);
      }
    }
    // Said once by the sampler; nothing is recorded (never a 0).
    if (domains_.empty()) return Status::Unavailable("no CPU energy: " + why_none_);
    std::optional<double> share = RunShare(tick);
    for (Domain& d : domains_) Sample(d, tick, share, sink);
    last_ns_ = tick.monotonic_ns;
    files_.CloseUnused();
    return Status::Ok();
  }

 private:
  struct Domain {
    RaplDomain info;
    std::optional<uint64_t> last_uj;
    double joules = 0, run_joules = 0;
  };

  // The run's part of the CPU time all processes used since the last tick.
  std::optional<double> RunShare(const Tick& tick) {
    if (tick.tree == nullptr || !files_.ReadKeepOpen("/proc/stat", buffer_).ok()) return std::nullopt;
    std::vector<CpuTimes> cpus;
    if (!ParseProcStat(buffer_, cpus).ok() || cpus.empty() || cpus[0].core != -1) return std::nullopt;
    uint64_t busy = cpus[0].busy, tree = 0;
    for (const PidStat& p : tick.tree->Processes()) tree += p.utime + p.stime + p.cutime + p.cstime;
    std::optional<double> share;
    if (last_busy_ && busy > *last_busy_ && tree >= last_tree_)
      share = std::clamp(static_cast<double>(tree - last_tree_) / static_cast<double>(busy - *last_busy_),
                         0.0, 1.0);
    last_busy_ = busy;
    last_tree_ = tree;
    return share;
  }

  void Sample(Domain& d, const Tick& tick, std::optional<double> share, SampleSink& sink) {
    std::string text;
    if (!files_.ReadKeepOpen(d.info.path + "/energy_uj", text).ok()) return;
    std::optional<uint64_t> uj = ParseUint(Trim(text));
    if (!uj) return;
    Labels labels = Labels().Add("domain", d.info.label);
    if (d.last_uj) {
      uint64_t step = *uj >= *d.last_uj ? *uj - *d.last_uj : d.info.max_energy_range_uj - *d.last_uj + *uj;
      double joules = static_cast<double>(step) / 1e6;
      d.joules += joules;
      if (tick.monotonic_ns > last_ns_)
        sink.Add({metric::kHostPowerDrawWatts, labels, tick.time_ms,
                  RoundForStorage(joules / (static_cast<double>(tick.monotonic_ns - last_ns_) / 1e9))});
      if (share) d.run_joules += joules * *share;
    }
    d.last_uj = uj;
    sink.Add({metric::kHostEnergyConsumedJoules, labels, tick.time_ms, RoundForStorage(d.joules)});
    if (tick.tree != nullptr)
      sink.Add({metric::kProcCpuEnergyJoules, labels, tick.time_ms, RoundForStorage(d.run_joules)});
  }

  HostFiles files_;
  bool found_ = false;
  std::vector<Domain> domains_;
  std::string why_none_;  // why no domain can be read, when none can
  int64_t last_ns_ = 0;
  std::optional<uint64_t> last_busy_;
  uint64_t last_tree_ = 0;
  std::string buffer_;
};

}  // namespace

std::unique_ptr<Collector> MakeRaplCollector(const HostFiles& files) {
  return std::make_unique<RaplCollector>(files);
}

}  // namespace tb
