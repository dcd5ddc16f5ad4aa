// The simulated machine's processes: which live processes a scenario's GPUs list (by
// their rules, /proc/PID/comm and environment), scanned on the simulator's own thread.
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "sim/scenario.h"

namespace tb::sim {

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
  // The devices its runtime may use (ROCR_, HIP_ or CUDA_VISIBLE_DEVICES, the first set);
  // nullopt when none is set.
  std::optional<std::string> visible;
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
      scan_.push_back({pid, CommOf(pid), false, false, 0, std::nullopt});
    }
    closedir(dir);
    // Only the processes some rule (or the MPS server) could be need their environment read.
    for (ScannedProcess& p : scan_) {
      bool wanted = p.comm == "nvidia-cuda-mps";
      for (const auto* list : {&scenario.gpus, &scenario.amd})
        for (const Gpu& g : *list)
          for (const ProcessRule& r : g.processes) wanted |= r.match == p.comm;
      if (!wanted || !scenario.OnThisMachine(p.pid)) continue;
      p.on_this_machine = true;
      p.mps_client = MpsClient(p.pid);
      p.age_s = AgeOf(p.pid);
      for (const char* name : {"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"}) {
        std::string value = EnvironOf(p.pid, name);
        if (value.empty()) continue;
        p.visible = value;
        break;
      }
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

namespace {

// Whether a comma-separated device list names `index`.
bool Names(const std::string& list, size_t index) {
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item == std::to_string(index)) return true;
  }
  return false;
}

}  // namespace

std::vector<Scenario::AmdProcess> Scenario::AmdProcesses(size_t index) const {
  std::vector<AmdProcess> out;
  const Gpu& gpu = amd[index];
  if (gpu.processes.empty()) return out;
  for (const ScannedProcess& p : Scanner().Get(*this)) {
    if (!p.on_this_machine || (p.visible && !Names(*p.visible, index))) continue;
    for (const ProcessRule& r : gpu.processes) {
      if (r.match != p.comm) continue;
      double busy_s = std::max(0.0, p.age_s - r.idle_first_s) * r.sm_util_percent / 100.0;
      out.push_back({static_cast<pid_t>(p.pid + host_pid_offset), r.memory_used_bytes,
                     static_cast<uint64_t>(busy_s * 1e9),
                     p.age_s < r.idle_first_s ? 0.0 : r.sm_util_percent});
      break;
    }
  }
  return out;
}

}  // namespace tb::sim
