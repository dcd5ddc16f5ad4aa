#include "query/energy.h"

#include <cmath>
#include <map>

#include "metrics/names.h"
#include "metrics/sample.h"

namespace tb {

double IntegrateOverTime(const std::vector<Point>& points) {
  double total = 0;
  for (size_t i = 1; i < points.size(); ++i) {
    double a = points[i - 1].value, b = points[i].value;
    if (std::isnan(a) || std::isnan(b)) continue;
    total += (a + b) / 2 * static_cast<double>(points[i].time_ms - points[i - 1].time_ms) / 1000;
  }
  return total;
}

Result<std::optional<GpuEnergy>> RunGpuEnergy(Store& store, const std::string& run_id) {
  Result<std::vector<SeriesInfo>> series = store.ListSeries(run_id);
  if (!series.ok()) return series.status();
  // Per GPU (its gpu label, whichever listener measured it; nvml's series sort first), its
  // counter and its power series.
  std::map<std::string, int64_t> counter, power, share;
  for (const SeriesInfo& s : *series) {
    std::string gpu(Labels::Parse(s.labels).Get("gpu"));
    if (s.metric == metric::kGpuEnergyConsumedJoules) counter.try_emplace(gpu, s.id);
    if (s.metric == metric::kGpuPowerDrawWatts) power.try_emplace(gpu, s.id);
    if (s.metric == metric::kProcGpuEnergyJoules) share.try_emplace(gpu, s.id);
  }
  GpuEnergy energy;
  // Counters: their increase, from their first and last points only.
  auto increase = [&](int64_t id) -> Result<std::optional<double>> {
    Result<std::optional<std::pair<Point, Point>>> ends = ReadSeriesEnds(store, id);
    if (!ends.ok()) return ends.status();
    if (!*ends || (*ends)->first.time_ms == (*ends)->second.time_ms) return std::optional<double>();
    return std::optional((*ends)->second.value - (*ends)->first.value);
  };
  for (const auto& [labels, id] : share) {
    Result<std::optional<double>> joules = increase(id);
    if (!joules.ok()) return joules.status();
    if (*joules) energy.run_share_joules = energy.run_share_joules.value_or(0) + **joules;
  }
  for (const auto& [labels, id] : power) counter.try_emplace(labels, 0);
  for (const auto& [labels, counter_id] : counter) {
    if (counter_id != 0) {
      Result<std::optional<double>> joules = increase(counter_id);
      if (!joules.ok()) return joules.status();
      if (*joules) {
        energy.joules += **joules;
        ++energy.gpus;
        continue;
      }
    }
    auto p = power.find(labels);
    if (p == power.end()) continue;
    Result<std::vector<Point>> points = ReadSeriesPoints(store, p->second);
    if (!points.ok()) return points.status();
    if (points->size() < 2) continue;
    energy.joules += IntegrateOverTime(*points);
    energy.integrated = true;
    ++energy.gpus;
  }
  if (energy.gpus == 0) return std::optional<GpuEnergy>();
  return std::optional<GpuEnergy>(energy);
}

}  // namespace tb
