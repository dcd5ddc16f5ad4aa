#include "query/summary.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "base/spare_thread.h"
#include "store/store.h"

namespace tb {
namespace {

// The rank of the q-quantile among n values, as a whole index and a fraction towards the next.
std::pair<size_t, double> Rank(size_t n, double q) {
  double rank = q * static_cast<double>(n - 1);
  double whole = std::floor(rank);
  return {std::min(static_cast<size_t>(whole), n - 1), rank - whole};
}

// The q-quantile of `v` when its values before `from` are no greater than those from it on
// and the quantile's rank is `from` or more: only the part from `from` on is reordered.
double QuantileFrom(std::span<double> v, size_t from, double q) {
  auto [lo, frac] = Rank(v.size(), q);
  auto nth = v.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(from), nth, v.end());
  if (frac == 0 || lo + 1 == v.size()) return *nth;
  double next = *std::min_element(nth + 1, v.end());  // every value after nth is no less
  return *nth + (next - *nth) * frac;
}

}  // namespace

double SelectPercentile(std::span<double> values, double q) {
  if (values.empty()) return std::nan("");
  return QuantileFrom(values, 0, q);
}

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
    s.p50 = QuantileFrom(values_, 0, 0.5);
    // The median's selection left every value from its rank on no less than those before.
    s.p95 = QuantileFrom(values_, Rank(values_.size(), 0.5).first, 0.95);
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
