// `amdsmi`: AMD Instinct GPUs through AMD SMI (platform/amdsmi.h), under the metric names
// NVIDIA's GPUs use. Per processor (a GPU, a die, a compute partition) every tick: GFX,
// memory-controller and multimedia activity (a compute partition's GFX activity its own,
// from the metrics table: collect/amd_partition_activity.h), VRAM, clocks (GFX as the SM clock), edge,
// hotspot and memory temperatures, and the processes on it with their VRAM and their
// engine time. A field the device does not report (0xFFFF, NOT_SUPPORTED) is absent, never
// a number, and is not asked for again.
//
// Energy domains: a processor that reports no energy counter is covered by the nearest one
// before it that does (an MI250X's odd die by its even die, which reports both; an
// MI300X's compute partitions by the first). Each domain's power and counter are read
// every tick (amdsmi reads them from the driver's metrics table: microseconds) and labelled
// with the head's index; the counter (accumulator x resolution, across its wrap) is checked
// against the power integrated over the run's first seconds (collect/energy_counter.h) and
// the run is told which it used; until then the counter's points are held back, and after a
// failed check they are never written.
//
// The run's share of a domain is counted, not sampled: the engine nanoseconds its
// processes gained over all processes' gains on the domain's processors since the last
// tick (amdsmi's per-process engine time, from /proc/PID/fdinfo), by the one rule of
// collect/gpu_share.h; so collocated runs' energies add up to the domain's by
// construction. NVIDIA's per-process figure, by contrast, is a sampled SM utilization.
#pragma once

#include <memory>

#include "collect/collector.h"
#include "collect/gpu_devices.h"
#include "platform/amdsmi.h"

namespace tb {

// Samples the selected processors (all when the selection names none).
std::unique_ptr<Collector> MakeAmdSmiCollector(std::shared_ptr<AmdSmi> amdsmi,
                                               const DeviceSelection& devices);

}  // namespace tb
