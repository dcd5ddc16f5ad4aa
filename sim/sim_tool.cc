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

namespace {

using tb::sim::Gpu;
using tb::sim::Scenario;

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
int NvidiaSmiMig(Scenario& s, int argc, char** argv) {
  std::string gpu_arg, create, gi_arg;
  bool default_ci = false, destroy_ci = false, destroy_gi = false, list = false;
  std::string command = "nvidia-smi";
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
  std::string outcome;
  auto log = [&](int code) {
    if (std::FILE* f = std::fopen((s.MigStateFile() + ".log").c_str(), "a")) {
      std::fprintf(f, "%s => %d %s\n", command.c_str(), code, outcome.c_str());
      std::fclose(f);
    }
    return code;
  };
  auto save = [&] {
    std::ofstream out(s.MigStateFile());
    for (size_t g = 0; g < s.gpus.size(); ++g) {
      for (const tb::sim::MigInstance& m : s.gpus[g].mig) {
        if (m.created)
          out << g << " " << m.gpu_instance_id << " " << m.compute_instance_id << " " << m.profile << " "
              << m.uuid << "\n";
      }
    }
  };
  size_t index = gpu_arg.empty() ? 0 : static_cast<size_t>(std::atoi(gpu_arg.c_str()));
  if (index >= s.gpus.size() || s.gpus[index].mig_mode != "Enabled") {
    std::printf("No MIG-enabled devices found.\n");
    outcome = "no MIG-enabled device";
    return log(6);
  }
  Gpu& g = s.gpus[index];
  if (list) {
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
  if ((!create.empty() || destroy_ci || destroy_gi) && geteuid() != 0) {
    std::printf("Unable to %s on GPU %2zu: Insufficient Permissions\n",
                create.empty() ? "destroy instances" : "create a GPU instance", index);
    outcome = "insufficient permissions";
    return log(4);
  }
  if (!create.empty()) {
    int code = 0;
    for (const std::string& name : SplitOn(create, ',')) {
      const tb::sim::MigProfile* p = tb::sim::FindMigProfile(name);
      if (p == nullptr) {
        std::printf("Unable to create a GPU instance on GPU %2zu using profile %s: Not Found\n", index,
                    name.c_str());
        outcome += "unknown profile " + name + ";";
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
        outcome += "no room for " + name + ";";
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
      m.compute_instance_id = default_ci ? 0 : -1;
      m.memory_total_bytes = uint64_t{p->memory_mib} * 1048576;
      g.mig.push_back(m);
      std::printf("Successfully created GPU instance ID %2u on GPU %2zu using profile MIG %s (ID %2u)\n", gi,
                  index, p->name, p->id);
      if (default_ci) {
        std::printf(
            "Successfully created compute instance ID %2d on GPU %2zu GPU instance ID %2u using profile MIG "
            "%s (ID "
            "%2u)\n",
            m.compute_instance_id, index, gi, p->name, p->ci_profile_id);
      }
      outcome += "created gi " + std::to_string(gi) + " " + p->name + ";";
    }
    if (code != 0) std::printf("Failed to create GPU instances: Insufficient Resources\n");
    save();
    return log(code);
  }
  if (destroy_ci || destroy_gi) {
    unsigned gi = static_cast<unsigned>(std::atoi(gi_arg.c_str()));
    auto it =
        std::find_if(g.mig.begin(), g.mig.end(), [&](const auto& m) { return m.gpu_instance_id == gi; });
    if (gi_arg.empty() || it == g.mig.end()) {
      std::printf("Unable to destroy %s instance ID %s from GPU %2zu: Not Found\n",
                  destroy_ci ? "compute" : "GPU", gi_arg.c_str(), index);
      outcome = "not found";
      return log(2);
    }
    // Each GPU instance holds at most one compute instance here (-1 once destroyed).
    if (destroy_ci) {
      if (it->compute_instance_id < 0) {
        std::printf("Unable to destroy compute instance from GPU %2zu GPU instance ID %2u: Not Found\n",
                    index, gi);
        outcome = "no ci in gi " + std::to_string(gi);
        return log(2);
      }
      std::printf("Successfully destroyed compute instance ID %2d from GPU %2zu GPU instance ID %2u\n",
                  it->compute_instance_id, index, gi);
      outcome = "destroyed ci of gi " + std::to_string(gi);
      it->compute_instance_id = -1;
      save();
      return log(0);
    }
    if (it->compute_instance_id >= 0) {
      std::printf("Unable to destroy GPU instance ID %2u from GPU %2zu: In use by another client\n", gi,
                  index);
      outcome = "gi " + std::to_string(gi) + " still has a compute instance";
      return log(2);
    }
    std::printf("Successfully destroyed GPU instance ID %2u from GPU %2zu\n", gi, index);
    outcome = "destroyed gi " + std::to_string(gi);
    g.mig.erase(it);
    save();
    return log(0);
  }
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

// --- dcgmi ---------------------------------------------------------------------------------

struct DcgmField {
  int id;
  const char* header;
  const char* unit;
  const char* key;
  const char* format;
};

const DcgmField kDcgmFields[] = {
    {155, "POWER", "W", "power_w", "%.3f"},
    {156, "TOTEC", "mJ", "energy_mj", "%.0f"},
    // DCGM never fills 200/201 (hard-coded not supported in every release): always N/A.
    {200, "TXTPT", "", "", "%.0f"},
    {201, "RXTPT", "", "", "%.0f"},
    {203, "GPUTL", "%", "util_gpu_pct", "%.0f"},
    {204, "MCUTL", "%", "util_mem_pct", "%.0f"},
    {1001, "GRACT", "", "gr_engine_active", "%.3f"},
    {1002, "SMACT", "", "sm_active", "%.3f"},
    {1003, "SMOCC", "", "sm_occupancy", "%.3f"},
    {1004, "TENSO", "", "tensor_active", "%.3f"},
    {1005, "DRAMA", "", "dram_active", "%.3f"},
    {1006, "FP64A", "", "fp64_active", "%.3f"},
    {1007, "FP32A", "", "fp32_active", "%.3f"},
    {1008, "FP16A", "", "fp16_active", "%.3f"},
    {1009, "PCITX", "", "pcie_tx_bytes", "%.0f"},
    {1010, "PCIRX", "", "pcie_rx_bytes", "%.0f"},
    {1011, "NVLTX", "", "nvlink_tx_bytes", "%.0f"},
    {1012, "NVLRX", "", "nvlink_rx_bytes", "%.0f"},
};

const DcgmField* FindField(int id) {
  for (const DcgmField& f : kDcgmFields) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

std::string GroupFile() {
  const char* scenario = std::getenv("TRAINBENCH_SIM_SCENARIO");
  return std::string(scenario != nullptr ? scenario : "/tmp/trainbench-sim") + ".dcgm-groups";
}

std::map<int, std::string> ReadGroups() {
  std::map<int, std::string> groups;
  std::ifstream in(GroupFile());
  int id;
  std::string gpus;
  while (in >> id >> gpus) groups[id] = gpus;
  return groups;
}

void WriteGroups(const std::map<int, std::string>& groups) {
  std::ofstream out(GroupFile());
  for (const auto& [id, gpus] : groups) out << id << " " << gpus << "\n";
}

std::string ProfilingPausedFile() {
  const char* scenario = std::getenv("TRAINBENCH_SIM_SCENARIO");
  return std::string(scenario != nullptr ? scenario : "/tmp/trainbench-sim") + ".dcgm-profiling-paused";
}

// MIG GPU instances that have a compute instance, as DCGM numbers its GPU-I entities:
// in order over the GPUs, from 0.
struct DcgmInstance {
  size_t gpu;
  unsigned gpu_instance_id;
  int compute_instance_id;
  int entity;
  double share;  // compute slices of 7
  bool first_of_gpu;
};
std::vector<DcgmInstance> DcgmInstances(const Scenario& s) {
  std::vector<DcgmInstance> out;
  int entity = 0;
  for (size_t g = 0; g < s.gpus.size(); ++g) {
    bool first = true;
    for (const tb::sim::MigInstance& m : s.gpus[g].mig) {
      if (m.compute_instance_id < 0) continue;
      const tb::sim::MigProfile* p = tb::sim::FindMigProfile(m.profile);
      out.push_back(
          {g, m.gpu_instance_id, m.compute_instance_id, entity++, p ? p->compute_slices / 7.0 : 1, first});
      first = false;
    }
  }
  return out;
}

int Dcgmi(const Scenario& s, int argc, char** argv) {
  if (!s.dcgm_host_engine) {
    std::fprintf(stderr,
                 "Error: unable to establish a connection to the specified host: localhost\n"
                 "Error: Unable to connect to host engine. Host engine connection invalid/disconnected.\n");
    return 255;
  }
  std::string command = argc > 1 ? argv[1] : "";
  std::map<std::string, std::string> opts;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a[0] == '-' && i + 1 < argc && argv[i + 1][0] != '-') {
      opts[a] = argv[++i];
    } else {
      opts[a] = "";
    }
  }
  if (command == "discovery" && opts.count("-c") != 0) {
    // The MIG hierarchy: GPU instances and compute instances with their DCGM entity ids, laid
    // out as DCGM 3.x prints it (a rule between GPUs, none between a GPU's instances).
    const char* rule =
        "+-------------------+--------------------------------------------------------------------+\n";
    std::printf(
        "%s| Instance Hierarchy                                                                     |\n",
        rule);
    std::printf(
        "+===================+====================================================================+\n");
    auto row = [](const std::string& where, const std::string& what) {
      std::printf("| %-17s | %-66s |\n", where.c_str(), what.c_str());
    };
    bool any = false;
    for (const DcgmInstance& in : DcgmInstances(s)) {
      if (in.first_of_gpu) {
        if (any) std::printf("%s", rule);
        row("GPU " + std::to_string(in.gpu),
            "GPU " + s.gpus[in.gpu].uuid + " (EntityID: " + std::to_string(in.gpu) + ")");
        any = true;
      }
      std::string gi = std::to_string(in.gpu) + "/" + std::to_string(in.gpu_instance_id);
      row("-> I " + gi, "GPU Instance (EntityID: " + std::to_string(in.entity) + ")");
      row("   -> CI " + gi + "/" + std::to_string(in.compute_instance_id),
          "Compute Instance (EntityID: " + std::to_string(in.entity) + ")");
    }
    std::printf("%s", rule);
    return 0;
  }
  if (command == "discovery") {
    std::printf("%zu GPU%s found.\n", s.gpus.size(), s.gpus.size() == 1 ? "" : "s");
    for (size_t g = 0; g < s.gpus.size(); ++g) {
      std::printf("| %-8zu| Name: %s\n|         | Device UUID: %s\n", g, s.gpus[g].name.c_str(),
                  s.gpus[g].uuid.c_str());
    }
    return 0;
  }
  if (command == "group") {
    std::map<int, std::string> groups = ReadGroups();
    if (opts.count("-c") != 0) {
      int id = groups.empty() ? 2 : groups.rbegin()->first + 1;  // 0 and 1 are DCGM's default groups
      groups[id] = opts.count("-a") != 0 ? opts["-a"] : "-";
      WriteGroups(groups);
      std::printf("Successfully created group \"%s\" with a group ID of %d\n", opts["-c"].c_str(), id);
      if (opts.count("-a") != 0)
        std::printf("Specified entity ID is valid: %s\nAdd to group operation successful.\n",
                    opts["-a"].c_str());
      return 0;
    }
    if (opts.count("-d") != 0) {
      int id = std::atoi(opts["-d"].c_str());
      if (groups.erase(id) == 0) {
        std::printf("Error: Cannot destroy group %d. Return: Setting not configured.\n", id);
        return 1;
      }
      WriteGroups(groups);
      std::printf("Successfully removed group %d\n", id);
      return 0;
    }
    std::printf("%zu group%s found.\n", groups.size(), groups.size() == 1 ? "" : "s");
    for (const auto& [id, gpus] : groups)
      std::printf("| Group ID | %d\n| Entities | GPU %s\n", id, gpus.c_str());
    return 0;
  }
  if (command == "profile") {
    // Paused profiling (for Nsight tools) is a file beside the scenario; dmon then reports
    // the profiling fields as N/A. Each pause and resume is logged for tests.
    bool pause = opts.count("--pause") != 0;
    if (!pause && opts.count("--resume") == 0) {
      std::printf("Error: profile needs --pause or --resume\n");
      return 1;
    }
    if (pause) {
      std::ofstream(ProfilingPausedFile()) << "paused\n";
    } else {
      std::remove(ProfilingPausedFile().c_str());
    }
    std::ofstream(ProfilingPausedFile() + ".log", std::ios::app) << (pause ? "pause" : "resume") << "\n";
    std::printf("Successfully %s profiling.\n", pause ? "paused" : "resumed");
    return 0;
  }
  if (command != "dmon") {
    std::printf("simulated dcgmi: discovery, group, profile and dmon are supported\n");
    return 1;
  }
  bool profiling_paused = access(ProfilingPausedFile().c_str(), F_OK) == 0;
  std::vector<const DcgmField*> fields;
  int profiling = 0;
  for (const std::string& id : SplitOn(opts["-e"], ',')) {
    const DcgmField* f = FindField(std::atoi(id.c_str()));
    if (f == nullptr) {
      std::fprintf(stderr, "Error: Invalid field ID %s\n", id.c_str());
      return 1;
    }
    profiling += f->id >= 1001 ? 1 : 0;
    fields.push_back(f);
  }
  if (profiling > s.dcgm_max_profiling_fields) {
    std::fprintf(stderr,
                 "Error setting watches. Result: The requested operation could not be completed because the "
                 "affected resource is in use.\n");
    return 1;
  }
  long delay_ms = opts.count("-d") != 0 ? std::atol(opts["-d"].c_str()) : 1000;
  long count = opts.count("-c") != 0 ? std::atol(opts["-c"].c_str()) : -1;
  std::string ids = opts.count("-i") != 0 ? opts["-i"] : "";
  if (opts.count("-g") != 0) {
    std::map<int, std::string> groups = ReadGroups();
    int id = std::atoi(opts["-g"].c_str());
    if (groups.count(id) == 0) {
      std::fprintf(stderr, "Error: The group ID %d does not exist.\n", id);
      return 1;
    }
    ids = groups[id];
  }
  int rows = 0;
  if (s.tool_garbage) std::printf("GPU zero garbled output\n");
  std::vector<size_t> gpus;
  std::vector<DcgmInstance> instances;
  for (const std::string& e : SplitOn(ids, ',')) {
    if (e.rfind("i:", 0) == 0) {
      for (const DcgmInstance& in : DcgmInstances(s)) {
        if (in.entity == std::atoi(e.c_str() + 2)) instances.push_back(in);
      }
    } else if (!e.empty() && e != "-") {
      gpus.push_back(static_cast<size_t>(std::atoi(e.c_str())));
    }
  }
  if (ids.empty()) gpus = SelectGpus(s, "");
  auto header = [&] {
    if (rows++ % 14 != 0) return;
    std::printf("#Entity   ");
    for (const DcgmField* f : fields) std::printf("%-16s", f->header);
    std::printf("\nID        ");
    for (const DcgmField* f : fields) std::printf("%-16s", f->unit);
    std::printf("\n");
  };
  // A GPU instance shows its share of the GPU's activity (its compute slices of 7); power
  // and energy exist per GPU only.
  auto print_row = [&](const Gpu& g, const char* entity, double share, bool instance) {
    std::printf("%-10s", entity);
    for (const DcgmField* f : fields) {
      std::optional<double> v;
      if (!s.Lost(g) && !(profiling_paused && f->id >= 1001) && *f->key != '\0' &&
          !(instance && f->id < 1001)) {
        v = f->id == 156 ? s.EnergyMillijoules(g) : s.Value(g, f->key);
        if (v && instance) *v *= share;
      }
      char buf[64];
      if (v) {
        std::snprintf(buf, sizeof buf, f->format, *v);
      } else {
        std::snprintf(buf, sizeof buf, "N/A");
      }
      std::printf("%-16s", buf);
    }
    std::printf("\n");
  };
  for (long n = 0; count < 0 || n < count; ++n) {
    for (size_t index : gpus) {
      if (index >= s.gpus.size()) continue;
      header();
      char entity[32];
      std::snprintf(entity, sizeof entity, "GPU %zu", index);
      print_row(s.gpus[index], entity, 1, false);
    }
    for (const DcgmInstance& in : instances) {
      header();
      char entity[32];
      std::snprintf(entity, sizeof entity, "GPU-I %d", in.entity);
      print_row(s.gpus[in.gpu], entity, in.share, true);
    }
    std::fflush(stdout);
    SleepMs(delay_ms);
  }
  return 0;
}

}  // namespace

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

int main(int argc, char** argv) {
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
