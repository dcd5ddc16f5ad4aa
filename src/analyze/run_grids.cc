#include "analyze/run_grids.h"

#include <algorithm>
#include <cmath>

#include "metrics/names.h"

namespace tb {

double Median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty()) return kNaN;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

size_t BucketCount(int64_t start_ms, int64_t end_ms) {
  return end_ms > start_ms ? static_cast<size_t>((end_ms - start_ms + kStepMs - 1) / kStepMs) : 0;
}

bool Summed(std::string_view metric) {
  return metric == metric::kGpuPowerDrawWatts || metric == metric::kGpuEnergyConsumedJoules ||
         metric == metric::kGpuMemoryUsedBytes;
}

bool Counter(std::string_view metric) {
  return metric == metric::kGpuEnergyConsumedJoules || metric == metric::kProcGpuEnergyJoules ||
         metric == metric::kProcCpuEnergyJoules;
}

int Fill(std::string_view metric) { return metric == metric::kTrainThroughputSamplesPerSecond ? 30 : 5; }

std::vector<size_t> OneListener(const std::vector<std::string_view>& labels) {
  std::vector<size_t> out;
  bool plain = std::any_of(labels.begin(), labels.end(),
                           [](std::string_view l) { return !Labels::Parse(std::string(l)).Has("listener"); });
  std::string listener;
  for (size_t i = 0; i < labels.size(); ++i) {
    Labels parsed = Labels::Parse(std::string(labels[i]));
    if (plain && parsed.Has("listener")) continue;
    if (!plain) {
      std::string_view l = parsed.Get("listener");
      if (listener.empty()) listener = l;
      if (l != listener) continue;
    }
    out.push_back(i);
  }
  return out;
}

void SeriesBuckets::Add(std::span<const Point> points) {
  for (const Point& p : points) {
    if (std::isnan(p.value) || p.time_ms < start_ms_) continue;
    auto b = static_cast<size_t>((p.time_ms - start_ms_) / kStepMs);
    if (b >= limit_) continue;
    if (b >= sum_.size()) {
      size_t size = std::min(limit_, std::max(b + 1, sum_.size() * 3 / 2));
      sum_.resize(size, 0.0);
      count_.resize(size, 0);
    }
    sum_[b] += p.value;
    ++count_[b];
  }
}

void MetricGrid::Fold(const SeriesBuckets& series) {
  const std::vector<double>& sum = series.sum();
  const std::vector<uint32_t>& count = series.count();
  if (total_.size() < sum.size()) {
    total_.resize(sum.size(), 0.0);
    have_.resize(sum.size(), 0);
  }
  for (size_t i = 0; i < sum.size(); ++i) {
    if (count[i] == 0) continue;
    total_[i] += sum[i] / count[i];
    ++have_[i];
  }
}

std::vector<double> MetricGrid::Finish(size_t n, bool summed, int fill) const {
  std::vector<double> out(n, kNaN);
  int since = fill + 1;
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    if (i < have_.size() && have_[i] > 0) {
      out[i] = summed ? total_[i] : total_[i] / have_[i];
      since = 0;
      any = true;
    } else if (i > 0 && ++since <= fill) {
      out[i] = out[i - 1];
    }
  }
  return any ? out : std::vector<double>{};
}

}  // namespace tb
