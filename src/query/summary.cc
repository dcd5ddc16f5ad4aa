#include "query/summary.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "base/percentile.h"
#include "base/spare_thread.h"
#include "store/store.h"

namespace tb {

void SummaryBuilder::Add(std::span<const Point> points) {
  if (points.empty()) return;
  if (summary_.count == 0) summary_.first_ms = points.front().time_ms;
  summary_.last_ms = points.back().time_ms;
  summary_.count += static_cast<int64_t>(points.size());
  for (const Point& p : points) {
    if (std::isnan(p.value)) {
      ++summary_.nan_count;
      continue;
    }
    values_.push_back(p.value);
    sum_ += p.value;
  }
}

SeriesSummary SummaryBuilder::Finish() {
  SeriesSummary s = summary_;
  summary_ = SeriesSummary();
  if (s.count > 0 && values_.empty()) s.min = s.mean = s.max = s.p50 = s.p95 = std::nan("");
  if (!values_.empty()) {
    auto [lowest, highest] = std::minmax_element(values_.begin(), values_.end());
    s.min = *lowest;
    s.max = *highest;
    s.mean = sum_ / static_cast<double>(values_.size());
    s.p50 = SelectPercentile(values_, 0.5);
    // The median's selection left every value from its rank on no less than those before.
    s.p95 = SelectPercentileFrom(values_, PercentileRank(values_.size(), 0.5), 0.95);
  }
  values_.clear();
  sum_ = 0;
  return s;
}

SeriesSummary Summarize(std::span<const Point> points) {
  SummaryBuilder builder;
  builder.Add(points);
  return builder.Finish();
}

Result<std::vector<SeriesSummary>> SummarizeStoredSeries(Store& store, std::span<const int64_t> series_ids) {
  std::vector<SeriesSummary> out(series_ids.size());
  SummaryBuilder builders[2];  // a thread's: its values' room reused from series to series
  std::mutex mu;
  Status failed = Status::Ok();
  SpareThread::OfProcess().ForEachItem(series_ids.size(), [&](size_t i, int worker) {
    SummaryBuilder& builder = builders[worker];
    Status read =
        ForEachSeriesPart(store, series_ids[i], [&](std::span<const Point> part) { builder.Add(part); });
    out[i] = builder.Finish();
    if (read.ok()) return;
    std::lock_guard lock(mu);
    failed = read;
  });
  if (!failed.ok()) return failed;
  return out;
}

}  // namespace tb
