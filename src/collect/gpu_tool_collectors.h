// The listeners that read NVIDIA's own tools, as radT did:
//  - `smi`: one long-running `nvidia-smi --query-gpu=... --format=csv,noheader,nounits
//    -lms INTERVAL`, radT's fields (power.draw, timestamp, utilization.gpu,
//    utilization.memory, memory.used, pstate) and more;
//  - `dcgmi`: a DCGM group of the run's GPUs (removed afterwards) watched by one
//    long-running `dcgmi dmon -e FIELDS -d MS -g GROUP`, starting with the full profiling
//    set (SM, tensor, DRAM active...) and falling back to smaller sets when dcgmi answers
//    "Error setting watches", down to the basic fields. Profiling never runs faster than
//    every 100 ms.
// Each tick stores the newest row the tool printed for each GPU. Their series carry the
// label listener=smi or listener=dcgmi beside gpu=N, so they never mix with nvml's.
// A tool that is missing or cannot reach its driver or host engine is reported once and
// the listener goes quiet; lines that do not parse are counted and reported, never fatal.
#pragma once

#include <memory>
#include <vector>

#include "collect/collector.h"

namespace tb {

std::unique_ptr<Collector> MakeSmiCollector(std::vector<unsigned> gpu_indices, int64_t interval_ms);
std::unique_ptr<Collector> MakeDcgmiCollector(std::vector<unsigned> gpu_indices, int64_t interval_ms);

// dcgmi's field sets, richest first (radT's order of fallback).
const std::vector<std::vector<int>>& DcgmiFieldSets();

}  // namespace tb
