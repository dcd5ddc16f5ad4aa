#include "query/chart_series.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "metrics/catalog.h"
#include "query/downsample.h"

namespace tb {
namespace {

// The most text WriteNumber writes: a double's shortest exact form, or 17 significant
// digits, with sign, point and exponent, is at most 24 characters.
constexpr size_t kNumberText = 24;

// `v` as JSON at `to` (room for kNumberText): exact (the shortest text that reads back as
// the same double) when `digits` is 0, else with that many significant digits (at most 17);
// NaN and infinities as null. Returns the end of what it wrote.
char* WriteNumber(char* to, double v, int digits) {
  if (!std::isfinite(v)) return std::copy_n("null", 4, to);
  auto [end, ec] = digits > 0 ? std::to_chars(to, to + kNumberText, v, std::chars_format::general, digits)
                              : std::to_chars(to, to + kNumberText, v);
  return ec == std::errc{} ? end : std::copy_n("null", 4, to);
}

void AppendNumber(std::string& out, double v, bool comma, int digits = 0) {
  if (comma) out += ',';
  char buf[kNumberText];
  out.append(buf, WriteNumber(buf, v, digits));
}

// Writes a JSON array's numbers into a string through a pointer, making room a block at a
// time (appending a character at a time was a third of a chart's answer).
class NumberWriter {
 public:
  explicit NumberWriter(std::string& out) : out_(out), at_(out.data() + out.size()), end_(at_) {}
  NumberWriter(const NumberWriter&) = delete;
  NumberWriter& operator=(const NumberWriter&) = delete;
  ~NumberWriter() { out_.resize(static_cast<size_t>(at_ - out_.data())); }
  // Starts the next number: room for it, and its separator.
  void Next(bool comma) {
    if (static_cast<size_t>(end_ - at_) < kNumberText + 1) Grow();
    if (comma) *at_++ = ',';
  }
  // A text of `size` bytes where kNumberText can be read (copied whole, in a few moves
  // rather than a call).
  void Text(const char* text, size_t size) {
    std::memcpy(at_, text, kNumberText);
    at_ += size;
  }
  void Number(double v, int digits) { at_ = WriteNumber(at_, v, digits); }
  void Integer(int64_t v) {
    if (v >= 0 && v < 10) {
      *at_++ = static_cast<char>('0' + v);
    } else {
      at_ = std::to_chars(at_, at_ + kNumberText, v).ptr;
    }
  }

 private:
  void Grow() {
    auto used = static_cast<size_t>(at_ - out_.data());
    out_.resize(used + 256 * (kNumberText + 1));
    at_ = out_.data() + used;
    end_ = out_.data() + out_.size();
  }
  std::string& out_;
  char* at_;
  char* end_;
};

// The text of each value written lately, in a table of 256 by the value's bits: a chart's
// values repeat (utilization in whole percent, temperatures, memory in MiB), and each
// distinct one is formatted once, not once a point.
class RecentNumbers {
 public:
  explicit RecentNumbers(int digits) : digits_(digits) { bits_.fill(kEmpty); }
  void Write(NumberWriter& out, double v) {
    uint64_t bits = std::bit_cast<uint64_t>(v);
    size_t slot = static_cast<size_t>((bits * 0x9E3779B97F4A7C15ULL) >> 56);
    if (bits_[slot] != bits) {
      bits_[slot] = bits;
      sizes_[slot] = static_cast<uint8_t>(WriteNumber(texts_[slot].data(), v, digits_) - texts_[slot].data());
    }
    out.Text(texts_[slot].data(), sizes_[slot]);
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // a NaN, which no lookup brings
  int digits_;
  std::array<uint64_t, 256> bits_{};
  std::array<uint8_t, 256> sizes_{};
  std::array<std::array<char, kNumberText>, 256> texts_{};
};

// Moves sorted x values, at most four per bucket of `grid` (as DownsampleIndices keeps
// them), onto the places origin + i * width / 4: each to the place its x falls on, and where
// two fall on one, the later to the next place (so x stays strictly increasing). `places`
// gets each one's i.
void SnapToGrid(std::vector<double>& x, const Buckets& grid, std::vector<double>& places) {
  double quarter = grid.width / 4;
  if (!(quarter > 0)) return;
  places.resize(x.size());
  // The place each falls on, apart (no division waits for the one before).
  for (size_t k = 0; k < x.size(); ++k) places[k] = std::floor((x[k] - grid.origin) / quarter);
  double previous = -std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < x.size(); ++k) {
    double place = std::max(places[k], previous + 1);
    x[k] = grid.origin + place * quarter;
    places[k] = place;
    previous = place;
  }
}

}  // namespace

int GridDigits(const Buckets& grid, double span) {
  span = std::max({std::abs(grid.origin), std::abs(span), 1e-300});
  return std::clamp(static_cast<int>(std::ceil(std::log10(span / (grid.width / 4)))) + 3, 6, 17);
}

std::shared_ptr<const GridTexts> GridPlaceTexts(const Buckets& grid, size_t count) {
  auto out = std::make_shared<GridTexts>();
  double quarter = grid.width / 4;
  out->digits = GridDigits(grid, grid.origin + static_cast<double>(count) * quarter);
  out->text.reserve(count * 8);
  out->ends.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    AppendNumber(out->text, grid.origin + static_cast<double>(i) * quarter, false, out->digits);
    out->ends.push_back(static_cast<uint32_t>(out->text.size()));
  }
  out->text.append(kNumberText, ' ');  // what the last place's copy reads past its end
  return out;
}

std::optional<XAxis> ParseXAxis(std::string_view text) {
  if (text == "relative") return XAxis::kRelative;
  if (text == "wall") return XAxis::kWall;
  if (text == "step") return XAxis::kStep;
  return std::nullopt;
}

std::string_view XAxisName(XAxis axis) {
  switch (axis) {
    case XAxis::kRelative:
      return "relative";
    case XAxis::kWall:
      return "wall";
    case XAxis::kStep:
      return "step";
  }
  return "relative";
}

XYSeries AlignedRun(const std::vector<Point>& points, int64_t start_ms, XAxis axis,
                    std::span<const std::pair<int64_t, int64_t>> spans) {
  bool groups = axis != XAxis::kStep && spans.size() == points.size() && !points.empty();
  auto seconds = [&](int64_t ms) { return static_cast<double>(ms - start_ms) / 1000.0; };
  struct Aligned {
    double x, y;
    size_t i;  // in `points`
  };
  std::vector<Aligned> xy;
  xy.reserve(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    if (axis == XAxis::kStep) {
      if (p.step != kNoStep) xy.push_back({static_cast<double>(p.step), p.value, i});
    } else {
      xy.push_back({seconds(p.time_ms), p.value, i});
    }
  }
  auto by_x = [](const Aligned& a, const Aligned& b) { return a.x < b.x; };
  if (!std::is_sorted(xy.begin(), xy.end(), by_x)) std::stable_sort(xy.begin(), xy.end(), by_x);
  XYSeries out;
  out.x.reserve(xy.size());
  out.y.reserve(xy.size());
  for (const Aligned& a : xy) {
    out.x.push_back(a.x);
    out.y.push_back(a.y);
    if (!groups) continue;
    out.w.push_back(static_cast<double>(points[a.i].step));
    out.x0.push_back(seconds(spans[a.i].first));
    out.x1.push_back(seconds(spans[a.i].second));
  }
  return out;
}

int64_t SaturatedInt64(double ms) {
  if (ms >= 9.2e18) return std::numeric_limits<int64_t>::max();
  if (ms <= -9.2e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(ms);
}

std::pair<int64_t, int64_t> WindowMillis(const ChartWindow& window, int64_t start_ms) {
  auto ms = [&](std::optional<double> x, int64_t open) {
    if (!x) return open;
    double wall = window.axis == XAxis::kRelative ? static_cast<double>(start_ms) + *x * 1000.0 : *x;
    return SaturatedInt64(open < 0 ? std::floor(wall) : std::ceil(wall));
  };
  return {ms(window.from, std::numeric_limits<int64_t>::min()),
          ms(window.to, std::numeric_limits<int64_t>::max())};
}

std::string ChartSeriesJson(const RunRecord& run, const SeriesInfo& series, const std::vector<Point>& p,
                            const ChartWindow& window, int64_t total_points) {
  double start = static_cast<double>(run.start_ms);
  auto x_of = [&](size_t i) -> double {
    switch (window.axis) {
      case XAxis::kRelative:
        return (static_cast<double>(p[i].time_ms) - start) / 1000.0;
      case XAxis::kWall:
        return static_cast<double>(p[i].time_ms);
      case XAxis::kStep:
        return static_cast<double>(p[i].step);
    }
    return 0.0;
  };
  int64_t since_ms = window.since ? SaturatedInt64(*window.since) : std::numeric_limits<int64_t>::min();
  bool time_sorted = std::is_sorted(p.begin(), p.end(),
                                    [](const Point& a, const Point& b) { return a.time_ms < b.time_ms; });
  // Usually the points are in time order and are read in place; a script may log out
  // of order and steps may repeat or be absent: then an index in x order is built.
  bool in_place = time_sorted && window.axis != XAxis::kStep;
  size_t first = 0;
  std::vector<size_t> order;
  if (in_place) {
    first = static_cast<size_t>(std::upper_bound(p.begin(), p.end(), since_ms,
                                                 [](int64_t t, const Point& pt) { return t < pt.time_ms; }) -
                                p.begin());
  } else {
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i].time_ms > since_ms && !(window.axis == XAxis::kStep && p[i].step == kNoStep))
        order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x_of(a) < x_of(b); });
  }
  size_t n = in_place ? p.size() - first : order.size();
  auto index = [&](size_t k) { return in_place ? first + k : order[k]; };
  // Each point's x, computed once: the walk through the buckets compares it point by point.
  std::vector<double> x_values(n);
  if (in_place && window.axis == XAxis::kRelative) {  // the usual case, in a loop of its own
    const Point* from = p.data() + first;
    for (size_t k = 0; k < n; ++k) x_values[k] = (static_cast<double>(from[k].time_ms) - start) / 1000.0;
  } else {
    for (size_t k = 0; k < n; ++k) x_values[k] = x_of(index(k));
  }
  auto xs = [&](size_t k) { return x_values[k]; };
  auto ys = [&](size_t k) { return p[index(k)].value; };
  double lo = window.from.value_or(n == 0 ? 0 : xs(0));
  double hi = window.to.value_or(n == 0 ? 0 : xs(n - 1));
  std::optional<Buckets> grid;
  if (window.budget != std::numeric_limits<size_t>::max() && window.axis != XAxis::kStep) grid = window.grid;
  std::vector<size_t> keep = DownsampleIndices(n, xs, ys, lo, hi, window.budget, grid);
  std::vector<double> kept_x(keep.size()), places;
  for (size_t k = 0; k < keep.size(); ++k) kept_x[k] = xs(keep[k]);
  if (grid) SnapToGrid(kept_x, *grid, places);
  int64_t last_ms = p.empty() ? 0 : p.back().time_ms;
  if (!time_sorted) {
    for (const Point& pt : p) last_ms = std::max(last_ms, pt.time_ms);
  }
  std::string out = nlohmann::json{
      {"run", run.id},
      {"metric", series.metric},
      {"labels", series.labels},
      {"unit", MetricUnit(series.metric)},
      {"total_points", total_points >= 0 ? static_cast<size_t>(total_points) : p.size()},
      {"in_range", n},
      {"last_ms",
       last_ms}}.dump();
  out.pop_back();  // the closing brace: the arrays follow
  out.reserve(out.size() + keep.size() * 26 + 32);
  // A downsampled series' values to 6 significant digits (what listeners store derived
  // values with; a tooltip shows 4, a chart far fewer), for a third of the bytes of a
  // double's 17; every point at full resolution exact.
  int y_digits = keep.size() < n && !window.exact ? 6 : 0;
  // Places as integers while doubles count them exactly (every grid a chart asks for).
  constexpr double kExact = 9007199254740992.0;  // 2^53
  bool steps = grid && window.place_steps && places.size() == keep.size() &&
               (places.empty() || (std::abs(places.front()) < kExact && std::abs(places.back()) < kExact));
  if (steps) {
    out += ", \"x_place_steps\": [";
    NumberWriter x(out);
    double previous = 0;
    for (size_t k = 0; k < places.size(); ++k) {
      x.Next(k > 0);
      x.Integer(static_cast<int64_t>(places[k] - previous));
      previous = places[k];
    }
  } else {
    out += ", \"x\": [";
    // On a shared grid, x to a thousandth of a place (the same text in every series).
    int x_digits = 0;
    if (grid) x_digits = GridDigits(*grid, kept_x.empty() ? 0 : kept_x.back());
    // The places' texts made for the answer, where this series writes x as they do.
    const GridTexts* texts = grid && window.grid_texts && window.grid_texts->digits == x_digits
                                 ? window.grid_texts.get()
                                 : nullptr;
    NumberWriter x(out);
    for (size_t k = 0; k < keep.size(); ++k) {
      x.Next(k > 0);
      if (texts != nullptr && places.size() == keep.size() && places[k] >= 0 &&
          places[k] < static_cast<double>(texts->ends.size())) {
        auto i = static_cast<size_t>(places[k]);
        size_t begin = i == 0 ? 0 : texts->ends[i - 1];
        x.Text(texts->text.data() + begin, texts->ends[i] - begin);
        continue;
      }
      x.Number(kept_x[k], x_digits);
    }
  }
  out += "], \"y\": [";
  {
    NumberWriter y(out);
    auto recent = std::make_unique<RecentNumbers>(y_digits);
    for (size_t k = 0; k < keep.size(); ++k) {
      y.Next(k > 0);
      recent->Write(y, ys(keep[k]));
    }
  }
  out += "]}";
  return out;
}

}  // namespace tb
