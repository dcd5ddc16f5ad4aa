// Runs that shared a GPU at the same time each record the GPU's own series (its utilization,
// power, memory) alike: a figure draws each such series once, with the first of those runs,
// named for the device and all of them ("GPU 0, shared by 0AMPS and 0BMPS"). The screen
// keeps the same rule (web/src/shared_devices.ts).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "store/store.h"

namespace tb {

// Whether two runs watched the same GPUs at once: the same host, the same devices as given
// to them (GPU UUIDs where trainbench started them, else indices), overlapping in time. A
// run that does not say its host or devices shares with none.
bool SharedDevicesAtOnce(const RunRecord& a, const RunRecord& b);

// Whether a metric is a device's own series (gpu.*), which every run on the device records
// alike, rather than a run's own (proc.gpu.*: its share).
bool IsDeviceMetric(const std::string& metric);

// Leaves each shared device series with the first run that has it: `shown[i]` the series of
// `runs[i]`; `sharing` gets the runs left out, by the keeper's index and the labels.
void DrawEachDeviceOnce(const std::vector<RunRecord>& runs, std::vector<std::vector<SeriesInfo>>& shown,
                        std::map<std::pair<size_t, std::string>, std::vector<const RunRecord*>>& sharing);

}  // namespace tb
