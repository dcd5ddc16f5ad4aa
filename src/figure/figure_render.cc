// RenderFigure: a Figure laid out in points and drawn through a Painter into PDF, SVG or PNG.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "base/strings.h"
#include "figure/axis.h"
#include "figure/bar_chart.h"
#include "figure/figure.h"
#include "figure/legend_layout.h"
#include "figure/line_look.h"
#include "figure/painter.h"
#include "figure/pango_cairo.h"
#include "figure/render.h"

namespace tb {
namespace {

const Rgb kInk = kFigureInk, kMuted = kFigureMuted, kGrid{0.9, 0.9, 0.9}, kEventInk{0.45, 0.45, 0.45};

Rgb PhaseColor(const std::string& kind) {
  if (kind == "warm-up") return ParseRgb("#808080");
  if (kind == "idle") return ParseRgb("#d62728");
  if (kind == "stall") return ParseRgb("#ff7f0e");
  if (kind == "dip") return ParseRgb("#bcbd22");
  if (kind == "memory-climb") return ParseRgb("#9467bd");
  return ParseRgb("#1f77b4");
}

// Splits a line's points into the runs of finite values, mapped to the page.
template <typename Map>
std::vector<std::vector<Pt>> Segments(const std::vector<double>& x, const std::vector<double>& y, Map map) {
  std::vector<std::vector<Pt>> out(1);
  for (size_t i = 0; i < x.size(); ++i) {
    std::optional<Pt> p = std::isfinite(y[i]) ? map(x[i], y[i]) : std::nullopt;
    if (!p) {
      if (!out.back().empty()) out.emplace_back();
      continue;
    }
    out.back().push_back(*p);
  }
  return out;
}

// Where the plot lies on the page and the values it maps there.
struct Plot {
  double left = 0, right = 0, top = 0, bottom = 0;
  double x_min = 0, x_max = 1, y0 = 0, y1 = 1;
  bool log_y = false;
  int64_t not_drawn = 0;  // values at or below 0 a log axis cannot show
  double width() const { return right - left; }
  double height() const { return bottom - top; }
  double X(double x) const { return left + (x - x_min) / (x_max - x_min) * width(); }
  std::optional<double> Y(double y) const {
    if (log_y) {
      if (y <= 0) return std::nullopt;
      return bottom - (std::log10(y) - std::log10(y0)) / (std::log10(y1) - std::log10(y0)) * height();
    }
    return bottom - (y - y0) / (y1 - y0) * height();
  }
  std::optional<Pt> At(double x, double y) const {
    std::optional<double> v = Y(y);
    if (!v) return std::nullopt;
    return Pt{X(x), *v};
  }
};

// The y range: what is visible, with 5% room; or as asked.
Status FitYRange(const Figure& fig, const FigureSpec& spec, Plot& plot) {
  double y0 = std::numeric_limits<double>::infinity(), y1 = -y0;
  for (const FigureLine& l : fig.lines) {
    for (size_t i = 0; i < l.x.size(); ++i) {
      if (l.x[i] < fig.x_min || l.x[i] > fig.x_max) continue;
      for (double v : {l.y[i], l.lo.empty() ? NAN : l.lo[i], l.hi.empty() ? NAN : l.hi[i]}) {
        if (spec.log_y && v <= 0 && v == l.y[i]) ++plot.not_drawn;
        if (!std::isfinite(v) || (spec.log_y && v <= 0)) continue;
        y0 = std::min(y0, v);
        y1 = std::max(y1, v);
      }
    }
  }
  if (!std::isfinite(y0)) y0 = spec.log_y ? 1 : 0, y1 = spec.log_y ? 10 : 1;
  if (spec.log_y) {
    if (y1 <= y0) y1 = y0 * 10;
    y0 /= 1.15, y1 *= 1.15;
  } else {
    if (y1 == y0) y0 -= 1, y1 += 1;
    double room = (y1 - y0) * 0.05;
    y0 -= room, y1 += room;
  }
  if (spec.y_min) y0 = *spec.y_min;
  if (spec.y_max) y1 = *spec.y_max;
  if (!(y1 > y0)) return Status::InvalidArgument("the y range is empty: y_max must be above y_min");
  plot.y0 = y0, plot.y1 = y1, plot.log_y = spec.log_y, plot.x_min = fig.x_min, plot.x_max = fig.x_max;
  return Status::Ok();
}

// Phases under everything, each named where it is wide enough.
void DrawPhases(Painter& p, const Figure& fig, const Plot& plot, double f) {
  for (const FigureSpan& s : fig.phases) {
    double a = std::max(plot.left, plot.X(s.from)), b = std::min(plot.right, plot.X(s.to));
    if (b <= a) continue;
    p.Rect(a, plot.top, b - a, plot.height(), PhaseColor(s.kind), 0.13);
    if (b - a > TextWidth(s.kind, f * 0.8) + 2)
      p.Text(a + 1.5, plot.bottom - 2, s.kind, f * 0.8, Anchor::kStart, kMuted);
  }
}

void DrawGrid(Painter& p, const Plot& plot, const std::vector<Tick>& x_ticks,
              const std::vector<Tick>& y_ticks, double f) {
  const double tick = f * 0.35, tick_size = f * 0.9;
  for (const Tick& t : y_ticks) {
    std::optional<double> y = plot.Y(t.at);
    if (!y || *y < plot.top - 0.01 || *y > plot.bottom + 0.01) continue;
    if (t.label.empty()) {  // a minor tick of a log axis: a short mark, no grid line
      p.Polyline({{plot.left - tick * 0.6, *y}, {plot.left, *y}}, kInk, 0.4, {});
      continue;
    }
    p.Polyline({{plot.left, *y}, {plot.right, *y}}, kGrid, 0.4, {});
    p.Polyline({{plot.left - tick, *y}, {plot.left, *y}}, kInk, 0.5, {});
    p.Text(plot.left - tick - f * 0.25, *y + tick_size * 0.35, t.label, tick_size, Anchor::kEnd, kInk);
  }
  for (const Tick& t : x_ticks) {
    double x = plot.X(t.at);
    if (x < plot.left - 0.01 || x > plot.right + 0.01) continue;
    p.Polyline({{x, plot.top}, {x, plot.bottom}}, kGrid, 0.4, {});
    p.Polyline({{x, plot.bottom}, {x, plot.bottom + tick}}, kInk, 0.5, {});
    p.Text(x, plot.bottom + tick + tick_size * 1.05, t.label, tick_size, Anchor::kMiddle, kInk);
  }
}

// A workload mean's band between its runs' least and greatest values.
void DrawBands(Painter& p, const Figure& fig, const FigureSpec& spec, const Plot& plot) {
  for (const FigureLine& l : fig.lines) {
    if (l.lo.empty()) continue;
    LineStyle st = StyleOf(l, spec.mono);
    std::vector<Pt> upper, lower;
    auto flush = [&] {
      if (upper.size() > 1) {
        std::vector<Pt> poly = upper;
        poly.insert(poly.end(), lower.rbegin(), lower.rend());
        p.Polygon(poly, {st.r, st.g, st.b}, spec.mono ? 0.15 : 0.18);
      }
      upper.clear();
      lower.clear();
    };
    for (size_t i = 0; i < l.x.size(); ++i) {
      std::optional<double> a = std::isfinite(l.hi[i]) ? plot.Y(l.hi[i]) : std::nullopt;
      std::optional<double> b = std::isfinite(l.lo[i]) ? plot.Y(l.lo[i]) : std::nullopt;
      if (!a || !b) {
        flush();
        continue;
      }
      upper.emplace_back(plot.X(l.x[i]), *a);
      lower.emplace_back(plot.X(l.x[i]), *b);
    }
    flush();
  }
}

// Markers along a line, about `spacing` apart on the page, the lines' offset from one another
// so that two lines' markers do not sit on each other.
void DrawMarkers(Painter& p, const std::vector<Pt>& seg, const LineStyle& st, size_t style, double spacing,
                 double size) {
  if (st.marker.empty() || seg.empty()) return;
  double next = seg.front().first + spacing * static_cast<double>(style % 5) / 5;
  for (const Pt& pt : seg) {
    if (pt.first < next) continue;
    DrawMarker(p, pt, st, size);
    next = pt.first + spacing;
  }
}

void DrawLines(Painter& p, const Figure& fig, const FigureSpec& spec, const Plot& plot) {
  auto at = [&](double x, double y) { return plot.At(x, y); };
  // A smoothed line's own values, faint behind every smoothed line (a blend toward the white
  // page rather than transparency, which every format draws alike).
  for (const FigureLine& l : fig.lines) {
    if (l.raw.empty()) continue;
    LineStyle st = StyleOf(l, spec.mono);
    Rgb faint{st.r + (1 - st.r) * 0.7, st.g + (1 - st.g) * 0.7, st.b + (1 - st.b) * 0.7};
    for (const std::vector<Pt>& seg : Segments(l.x, l.raw, at)) {
      if (seg.size() > 1) p.Polyline(seg, faint, spec.line_pt * 0.6, {});
    }
  }
  for (const FigureLine& l : fig.lines) {
    LineStyle st = StyleOf(l, spec.mono);
    double w = LineWidth(l, spec);
    for (const std::vector<Pt>& seg : Segments(l.x, l.y, at)) {
      if (seg.size() == 1) {
        p.Polyline({seg[0], {seg[0].first + 0.01, seg[0].second}}, {st.r, st.g, st.b}, w * 1.6, {});
      } else {
        p.Polyline(seg, {st.r, st.g, st.b}, w, DashFor(st, w));
      }
      DrawMarkers(p, seg, st, l.style, spec.font_pt * 5, spec.font_pt * 0.55 + w);
    }
  }
}

// Event markers, their labels in rows so that none overprints another (a label that finds
// no room is left out; the marker stays).
void DrawEvents(Painter& p, const Figure& fig, const Plot& plot, double f) {
  std::vector<double> row_end(3, -std::numeric_limits<double>::infinity());
  double event_size = f * 0.8;
  for (const FigureMark& e : fig.events) {
    if (e.x < fig.x_min || e.x > fig.x_max) continue;
    double x = plot.X(e.x);
    p.Polyline({{x, plot.top}, {x, plot.bottom}}, kEventInk, 0.5, {2, 2});
    double w = TextWidth(e.label, event_size);
    for (size_t r = 0; r < row_end.size(); ++r) {
      if (x + 1.5 > row_end[r] && x + 1.5 + w < plot.right) {
        p.Text(x + 1.5, plot.top + event_size * (1.1 + 1.15 * static_cast<double>(r)), e.label, event_size,
               Anchor::kStart, kEventInk);
        row_end[r] = x + 1.5 + w + f * 0.5;
        break;
      }
    }
  }
}

// Why the plot has no room: most often a legend of many lines, said with how to leave it out.
Status NoRoom(const Figure& fig, const Plot& plot, const LegendLayout& legend, double f) {
  if (plot.width() >= 3 * f && plot.height() + legend.height >= 3 * f) {
    return Status::InvalidArgument("the legend's " + std::to_string(fig.lines.size()) +
                                   " names leave no room for the plot: leave the legend out "
                                   "(--no-legend; in the web UI, Figure > No legend), or make the "
                                   "figure taller (--height) or the font smaller (--font-size)");
  }
  return Status::InvalidArgument(
      "the figure is too small for its text: make it larger (--width, --height) or the font smaller "
      "(--font-size)");
}

}  // namespace

Status DrawFigure(Painter& p, const Figure& fig, const FigureSpec& spec, double left0, double top0,
                  double width, double height) {
  const double f = spec.font_pt, pad = f * 0.5, tick = f * 0.35, line_h = f * 1.25, tick_size = f * 0.9;
  Plot plot;
  TB_RETURN_IF_ERROR(FitYRange(fig, spec, plot));

  // Space for the texts around the plot: the y ticks' labels, the x axis and the legend.
  plot.top = top0 + pad + (fig.title.empty() ? f * 0.3 : f * 1.15 * 1.3);
  int y_count = std::clamp(static_cast<int>(height * 0.6 / (f * 2.8)), 2, 8);
  std::vector<Tick> y_ticks =
      spec.log_y ? LogTicks(plot.y0, plot.y1) : NumberTicks(plot.y0, plot.y1, y_count);
  double y_label_w = 0;
  for (const Tick& t : y_ticks) y_label_w = std::max(y_label_w, TextWidth(t.label, tick_size));
  // The y title's line (its baseline at pad + 0.9 f; descenders reach 0.25 f past it), a gap,
  // the widest tick label, the tick: the title never touches the labels (it did by a hair).
  plot.left = left0 + pad + f * 1.15 + pad * 0.6 + f * 0.3 + y_label_w + tick;
  const LegendLayout legend = LayOutLegend(fig, spec, width);
  plot.bottom = top0 + height - pad - legend.height - line_h - tick - tick_size * 1.3;
  plot.right = left0 + width - pad - f * 1.2;
  if (plot.width() < 3 * f || plot.height() < 3 * f) return NoRoom(fig, plot, legend, f);

  DrawPhases(p, fig, plot, f);
  double span_s = fig.x == XAxis::kWall ? (fig.x_max - fig.x_min) / 1000 : fig.x_max - fig.x_min;
  std::vector<Tick> probe = XTicks(fig.x, fig.x_min, fig.x_max, 4, spec.utc_offset_min);
  std::string widest = fig.x == XAxis::kStep ? ShortNumber(fig.x_max) : span_s >= 3600 ? "0:00:00" : "00:00";
  for (const Tick& t : probe) {
    if (t.label.size() > widest.size()) widest = t.label;
  }
  double x_label_w = TextWidth(widest, tick_size);
  int x_count = std::clamp(static_cast<int>(plot.width() / (x_label_w + f * 1.2)), 2, 12);
  std::vector<Tick> x_ticks = XTicks(fig.x, fig.x_min, fig.x_max, x_count, spec.utc_offset_min);
  DrawGrid(p, plot, x_ticks, y_ticks, f);
  p.Clip(plot.left, plot.top, plot.width(), plot.height());
  DrawBands(p, fig, spec, plot);
  DrawLines(p, fig, spec, plot);
  DrawEvents(p, fig, plot, f);
  p.Unclip();
  if (plot.not_drawn > 0) {  // said, not silently dropped
    std::string note = std::to_string(plot.not_drawn) + (plot.not_drawn == 1 ? " value" : " values") +
                       " at or below 0 not drawn (log scale)";
    p.Text(plot.right - f * 0.3, plot.top + f * 1.0, note, f * 0.8, Anchor::kEnd, kMuted);
  }

  // Frame, titles, legend. A run of a few seconds has ticks under a second apart, read in
  // seconds ("3.5s"): its default x title says so rather than "(m:ss)".
  std::string x_title = fig.x_title;
  if (fig.x == XAxis::kRelative && !spec.x_title && x_ticks.size() > 1 && x_ticks[1].at - x_ticks[0].at < 1)
    x_title = "Time since start (s)";
  p.Polyline({{plot.left, plot.top}, {plot.left, plot.bottom}, {plot.right, plot.bottom}}, kInk, 0.6, {});
  p.Polyline({{plot.left, plot.top}, {plot.right, plot.top}, {plot.right, plot.bottom}}, kGrid, 0.4, {});
  if (!fig.title.empty())
    p.Text(left0 + pad, top0 + pad + f * 1.15, fig.title, f * 1.15, Anchor::kStart, kInk, true);
  p.Text(left0 + pad + f * 0.9, plot.top + plot.height() / 2, fig.y_title, f, Anchor::kMiddle, kInk, false,
         true);
  double x_title_y = plot.bottom + tick + tick_size * 1.3 + f * 1.05;
  p.Text(plot.left + plot.width() / 2, x_title_y, x_title, f, Anchor::kMiddle, kInk);
  DrawLegend(p, fig, legend, spec, left0, width, x_title_y + pad * 0.6);
  return Status::Ok();
}

// A figure's height when the spec leaves it out: 0.62 of its width, taller where a legend of
// many lines would leave the plot less than 0.4 of the width, but never taller than wide
// (LayOutLegend then leaves the legend out and says so).
double DefaultHeight(const Figure& figure, const FigureSpec& spec) {
  return HeightFor(LayOutLegend(figure, spec, spec.width_pt).height, spec);
}

Result<std::string> RenderFigure(const Figure& figure, const FigureSpec& spec, FigureFormat format) {
  TB_RETURN_IF_ERROR(CLibraryAvailable<PangoCairo>());
  TB_RETURN_IF_ERROR(FigureFontScope::Check(spec.font));
  FigureFontScope font(spec.font);
  double height = spec.height_pt > 0 ? spec.height_pt : DefaultHeight(figure, spec);
  if (format == FigureFormat::kPng) TB_RETURN_IF_ERROR(CheckFigurePixels(spec.width_pt, height, spec.dpi));
  Status drawn = Status::Ok();
  Result<std::string> out = RenderPages(
      format, spec.width_pt, height, spec.dpi, figure.title.empty() ? figure.y_title : figure.title,
      {[&](Painter& p) { drawn = DrawFigure(p, figure, spec, 0, 0, spec.width_pt, height); }});
  if (!drawn.ok()) return drawn;
  return out;
}

}  // namespace tb
