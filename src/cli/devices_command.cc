// `trainbench devices`: what this machine's listeners can read, vendor by vendor: NVIDIA's
// GPUs and MIG devices (NVML), AMD's GPUs and their partitions (AMD SMI), a Jetson's rails
// and power mode, the CPU's RAPL domains, and which listeners can work here and why not.
#include <cstdio>
#include <string>

#include "base/strings.h"
#include "cli/cli.h"
#include "collect/gpu_tool_collectors.h"
#include "collect/jetson.h"
#include "collect/rapl.h"
#include "platform/amdsmi.h"
#include "platform/nvml.h"
#include "platform/nvml_call_costs.h"
#include "platform/process.h"

namespace tb::cli {
namespace {

// Whether the smi and dcgmi listeners can work here, and why not.
void PrintToolListeners() {
  Result<std::string> smi = ProbeSmi();
  std::printf("  smi                    %s\n",
              smi.ok() ? ("available (" + FindExecutable("nvidia-smi").value_or("nvidia-smi") + ")").c_str()
                       : ("not available: " + smi.status().message()).c_str());
  Result<std::string> dcgm = ProbeDcgm();
  std::printf("  dcgmi                  %s\n",
              dcgm.ok() ? "available" : ("not available: " + dcgm.status().message()).c_str());
}

// NVIDIA's GPUs; the nvml listener's line (or why not) in `nvml_line`.
void PrintNvidia(bool call_costs, std::string& nvml_line) {
  Result<std::unique_ptr<Nvml>> nvml = Nvml::Open();
  std::printf("NVML library   %s\n", Nvml::LibraryPath().c_str());
  if (!nvml.ok()) {
    std::printf("GPUs           none found: %s\n", nvml.status().message().c_str());
    nvml_line = "not available: " + nvml.status().message();
    return;
  }
  const Nvml& n = **nvml;
  std::printf("driver         %s%s\n", n.DriverVersion().c_str(), n.simulated() ? "  (simulated GPU)" : "");
  std::printf("CUDA           %s\n", n.CudaVersion().c_str());
  Result<Nvml::DeviceList> devices = n.Devices();
  if (!devices.ok()) {
    nvml_line = "not available: " + devices.status().message();
    return;
  }
  std::printf("\n%-5s %-28s %-42s %s\n", "index", "name", "uuid", "memory");
  for (const Nvml::DeviceInfo& d : devices->gpus) {
    std::printf("%-5u %-28s %-42s %s%s\n", d.index, d.name.c_str(), d.uuid.c_str(),
                FormatValue(static_cast<double>(d.memory_total_bytes), "bytes").c_str(),
                d.mig_enabled ? "  (MIG mode)" : "");
    for (const auto& m : d.mig) {
      std::string gi = "GPU instance " + std::to_string(m.gpu_instance_id);
      std::printf("      MIG %-24s %-42s %s\n", gi.c_str(), m.uuid.c_str(),
                  FormatValue(static_cast<double>(m.memory_total_bytes), "bytes").c_str());
    }
  }
  for (const std::string& why : devices->skipped) std::printf("      %s\n", why.c_str());
  nvml_line = devices->gpus.empty() ? "not available: NVML finds no GPU it may open" : "available";
  if (call_costs && !devices->gpus.empty()) {
    std::printf("\nNVML call costs on GPU %u (median of 20 calls)\n  %-44s %10s %10s  %s\n",
                devices->gpus[0].index, "call", "CPU us", "wall us", "answer");
    for (const NvmlCallCost& c : TimeNvmlCalls(n, devices->gpus[0].handle, 20))
      std::printf("  %-44s %10.1f %10.1f  %s\n", c.call.c_str(), c.cpu_us, c.wall_us, c.answer.c_str());
  }
}

// AMD's GPUs, a line a processor (a partition of an MI300X or a die of an MI250X is one);
// the amdsmi listener's line in `amd_line`.
void PrintAmd(std::string& amd_line) {
  Result<std::unique_ptr<AmdSmi>> amdsmi = AmdSmi::Open();
  if (!amdsmi.ok()) {
    amd_line = "not available: " + amdsmi.status().message();
    return;
  }
  Result<std::vector<AmdSmi::Processor>> found = (*amdsmi)->Processors();
  if (!found.ok() || found->empty()) {
    amd_line = "not available: AMD SMI finds no GPU";
    return;
  }
  std::string version = (*amdsmi)->version().empty() ? "" : " " + (*amdsmi)->version();
  std::printf("\nAMD SMI%s  %s%s\n", version.c_str(), (*amdsmi)->library().c_str(),
              (*amdsmi)->simulated() ? "  (simulated GPU)" : "");
  std::printf("%-5s %-28s %-42s %-10s %s\n", "index", "name", "uuid", "memory", "partition");
  for (const AmdSmi::Processor& p : *found) {
    std::string partition = "socket " + std::to_string(p.socket);
    if (p.partitions > 1)
      partition += ", " + std::to_string(p.partition + 1) + " of " + std::to_string(p.partitions);
    if (!p.compute_partition.empty())
      partition += " (" + p.compute_partition + "/" + p.memory_partition + ")";
    std::printf("%-5u %-28s %-42s %-10s %s\n", p.index, p.name.c_str(), p.uuid.c_str(),
                FormatValue(static_cast<double>(p.memory_total_bytes), "bytes").c_str(), partition.c_str());
  }
  amd_line = "available";
}

// A Jetson's rails as they read now, its GPU's devfreq node and its power mode; the jetson
// and tegrastats listeners' lines.
void PrintJetson(const std::string& root, std::string& jetson_line, std::string& tegrastats_line) {
  std::optional<std::string> tegrastats = FindExecutable("tegrastats");
  tegrastats_line = tegrastats ? "available (" + *tegrastats + ")"
                               : "not available: no tegrastats on PATH (it comes with JetPack)";
  HostFiles files(root);
  JetsonBoard board = FindJetsonBoard(files);
  if (board.rails.empty()) {
    jetson_line = "not available: " + board.absent;
    return;
  }
  jetson_line = "available";
  std::printf("\nJetson rails (INA3221)\n%-18s %-10s %s\n", "rail", "now", "path");
  auto read = [&](const std::string& path) -> std::optional<double> {
    std::string text;
    if (path.empty() || !files.Read(path, text).ok()) return std::nullopt;
    std::optional<uint64_t> v = ParseUint(Trim(text));
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
  };
  for (const JetsonRail& r : board.rails) {
    std::optional<double> mw = read(r.power_path);
    if (std::optional<double> mv = read(r.voltage_path), ma = read(r.current_path); !mw && mv && ma)
      mw = *mv * *ma / 1000;
    char now[32] = "-";
    if (mw) std::snprintf(now, sizeof now, "%.2f W", *mw / 1000);
    std::printf("%-18s %-10s %s\n", r.name.c_str(), now,
                (r.power_path.empty() ? r.current_path : r.power_path).c_str());
  }
  std::printf("GPU devfreq    %s\n", board.gpu_devfreq.empty() ? "not found" : board.gpu_devfreq.c_str());
  std::optional<std::pair<std::string, int>> mode = JetsonPowerMode();
  std::printf("power mode     %s\n",
              mode ? (mode->first + " (" + std::to_string(mode->second) + ")").c_str() : "no nvpmodel");
}

// The CPU's RAPL domains; the rapl listener's line in `rapl_line`.
void PrintRapl(const std::string& root, std::string& rapl_line) {
  RaplDomains rapl = FindRaplDomains(HostFiles(root));
  if (rapl.domains.empty()) {
    rapl_line = "not available: " + rapl.absent;
    return;
  }
  std::printf("\nCPU energy (RAPL)\n%-18s %-36s %s\n", "domain", "path", "");
  int readable = 0;
  for (const RaplDomain& d : rapl.domains) {
    readable += d.counted && d.unreadable.empty();
    std::string note = !d.unreadable.empty() ? "not readable: " + d.unreadable
                       : d.counted           ? "counted"
                                             : "listed only (inside the package or the whole platform)";
    std::printf("%-18s %-36s %s\n", d.label.c_str(), d.path.c_str(), note.c_str());
  }
  rapl_line = readable > 0 ? "available" : "not available: no package domain is readable by this user";
}

}  // namespace

int CommandDevices(bool call_costs, const std::string& root) {
  std::string nvml_line, amd_line, rapl_line, jetson_line, tegrastats_line;
  PrintNvidia(call_costs, nvml_line);
  PrintAmd(amd_line);
  PrintJetson(root, jetson_line, tegrastats_line);
  PrintRapl(root, rapl_line);
  std::printf("\nlisteners\n  top, ps, iostat, net   available\n  free                   available\n");
  std::printf("  rapl                   %s\n", rapl_line.c_str());
  std::printf("  nvml                   %s\n", nvml_line.c_str());
  PrintToolListeners();
  std::printf("  amdsmi                 %s\n", amd_line.c_str());
  std::printf("  jetson                 %s\n", jetson_line.c_str());
  std::printf("  tegrastats             %s\n", tegrastats_line.c_str());
  return 0;
}

}  // namespace tb::cli
