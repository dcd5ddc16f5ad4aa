// Downsampling that keeps every extreme: a series of any length reduced to a point budget
// by splitting its x range into equal buckets and keeping, per bucket, its first, lowest,
// highest and last points in x order (each once). A one-second spike survives any zoom
// level; zooming in asks again for the narrower range at full detail.
//
// Workload aggregates: several runs' series aligned on one x axis (time since start, or the
// step) and reduced per bucket to the mean of the runs with a min-max band.
//
// NaN values are gaps: they take no part in minimum, maximum or mean; a bucket holding only
// NaN keeps one NaN point so the gap shows. Pure functions; thread-safe.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace tb {

// Equal buckets along x: bucket b spans [origin + b * width, origin + (b + 1) * width).
struct Buckets {
  double origin = 0;
  double width = 0;
};

struct XYSeries {
  std::vector<double> x{}, y{};
  // For Aggregate, a series of group means: how many points each stands for, and the x
  // range [x0, x1] they span (shared by the buckets it overlaps, by length); empty: each a
  // point of its own.
  std::vector<double> w{}, x0{}, x1{};
  size_t size() const { return x.size(); }
};

// Indices of the points kept from a series of `n` points whose x (sorted) and y are read
// through `x(i)` and `y(i)`: those with from <= x <= to, reduced to at most `budget`
// (>= 4) by budget / 4 buckets of equal width from `from` to `to`; all of them when they
// fit. With `grid`: at most four per bucket of that grid, even when they would fit.
template <typename XFn, typename YFn>
std::vector<size_t> DownsampleIndices(size_t n, XFn x, YFn y, double from, double to, size_t budget,
                                      const std::optional<Buckets>& grid = std::nullopt) {
  size_t begin = 0, end = n;
  {  // binary searches for the window
    size_t lo = 0, hi = n;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (x(mid) < from)
        lo = mid + 1;
      else
        hi = mid;
    }
    begin = lo;
    hi = n;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (x(mid) <= to)
        lo = mid + 1;
      else
        hi = mid;
    }
    end = lo;
  }
  std::vector<size_t> out;
  if (end - begin <= budget && !grid) {
    out.reserve(end - begin);
    for (size_t i = begin; i < end; ++i) out.push_back(i);
    return out;
  }
  // Bucket b spans [origin + b * width, origin + (b + 1) * width); without a grid, the
  // first and last of budget / 4 buckets reach past the window's ends.
  int64_t buckets = static_cast<int64_t>(std::max<size_t>(1, budget / 4));
  Buckets in = grid.value_or(Buckets{from, (to - from) / static_cast<double>(buckets)});
  auto bucket_of = [&](double v) -> int64_t {
    if (!(in.width > 0)) return 0;
    double b = std::floor((v - in.origin) / in.width);
    if (grid) return static_cast<int64_t>(std::clamp(b, -9e15, 9e15));
    return b < 0 ? 0 : std::min(static_cast<int64_t>(b), buckets - 1);
  };
  auto last_bucket = [&](int64_t b) { return !grid && b + 1 >= buckets; };
  out.reserve(std::min(budget, end - begin));
  size_t i = begin;
  while (i < end) {
    int64_t b = bucket_of(x(i));
    // The first index of the next bucket, by the x where it starts.
    double next_x = in.origin + static_cast<double>(b + 1) * in.width;
    size_t first = i, lo = end, hi = end;
    double lo_v = 0, hi_v = 0;
    for (; i < end; ++i) {
      if (i > first && !last_bucket(b) && x(i) >= next_x) break;
      double v = y(i);
      if (std::isnan(v)) continue;
      if (lo == end || v < lo_v) lo = i, lo_v = v;
      if (hi == end || v > hi_v) hi = i, hi_v = v;
    }
    size_t last = i - 1;
    std::array<size_t, 4> keep{first, lo, hi, last};
    if (lo == end) keep = {first, first, first, first};  // all NaN: one point marks the gap
    std::sort(keep.begin(), keep.end());
    for (size_t k = 0; k < keep.size(); ++k) {
      if (keep[k] == end || (k > 0 && keep[k] == keep[k - 1])) continue;
      if (lo != end && std::isnan(y(keep[k]))) continue;  // a NaN first/last beside real values
      out.push_back(keep[k]);
    }
  }
  return out;
}

// Points of `in` (sorted by x) with from <= x <= to, reduced to at most `budget` points
// (budget >= 4); every point when they fit.
XYSeries Downsample(const XYSeries& in, double from, double to, size_t budget);

struct Band {
  std::vector<double> x;               // bucket centres
  std::vector<double> mean, min, max;  // over the runs that have values in the bucket
  std::vector<int> runs;               // how many runs had values there
};

// `series` (each sorted by x) aligned on `buckets` equal buckets over [from, to]: in each
// bucket each run contributes the mean of its points there (a series of group means: the
// mean of the groups there, each weighted by its points in the bucket) or, when it has none there (a
// metric logged now and then, at other moments than the other runs'), its value at the
// bucket's centre interpolated between its points on either side; never past its first or
// last point, nor across a NaN. The mean is over the runs that contribute (`runs` says how
// many); min and max are NaN where fewer than two do. Buckets no run reaches are left out.
Band Aggregate(std::span<const XYSeries> series, double from, double to, size_t buckets);

}  // namespace tb
