// The listeners that read NVIDIA's own tools, as radT did:
//  - `smi`: one long-running `nvidia-smi --query-gpu=... --format=csv,noheader,nounits
//    -lms INTERVAL`, radT's fields (power.draw, timestamp, utilization.gpu,
//    utilization.memory, memory.used, pstate) and more;
//  - `dcgmi`: a DCGM group of the run's GPUs (removed afterwards) watched by one
//    long-running `dcgmi dmon -e FIELDS -d MS -g GROUP`, starting with the full profiling
//    set (SM, tensor, DRAM active...) and falling back to smaller sets when dcgmi answers
//    "Error setting watches", down to the basic fields. Profiling never runs faster than
//    every 100 ms.
// Each row is stamped with the time it was printed (nvidia-smi's timestamp field; for
// dcgmi, the moment its line arrived) and stored on the next tick with that time, so the
// tools' series line up with nvml's. Their series carry the label listener=smi or
// listener=dcgmi beside gpu=N, so they never mix with nvml's. Only the run's GPUs are
// watched; under MIG, dcgmi also watches the run's GPU instances (DCGM GPU-I entities,
// labelled gpu=N,gpu_instance=G), the one source of activity inside a MIG instance.
// DCGM never fills PCIe throughput fields 200/201, so PCIe traffic comes from the
// profiling fields 1009/1010, and is absent (not zero) where they cannot be watched.
// A tool that is missing or cannot reach its driver or host engine is reported once and
// the listener goes quiet; lines that do not parse are counted and reported, never fatal.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "collect/collector.h"
#include "collect/gpu_devices.h"

namespace tb {

std::unique_ptr<Collector> MakeSmiCollector(const DeviceSelection& devices, int64_t interval_ms);
std::unique_ptr<Collector> MakeDcgmiCollector(const DeviceSelection& devices, int64_t interval_ms);

// dcgmi's field sets, richest first, in radT's order of fallback: everything (A100, H100),
// without FP64 (A10-class GPUs), then the basic fields.
const std::vector<std::vector<int>>& DcgmiFieldSets();

// `dcgmi discovery -l`, once: its output when a DCGM host engine answers, else why not
// (with what to do).
Result<std::string> ProbeDcgm();
bool DcgmHostEngineAnswers();
// `nvidia-smi -L`: its list of GPUs when the driver answers, else why not.
Result<std::string> ProbeSmi();

}  // namespace tb
