// The simulated nvidia-smi: --query-gpu, -L, -q and `nvidia-smi mig` (sim/README.md).
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

// --- nvidia-smi ----------------------------------------------------------------------------

// nvidia-smi is built on NVML: the simulated one reads every value of --query-gpu through
// the simulated libnvidia-ml it is linked with, so it pays the same call latencies
// (call_delay_us, nvml_init_ms) and meets the same faults as a program calling NVML itself.
// (Its calls and types: platform/nvml_abi.h, as trainbench and the simulated library see them.)
constexpr int kNvmlNotSupported = tb::nvml::kNotSupported;
constexpr const char* kSmiFields[] = {"timestamp",
                                      "index",
                                      "name",
                                      "uuid",
                                      "power.draw",
                                      "utilization.gpu",
                                      "utilization.memory",
                                      "memory.used",
                                      "memory.total",
                                      "temperature.gpu",
                                      "clocks.sm",
                                      "clocks.mem",
                                      "pstate",
                                      "fan.speed",
                                      "mig.mode.current",
                                      "mig.mode.pending"};

bool IsSmiField(const std::string& field) {
  return std::find(std::begin(kSmiFields), std::end(kSmiFields), field) != std::end(kSmiFields);
}

// One --query-gpu field of one GPU (its NVML handle), as nvidia-smi prints it with nounits.
std::string SmiField(tb::nvml::Device device, const Gpu& g, size_t index, const std::string& field) {
  // What nvidia-smi prints for a value NVML would not give.
  auto failed = [&](int code) -> std::string {
    if (code != kNvmlNotSupported) return "[Unknown Error]";
    // nvidia-smi shows no utilization for a GPU in MIG mode.
    return g.mig_mode == "Enabled" && field.rfind("utilization.", 0) == 0 ? "[N/A]" : "[Not Supported]";
  };
  auto number = [&](int code, const char* format, double value) -> std::string {
    if (code != 0) return failed(code);
    char buf[64];
    std::snprintf(buf, sizeof buf, format, value);
    return buf;
  };
  unsigned int u = 0;
  if (field == "timestamp") return Timestamp();
  if (field == "index") return std::to_string(index);
  if (field == "name" || field == "uuid") {
    char text[96];
    int code = field == "name" ? nvmlDeviceGetName(device, text, sizeof text)
                               : nvmlDeviceGetUUID(device, text, sizeof text);
    return code == 0 ? text : failed(code);
  }
  if (field == "power.draw") {
    int code = nvmlDeviceGetPowerUsage(device, &u);
    return number(code, "%.2f", u / 1000.0);
  }
  if (field == "utilization.gpu" || field == "utilization.memory") {
    tb::nvml::Utilization rates{};
    int code = nvmlDeviceGetUtilizationRates(device, &rates);
    return number(code, "%.0f", field == "utilization.gpu" ? rates.gpu : rates.memory);
  }
  if (field == "memory.used" || field == "memory.total") {
    tb::nvml::MemoryV2 memory{};
    memory.version = tb::nvml::kMemoryV2Version;
    int code = nvmlDeviceGetMemoryInfo_v2(device, &memory);
    double mib = static_cast<double>(field == "memory.used" ? memory.used : memory.total) / 1048576;
    // A GPU without memory of its own (GB10: unified with the system's) prints N/A there.
    if (code != 0 && g.memory_total_bytes == 0) return "[N/A]";
    return number(code, "%.0f", std::floor(mib));
  }
  if (field == "temperature.gpu") {
    int code = nvmlDeviceGetTemperature(device, 0, &u);
    return number(code, "%.0f", u);
  }
  if (field == "clocks.sm" || field == "clocks.mem") {
    int code = nvmlDeviceGetClockInfo(device, field == "clocks.sm" ? 1 : 2, &u);  // NVML_CLOCK_SM, _MEM
    return number(code, "%.0f", u);
  }
  if (field == "pstate") {
    int pstate = 0;
    int code = nvmlDeviceGetPerformanceState(device, &pstate);
    return code == 0 ? "P" + std::to_string(pstate) : failed(code);
  }
  if (field == "fan.speed") return "[N/A]";  // data-center GPUs have no fan of their own
  if (field == "mig.mode.current" || field == "mig.mode.pending") {
    unsigned int current = 0, pending = 0;
    int code = nvmlDeviceGetMigMode(device, &current, &pending);
    if (code == kNvmlNotSupported) return "[N/A]";
    if (code != 0) return failed(code);
    return (field == "mig.mode.current" ? current : pending) == 1 ? "Enabled" : "Disabled";
  }
  return "";
}

// A MIG UUID for a created instance, derived from its GPU and GPU instance, in the
// 8-4-4-4-12 shape of real ones.
std::string MigUuid(const Gpu& g, unsigned gi) {
  uint64_t h = 1469598103934665603ull;
  for (char c : g.uuid + "/" + std::to_string(gi)) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char buf[64];
  std::snprintf(buf, sizeof buf, "MIG-%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(h >> 32),
                static_cast<unsigned>(h >> 16) & 0xffff, static_cast<unsigned>(h) & 0xffff, gi,
                static_cast<unsigned long long>(h & 0xffffffffffffull));
  return buf;
}

// `nvidia-smi mig`: creates and destroys GPU and compute instances on a GPU in MIG mode
// (root only, as the real one), keeping them in the scenario's MIG state file. A100 40GB
// capacity: 7 compute and 8 memory slices. Each command and its outcome is appended to
// the MIG log, which tests read.
struct MigCommand {
  std::string gpu_arg, create, gi_arg;
  bool default_ci = false, destroy_ci = false, destroy_gi = false, list = false;
  std::string command = "nvidia-smi";
  std::string outcome;
  std::string log_file;

  MigCommand(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      command += " " + a;
      bool has_value = i + 1 < argc;
      if ((a == "-i" || a == "--id") && has_value) gpu_arg = argv[i + 1];
      if ((a == "-cgi" || a == "--create-gpu-instance") && has_value) create = argv[i + 1];
      if ((a == "-gi" || a == "--gpu-instance-id") && has_value) gi_arg = argv[i + 1];
      default_ci |= a == "-C" || a == "--default-compute-instance";
      destroy_ci |= a == "-dci" || a == "--destroy-compute-instance";
      destroy_gi |= a == "-dgi" || a == "--destroy-gpu-instance";
      list |= a == "-lgi" || a == "--list-gpu-instances";
    }
  }
  // The command and its outcome into the MIG log; returns the exit code.
  int Log(int code) const {
    if (std::FILE* f = std::fopen(log_file.c_str(), "a")) {
      std::fprintf(f, "%s => %d %s\n", command.c_str(), code, outcome.c_str());
      std::fclose(f);
    }
    return code;
  }
  static void Save(const Scenario& s) {
    std::ofstream out(s.MigStateFile());
    for (size_t g = 0; g < s.gpus.size(); ++g) {
      for (const tb::sim::MigInstance& m : s.gpus[g].mig) {
        if (m.created)
          out << g << " " << m.gpu_instance_id << " " << m.compute_instance_id << " " << m.profile << " "
              << m.uuid << "\n";
      }
    }
  }
};

// nvidia-smi mig -lgi
int ListGpuInstances(const Gpu& g, size_t index) {
  std::printf(
      "+----------------------------------------------------+\n"
      "| GPU instances:                                     |\n"
      "| GPU   Name          Profile  Instance   Placement  |\n"
      "|                       ID       ID       Start:Size |\n"
      "|====================================================|\n");
  for (const tb::sim::MigInstance& m : g.mig) {
    const tb::sim::MigProfile* p = tb::sim::FindMigProfile(m.profile);
    std::printf("|  %2zu  MIG %-9s %4u   %6u          -:-    |\n", index, m.profile.c_str(), p ? p->id : 0,
                m.gpu_instance_id);
  }
  std::printf("+----------------------------------------------------+\n");
  return 0;
}

// nvidia-smi mig -cgi PROFILES [-C]: each profile where the GPU has slices left for it.
int CreateGpuInstances(Scenario& s, Gpu& g, size_t index, MigCommand& c) {
  int code = 0;
  for (const std::string& name : SplitOn(c.create, ',')) {
    const tb::sim::MigProfile* p = tb::sim::FindMigProfile(name);
    if (p == nullptr) {
      std::printf("Unable to create a GPU instance on GPU %2zu using profile %s: Not Found\n", index,
                  name.c_str());
      c.outcome += "unknown profile " + name + ";";
      code = 2;
      continue;
    }
    unsigned compute = 0, memory = 0;
    for (const tb::sim::MigInstance& m : g.mig) {
      const tb::sim::MigProfile* used = tb::sim::FindMigProfile(m.profile);
      compute += used ? used->compute_slices : 0;
      memory += used ? used->memory_slices : 0;
    }
    if (compute + p->compute_slices > 7 || memory + p->memory_slices > 8) {
      std::printf("Unable to create a GPU instance on GPU %2zu using profile %u: Insufficient Resources\n",
                  index, p->id);
      c.outcome += "no room for " + name + ";";
      code = 2;
      continue;
    }
    unsigned gi = 1;
    while (std::any_of(g.mig.begin(), g.mig.end(), [&](const auto& m) { return m.gpu_instance_id == gi; }))
      ++gi;
    tb::sim::MigInstance m;
    m.profile = p->name;
    m.gpu_instance_id = gi;
    m.uuid = MigUuid(g, gi);
    m.created = true;
    m.compute_instance_id = c.default_ci ? 0 : -1;
    m.memory_total_bytes = uint64_t{p->memory_mib} * 1048576;
    g.mig.push_back(m);
    std::printf("Successfully created GPU instance ID %2u on GPU %2zu using profile MIG %s (ID %2u)\n", gi,
                index, p->name, p->id);
    if (c.default_ci) {
      std::printf(
          "Successfully created compute instance ID %2d on GPU %2zu GPU instance ID %2u using profile MIG "
          "%s (ID "
          "%2u)\n",
          m.compute_instance_id, index, gi, p->name, p->ci_profile_id);
    }
    c.outcome += "created gi " + std::to_string(gi) + " " + p->name + ";";
  }
  if (code != 0) std::printf("Failed to create GPU instances: Insufficient Resources\n");
  c.Save(s);
  return c.Log(code);
}

// nvidia-smi mig -dci | -dgi -gi ID: a compute instance, then its GPU instance.
int DestroyInstance(Scenario& s, Gpu& g, size_t index, MigCommand& c) {
  unsigned gi = static_cast<unsigned>(std::atoi(c.gi_arg.c_str()));
  auto it = std::find_if(g.mig.begin(), g.mig.end(), [&](const auto& m) { return m.gpu_instance_id == gi; });
  if (c.gi_arg.empty() || it == g.mig.end()) {
    std::printf("Unable to destroy %s instance ID %s from GPU %2zu: Not Found\n",
                c.destroy_ci ? "compute" : "GPU", c.gi_arg.c_str(), index);
    c.outcome = "not found";
    return c.Log(2);
  }
  // Each GPU instance holds at most one compute instance here (-1 once destroyed).
  if (c.destroy_ci) {
    if (it->compute_instance_id < 0) {
      std::printf("Unable to destroy compute instance from GPU %2zu GPU instance ID %2u: Not Found\n", index,
                  gi);
      c.outcome = "no ci in gi " + std::to_string(gi);
      return c.Log(2);
    }
    std::printf("Successfully destroyed compute instance ID %2d from GPU %2zu GPU instance ID %2u\n",
                it->compute_instance_id, index, gi);
    c.outcome = "destroyed ci of gi " + std::to_string(gi);
    it->compute_instance_id = -1;
    c.Save(s);
    return c.Log(0);
  }
  if (it->compute_instance_id >= 0) {
    std::printf("Unable to destroy GPU instance ID %2u from GPU %2zu: In use by another client\n", gi, index);
    c.outcome = "gi " + std::to_string(gi) + " still has a compute instance";
    return c.Log(2);
  }
  std::printf("Successfully destroyed GPU instance ID %2u from GPU %2zu\n", gi, index);
  c.outcome = "destroyed gi " + std::to_string(gi);
  g.mig.erase(it);
  c.Save(s);
  return c.Log(0);
}

int NvidiaSmiMig(Scenario& s, int argc, char** argv) {
  MigCommand c(argc, argv);
  c.log_file = s.MigStateFile() + ".log";
  size_t index = c.gpu_arg.empty() ? 0 : static_cast<size_t>(std::atoi(c.gpu_arg.c_str()));
  if (index >= s.gpus.size() || s.gpus[index].mig_mode != "Enabled") {
    std::printf("No MIG-enabled devices found.\n");
    c.outcome = "no MIG-enabled device";
    return c.Log(6);
  }
  Gpu& g = s.gpus[index];
  if (c.list) return ListGpuInstances(g, index);
  if ((!c.create.empty() || c.destroy_ci || c.destroy_gi) && geteuid() != 0) {
    std::printf("Unable to %s on GPU %2zu: Insufficient Permissions\n",
                c.create.empty() ? "destroy instances" : "create a GPU instance", index);
    c.outcome = "insufficient permissions";
    return c.Log(4);
  }
  if (!c.create.empty()) return CreateGpuInstances(s, g, index, c);
  if (c.destroy_ci || c.destroy_gi) return DestroyInstance(s, g, index, c);
  std::printf("simulated nvidia-smi mig: -cgi, -dci, -dgi and -lgi are supported\n");
  return 2;
}

int NvidiaSmi(Scenario& s, int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "mig") return NvidiaSmiMig(s, argc, argv);
  std::string query, format, ids;
  long loop_ms = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--query-gpu=", 0) == 0) query = a.substr(12);
    if (a.rfind("--format=", 0) == 0) format = a.substr(9);
    if ((a == "-l" || a == "--loop") && i + 1 < argc) loop_ms = std::atol(argv[++i]) * 1000;
    if ((a == "-lms" || a == "--loop-ms") && i + 1 < argc) loop_ms = std::atol(argv[++i]);
    if ((a == "-i" || a == "--id") && i + 1 < argc) ids = argv[++i];
    if (a == "-L" || a == "--list-gpus") {
      for (size_t g = 0; g < s.gpus.size(); ++g) {
        if (s.gpus[g].no_permission) continue;  // hidden from this process
        std::printf("GPU %zu: %s (UUID: %s)\n", g, s.gpus[g].name.c_str(), s.gpus[g].uuid.c_str());
        for (size_t m = 0; m < s.gpus[g].mig.size(); ++m) {
          const tb::sim::MigInstance& mig = s.gpus[g].mig[m];
          if (mig.compute_instance_id < 0) continue;  // a GPU instance without compute: no device
          std::printf("  MIG %-12sDevice %2zu: (UUID: %s)\n", mig.profile.c_str(), m, mig.uuid.c_str());
        }
      }
      return 0;
    }
    if (a == "-q" || a == "--query") {
      std::printf(
          "\n==============NVSMI LOG==============\n\nDriver Version                            : %s\n"
          "CUDA Version                              : %d.%d\n\nAttached GPUs                             : "
          "%zu\n",
          s.driver_version.c_str(), s.cuda_driver_version / 1000, s.cuda_driver_version % 1000 / 10,
          s.gpus.size());
      for (const Gpu& g : s.gpus) {
        std::printf(
            "GPU %s\n    Product Name                          : %s\n    GPU UUID                            "
            "  : %s\n",
            g.pci_bus_id.c_str(), g.name.c_str(), g.uuid.c_str());
      }
      return 0;
    }
  }
  if (query.empty()) {
    std::printf("simulated nvidia-smi: use --query-gpu=... --format=csv, -L or -q\n");
    return 0;
  }
  std::vector<std::string> fields = SplitOn(query, ',');
  for (const std::string& f : fields) {
    if (!IsSmiField(f)) {
      std::printf("Field \"%s\" is not a valid field to query.\n\n", f.c_str());
      return 2;
    }
  }
  if (nvmlInit_v2() != 0) {
    std::printf(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
        "latest NVIDIA driver is installed and running.\n\n");
    return 9;
  }
  bool header = format.find("noheader") == std::string::npos;
  if (header) {
    for (size_t i = 0; i < fields.size(); ++i) std::printf("%s%s", i ? ", " : "", fields[i].c_str());
    std::printf("\n");
  }
  if (s.tool_garbage) std::printf("%%%% garbled output ###\n");
  while (true) {
    for (size_t index : SelectGpus(s, ids)) {
      if (index >= s.gpus.size() || s.gpus[index].no_permission) continue;
      const Gpu& g = s.gpus[index];
      tb::nvml::Device device = nullptr;
      if (s.Lost(g) || nvmlDeviceGetHandleByIndex_v2(static_cast<unsigned int>(index), &device) != 0) {
        std::printf(
            "Unable to determine the device handle for GPU %s: GPU is lost.  Reboot the system to recover "
            "this GPU\n",
            g.pci_bus_id.c_str());
        continue;
      }
      for (size_t i = 0; i < fields.size(); ++i) {
        std::printf("%s%s", i ? ", " : "", SmiField(device, g, index, fields[i]).c_str());
      }
      std::printf("\n");
    }
    std::fflush(stdout);
    if (loop_ms <= 0) break;
    SleepMs(loop_ms);
  }
  nvmlShutdown();
  return 0;
}

}  // namespace tb::sim
