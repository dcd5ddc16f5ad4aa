#include "platform/amdsmi.h"

#include <dlfcn.h>

#include <cstdlib>

namespace tb {
namespace {

// The library's places, in the order they are tried.
std::vector<std::string> Candidates() {
  const char* env = std::getenv("TRAINBENCH_AMDSMI_LIBRARY");
  if (env != nullptr && *env != '\0') return {env};
  return {"libamd_smi.so", "/opt/rocm/lib/libamd_smi.so"};
}

std::string Text(const char* chars, size_t size) {
  size_t n = 0;
  while (n < size && chars[n] != '\0') ++n;
  return std::string(chars, n);
}

}  // namespace

Result<std::unique_ptr<AmdSmi>> AmdSmi::Open() {
  void* library = nullptr;
  std::string path, why;
  for (const std::string& candidate : Candidates()) {
    library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr) {
      path = candidate;
      break;
    }
    const char* error = dlerror();
    why = error != nullptr ? error : "unknown error";
  }
  if (library == nullptr) {
    return Status::Unavailable("cannot load AMD SMI (" + why +
                               "); install ROCm's amd-smi-lib, or set TRAINBENCH_AMDSMI_LIBRARY");
  }
  std::unique_ptr<AmdSmi> a(new AmdSmi());
  a->library_ = library;
  a->path_ = path;
  a->simulated_ = dlsym(library, "trainbench_simulated_gpu") != nullptr;
  amdsmi::Functions& f = a->fn_;
  std::string missing;
#define TB_AMDSMI_BIND(name)                                          \
  f.name = reinterpret_cast<decltype(f.name)>(dlsym(library, #name)); \
  if (f.name == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #name;
  TB_AMDSMI_FUNCTIONS(TB_AMDSMI_BIND)
#undef TB_AMDSMI_BIND
  if (!missing.empty()) {
    return Status::Unavailable(path + " lacks " + missing +
                               ": it is older than ROCm 6.0; upgrade amd-smi-lib");
  }
  if (amdsmi::Status s = f.amdsmi_init(amdsmi::kInitAmdGpus); s != amdsmi::kSuccess) {
    a->fn_.amdsmi_shut_down = nullptr;  // nothing to shut down
    return Status::Unavailable("AMD SMI (" + path + ") does not start: " + a->Error(s) +
                               "; is the amdgpu driver loaded?");
  }
  amdsmi::Version v{};
  if (f.amdsmi_get_lib_version(&v) == amdsmi::kSuccess) {
    a->version_ = std::to_string(v.year) + "." + std::to_string(v.major) + "." + std::to_string(v.minor);
    a->metrics_layout_known_ = v.year == amdsmi::kLayoutYear && v.major == amdsmi::kLayoutMajor;
  }
  return a;
}

AmdSmi::~AmdSmi() {
  if (fn_.amdsmi_shut_down != nullptr) fn_.amdsmi_shut_down();
  // The library stays loaded: its threads and atexit handlers may outlive this object.
}

std::string AmdSmi::Error(amdsmi::Status code) const {
  const char* text = nullptr;
  if (fn_.amdsmi_status_code_to_string != nullptr && fn_.amdsmi_status_code_to_string(code, &text) == 0 &&
      text != nullptr)
    return text;
  return "AMD SMI status " + std::to_string(code);
}

Result<std::vector<AmdSmi::Processor>> AmdSmi::Processors() const {
  uint32_t sockets = 0;
  if (amdsmi::Status s = fn_.amdsmi_get_socket_handles(&sockets, nullptr); s != amdsmi::kSuccess)
    return Status::Unavailable("AMD SMI cannot list the sockets: " + Error(s));
  std::vector<amdsmi::SocketHandle> socket_handles(sockets);
  if (amdsmi::Status s = fn_.amdsmi_get_socket_handles(&sockets, socket_handles.data());
      s != amdsmi::kSuccess)
    return Status::Unavailable("AMD SMI cannot list the sockets: " + Error(s));
  std::vector<Processor> out;
  for (unsigned socket = 0; socket < sockets; ++socket) {
    uint32_t count = 0;
    if (fn_.amdsmi_get_processor_handles(socket_handles[socket], &count, nullptr) != amdsmi::kSuccess)
      continue;
    std::vector<amdsmi::ProcessorHandle> handles(count);
    if (fn_.amdsmi_get_processor_handles(socket_handles[socket], &count, handles.data()) != amdsmi::kSuccess)
      continue;
    for (unsigned i = 0; i < count; ++i) {
      Processor p;
      p.handle = handles[i];
      p.index = static_cast<unsigned>(out.size());
      p.socket = socket;
      p.partition = i;
      p.partitions = count;
      amdsmi::AsicInfo asic{};
      if (fn_.amdsmi_get_gpu_asic_info(p.handle, &asic) == amdsmi::kSuccess)
        p.name = Text(asic.market_name, sizeof(asic.market_name));
      char uuid[amdsmi::kUuidSize + 2] = {};
      unsigned length = sizeof(uuid);
      if (fn_.amdsmi_get_gpu_device_uuid(p.handle, &length, uuid) == amdsmi::kSuccess)
        p.uuid = Text(uuid, sizeof(uuid));
      char partition[amdsmi::kNormalStringLength] = {};
      if (fn_.amdsmi_get_gpu_compute_partition(p.handle, partition, sizeof(partition)) == amdsmi::kSuccess)
        p.compute_partition = Text(partition, sizeof(partition));
      char memory[amdsmi::kNormalStringLength] = {};
      if (fn_.amdsmi_get_gpu_memory_partition(p.handle, memory, sizeof(memory)) == amdsmi::kSuccess)
        p.memory_partition = Text(memory, sizeof(memory));
      amdsmi::VramUsage vram{};
      if (fn_.amdsmi_get_gpu_vram_usage(p.handle, &vram) == amdsmi::kSuccess)
        p.memory_total_bytes = static_cast<uint64_t>(vram.vram_total) * 1048576;
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace tb
