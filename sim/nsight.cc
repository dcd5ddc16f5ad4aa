// The simulated Nsight Systems (nsys) and Nsight Compute (ncu).
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

// --- nsys, ncu ------------------------------------------------------------------------------
// Nsight Systems (`nsys profile`) and Nsight Compute (`ncu`): run the command after the
// options, then write a report at -o's path with the tool's extension (.nsys-rep,
// .ncu-rep) naming the options and the command, and exit with the command's exit code.
int Nsight(bool systems, int argc, char** argv) {
  // Options that take a separate value, as the tools define them (a subset).
  const std::vector<std::string> with_value = systems ? std::vector<std::string>{"--capture-range",
                                                                                 "--nvtx-capture",
                                                                                 "--capture-range-end",
                                                                                 "-o",
                                                                                 "--output",
                                                                                 "-f",
                                                                                 "--force-overwrite",
                                                                                 "-w",
                                                                                 "--show-output",
                                                                                 "-x",
                                                                                 "--stop-on-exit",
                                                                                 "-t",
                                                                                 "--trace",
                                                                                 "--cuda-memory-usage",
                                                                                 "-d",
                                                                                 "--duration"}
                                                      : std::vector<std::string>{"-o",
                                                                                 "--export",
                                                                                 "--nvtx-include",
                                                                                 "-c",
                                                                                 "--launch-count",
                                                                                 "--mode",
                                                                                 "--target-processes",
                                                                                 "-k",
                                                                                 "--kernel-name",
                                                                                 "--section"};
  int i = 1;
  if (systems) {
    if (argc < 2 || std::string(argv[1]) != "profile") {
      std::fprintf(stderr, "simulated nsys: only `nsys profile` is supported\n");
      return 1;
    }
    i = 2;
  }
  std::string output = "report1", options;
  bool launch_only = false;  // ncu --mode=launch: the application waits for `ncu --mode=attach`
  for (; i < argc && argv[i][0] == '-'; ++i) {
    std::string a = argv[i];
    options += " " + a;
    if (!systems &&
        (a == "--mode=launch" || (a == "--mode" && i + 1 < argc && std::string(argv[i + 1]) == "launch")))
      launch_only = true;
    if (std::find(with_value.begin(), with_value.end(), a) != with_value.end() && i + 1 < argc) {
      options += std::string(" ") + argv[i + 1];
      if (a == "-o" || a == "--output" || a == "--export") output = argv[i + 1];
      ++i;
    }
  }
  if (i >= argc) {
    std::fprintf(stderr, "simulated %s: no command to profile\n", systems ? "nsys" : "ncu");
    return 1;
  }
  std::string command;
  for (int j = i; j < argc; ++j) command += std::string(j > i ? " " : "") + argv[j];
  // Launch mode writes no report: the profiler that attaches does. (A real application
  // stops at its first CUDA call until one attaches; the simulated ones make none.)
  if (launch_only) std::printf("==PROF== Waiting for profiler to attach on ports 49152-49215.\n");
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[i], argv + i);
    std::fprintf(stderr, "%s: command not found\n", argv[i]);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (launch_only) return code;
  std::string report = output + (systems ? ".nsys-rep" : ".ncu-rep");
  std::ofstream(report) << "simulated Nsight " << (systems ? "Systems" : "Compute")
                        << " report\noptions:" << options << "\ncommand: " << command
                        << "\nexit code: " << code << "\n";
  std::printf(systems ? "Generated:\n    %s\n" : "==PROF== Report: %s\n", report.c_str());
  return code;
}

}  // namespace tb::sim
