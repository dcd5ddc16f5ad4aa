// `nvml`: per GPU, utilization, memory (used without the driver's reservation, and the
// reservation apart, where the driver has nvmlMemory_v2), power, temperature, clocks,
// performance state, clock-event (throttle) reasons and the processes on it, every tick
// (the cheap calls); the costly fields at their own cadence (their costs: docs/GPU.md): the
// energy counter on the first and last tick and every 2 minutes (a cumulative counter loses
// nothing between), per-process SM utilization only while the run shares the GPU with a
// process NVML measures on its own, every 10 s and when a process came onto the GPU (the
// driver buffers its samples meanwhile), PCIe throughput every 30 s on a thread of its own
// (NVML waits out its measuring window in the call); per process of the run's tree, GPU
// memory; per MIG device, its memory.
//
// The run's share of a GPU (proc.gpu.share_ratio), by one rule for every run on it so that
// the shares add up to 1: the parties are the processes on the GPU, the MPS server aside
// (NVML reports utilization for the server only, so its activity is split equally among
// its clients, and the run is told so once); the share is the tree's SM activity over all
// parties'; with nothing computing, an equal part per party; alone, 1; with no process on
// the GPU, an equal part per run started on it (DeviceSelection::runs_sharing). The run's
// energy proc.gpu.energy_joules is each increase of the GPU's energy counter times the
// run's power-weighted share since the last reading (power times the share, tick by tick,
// on GPUs without the counter): the runs' energies add up to the GPU's.
//
// A GPU with no memory of its own (DGX Spark's GB10 shares the system's: NVML answers
// NOT_SUPPORTED to both memory calls and nvidia-smi prints [N/A]) is told once; its memory
// used is then the sum of its processes' (which NVML does report) and its total the
// system's MemTotal.
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
