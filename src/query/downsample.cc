#include "query/downsample.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tb {
namespace {

// Index range [begin, end) of the points of `in` within [from, to].
std::pair<size_t, size_t> Window(const XYSeries& in, double from, double to) {
  auto begin = std::lower_bound(in.x.begin(), in.x.end(), from);
  auto end = std::upper_bound(begin, in.x.end(), to);
  return {static_cast<size_t>(begin - in.x.begin()), static_cast<size_t>(end - in.x.begin())};
}

size_t Bucket(double x, double from, double width, size_t buckets) {
  if (!(width > 0)) return 0;
  double b = std::floor((x - from) / width);
  if (b < 0) return 0;
  return std::min(static_cast<size_t>(b), buckets - 1);
}

}  // namespace

XYSeries Downsample(const XYSeries& in, double from, double to, size_t budget) {
  std::vector<size_t> keep = DownsampleIndices(
      in.size(), [&](size_t i) { return in.x[i]; }, [&](size_t i) { return in.y[i]; }, from, to, budget);
  XYSeries out;
  out.x.reserve(keep.size());
  out.y.reserve(keep.size());
  for (size_t i : keep) {
    out.x.push_back(in.x[i]);
    out.y.push_back(in.y[i]);
  }
  return out;
}

Band Aggregate(std::span<const XYSeries> series, double from, double to, size_t buckets) {
  Band band;
  if (buckets == 0 || !(to >= from)) return band;
  double width = (to - from) / static_cast<double>(buckets);
  auto centre = [&](size_t b) { return from + (static_cast<double>(b) + 0.5) * width; };
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> sum(buckets, 0), lo(buckets, std::numeric_limits<double>::infinity()),
      hi(buckets, -std::numeric_limits<double>::infinity());
  std::vector<int> runs(buckets, 0);
  std::vector<double> run_sum(buckets);
  std::vector<double> run_count(buckets);
  for (const XYSeries& s : series) {
    std::fill(run_sum.begin(), run_sum.end(), 0);
    std::fill(run_count.begin(), run_count.end(), 0);
    auto [begin, end] = Window(s, from, to);
    bool groups = s.w.size() == s.x.size() && s.x0.size() == s.x.size() && s.x1.size() == s.x.size();
    for (size_t i = begin; i < end; ++i) {
      if (std::isnan(s.y[i])) continue;
      if (!groups) {
        size_t b = Bucket(s.x[i], from, width, buckets);
        run_sum[b] += s.y[i];
        run_count[b] += 1;
        continue;
      }
      // A group's points are shared by the buckets its span overlaps, by the length in each.
      double x0 = std::max(s.x0[i], from), x1 = std::min(s.x1[i], to);
      size_t b0 = Bucket(x0, from, width, buckets), b1 = Bucket(x1, from, width, buckets);
      for (size_t b = b0; b <= b1; ++b) {
        double share = 1;
        if (b0 != b1 && x1 > x0) {
          double lo_edge = b == b0 ? x0 : from + static_cast<double>(b) * width;
          double hi_edge = b == b1 ? x1 : from + static_cast<double>(b + 1) * width;
          share = std::max(0.0, hi_edge - lo_edge) / (x1 - x0);
        } else if (b != b0) {
          continue;
        }
        run_sum[b] += s.y[i] * s.w[i] * share;
        run_count[b] += s.w[i] * share;
      }
    }
    for (size_t b = 0; b < buckets; ++b) {
      double m = kNone;
      if (run_count[b] > 0) {
        m = run_sum[b] / run_count[b];
      } else {
        // No point of this run in the bucket: its value at the bucket's centre, read off the
        // straight line between its points on either side (none across a gap or past its ends).
        double c = centre(b);
        auto after = std::lower_bound(s.x.begin(), s.x.end(), c);
        if (after == s.x.begin() || after == s.x.end()) continue;
        size_t j = static_cast<size_t>(after - s.x.begin());
        double y0 = s.y[j - 1], y1 = s.y[j], x0 = s.x[j - 1], x1 = s.x[j];
        if (std::isnan(y0) || std::isnan(y1)) continue;
        m = x1 > x0 ? y0 + (y1 - y0) * (c - x0) / (x1 - x0) : y0;
      }
      sum[b] += m;
      lo[b] = std::min(lo[b], m);
      hi[b] = std::max(hi[b], m);
      ++runs[b];
    }
  }
  for (size_t b = 0; b < buckets; ++b) {
    if (runs[b] == 0) continue;
    band.x.push_back(centre(b));
    band.mean.push_back(sum[b] / runs[b]);
    // One run is no spread: no band where only one stands behind the mean.
    band.min.push_back(runs[b] > 1 ? lo[b] : kNone);
    band.max.push_back(runs[b] > 1 ? hi[b] : kNone);
    band.runs.push_back(runs[b]);
  }
  return band;
}

}  // namespace tb
