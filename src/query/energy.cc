#include "query/energy.h"

#include <cmath>
#include <map>

#include "metrics/names.h"
#include "metrics/sample.h"

namespace tb {

void TimeIntegral::Add(std::span<const Point> points) {
  for (const Point& p : points) {
    if (points_++ > 0 && !std::isnan(last_.value) && !std::isnan(p.value))
      total_ += (last_.value + p.value) / 2 * static_cast<double>(p.time_ms - last_.time_ms) / 1000;
    last_ = p;
  }
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
    // Chunk by chunk: a long run's power series is never held whole.
    TimeIntegral integral;
    TB_RETURN_IF_ERROR(
        ForEachSeriesPart(store, p->second, [&](std::span<const Point> part) { integral.Add(part); }));
    if (integral.points() < 2) continue;
    energy.joules += integral.value();
    energy.integrated = true;
    ++energy.gpus;
  }
  if (energy.gpus == 0) return std::optional<GpuEnergy>();
  return std::optional<GpuEnergy>(energy);
}

Result<std::optional<double>> RunCpuEnergy(Store& store, const std::string& run_id) {
  Result<std::vector<SeriesInfo>> series = store.ListSeries(run_id);
  if (!series.ok()) return series.status();
  std::optional<double> joules;
  for (const SeriesInfo& s : *series) {
    if (s.metric != metric::kProcCpuEnergyJoules) continue;
    Result<std::optional<std::pair<Point, Point>>> ends = ReadSeriesEnds(store, s.id);
    if (!ends.ok()) return ends.status();
    if (*ends) joules = joules.value_or(0) + (*ends)->second.value - (*ends)->first.value;
  }
  return joules;
}

}  // namespace tb
