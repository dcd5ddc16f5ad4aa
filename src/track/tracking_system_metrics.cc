// The run's host and GPU series as MLflow's clients and UI look for them: under the names
// MLflow's own system-metrics monitor logs (mlflow/system_metrics: system/cpu_utilization_
// percentage, system/system_memory_usage_megabytes, system/gpu_N_utilization_percentage,
// system/gpu_N_memory_usage_megabytes, system/gpu_N_power_usage_watts), in its units,
// and under the names radT's listeners logged (system/SMI - Power Draw, system/SMI - GPU
// Util, system/SMI - Mem Used in MiB, system/Free - Mem Used GB ...: the run's first GPU, as
// radT's `nvidia-smi -i`), read from the series trainbench keeps (nothing is stored twice).
// Each name is read from one source (SourceRank: NVML, then nvidia-smi, then dcgmi); its
// points are numbered as MLflow's monitor numbers its samples, 0, 1, 2, ...
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/strings.h"
#include "http/api_toolkit.h"
#include "metrics/catalog.h"
#include "metrics/names.h"
#include "metrics/sample.h"
#include "track/tracking_call.h"

namespace tb {

using namespace tracking;  // NOLINT(google-build-using-namespace): this API's own helpers

namespace {

struct SystemName {
  std::string_view metric;
  std::string_view name;  // MLflow's after "system/gpu_N_" for a GPU's; else after "system/"
  double scale;           // the name's unit per trainbench's
  bool per_gpu;
  bool radt = false;  // radT's name: a GPU's for the run's first GPU, with no index in it
};

constexpr double kMiB = 1024.0 * 1024.0;

constexpr SystemName kSystemNames[] = {
    {metric::kGpuUtilizationGpuRatio, "utilization_percentage", 100, true},
    {metric::kGpuMemoryUsedBytes, "memory_usage_megabytes", 1e-6, true},
    {metric::kGpuPowerDrawWatts, "power_usage_watts", 1, true},
    {metric::kHostCpuUtilizationRatio, "cpu_utilization_percentage", 100, false},
    {metric::kHostMemoryUsedBytes, "system_memory_usage_megabytes", 1e-6, false},
    // radT's smi listener (nvidia-smi's W, utilization / 100, MiB) and free listener (MB / 1024).
    {metric::kGpuPowerDrawWatts, "SMI - Power Draw", 1, true, true},
    {metric::kGpuUtilizationGpuRatio, "SMI - GPU Util", 1, true, true},
    {metric::kGpuUtilizationMemoryRatio, "SMI - Mem Util", 1, true, true},
    {metric::kGpuMemoryUsedBytes, "SMI - Mem Used", 1 / kMiB, true, true},
    {metric::kHostMemoryTotalBytes, "Free - Mem Total GB", 1 / 1024e6, false, true},
    {metric::kHostMemoryUsedBytes, "Free - Mem Used GB", 1 / 1024e6, false, true},
    {metric::kHostMemoryAvailableBytes, "Free - Mem Available GB", 1 / 1024e6, false, true},
};

}  // namespace

std::vector<TrackingApi::Call::SystemSeries> TrackingApi::Call::SystemSeriesIds(const std::string& run_id,
                                                                                const std::string& only_key) {
  if (!only_key.empty() && !only_key.starts_with("system/")) return {};
  Result<std::vector<SeriesInfo>> series = api_.store_.ListSeries(run_id);
  ThrowIfError(series.status());
  std::map<std::string, std::pair<int, SystemSeries>> best;  // by name: the best source's
  for (const SeriesInfo& s : *series) {
    for (const SystemName& n : kSystemNames) {
      if (s.metric != n.metric) continue;
      Labels labels = Labels::Parse(s.labels);
      std::string_view gpu = labels.Get("gpu");
      // A GPU's series name their GPU; the host's whole figures have no cpu or gpu label.
      if (n.per_gpu == gpu.empty() || !labels.Get("cpu").empty() || !labels.Get("mig").empty()) continue;
      std::string key =
          n.per_gpu && !n.radt ? Concat({"system/gpu_", gpu, "_", n.name}) : Concat({"system/", n.name});
      if (!only_key.empty() && key != only_key) continue;
      int rank = SourceRank(s.labels);
      if (n.radt && n.per_gpu) rank += 16 * static_cast<int>(ParseUint(gpu).value_or(1000));
      auto [at, fresh] = best.try_emplace(key, rank, SystemSeries{key, s.id, n.scale});
      if (!fresh && rank < at->second.first) at->second = {rank, SystemSeries{key, s.id, n.scale}};
    }
  }
  std::vector<SystemSeries> out;
  out.reserve(best.size());
  for (auto& [key, ranked] : best) out.push_back(ranked.second);
  return out;
}

json TrackingApi::Call::SystemMetricsLatest(const std::string& run_id) {
  json metrics = json::array();
  for (const SystemSeries& s : SystemSeriesIds(run_id)) {
    int64_t total = 0;
    ThrowIfError(ReadSeriesPage(api_.store_, s.id, INT64_MAX, 1, total).status());
    if (total == 0) continue;
    Result<std::vector<Point>> last = ReadSeriesPage(api_.store_, s.id, total - 1, 1, total);
    ThrowIfError(last.status());
    if (last->empty()) continue;
    metrics.push_back({{"key", s.key},
                       {"value", ValueJson(last->back().value * s.scale)},
                       {"timestamp", last->back().time_ms},
                       {"step", total - 1}});
  }
  return metrics;
}

}  // namespace tb
