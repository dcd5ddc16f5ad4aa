// Where a script's points go: each point the run does not hold yet into the run's writer
// (MLflow's stores keep an identical point once, however often it is sent), and those that
// name an MLflow 3 logged model into the model's metrics as well.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "http/api_toolkit.h"
#include "store/run_tags.h"
#include "track/tracking_call.h"

namespace tb {

using namespace tracking;  // NOLINT(google-build-using-namespace): this API's own helpers

void TrackingApi::Call::StoreMetrics(const std::string& run_id, const std::vector<MetricIn>& metrics,
                                     const Labels& labels) {
  std::shared_ptr<RunSlot> slot = Slot(run_id);
  for (const MetricIn* m : NewPoints(run_id, *slot, metrics, labels))
    slot->writer->Append(ScriptMetricSeries(m->key), labels.text(), m->point);
  // A run trainbench supervises is flushed by its sampler every second; the others now.
  if (!slot->supervised) ThrowIfError(slot->writer->Flush());
  LinkModelMetrics(run_id, metrics);
}

namespace {

// FNV-1a over the bytes of the point's key, labels, time, step and value (every NaN the
// same), without building a string: it runs for every point a script logs.
uint64_t PointKey(std::string_view key, std::string_view labels, const Point& p) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&](const void* data, size_t n) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  };
  double value = std::isnan(p.value) ? std::numeric_limits<double>::quiet_NaN() : p.value;
  size_t key_size = key.size();
  mix(&key_size, sizeof key_size);  // "a" + "bc" is not "ab" + "c"
  mix(key.data(), key.size());
  mix(labels.data(), labels.size());
  mix(&p.time_ms, sizeof p.time_ms);
  mix(&p.step, sizeof p.step);
  mix(&value, sizeof value);
  return h;
}

}  // namespace

std::vector<const TrackingApi::Call::MetricIn*> TrackingApi::Call::NewPoints(
    const std::string& run_id, RunSlot& slot, const std::vector<MetricIn>& metrics, const Labels& labels) {
  bool load = false;
  {
    std::lock_guard lock(slot.points_mu);
    load = !slot.points_loaded && !slot.supervised;
  }
  std::vector<uint64_t> stored;
  if (load) {
    for (const auto& [key, points] : ScriptSeries(run_id))
      for (const Point& p : points) stored.push_back(PointKey(key, "", p));
  }
  std::lock_guard lock(slot.points_mu);
  if (load && !slot.points_loaded) slot.points.insert(stored.begin(), stored.end());
  slot.points_loaded = true;
  std::vector<const MetricIn*> fresh;
  for (const MetricIn& m : metrics) {
    uint64_t key = PointKey(m.key, labels.text(), m.point);
    if (slot.points.contains(key)) continue;
    if (slot.points.size() < kMaxPointsRemembered) slot.points.insert(key);
    fresh.push_back(&m);
  }
  return fresh;
}

void TrackingApi::Call::LinkModelMetrics(const std::string& run_id, const std::vector<MetricIn>& metrics) {
  std::map<std::string, std::vector<const MetricIn*>> by_model;
  for (const MetricIn& m : metrics) {
    if (!m.model_id.empty()) by_model[m.model_id].push_back(&m);
  }
  for (const auto& [model_id, points] : by_model) {
    auto [run, record] = Model(model_id);
    json& list = record["metrics"];
    if (!list.is_array()) list = json::array();
    size_t before = list.size();
    for (const MetricIn* m : points) {
      json entry = {{"key", m->key},
                    {"value", ValueJson(m->point.value)},
                    {"timestamp", m->point.time_ms},
                    {"step", m->point.step},
                    {"dataset_name", m->dataset_name},
                    {"dataset_digest", m->dataset_digest},
                    {"model_id", model_id},
                    {"run_id", run_id}};
      if (std::find(list.begin(), list.end(), entry) == list.end()) list.push_back(std::move(entry));
    }
    if (list.size() != before) PutModel(run.id, model_id, std::move(record));
  }
}

}  // namespace tb
