#include "analyze/training_window.h"

#include <algorithm>
#include <cmath>

#include "metrics/names.h"

namespace tb {
namespace {

constexpr int64_t kBucketMs = 1000;

bool StepMetric(std::string_view metric) {
  return metric == metric::kTrainThroughputSamplesPerSecond || metric == metric::kTrainStepComputeSeconds ||
         metric == metric::kTrainStepDataWaitSeconds;
}

void Widen(std::optional<std::pair<int64_t, int64_t>>& span, int64_t first, int64_t last) {
  if (!span) {
    span = {first, last};
    return;
  }
  span->first = std::min(span->first, first);
  span->second = std::max(span->second, last);
}

}  // namespace

std::string TrainingWindowSource(const std::string& source) {
  if (source == "steps") return "the steps the script logged";
  if (source == "gpu") return "the GPU's activity";
  if (source == "cpu") return "the processes' CPU activity";
  return "the processes' lifetimes";
}

void ScriptSpan::Add(std::string_view metric, const Point& first, const Point& last) {
  Widen(StepMetric(metric) ? steps_ : other_, first.time_ms, last.time_ms);
}

void ScriptSpan::AddEvent(int64_t time_ms) { Widen(other_, time_ms, time_ms); }

std::optional<TrainingWindow> ScriptSpan::Window() const {
  const auto& span = steps_ ? steps_ : other_;
  if (!span || span->second <= span->first) return std::nullopt;
  return TrainingWindow{span->first, span->second, "steps"};
}

std::optional<TrainingWindow> ActivityWindow(const std::vector<double>& activity, int64_t start_ms,
                                             int64_t end_ms, const std::string& source) {
  // A GPU idles at its own floor (power states, other processes); a process at rest uses no CPU.
  double idle = source == "cpu" ? 0 : INFINITY, peak = -INFINITY;
  for (double v : activity) {
    if (std::isnan(v)) continue;
    idle = std::min(idle, v);
    peak = std::max(peak, v);
  }
  if (!(peak - idle >= 0.05)) return std::nullopt;
  double threshold = idle + 0.1 * (peak - idle);
  std::optional<size_t> first, last;
  for (size_t i = 0; i < activity.size(); ++i) {
    if (std::isnan(activity[i]) || activity[i] <= threshold) continue;
    if (!first) first = i;
    last = i;
  }
  if (!first) return std::nullopt;
  int64_t from = start_ms + static_cast<int64_t>(*first) * kBucketMs;
  int64_t to = std::min(end_ms, start_ms + static_cast<int64_t>(*last + 1) * kBucketMs);
  if (source == "cpu") {
    // A process busy from its first reading was busy from its start (a reading is the CPU
    // time over the interval before it), and one busy at its last until its end: the
    // window keeps the process's own times rather than the buckets' whole seconds.
    auto read = [&](size_t i) { return !std::isnan(activity[i]); };
    size_t i = 0, j = activity.size() - 1;
    while (i < *first && !read(i)) ++i;
    while (j > *last && !read(j)) --j;
    if (i == *first) from = start_ms;
    if (j == *last) to = end_ms;
  }
  if (to <= from) return std::nullopt;
  return TrainingWindow{from, to, source};
}

void StepSamples::AddStepSeconds(std::span<const Point> points) {
  for (const Point& p : points) {
    if (p.step != kNoStep && std::isfinite(p.value) && p.value >= 0) seconds_.emplace_back(p.step, p.value);
  }
}

void StepSamples::Seal() {
  std::sort(seconds_.begin(), seconds_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // A step's data wait and compute time add up to its time.
  size_t out = 0;
  for (size_t i = 0; i < seconds_.size(); ++i) {
    if (out > 0 && seconds_[out - 1].first == seconds_[i].first) {
      seconds_[out - 1].second += seconds_[i].second;
    } else {
      seconds_[out++] = seconds_[i];
    }
  }
  seconds_.resize(out);
  sealed_ = true;
}

void StepSamples::AddThroughput(std::span<const Point> points) {
  if (!sealed_) Seal();
  for (const Point& p : points) {
    if (p.step == kNoStep || !std::isfinite(p.value)) continue;
    auto it = std::lower_bound(seconds_.begin(), seconds_.end(), p.step,
                               [](const auto& e, int64_t step) { return e.first < step; });
    if (it == seconds_.end() || it->first != p.step) continue;
    samples_ += p.value * it->second;
    ++matched_;
  }
}

double OverlapFraction(const TrainingWindow& own, const std::vector<TrainingWindow>& others) {
  std::vector<std::pair<int64_t, int64_t>> parts;
  for (const TrainingWindow& o : others) {
    int64_t from = std::max(own.start_ms, o.start_ms), to = std::min(own.end_ms, o.end_ms);
    if (to > from || (own.length_ms() == 0 && o.start_ms <= own.start_ms && own.start_ms <= o.end_ms))
      parts.emplace_back(from, std::max(from, to));
  }
  if (own.length_ms() <= 0) return parts.empty() ? 0 : 1;
  std::sort(parts.begin(), parts.end());
  int64_t covered = 0, reach = own.start_ms;
  for (const auto& [from, to] : parts) {
    int64_t begin = std::max(from, reach);
    if (to > begin) covered += to - begin;
    reach = std::max(reach, to);
  }
  return static_cast<double>(covered) / static_cast<double>(own.length_ms());
}

}  // namespace tb
