// One line of NVIDIA Jetson's `tegrastats`, read as its boards print it (testdata/jetson/):
//   RAM 20642/62817MB (lfb 1x2MB) CPU [23%@2201,off,...] EMC_FREQ 3%@3199
//   GR3D_FREQ 12%@[1300,1300] ... VDD_GPU_SOC 5139mW/5139mW/5139mW VIN_SYS_5V0 5500mW/...
// GR3D_FREQ is the GPU's load in percent at its frequency in MHz: one frequency (JetPack 6
// and older), one per GPC in brackets (JetPack 7), or no load at all (Thor: "@[f,f,f]").
// A rail is NAME CURRENT/AVERAGE[/MAX] in mW, with or without the unit (Xavier and older
// print bare numbers). CPU [LOAD%@MHZ,off,...] is each core's load and clock ("off": the core is
// offline). Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tb {

struct TegrastatsLine {
  std::optional<double> ram_used_mb, ram_total_mb;
  std::optional<double> emc_load_percent, emc_mhz;
  std::vector<std::optional<double>> cpu_mhz;            // per core, "off" absent
  std::optional<double> gpu_load_percent;                // absent on Thor, which prints no GPU load
  std::optional<double> gpu_mhz;                         // the highest GPC's
  std::vector<std::pair<std::string, double>> rails_mw;  // current power per rail, "NC" left out
};

// False when the line has none of RAM, GR3D_FREQ and a rail (not a tegrastats line).
bool ParseTegrastatsLine(std::string_view line, TegrastatsLine& out);

// The board's input power: the VDD_IN or POM_5V_IN rail where there is one (it measures
// the whole board), else the sum of the rails, as jtop takes it. Absent without rails.
std::optional<double> BoardPowerMilliwatts(const std::vector<std::pair<std::string, double>>& rails_mw);
// The rail that powers the GPU: VDD_GPU, POM_5V_GPU or GPU where there is one, else the
// one shared with the SoC (VDD_GPU_SOC on Orin). Null when no rail names the GPU.
const std::pair<std::string, double>* GpuRail(const std::vector<std::pair<std::string, double>>& rails_mw);

}  // namespace tb
