#include "figure/bar_chart.h"

#include <algorithm>
#include <cmath>

#include "figure/axis.h"
#include "figure/figure.h"

namespace tb {
namespace {

const Rgb kInk{0.13, 0.13, 0.13}, kMuted{0.4, 0.4, 0.4}, kGrid{0.9, 0.9, 0.9};

// Vertical measures, in multiples of the font size.
constexpr double kTitle = 1.15 * 1.3, kRow = 1.8, kThickness = 1.15, kAxis = 3.0, kLegend = 1.4;

// "12.3", or "12.3 ±0.4" with an interval.
std::string BarLabel(const Bar& b) {
  if (!b.interval) return Significant(*b.value);
  return Significant(*b.value) + " \u00b1" + Significant((b.interval->second - b.interval->first) / 2);
}

}  // namespace

std::string Significant(double v, int digits) {
  if (v == 0 || !std::isfinite(v)) return ShortNumber(v);
  double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return ShortNumber(std::round(v * scale) / scale);
}

std::string FitText(const std::string& text, double size, double width) {
  if (TextWidth(text, size) <= width) return text;
  // The longest prefix (whole UTF-8 characters) that fits with the ellipsis.
  std::vector<size_t> ends;
  for (size_t i = 1; i <= text.size(); ++i) {
    if (i == text.size() || (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ends.push_back(i);
  }
  size_t lo = 0, hi = ends.size();  // ends[lo - 1] fits (lo == 0: nothing does)
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2;
    if (TextWidth(text.substr(0, ends[mid - 1]) + "\u2026", size) <= width)
      lo = mid;
    else
      hi = mid - 1;
  }
  return (lo == 0 ? std::string() : text.substr(0, ends[lo - 1])) + "\u2026";
}

double BarChartHeight(const BarChart& chart, double f) {
  double h = f * 0.5 + (chart.title.empty() ? 0 : f * kTitle) +
             f * kRow * static_cast<double>(chart.bars.size()) + f * kAxis;
  if (!chart.legend.empty()) h += f * kLegend;
  return h + f * 0.5;
}

void DrawBarChart(Painter& p, const BarChart& chart, double f, double left, double top, double width) {
  const double pad = f * 0.5, tick = f * 0.35, tick_size = f * 0.9;
  double y = top + pad;
  if (!chart.title.empty()) {
    p.Text(left + pad, y + f * 1.15, chart.title, f * 1.15, Anchor::kStart, kInk, true);
    y += f * kTitle;
  }

  // Names at the left, as wide as the longest (at most a third of the chart).
  double name_w = 0;
  for (const Bar& b : chart.bars) name_w = std::max(name_w, TextWidth(b.name, f));
  name_w = std::min(name_w, width / 3);
  double lo = 0, hi = 0, value_w = TextWidth("no data", f * 0.9);
  for (const Bar& b : chart.bars) {
    if (!b.value || !std::isfinite(*b.value)) continue;
    lo = std::min(lo, *b.value);
    hi = std::max(hi, *b.value);
    if (b.interval && std::isfinite(b.interval->first) && std::isfinite(b.interval->second)) {
      lo = std::min(lo, b.interval->first);
      hi = std::max(hi, b.interval->second);
    }
    value_w = std::max(value_w, TextWidth(BarLabel(b), f * 0.9));
  }
  if (hi == lo) hi = lo + 1;
  double x0 = left + pad + name_w + f * 0.6, x1 = left + width - pad - value_w - f * 0.4;
  int count = std::clamp(static_cast<int>((x1 - x0) / (f * 5)), 2, 8);
  std::vector<Tick> ticks = NumberTicks(lo, hi, count);
  if (ticks.size() >= 2 && ticks.back().at < hi) {  // the axis ends on a round value past the longest bar
    double step = ticks[1].at - ticks[0].at;
    ticks.push_back({ticks.back().at + step, ShortNumber(ticks.back().at + step)});
    hi = ticks.back().at;
  }
  auto px = [&](double v) { return x0 + (v - lo) / (hi - lo) * (x1 - x0); };

  double rows_top = y, rows_h = f * kRow * static_cast<double>(chart.bars.size());
  for (const Tick& t : ticks) {
    double x = px(t.at);
    p.Polyline({{x, rows_top}, {x, rows_top + rows_h}}, kGrid, 0.4, {});
    p.Polyline({{x, rows_top + rows_h}, {x, rows_top + rows_h + tick}}, kInk, 0.5, {});
    p.Text(x, rows_top + rows_h + tick + tick_size * 1.05, t.label, tick_size, Anchor::kMiddle, kInk);
  }
  for (const Bar& b : chart.bars) {
    double mid = y + f * kRow / 2;
    p.Text(x0 - f * 0.6, mid + f * 0.35, FitText(b.name, f, name_w), f, Anchor::kEnd, kInk);
    if (b.value && std::isfinite(*b.value)) {
      LineStyle st = StyleOf(b.style, chart.mono);
      double a = px(std::min(0.0, *b.value)), e = px(std::max(0.0, *b.value));
      p.Rect(a, mid - f * kThickness / 2, std::max(e - a, 0.3), f * kThickness, {st.r, st.g, st.b}, 1);
      double label_x = *b.value < 0 ? a - f * 0.3 : e + f * 0.3;
      if (b.interval) {  // the error bar, with caps; the label past its far end
        double l = px(b.interval->first), h = px(b.interval->second), cap = f * kThickness * 0.35;
        p.Polyline({{l, mid}, {h, mid}}, kInk, 0.7, {});
        p.Polyline({{l, mid - cap}, {l, mid + cap}}, kInk, 0.7, {});
        p.Polyline({{h, mid - cap}, {h, mid + cap}}, kInk, 0.7, {});
        label_x = *b.value < 0 ? std::min(a, l) - f * 0.3 : std::max(e, h) + f * 0.3;
      }
      p.Text(label_x, mid + f * 0.32, BarLabel(b), f * 0.9, *b.value < 0 ? Anchor::kEnd : Anchor::kStart,
             kInk);
    } else {
      p.Text(px(0) + f * 0.3, mid + f * 0.32, "no data", f * 0.9, Anchor::kStart, kMuted);
    }
    y += f * kRow;
  }
  p.Polyline({{px(0), rows_top}, {px(0), rows_top + rows_h}}, kInk, 0.6, {});
  p.Polyline({{x0, rows_top + rows_h}, {x1, rows_top + rows_h}}, kInk, 0.6, {});
  y += f * kAxis;
  p.Text((x0 + x1) / 2, y - f * 0.45, chart.axis_title, f, Anchor::kMiddle, kInk);

  if (chart.legend.empty()) return;
  DrawBarLegend(p, chart.legend, chart.mono, f, x0, y + f * kLegend - f * 0.25);
}

void DrawBarLegend(Painter& p, const std::vector<std::pair<size_t, std::string>>& legend, bool mono, double f,
                   double x, double y) {
  for (const auto& [style, what] : legend) {
    LineStyle st = StyleOf(style, mono);
    p.Rect(x, y - f * 0.7, f * 1.6, f * 0.8, {st.r, st.g, st.b}, 1);
    p.Text(x + f * 2, y, what, f, Anchor::kStart, kInk);
    x += f * 2 + TextWidth(what, f) + f * 1.5;
  }
}

}  // namespace tb
