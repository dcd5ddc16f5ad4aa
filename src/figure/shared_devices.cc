#include "figure/shared_devices.h"

#include <algorithm>
#include <limits>

#include "base/strings.h"

namespace tb {

bool SharedDevicesAtOnce(const RunRecord& a, const RunRecord& b) {
  auto end = [](const RunRecord& r) { return r.end_ms > 0 ? r.end_ms : std::numeric_limits<int64_t>::max(); };
  return !a.host.empty() && a.host == b.host && !a.devices.empty() && a.devices == b.devices &&
         a.start_ms < end(b) && b.start_ms < end(a);
}

bool IsDeviceMetric(const std::string& metric) { return StartsWith(metric, "gpu."); }

void DrawEachDeviceOnce(const std::vector<RunRecord>& runs, std::vector<std::vector<SeriesInfo>>& shown,
                        std::map<std::pair<size_t, std::string>, std::vector<const RunRecord*>>& sharing) {
  for (size_t i = 1; i < runs.size(); ++i) {
    std::erase_if(shown[i], [&](const SeriesInfo& s) {
      if (!IsDeviceMetric(s.metric)) return false;
      for (size_t j = 0; j < i; ++j) {
        bool same = std::any_of(shown[j].begin(), shown[j].end(),
                                [&](const SeriesInfo& o) { return o.labels == s.labels; });
        if (same && SharedDevicesAtOnce(runs[i], runs[j])) {
          sharing[{j, s.labels}].push_back(&runs[i]);
          return true;
        }
      }
      return false;
    });
  }
}

}  // namespace tb
