// The simulated MPS control daemon and server, and a stand-in CUDA program (cuda-visible-devices).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "platform/nvml_abi.h"
#include "sim/scenario.h"
#include "sim/sim_tool.h"

namespace tb::sim {

// --- nvidia-cuda-mps-control ---------------------------------------------------------------
// `-d` starts the control daemon: the pipe directory (CUDA_MPS_PIPE_DIRECTORY, default
// /tmp/nvidia-mps) gets its "control" entry, refused when one is there already. Without -d,
// commands come on stdin; "quit" stops the daemon, and with none running the front end
// says so and fails. Every event is appended to control.log in CUDA_MPS_LOG_DIRECTORY
// (default /var/log/nvidia-mps), which tests read.
int MpsControl(int argc, char** argv) {
  auto env_or = [](const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return std::string(v != nullptr && *v != '\0' ? v : fallback);
  };
  std::string pipe = env_or("CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps");
  std::string log_dir = env_or("CUDA_MPS_LOG_DIRECTORY", "/var/log/nvidia-mps");
  std::string control = pipe + "/control";
  auto log = [&](const std::string& line) {
    if (std::FILE* f = std::fopen((log_dir + "/control.log").c_str(), "a")) {
      std::fprintf(f, "[%lld] %s\n", static_cast<long long>(std::time(nullptr)), line.c_str());
      std::fclose(f);
    }
  };
  bool running = access(control.c_str(), F_OK) == 0;
  if (argc > 1 && std::string(argv[1]) == "-d") {
    if (running) {
      std::fprintf(stderr, "An instance of this daemon is already running\n");
      return 1;
    }
    // The real daemon forks into the background and becomes ready a moment later: until
    // then the front end cannot find it.
    std::string devices = env_or("CUDA_VISIBLE_DEVICES", "");
    if (access(pipe.c_str(), W_OK) != 0) {
      std::fprintf(stderr, "Cannot create %s\n", control.c_str());
      return 1;
    }
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid > 0) return 0;
    setsid();
    // A daemon holds none of its starter's pipes.
    int null = open("/dev/null", O_RDWR);
    for (int fd : {0, 1, 2}) dup2(null, fd);
    if (null > 2) close(null);
    SleepMs(300);
    std::string partial = control + ".starting";
    if (std::FILE* f = std::fopen(partial.c_str(), "w")) {
      std::fprintf(f, "%s\n", devices.c_str());
      std::fclose(f);
      std::rename(partial.c_str(), control.c_str());
    }
    log("Startup CUDA_VISIBLE_DEVICES=" + devices);
    // The server that runs the clients' work: nvidia-cuda-mps-server beside this tool.
    // (The real daemon starts it when the first client connects; here it starts at once.)
    pid_t server = fork();
    if (server == 0) {
      std::string self = ToolDirectory() + "/nvidia-cuda-mps-server";
      execl(self.c_str(), self.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // Until "quit" takes the control entry away (or the pipe directory goes).
    while (access(control.c_str(), F_OK) == 0) SleepMs(50);
    if (server > 0) {
      kill(server, SIGTERM);
      waitpid(server, nullptr, 0);
    }
    log("Server exited");
    _exit(0);
  }
  char line[256];
  while (std::fgets(line, sizeof line, stdin) != nullptr) {
    std::string command = line;
    while (!command.empty() && (command.back() == '\n' || command.back() == ' ')) command.pop_back();
    if (!running) {
      std::fprintf(stderr, "Cannot find MPS control daemon process\n");
      return 1;
    }
    if (command == "quit") {
      std::remove(control.c_str());
      log("quit");
      return 0;
    }
    if (command == "get_server_list") continue;  // no servers: nothing to print
    log("command " + command);
  }
  return 0;
}

// --- nvidia-cuda-mps-server ---------------------------------------------------------------
// Started by the control daemon; lives until it is told to go (SIGTERM) or its daemon's
// control entry is gone. NVML lists it on the GPUs of the daemon's clients.
int MpsServer() {
  const char* pipe = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  std::string control = std::string(pipe != nullptr && *pipe != '\0' ? pipe : "/tmp/nvidia-mps") + "/control";
  while (access(control.c_str(), F_OK) == 0) SleepMs(100);
  return 0;
}

// --- cuda-visible-devices --------------------------------------------------------------
// What a CUDA program would see, printed one device a line ("0: GPU-... NAME"), with CUDA's
// rules: CUDA_VISIBLE_DEVICES holds indices (in CUDA_DEVICE_ORDER; PCI_BUS_ID is NVML's
// order, which the simulated GPUs have either way) or GPU-/MIG- UUIDs, comma-separated.
// Under an MPS control daemon (CUDA_MPS_PIPE_DIRECTORY with a running daemon) the daemon's
// own CUDA_VISIBLE_DEVICES is applied first and the client's indices count within it, as
// NVIDIA's MPS guide says: a client naming a device outside the daemon's set fails as
// CUDA does ("no CUDA-capable device is detected", exit 1). Tests run it as a run's
// command to check what trainbench hands its children.
int CudaVisibleDevices() {
  std::string error;
  std::optional<Scenario> s = Scenario::Load(&error);
  if (!s) {
    std::fprintf(stderr, "CUDA driver version is insufficient for CUDA runtime version (%s)\n",
                 error.c_str());
    return 1;
  }
  struct Dev {
    std::string uuid, name;
  };
  std::vector<Dev> all;
  for (const Gpu& g : s->gpus) {
    if (g.no_permission) continue;
    if (g.mig_mode == "Enabled") {
      for (const tb::sim::MigInstance& m : g.mig) {
        if (m.compute_instance_id >= 0) all.push_back({m.uuid, g.name + " MIG " + m.profile});
      }
    } else {
      all.push_back({g.uuid, g.name});
    }
  }
  // Applies a CUDA_VISIBLE_DEVICES list to `from`; false when an entry names no device.
  auto apply = [&](const std::vector<Dev>& from, const std::string& list, std::vector<Dev>& out) {
    if (list.empty()) {
      out = from;
      return true;
    }
    out.clear();
    for (const std::string& raw : SplitOn(list, ',')) {
      std::string e = raw;
      while (!e.empty() && e.front() == ' ') e.erase(e.begin());
      bool digits =
          !e.empty() && std::all_of(e.begin(), e.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (digits) {
        size_t i = static_cast<size_t>(std::atoi(e.c_str()));
        if (i >= from.size()) return false;
        out.push_back(from[i]);
        continue;
      }
      auto it = std::find_if(from.begin(), from.end(), [&](const Dev& d) { return d.uuid == e; });
      if (it == from.end()) return false;
      out.push_back(*it);
    }
    return true;
  };
  auto env_or = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v != nullptr ? v : "");
  };
  std::vector<Dev> visible = all;
  std::string pipe = env_or("CUDA_MPS_PIPE_DIRECTORY");
  std::ifstream control(pipe.empty() ? "/tmp/nvidia-mps/control" : pipe + "/control");
  std::string daemon_devices;
  if (control && std::getline(control, daemon_devices)) {
    std::vector<Dev> served;
    if (!apply(all, daemon_devices, served)) {
      std::fprintf(stderr, "MPS server failed to start: CUDA_VISIBLE_DEVICES=%s names no device\n",
                   daemon_devices.c_str());
      return 1;
    }
    visible = served;
  }
  std::vector<Dev> seen;
  if (!apply(visible, env_or("CUDA_VISIBLE_DEVICES"), seen) || seen.empty()) {
    std::fprintf(stderr, "cudaErrorNoDevice: no CUDA-capable device is detected (CUDA_VISIBLE_DEVICES=%s)\n",
                 env_or("CUDA_VISIBLE_DEVICES").c_str());
    return 1;
  }
  for (size_t i = 0; i < seen.size(); ++i)
    std::printf("%zu: %s %s\n", i, seen[i].uuid.c_str(), seen[i].name.c_str());
  return 0;
}

}  // namespace tb::sim
