#include "figure/legend_layout.h"

#include <algorithm>
#include <cmath>

#include "figure/axis.h"
#include "figure/bar_chart.h"
#include "figure/line_look.h"
#include "figure/sweep.h"

namespace tb {
namespace {

const Rgb kInk = kFigureInk, kMuted = kFigureMuted;

// A sweep of more than this many lines is told by a colour bar rather than by names.
constexpr size_t kMostSweepNames = 6;
double ColourBarHeight(double f) { return f * 2.6; }

// The legend's entries flowed into rows as wide as the figure.
LegendLayout FlowLegend(const Figure& fig, const FigureSpec& spec, double width) {
  const double f = spec.font_pt, pad = f * 0.5, swatch = f * 2.2;
  LegendLayout out;
  if (!spec.show_legend || fig.lines.empty() || (fig.lines.size() == 1 && fig.lines[0].name.empty()))
    return out;
  double legend_w = width - 2 * pad;
  double row_w = 0;
  size_t shaded =
      std::count_if(fig.lines.begin(), fig.lines.end(), [](const FigureLine& l) { return l.shade; });
  out.colour_bar = fig.sweep && shaded > kMostSweepNames;
  for (const FigureLine& l : fig.lines) {
    if (out.colour_bar && l.shade) continue;
    std::string text = FitText(l.name, f, legend_w - swatch - f * 0.4);
    LegendEntry e{&l, swatch + f * 0.4 + TextWidth(text, f), text};
    if (out.rows.empty() || row_w + e.width > legend_w) {
      out.rows.emplace_back();
      row_w = 0;
    }
    out.rows.back().push_back(e);
    row_w += e.width + f * 1.2;
  }
  out.height =
      static_cast<double>(out.rows.size()) * f * 1.25 + pad * 0.6 + (out.colour_bar ? ColourBarHeight(f) : 0);
  return out;
}

}  // namespace

double HeightFor(double legend, const FigureSpec& spec) {
  double height = std::round(spec.width_pt * 0.62 * 100) / 100;
  double room = height - legend - spec.font_pt * 6;  // what the title, ticks and x title leave
  if (room < spec.width_pt * 0.4) height += std::ceil(spec.width_pt * 0.4 - room);
  return height;
}

LegendLayout LayOutLegend(const Figure& fig, const FigureSpec& spec, double width) {
  LegendLayout rows = FlowLegend(fig, spec, width);
  if (spec.height_pt > 0 || rows.rows.size() <= 1 || HeightFor(rows.height, spec) <= spec.width_pt)
    return rows;
  const double f = spec.font_pt;
  LegendLayout note;
  note.colour_bar = rows.colour_bar;
  size_t named = 0;
  for (const auto& row : rows.rows) named += row.size();
  note.note =
      WrapText(std::to_string(named) +
                   " names left out of the legend, which would make the figure taller "
                   "than wide: shorter names with --legend '{param}', or room with --height or --width",
               f * 0.8, width - f);
  note.height = static_cast<double>(note.note.size()) * f * 0.8 * 1.25 + f * 0.5 +
                (note.colour_bar ? ColourBarHeight(f) : 0);
  return note;
}

namespace {

// The legend's rows from `y` down: each line's swatch (its band, for a mean) and name; or the
// note that it was left out.
void DrawRows(Painter& p, const LegendLayout& legend, const FigureSpec& spec, double left0, double y) {
  const double f = spec.font_pt, pad = f * 0.5, swatch = f * 2.2;
  for (const std::string& line : legend.note) {
    y += f * 0.8 * 1.25;
    p.Text(left0 + pad, y, line, f * 0.8, Anchor::kStart, kMuted);
  }
  for (const auto& row : legend.rows) {
    double x = left0 + pad;
    y += f * 1.25;
    for (const LegendEntry& e : row) {
      LineStyle st = StyleOf(*e.line, spec.mono);
      double w = LineWidth(*e.line, spec);
      if (!e.line->lo.empty())
        p.Rect(x, y - f * 0.75, swatch, f * 0.7, {st.r, st.g, st.b}, spec.mono ? 0.15 : 0.18);
      p.Polyline({{x, y - f * 0.4}, {x + swatch, y - f * 0.4}}, {st.r, st.g, st.b}, w, DashFor(st, w));
      DrawMarker(p, {x + swatch / 2, y - f * 0.4}, st, f * 0.55 + w);
      p.Text(x + swatch + f * 0.4, y, e.text, f, Anchor::kStart, kInk);
      x += e.width + f * 1.2;
    }
  }
}

// A sweep's colour bar from `y` down: the param's name, the map from its least value to its
// greatest, and ticks at the lines' values (round values where there are many).
void DrawColourBar(Painter& p, const FigureSweep& sweep, const FigureSpec& spec, double left0, double width,
                   double y) {
  const double f = spec.font_pt, pad = f * 0.5, tick_size = f * 0.9, bar_h = f * 0.7;
  double top = y + f * 0.5;
  p.Text(left0 + pad, top + bar_h * 0.85, sweep.param, f, Anchor::kStart, kInk);
  double a = left0 + pad + TextWidth(sweep.param, f) + f * 0.8, b = left0 + width - pad - f * 1.2;
  if (b <= a) return;
  constexpr int kSteps = 64;
  for (int i = 0; i < kSteps; ++i) {
    LineStyle st = SweepStyle((i + 0.5) / kSteps);
    double x = a + (b - a) * i / kSteps;
    p.Rect(x, top, (b - a) / kSteps + 0.05, bar_h, {st.r, st.g, st.b}, 1);
  }
  double last_end = -1e9;
  for (double v : SweepTicks(sweep)) {
    double x = a + (b - a) * sweep.At(v);
    p.Polyline({{x, top + bar_h}, {x, top + bar_h + f * 0.3}}, kInk, 0.5, {});
    std::string label = ShortNumber(v);
    double w = TextWidth(label, tick_size);
    if (x - w / 2 < last_end) continue;  // a label never overprints the one before
    p.Text(x, top + bar_h + f * 0.3 + tick_size * 1.05, label, tick_size, Anchor::kMiddle, kInk);
    last_end = x + w / 2 + f * 0.4;
  }
}

}  // namespace

void DrawLegend(Painter& p, const Figure& fig, const LegendLayout& legend, const FigureSpec& spec,
                double left, double width, double y) {
  DrawRows(p, legend, spec, left, y);
  const double f = spec.font_pt;
  if (legend.colour_bar)
    DrawColourBar(p, *fig.sweep, spec, left, width,
                  y + static_cast<double>(legend.rows.size()) * f * 1.25 +
                      static_cast<double>(legend.note.size()) * f * 0.8 * 1.25);
}

}  // namespace tb
