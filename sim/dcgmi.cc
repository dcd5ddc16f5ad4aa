// The simulated dcgmi: discovery, group, dmon and profile (sim/README.md).
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

using Options = std::map<std::string, std::string>;

// dcgmi discovery -c: the MIG hierarchy.
int DiscoveryHierarchy(const Scenario& s) {
  // The MIG hierarchy: GPU instances and compute instances with their DCGM entity ids, laid
  // out as DCGM 3.x prints it (a rule between GPUs, none between a GPU's instances).
  const char* rule =
      "+-------------------+--------------------------------------------------------------------+\n";
  std::printf(
      "%s| Instance Hierarchy                                                                     |\n", rule);
  std::printf("+===================+====================================================================+\n");
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

// dcgmi discovery -l: the GPUs.
int Discovery(const Scenario& s) {
  std::printf("%zu GPU%s found.\n", s.gpus.size(), s.gpus.size() == 1 ? "" : "s");
  for (size_t g = 0; g < s.gpus.size(); ++g) {
    std::printf("| %-8zu| Name: %s\n|         | Device UUID: %s\n", g, s.gpus[g].name.c_str(),
                s.gpus[g].uuid.c_str());
  }
  return 0;
}

// dcgmi group -c NAME [-a IDS] | -d ID | -l.
int Group(Options& opts) {
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

// dcgmi profile --pause | --resume.
int Profile(Options& opts) {
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

// dcgmi dmon -e FIELDS [-i IDS | -g GROUP] [-d MS] [-c COUNT].
int Dmon(const Scenario& s, Options& opts) {
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

int Dcgmi(const Scenario& s, int argc, char** argv) {
  if (!s.dcgm_host_engine) {
    std::fprintf(stderr,
                 "Error: unable to establish a connection to the specified host: localhost\n"
                 "Error: Unable to connect to host engine. Host engine connection invalid/disconnected.\n");
    return 255;
  }
  std::string command = argc > 1 ? argv[1] : "";
  Options opts;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a[0] == '-' && i + 1 < argc && argv[i + 1][0] != '-') {
      opts[a] = argv[++i];
    } else {
      opts[a] = "";
    }
  }
  if (command == "discovery") return opts.count("-c") != 0 ? DiscoveryHierarchy(s) : Discovery(s);
  if (command == "group") return Group(opts);
  if (command == "profile") return Profile(opts);
  if (command == "dmon") return Dmon(s, opts);
  std::printf("simulated dcgmi: discovery, group, profile and dmon are supported\n");
  return 1;
}

}  // namespace tb::sim
