// `nvml`: per GPU each tick, utilization, memory (used without the driver's reservation,
// and the reservation apart, where the driver has nvmlMemory_v2), power, the energy
// counter, temperature, clocks, performance state and clock-event (throttle) reasons; PCIe
// throughput, which NVML measures over 20 ms per call, on a thread of its own so that no
// tick waits for it; per process of the run's tree on those GPUs, GPU memory and SM
// utilization; per MIG device, its memory.
//
// The run's share of a GPU it shares with other runs (naive collocation or MPS): each tick,
// from the per-process readings of every process on the GPU, the run's tree's SM
// utilization over all processes' (when nothing computes, each process an equal part of
// the processes present). Recorded per GPU as proc.gpu.share_ratio, with the tree's SM
// utilization and memory summed, and proc.gpu.energy_joules, a counter of the GPU's power
// times the share over each tick: the shares of all runs on a GPU add up to its power, so
// no joule is counted twice. A run alone on its GPU has share 1.
//
// A metric the GPU does not support (NOT_SUPPORTED) or may not be read by this user
// (NO_PERMISSION) is learnt on the first answer and never asked for again; a GPU that
// falls off the bus is reported once as an event and skipped from then on, while the
// other GPUs go on. MIG-enabled GPUs answer NOT_SUPPORTED for utilization, which the run
// is told once (dcgmi's GPU-instance figures are the source there).
#pragma once

#include <memory>
#include <vector>

#include "collect/collector.h"
#include "collect/gpu_devices.h"
#include "platform/nvml.h"

namespace tb {

// Samples the selected GPUs (all when the selection names none).
std::unique_ptr<Collector> MakeNvmlCollector(std::shared_ptr<Nvml> nvml, const DeviceSelection& devices);

}  // namespace tb
