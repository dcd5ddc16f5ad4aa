#include "sim/scenario.h"

#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "base/read_file.h"

namespace tb::sim {
namespace {

using nlohmann::json;

double NowSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

MetricSource ParseSource(const json& j) {
  MetricSource s;
  if (j.is_number()) {
    s.value = j.get<double>();
  } else if (j.contains("square")) {
    s.kind = MetricSource::Kind::kSquare;
    s.low = j["square"].value("low", 0.0);
    s.high = j["square"].value("high", 0.0);
    s.period_s = j["square"].value("period_s", 1.0);
  } else if (j.contains("trace")) {
    s.kind = MetricSource::Kind::kTrace;
    s.column = j["trace"].get<std::string>();
    s.scale = j.value("scale", 1.0);
  }
  return s;
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

constexpr MigProfile kMigProfiles[] = {
    {"1g.5gb", 19, 1, 1, 4864, 0},  {"1g.5gb+me", 20, 1, 1, 4864, 0}, {"1g.10gb", 15, 1, 2, 9856, 0},
    {"2g.10gb", 14, 2, 2, 9856, 1}, {"3g.20gb", 9, 3, 4, 19968, 2},   {"4g.20gb", 5, 4, 4, 19968, 3},
    {"7g.40gb", 0, 7, 8, 40192, 4},
};

// One GPU of the scenario; `index` numbers its defaults (UUID, PCI bus).
Gpu ParseGpu(const json& g, size_t index) {
  Gpu gpu;
  gpu.name = g.value("name", "NVIDIA A100-SXM4-40GB");
  gpu.uuid = g.value("uuid", "GPU-00000000-0000-0000-0000-" + std::to_string(100000000000 + index));
  gpu.pci_bus_id = g.value("pci_bus_id", "00000000:0" + std::to_string(index + 7) + ":00.0");
  gpu.memory_total_bytes = static_cast<uint64_t>(g.value("memory_total_mib", 40960.0) * 1048576);
  json metrics = g.value("metrics", json::object());  // items() must not outlive it
  for (auto& [key, source] : metrics.items()) gpu.metrics[key] = ParseSource(source);
  for (const json& u : g.value("unsupported", json::array())) gpu.unsupported.insert(u.get<std::string>());
  gpu.lost_after_s = g.value("lost_after_s", -1.0);
  gpu.call_delay_us = g.value("call_delay_us", 0);
  gpu.pcie_call_ms = g.value("pcie_call_ms", 20);
  gpu.no_permission = g.value("no_permission", false);
  gpu.memory_reserved_bytes = static_cast<uint64_t>(g.value("memory_reserved_mib", 384.0) * 1048576);
  for (const json& m : g.value("mig", json::array())) {
    MigInstance mi;
    mi.uuid = m.value("uuid", "MIG-" + gpu.uuid.substr(4) + "-" + std::to_string(gpu.mig.size()));
    mi.profile = m.value("profile", "3g.20gb");
    mi.gpu_instance_id = m.value("gpu_instance_id", static_cast<unsigned>(gpu.mig.size() + 1));
    mi.memory_total_bytes = static_cast<uint64_t>(m.value("memory_total_mib", 19968.0) * 1048576);
    mi.memory_used_bytes = static_cast<uint64_t>(m.value("memory_used_mib", 0.0) * 1048576);
    gpu.mig.push_back(mi);
  }
  gpu.mig_mode = g.value("mig_mode", gpu.mig.empty() ? "Disabled" : "Enabled");
  for (const json& p : g.value("processes", json::array())) {
    ProcessRule r;
    r.match = p.value("match", "");
    if (p.contains("memory_used_mib") && p["memory_used_mib"].is_null()) {
      r.memory_not_available = true;
    } else {
      r.memory_used_bytes = static_cast<uint64_t>(p.value("memory_used_mib", 0.0) * 1048576);
    }
    r.sm_util_percent = p.value("sm_util_percent", 0u);
    r.idle_first_s = p.value("idle_first_s", 0.0);
    gpu.processes.push_back(r);
  }
  return gpu;
}

// An AMD GPU of the scenario as amdsmi enumerates it: one processor, or one per die of a
// dual-die MI250X ("dies": 2; the odd die reports no power, its even die both's), or one
// per compute partition of an MI300X ("compute_partition": "CPX" makes 8; the first
// reports the GPU's power, each sees its part of the memory).
void AddAmdGpu(const json& g, Gpu gpu, Scenario& s) {
  static const std::map<std::string, unsigned> kPartitions = {
      {"SPX", 1}, {"DPX", 2}, {"TPX", 3}, {"QPX", 4}, {"CPX", 8}};
  gpu.amd.compute_partition = g.value("compute_partition", "SPX");
  gpu.amd.memory_partition = g.value("memory_partition", "NPS1");
  auto known = kPartitions.find(gpu.amd.compute_partition);
  unsigned count = g.value("dies", known != kPartitions.end() ? known->second : 1U);
  gpu.amd.average_power = g.value("average_power", false);
  gpu.amd.energy_wrap_bits = g.value("energy_wrap_bits", 64);
  gpu.amd.energy_counter_scale = g.value("energy_counter_scale", 1.0);
  gpu.amd.socket = s.amd.empty() ? 0 : s.amd.back().amd.socket + 1;
  gpu.amd.partitions = count;
  gpu.memory_total_bytes /= count;
  for (unsigned i = 0; i < count; ++i) {
    Gpu p = gpu;
    p.amd.partition = i;
    p.amd.reports_power = i == 0;
    if (i > 0) p.uuid = gpu.uuid.substr(0, gpu.uuid.size() - 1) + std::to_string(i);
    s.amd.push_back(std::move(p));
  }
}

}  // namespace

const MigProfile* FindMigProfile(const std::string& name_or_id) {
  for (const MigProfile& p : kMigProfiles) {
    if (name_or_id == p.name || name_or_id == std::to_string(p.id)) return &p;
  }
  return nullptr;
}

std::optional<Scenario> Scenario::Load(std::string* error) {
  const char* path = std::getenv("TRAINBENCH_SIM_SCENARIO");
  if (path == nullptr || *path == '\0') {
    *error = "TRAINBENCH_SIM_SCENARIO is not set";
    return std::nullopt;
  }
  return LoadFile(path, error);
}

std::optional<Scenario> Scenario::LoadFile(const std::string& path, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read scenario " + path;
    return std::nullopt;
  }
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *error = "scenario " + path + " is not a JSON object";
    return std::nullopt;
  }
  Scenario s;
  s.path = path;
  s.driver_version = j.value("driver_version", s.driver_version);
  s.cuda_driver_version = j.value("cuda_driver_version", s.cuda_driver_version);
  s.dcgm_host_engine = j.value("dcgm_host_engine", true);
  s.host_pid_offset = j.value("host_pid_offset", 0L);
  s.amdsmi_version = j.value("amdsmi_version", s.amdsmi_version);
  s.dcgm_max_profiling_fields = j.value("dcgm_max_profiling_fields", 100);
  s.tool_garbage = j.value("tool_garbage", false);
  s.nvml_init_ms = j.value("nvml_init_ms", 0);
  json cost = j.value("nvml_cpu_us", json::object());
  s.cpu_cost.energy_us = cost.value("energy", s.cpu_cost.energy_us);
  s.cpu_cost.process_utilization_us = cost.value("process_utilization", s.cpu_cost.process_utilization_us);
  s.cpu_cost.pcie_us = cost.value("pcie", s.cpu_cost.pcie_us);
  s.cpu_cost.init_us = cost.value("init", s.cpu_cost.init_us);
  s.cpu_cost.other_us = cost.value("other", s.cpu_cost.other_us);
  for (const json& g : j.value("gpus", json::array())) s.gpus.push_back(ParseGpu(g, s.gpus.size()));
  for (const json& g : j.value("amd_gpus", json::array())) AddAmdGpu(g, ParseGpu(g, s.amd.size()), s);
  if (j.contains("trace_file")) {
    std::string trace_path = j["trace_file"].get<std::string>();
    if (!trace_path.empty() && trace_path[0] != '/') trace_path = DirectoryOf(path) + "/" + trace_path;
    std::string text, why;
    if (!ReadWholeFile(trace_path, &text, &why)) {
      *error = "cannot read trace: " + why;
      return std::nullopt;
    }
    json t = json::parse(text, nullptr, false);
    if (t.is_discarded() || !t.is_object()) {
      *error = "trace " + trace_path + " is not radT's JSON (an object of columns)";
      return std::nullopt;
    }
    for (auto& [name, column] : t.items()) {
      std::vector<double> values;
      for (const json& v : column) values.push_back(v.is_number() ? v.get<double>() : std::nan(""));
      s.trace[name] = std::move(values);
    }
  }
  std::ifstream state(s.MigStateFile());
  size_t index;
  MigInstance mi;
  while (state >> index >> mi.gpu_instance_id >> mi.compute_instance_id >> mi.profile >> mi.uuid) {
    const MigProfile* profile = FindMigProfile(mi.profile);
    if (index >= s.gpus.size() || profile == nullptr) continue;
    mi.created = true;
    mi.memory_total_bytes = uint64_t{profile->memory_mib} * 1048576;
    s.gpus[index].mig.push_back(mi);
  }
  if (const char* start = std::getenv("TRAINBENCH_SIM_START")) {
    s.start_s = std::atof(start);
  } else {
    struct stat st {};
    stat(path.c_str(), &st);
    s.start_s = static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) / 1e9;
  }
  return s;
}

double Scenario::Elapsed() const { return std::max(0.0, NowSeconds() - start_s); }

bool Scenario::Lost(const Gpu& gpu) const { return gpu.lost_after_s >= 0 && Elapsed() >= gpu.lost_after_s; }

std::optional<double> Scenario::ValueAt(const Gpu& gpu, const std::string& key, double elapsed) const {
  if (gpu.unsupported.count(key) != 0) return std::nullopt;
  auto it = gpu.metrics.find(key);
  if (it == gpu.metrics.end()) return std::nullopt;
  const MetricSource& m = it->second;
  switch (m.kind) {
    case MetricSource::Kind::kConstant:
      return m.value;
    case MetricSource::Kind::kSquare:
      return std::fmod(elapsed, m.period_s) < m.period_s / 2 ? m.high : m.low;
    case MetricSource::Kind::kTrace: {
      auto t = trace.find(m.column);
      if (t == trace.end() || t->second.empty()) return std::nullopt;
      // The recorded trace is at 1 Hz; it replays from its start and loops.
      size_t i = static_cast<size_t>(elapsed) % t->second.size();
      double v = t->second[i];
      if (std::isnan(v)) return std::nullopt;
      return m.scale == 1 ? v : v * m.scale;
    }
  }
  return std::nullopt;
}

std::optional<double> Scenario::Value(const Gpu& gpu, const std::string& key) const {
  return ValueAt(gpu, key, Elapsed());
}

std::optional<double> Scenario::EnergyMillijoules(const Gpu& gpu) const {
  if (gpu.unsupported.count("energy_mj") != 0) return std::nullopt;
  double elapsed = Elapsed();
  if (gpu.metrics.count("energy_mj") != 0) return ValueAt(gpu, "energy_mj", elapsed);
  // Power held for each whole second, plus the current second's share.
  double joules = 0;
  for (int second = 0; second < elapsed; ++second) {
    std::optional<double> watts = ValueAt(gpu, "power_w", second);
    if (!watts) return std::nullopt;
    joules += *watts * std::min(1.0, elapsed - second);
  }
  return std::floor(joules * 1000);
}

}  // namespace tb::sim
