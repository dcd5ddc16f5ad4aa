#include "figure/line_look.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>

#include "base/strings.h"
#include "figure/palette.h"

namespace tb {

LineStyle StyleOf(size_t style, bool mono) {
  auto dash_of = [](std::string_view text) {
    std::vector<double> dash;
    for (std::string_view part : SplitWhitespace(text)) {
      if (std::optional<double> d = ParseDouble(part)) dash.push_back(*d);
    }
    return dash;
  };
  if (mono) {
    size_t dashes = std::size(kMonoDashes);
    double grey = (style / dashes) % 2 ? 0.4 : 0;
    return {grey, grey, grey, dash_of(kMonoDashes[style % dashes]),
            std::string(kLineMarkers[(style / (2 * dashes)) % std::size(kLineMarkers)])};
  }
  Rgb c = ParseRgb(kLineColors[style % kLineColorCount]);
  return {c.r, c.g, c.b, dash_of(kLineDashes[(style / kLineColorCount) % kLineDashCount]),
          std::string(kLineMarkers[(style / (kLineColorCount * kLineDashCount)) % std::size(kLineMarkers)])};
}

LineStyle SweepStyle(double t) {
  constexpr size_t n = std::size(kSequentialStops);
  double at = std::clamp(t, 0.0, 1.0) * static_cast<double>(n - 1);
  size_t i = std::min(static_cast<size_t>(at), n - 2);
  Rgb a = ParseRgb(kSequentialStops[i]), b = ParseRgb(kSequentialStops[i + 1]);
  double f = at - static_cast<double>(i);
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f, {}, ""};
}

LineStyle StyleOf(const FigureLine& line, bool mono) {
  return line.shade ? SweepStyle(*line.shade) : StyleOf(line.style, mono);
}

std::vector<double> DashFor(const LineStyle& st, double width) {
  std::vector<double> dash;
  for (double d : st.dash) dash.push_back(d * std::max(0.5, width) * 0.75);
  return dash;
}

double LineWidth(const FigureLine& l, const FigureSpec& spec) {
  return l.lo.empty() ? spec.line_pt : spec.line_pt * 1.5;
}

void DrawMarker(Painter& p, Pt at, const LineStyle& st, double size) {
  if (st.marker.empty()) return;
  std::vector<Pt> circle;
  for (int k = 0; k <= 16; ++k) {
    double a = k * M_PI / 8;
    circle.emplace_back(at.first + size / 2 * std::cos(a), at.second + size / 2 * std::sin(a));
  }
  bool ring = st.marker == "ring";
  p.Polygon(circle, ring ? Rgb{1, 1, 1} : Rgb{st.r, st.g, st.b}, 1);
  if (ring) p.Polyline(circle, {st.r, st.g, st.b}, size * 0.22, {});
}

}  // namespace tb
