#include "platform/nvml.h"

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>

namespace tb {
namespace {

// Resolves the first of `names` the library has into `fn`.
template <typename F>
void Bind(void* library, F& fn, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = dlsym(library, name)) {
      fn = reinterpret_cast<F>(symbol);
      return;
    }
  }
}

}  // namespace

std::string Nvml::LibraryPath() {
  const char* env = std::getenv("TRAINBENCH_NVML_LIBRARY");
  return env != nullptr && *env != '\0' ? env : "libnvidia-ml.so.1";
}

Result<std::unique_ptr<Nvml>> Nvml::Open() {
  std::string path = LibraryPath();
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return Status::Unavailable("cannot load NVML (" + path +
                               "): " + (why != nullptr ? why : "unknown error") +
                               "; install the NVIDIA driver, or set TRAINBENCH_NVML_LIBRARY");
  }
  std::unique_ptr<Nvml> n(new Nvml());
  n->library_ = library;
  n->simulated_ = dlsym(library, "trainbench_simulated_gpu") != nullptr;
  nvml::Functions& f = n->fn_;
  Bind(library, f.Init, {"nvmlInit_v2", "nvmlInit"});
  Bind(library, f.Shutdown, {"nvmlShutdown"});
  Bind(library, f.ErrorString, {"nvmlErrorString"});
  Bind(library, f.SystemGetDriverVersion, {"nvmlSystemGetDriverVersion"});
  Bind(library, f.SystemGetCudaDriverVersion,
       {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
  Bind(library, f.DeviceGetCount, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  Bind(library, f.DeviceGetHandleByIndex, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  Bind(library, f.DeviceGetHandleByUUID, {"nvmlDeviceGetHandleByUUID"});
  Bind(library, f.DeviceGetName, {"nvmlDeviceGetName"});
  Bind(library, f.DeviceGetUUID, {"nvmlDeviceGetUUID"});
  Bind(library, f.DeviceGetUtilizationRates, {"nvmlDeviceGetUtilizationRates"});
  Bind(library, f.DeviceGetMemoryInfo, {"nvmlDeviceGetMemoryInfo"});
  Bind(library, f.DeviceGetMemoryInfoV2, {"nvmlDeviceGetMemoryInfo_v2"});
  Bind(library, f.DeviceGetPowerUsage, {"nvmlDeviceGetPowerUsage"});
  Bind(library, f.DeviceGetTotalEnergyConsumption, {"nvmlDeviceGetTotalEnergyConsumption"});
  Bind(library, f.DeviceGetTemperature, {"nvmlDeviceGetTemperature"});
  Bind(library, f.DeviceGetClockInfo, {"nvmlDeviceGetClockInfo"});
  Bind(library, f.DeviceGetPerformanceState, {"nvmlDeviceGetPerformanceState"});
  Bind(library, f.DeviceGetPcieThroughput, {"nvmlDeviceGetPcieThroughput"});
  Bind(library, f.DeviceGetClocksEventReasons,
       {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  Bind(library, f.DeviceGetComputeRunningProcessesV2, {"nvmlDeviceGetComputeRunningProcesses_v2"});
  Bind(library, f.DeviceGetComputeRunningProcessesV1, {"nvmlDeviceGetComputeRunningProcesses"});
  Bind(library, f.DeviceGetMPSComputeRunningProcessesV2, {"nvmlDeviceGetMPSComputeRunningProcesses_v2"});
  Bind(library, f.DeviceGetProcessUtilization, {"nvmlDeviceGetProcessUtilization"});
  Bind(library, f.DeviceGetMigMode, {"nvmlDeviceGetMigMode"});
  Bind(library, f.DeviceGetMaxMigDeviceCount, {"nvmlDeviceGetMaxMigDeviceCount"});
  Bind(library, f.DeviceGetMigDeviceHandleByIndex, {"nvmlDeviceGetMigDeviceHandleByIndex"});
  Bind(library, f.DeviceGetGpuInstanceId, {"nvmlDeviceGetGpuInstanceId"});
  Bind(library, f.DeviceGetPciBusId, {"nvmlDeviceGetPciBusId_v2", "nvmlDeviceGetPciBusId"});
  if (f.Init == nullptr || f.Shutdown == nullptr || f.DeviceGetCount == nullptr ||
      f.DeviceGetHandleByIndex == nullptr) {
    dlclose(library);
    n->library_ = nullptr;
    return Status::Unavailable(path +
                               " is not a usable NVML library (nvmlInit or nvmlDeviceGetCount missing)");
  }
  nvml::Return r = f.Init();
  if (r != nvml::kSuccess) {
    std::string why = n->Error(r);
    dlclose(library);
    n->library_ = nullptr;
    return Status::Unavailable("NVML did not initialize: " + why +
                               "; check that the NVIDIA driver is loaded (nvidia-smi should work)");
  }
  return n;
}

Nvml::~Nvml() {
  if (library_ == nullptr) return;
  fn_.Shutdown();
  dlclose(library_);
}

std::string Nvml::Error(nvml::Return code) const {
  const char* s = fn_.ErrorString != nullptr ? fn_.ErrorString(code) : nullptr;
  return (s != nullptr ? std::string(s) : "NVML error") + " (" + std::to_string(code) + ")";
}

std::string Nvml::DriverVersion() const {
  char buf[96] = {};
  if (fn_.SystemGetDriverVersion == nullptr ||
      fn_.SystemGetDriverVersion(buf, sizeof buf) != nvml::kSuccess) {
    return "";
  }
  return buf;
}

std::string Nvml::CudaVersion() const {
  int v = 0;
  if (fn_.SystemGetCudaDriverVersion == nullptr || fn_.SystemGetCudaDriverVersion(&v) != nvml::kSuccess)
    return "";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

Result<Nvml::DeviceList> Nvml::Devices() const {
  unsigned count = 0;
  nvml::Return r = fn_.DeviceGetCount(&count);
  if (r != nvml::kSuccess) return Status::Unavailable("cannot count GPUs: " + Error(r));
  DeviceList out;
  for (unsigned i = 0; i < count; ++i) {
    DeviceInfo d;
    d.index = i;
    r = fn_.DeviceGetHandleByIndex(i, &d.handle);
    if (r != nvml::kSuccess) {
      std::string why =
          r == nvml::kNoPermission
              ? "; it is hidden from this process (a container or cgroup that gives it other GPUs)"
              : "";
      out.skipped.push_back("GPU " + std::to_string(i) + " cannot be opened: " + Error(r) + why +
                            "; the other GPUs are sampled");
      continue;
    }
    char buf[96] = {};
    if (fn_.DeviceGetName != nullptr && fn_.DeviceGetName(d.handle, buf, sizeof buf) == nvml::kSuccess)
      d.name = buf;
    if (fn_.DeviceGetUUID != nullptr && fn_.DeviceGetUUID(d.handle, buf, sizeof buf) == nvml::kSuccess)
      d.uuid = buf;
    nvml::Memory mem{};
    if (fn_.DeviceGetMemoryInfo != nullptr && fn_.DeviceGetMemoryInfo(d.handle, &mem) == nvml::kSuccess) {
      d.memory_total_bytes = mem.total;
    }
    unsigned current = 0, pending = 0, max_mig = 0;
    d.mig_enabled = fn_.DeviceGetMigMode != nullptr &&
                    fn_.DeviceGetMigMode(d.handle, &current, &pending) == nvml::kSuccess && current == 1;
    if (d.mig_enabled && fn_.DeviceGetMaxMigDeviceCount != nullptr &&
        fn_.DeviceGetMigDeviceHandleByIndex != nullptr &&
        fn_.DeviceGetMaxMigDeviceCount(d.handle, &max_mig) == nvml::kSuccess) {
      for (unsigned m = 0; m < max_mig; ++m) {
        DeviceInfo::Mig mig;
        // NOT_FOUND: an empty slot (or a GPU instance without a compute instance).
        if (fn_.DeviceGetMigDeviceHandleByIndex(d.handle, m, &mig.handle) != nvml::kSuccess) continue;
        if (fn_.DeviceGetUUID != nullptr &&
            fn_.DeviceGetUUID(mig.handle, buf, sizeof buf) == nvml::kSuccess) {
          mig.uuid = buf;
        }
        if (fn_.DeviceGetGpuInstanceId != nullptr) {
          unsigned gi = 0;
          if (fn_.DeviceGetGpuInstanceId(mig.handle, &gi) == nvml::kSuccess) mig.gpu_instance_id = gi;
        }
        if (fn_.DeviceGetMemoryInfo != nullptr &&
            fn_.DeviceGetMemoryInfo(mig.handle, &mem) == nvml::kSuccess) {
          mig.memory_total_bytes = mem.total;
        }
        d.mig.push_back(mig);
      }
    }
    out.gpus.push_back(std::move(d));
  }
  return out;
}

}  // namespace tb
