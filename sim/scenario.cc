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
  s.dcgm_max_profiling_fields = j.value("dcgm_max_profiling_fields", 100);
  s.tool_garbage = j.value("tool_garbage", false);
  s.nvml_init_ms = j.value("nvml_init_ms", 0);
  json cost = j.value("nvml_cpu_us", json::object());
  s.cpu_cost.energy_us = cost.value("energy", s.cpu_cost.energy_us);
  s.cpu_cost.process_utilization_us = cost.value("process_utilization", s.cpu_cost.process_utilization_us);
  s.cpu_cost.pcie_us = cost.value("pcie", s.cpu_cost.pcie_us);
  s.cpu_cost.init_us = cost.value("init", s.cpu_cost.init_us);
  s.cpu_cost.other_us = cost.value("other", s.cpu_cost.other_us);
  for (const json& g : j.value("gpus", json::array())) {
    Gpu gpu;
    gpu.name = g.value("name", "NVIDIA A100-SXM4-40GB");
    gpu.uuid = g.value("uuid", "GPU-00000000-0000-0000-0000-" + std::to_string(100000000000 + s.gpus.size()));
    gpu.pci_bus_id = g.value("pci_bus_id", "00000000:0" + std::to_string(s.gpus.size() + 7) + ":00.0");
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
    s.gpus.push_back(std::move(gpu));
  }
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

// A simulated machine is its scenario file: a process is on it when it was started with
// that file in TRAINBENCH_SIM_SCENARIO. Tests running side by side each have their own
// machine, so one test's burner never shows up on another test's GPU.
bool Scenario::OnThisMachine(long pid) const {
  std::ifstream environ("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string wanted = "TRAINBENCH_SIM_SCENARIO=" + path;
  std::string entry;
  while (std::getline(environ, entry, '\0')) {
    if (entry == wanted) return true;
  }
  return false;
}

namespace {

// A variable of /proc/PID/environ; empty when absent.
std::string EnvironOf(long pid, const std::string& name) {
  std::ifstream environ("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string entry;
  while (std::getline(environ, entry, '\0')) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=')
      return entry.substr(name.size() + 1);
  }
  return "";
}

std::string CommOf(long pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

// Seconds since the process started: /proc/uptime against /proc/PID/stat's starttime
// (field 22, clock ticks after boot).
double AgeOf(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  double uptime = 0;
  std::ifstream("/proc/uptime") >> uptime;
  return uptime - std::strtod(field.c_str(), nullptr) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A client of MPS: its CUDA_MPS_PIPE_DIRECTORY holds a running control daemon.
bool MpsClient(long pid) {
  std::string pipe = EnvironOf(pid, "CUDA_MPS_PIPE_DIRECTORY");
  return !pipe.empty() && access((pipe + "/control").c_str(), F_OK) == 0;
}

}  // namespace

namespace {

// The processes of this machine as a scan of /proc found them: what a real driver knows
// without scanning. A scan costs the simulator about 0.3 ms of CPU, which no real driver
// charges its caller: it runs on the simulator's own thread while the caller waits
// (blocked, as in a driver call), and one scan serves every call for 50 ms (a real
// driver's list lags a process's exit a little too). So a caller's CPU time is what the
// scenario's NVIDIA costs say. A forked child (no scanner thread) scans on its own.
struct ScannedProcess {
  long pid;
  std::string comm;
  bool on_this_machine, mps_client;
  double age_s = 0;  // since the process started
};

class ProcessScanner {
 public:
  // The processes of the machine, as of at most 50 ms ago, for `scenario`.
  const std::vector<ScannedProcess>& Get(const Scenario& scenario) {
    std::unique_lock lock(mu_);
    double now = MonotonicSeconds();
    if (path_ == scenario.path && now - time_ <= 0.05) return scan_;
    if (owner_ != getpid() || !thread_.joinable()) {
      if (!thread_.joinable() && owner_ == 0) {
        owner_ = getpid();
        thread_ = std::thread([this] { Loop(); });
      } else {
        Scan(scenario);  // a forked child: no scanner thread here
        return scan_;
      }
    }
    wanted_ = &scenario;
    wake_.notify_all();
    done_.wait(lock, [&] { return wanted_ == nullptr; });
    return scan_;
  }
  // Joins the thread (before the library that holds its code is unloaded).
  void Stop() {
    {
      std::lock_guard lock(mu_);
      if (owner_ != getpid() || !thread_.joinable()) return;
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
    std::lock_guard lock(mu_);
    stop_ = false;
    owner_ = 0;
    path_.clear();
  }

 private:
  static double MonotonicSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  }
  void Loop() {
    std::unique_lock lock(mu_);
    while (true) {
      wake_.wait(lock, [&] { return stop_ || wanted_ != nullptr; });
      if (stop_) return;
      Scan(*wanted_);
      wanted_ = nullptr;
      done_.notify_all();
    }
  }
  void Scan(const Scenario& scenario) {
    scan_.clear();
    path_ = scenario.path;
    time_ = MonotonicSeconds();
    DIR* dir = opendir("/proc");
    if (dir == nullptr) return;
    while (dirent* e = readdir(dir)) {
      char* end = nullptr;
      long pid = std::strtol(e->d_name, &end, 10);
      if (*end != '\0' || pid <= 0) continue;
      scan_.push_back({pid, CommOf(pid), false, false});
    }
    closedir(dir);
    // Only the processes some rule (or the MPS server) could be need their environment read.
    for (ScannedProcess& p : scan_) {
      bool wanted = p.comm == "nvidia-cuda-mps";
      for (const Gpu& g : scenario.gpus)
        for (const ProcessRule& r : g.processes) wanted |= r.match == p.comm;
      if (!wanted || !scenario.OnThisMachine(p.pid)) continue;
      p.on_this_machine = true;
      p.mps_client = MpsClient(p.pid);
      p.age_s = AgeOf(p.pid);
    }
  }

  std::mutex mu_;
  std::condition_variable wake_, done_;
  const Scenario* wanted_ = nullptr;
  bool stop_ = false;
  pid_t owner_ = 0;
  std::thread thread_;
  std::string path_;
  double time_ = -1;
  std::vector<ScannedProcess> scan_;
};

ProcessScanner& Scanner() {
  static ProcessScanner* scanner = new ProcessScanner();  // never destroyed: Stop() joins
  return *scanner;
}

}  // namespace

void StopProcessScanner() { Scanner().Stop(); }

std::vector<GpuProcess> Scenario::Processes(const Gpu& gpu) const {
  std::vector<GpuProcess> out;
  if (gpu.processes.empty()) return out;
  const std::vector<ScannedProcess>& scan = Scanner().Get(*this);
  std::optional<long> server;
  for (const ScannedProcess& p : scan) {
    if (!p.on_this_machine) continue;
    // The server the control daemon started: its 15-character name in comm.
    if (p.comm == "nvidia-cuda-mps") server = p.pid;
    const ProcessRule* rule = nullptr;
    for (const ProcessRule& r : gpu.processes) {
      if (r.match == p.comm) rule = &r;
    }
    if (rule == nullptr) continue;
    out.push_back({static_cast<pid_t>(p.pid + host_pid_offset), rule, p.mps_client, rule->memory_used_bytes,
                   p.age_s < rule->idle_first_s ? 0U : rule->sm_util_percent});
  }
  unsigned served = 0;
  bool clients = false;
  for (const GpuProcess& p : out) {
    if (!p.mps_client) continue;
    clients = true;
    served += p.sm_util_percent;
  }
  if (clients && server) {
    out.insert(out.begin(), GpuProcess{static_cast<pid_t>(*server + host_pid_offset), nullptr, false,
                                       kMpsServerMemoryBytes, std::min(100U, served)});
  }
  return out;
}

}  // namespace tb::sim
