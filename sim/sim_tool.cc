// The simulated GPU's command-line tools, one executable that acts by the name it is run
// under (CMake links it as sim/bin/nvidia-smi, sim/bin/dcgmi and
// sim/bin/nvidia-cuda-mps-control):
//   nvidia-smi --query-gpu=FIELDS --format=csv[,noheader][,nounits] [-l SEC | -lms MS] [-i IDS]
//   nvidia-smi -L | -q
//   nvidia-smi mig -i GPU -cgi PROFILES [-C] | -gi ID -dci | -gi ID -dgi | -lgi
//   dcgmi discovery -l
//   dcgmi group -c NAME -a IDS | -d ID | -l
//   dcgmi dmon -e FIELDS [-d MS] [-g GROUP | -i IDS] [-c COUNT]
//   dcgmi profile --pause | --resume
//   nvidia-cuda-mps-control -d | (commands such as "quit" on stdin)
//   nsys profile [OPTIONS] COMMAND...; ncu [OPTIONS] COMMAND...
//   cuda-visible-devices (a stand-in for a CUDA program: which devices it would see)
// They print the real tools' formats (see sim/README.md) from the scenario in
// TRAINBENCH_SIM_SCENARIO, and its faults: unsupported fields, a lost GPU, no DCGM host
// engine, profiling watches refused. dcgmi's groups live in a small state file beside the
// scenario so that separate invocations see each other's groups, as with a host engine.
#include "sim/sim_tool.h"

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

namespace tb::sim {

std::vector<std::string> SplitOn(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}

void SleepMs(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, nullptr);
}

std::string Timestamp() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm local{};
  localtime_r(&ts.tv_sec, &local);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y/%m/%d %H:%M:%S", &local);
  char out[80];
  std::snprintf(out, sizeof out, "%s.%03ld", buf, ts.tv_nsec / 1000000);
  return out;
}

std::vector<size_t> SelectGpus(const Scenario& s, const std::string& ids) {
  std::vector<size_t> out;
  if (ids.empty()) {
    for (size_t i = 0; i < s.gpus.size(); ++i) out.push_back(i);
  } else {
    for (const std::string& id : SplitOn(ids, ',')) out.push_back(static_cast<size_t>(std::atoi(id.c_str())));
  }
  return out;
}

// The folder this tool was started from (argv[0]'s, else the PATH entry that holds it):
// where its siblings (nvidia-cuda-mps-server) are.
std::string g_argv0;
std::string ToolDirectory() {
  if (g_argv0.find('/') != std::string::npos) return g_argv0.substr(0, g_argv0.rfind('/'));
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && access((dir + "/" + g_argv0).c_str(), X_OK) == 0) return dir;
  }
  return ".";
}

}  // namespace tb::sim

int main(int argc, char** argv) {
  using namespace tb::sim;
  signal(SIGPIPE, SIG_DFL);
  g_argv0 = argv[0];
  {
    std::string tool = argv[0];
    tool = tool.substr(tool.rfind('/') + 1);
    if (tool == "nvidia-cuda-mps-control") return MpsControl(argc, argv);
    if (tool == "nvidia-cuda-mps-server") return MpsServer();
    if (tool == "cuda-visible-devices") return CudaVisibleDevices();
    if (tool == "nsys" || tool == "ncu") return Nsight(tool == "nsys", argc, argv);
  }
  std::string error;
  std::optional<Scenario> s = Scenario::Load(&error);
  std::string name = argv[0];
  name = name.substr(name.rfind('/') + 1);
  if (!s) {
    if (name == "dcgmi") {
      std::printf("Error: Unable to connect to host engine. Host engine connection invalid/disconnected.\n");
      return 255;
    }
    std::printf("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. (%s)\n",
                error.c_str());
    return 9;
  }
  if (name == "dcgmi") return Dcgmi(*s, argc, argv);
  return NvidiaSmi(*s, argc, argv);
}
