// What the simulated GPU's tools share (sim/sim_tool.cc runs the one named by argv[0]):
// small helpers and each tool's entry point, one file per tool.
#pragma once

#include <string>
#include <vector>

#include "sim/scenario.h"

namespace tb::sim {

std::vector<std::string> SplitOn(const std::string& s, char sep);
void SleepMs(long ms);
// nvidia-smi's and dcgmi's time stamp: 2026/11/27 14:11:49.123 in local time.
std::string Timestamp();
// The GPUs of `ids` ("0,2"), or every GPU when empty.
std::vector<size_t> SelectGpus(const Scenario& s, const std::string& ids);
// The folder this tool was started from: where its siblings (nvidia-cuda-mps-server) are.
std::string ToolDirectory();

int NvidiaSmi(Scenario& s, int argc, char** argv);    // nvidia_smi.cc (with `nvidia-smi mig`)
int Dcgmi(const Scenario& s, int argc, char** argv);  // dcgmi.cc
int MpsControl(int argc, char** argv);                // mps_tools.cc
int MpsServer();
int CudaVisibleDevices();
int Nsight(bool systems, int argc, char** argv);  // nsight.cc

}  // namespace tb::sim
