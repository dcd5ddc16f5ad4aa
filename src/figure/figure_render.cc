// RenderFigure: a Figure laid out in points and drawn through a Painter into PDF, SVG or PNG.
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "base/strings.h"
#include "figure/axis.h"
#include "figure/figure.h"
#include "figure/painter.h"
#include "figure/pango_cairo.h"
#include "figure/render.h"

namespace tb {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                    "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
const std::vector<std::vector<double>> kDashes = {{},      {8, 4}, {2, 3}, {10, 3, 2, 3},
                                                  {14, 5}, {4, 4}, {1, 4}, {16, 4, 4, 4}};

const Rgb kInk{0.13, 0.13, 0.13}, kMuted{0.33, 0.33, 0.33}, kGrid{0.9, 0.9, 0.9}, kEventInk{0.45, 0.45, 0.45};

Rgb PhaseColor(const std::string& kind) {
  if (kind == "warm-up") return ParseRgb("#808080");
  if (kind == "idle") return ParseRgb("#d62728");
  if (kind == "stall") return ParseRgb("#ff7f0e");
  if (kind == "dip") return ParseRgb("#bcbd22");
  if (kind == "memory-climb") return ParseRgb("#9467bd");
  return ParseRgb("#1f77b4");
}

cairo_status_t AppendToString(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

// A PNG's pHYs chunk (pixels per metre), so that a document places it at its DPI.
std::string WithResolution(std::string png, int dpi) {
  constexpr size_t kAfterHeader = 8 + 25;  // signature, IHDR chunk
  if (png.size() < kAfterHeader) return png;
  auto be32 = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  auto ppm = static_cast<uint32_t>(std::lround(dpi / 0.0254));
  std::string body = "pHYs" + be32(ppm) + be32(ppm) + std::string(1, '\1');
  uLong crc = crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()));
  std::string chunk = be32(9) + body + be32(static_cast<uint32_t>(crc));
  png.insert(kAfterHeader, chunk);
  return png;
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

}  // namespace

LineStyle StyleOf(size_t style, bool mono) {
  if (mono) {
    double grey = style % 2 ? 0.33 : 0;
    return {grey, grey, grey, kDashes[style % kDashes.size()]};
  }
  Rgb c = ParseRgb(kPalette[style % std::size(kPalette)]);
  return {c.r, c.g, c.b, {}};
}

Result<std::string> RenderPages(FigureFormat format, double width, double height, int dpi,
                                const std::string& title,
                                const std::vector<std::function<void(Painter&)>>& pages) {
  if (pages.empty() || (format != FigureFormat::kPdf && pages.size() != 1))
    return Status::InvalidArgument("only a PDF has more than one page, and every document has one");
  // Text is measured with pango in every format, SVG's too.
  TB_RETURN_IF_ERROR(CLibraryAvailable<PangoCairo>());
  if (format == FigureFormat::kSvg) {
    SvgPainter svg(width, height);
    svg.Rect(0, 0, width, height, {1, 1, 1}, 1);
    pages[0](svg);
    return svg.Finish();
  }
  std::string out;
  cairo_surface_t* surface = nullptr;
  if (format == FigureFormat::kPdf) {
    surface = Pc().cairo_pdf_surface_create_for_stream(AppendToString, &out, width, height);
    Pc().cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "trainbench");
    if (!title.empty()) Pc().cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, title.c_str());
  } else {
    double scale = dpi / 72.0;
    surface = Pc().cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(std::ceil(width * scale)),
                                              static_cast<int>(std::ceil(height * scale)));
  }
  cairo_t* cr = Pc().cairo_create(surface);
  if (format == FigureFormat::kPng) Pc().cairo_scale(cr, dpi / 72.0, dpi / 72.0);
  for (const auto& draw : pages) {
    CairoPainter painter(cr);
    painter.Rect(0, 0, width, height, {1, 1, 1}, 1);
    draw(painter);
    Pc().cairo_show_page(cr);
  }
  cairo_status_t status = Pc().cairo_status(cr);
  Pc().cairo_destroy(cr);
  if (format == FigureFormat::kPng && status == CAIRO_STATUS_SUCCESS)
    status = Pc().cairo_surface_write_to_png_stream(surface, AppendToString, &out);
  Pc().cairo_surface_finish(surface);
  if (status == CAIRO_STATUS_SUCCESS) status = Pc().cairo_surface_status(surface);
  Pc().cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS)
    return Status::IoError(Concat({"cannot draw the figure: ", Pc().cairo_status_to_string(status)}));
  return format == FigureFormat::kPng ? WithResolution(std::move(out), dpi) : out;
}

namespace {

// The legend, flowed into rows under the x axis's title: its entries (each a line and the
// width of its swatch and name) row by row, and the height the rows take.
struct LegendEntry {
  const FigureLine* line;
  double width;
};
struct LegendLayout {
  std::vector<std::vector<LegendEntry>> rows;
  double height = 0;  // the rows and the gap above them; 0 without a legend
};

LegendLayout LayOutLegend(const Figure& fig, const FigureSpec& spec, double width) {
  const double f = spec.font_pt, pad = f * 0.5, swatch = f * 2.2;
  LegendLayout out;
  if (!spec.show_legend || fig.lines.empty() || (fig.lines.size() == 1 && fig.lines[0].name.empty()))
    return out;
  double legend_w = width - 2 * pad;
  double row_w = 0;
  for (const FigureLine& l : fig.lines) {
    LegendEntry e{&l, swatch + f * 0.4 + TextWidth(l.name, f)};
    if (out.rows.empty() || row_w + e.width > legend_w) {
      out.rows.emplace_back();
      row_w = 0;
    }
    out.rows.back().push_back(e);
    row_w += e.width + f * 1.2;
  }
  out.height = static_cast<double>(out.rows.size()) * f * 1.25 + pad * 0.6;
  return out;
}

}  // namespace

Status DrawFigure(Painter& p, const Figure& fig, const FigureSpec& spec, double left0, double top0,
                  double width, double height) {
  const double f = spec.font_pt, pad = f * 0.5, tick = f * 0.35, line_h = f * 1.25;
  const double tick_size = f * 0.9;

  // y range: what is visible, 5% room; or as asked.
  double y0 = std::numeric_limits<double>::infinity(), y1 = -y0;
  for (const FigureLine& l : fig.lines) {
    for (size_t i = 0; i < l.x.size(); ++i) {
      if (l.x[i] < fig.x_min || l.x[i] > fig.x_max) continue;
      for (double v : {l.y[i], l.lo.empty() ? NAN : l.lo[i], l.hi.empty() ? NAN : l.hi[i]}) {
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

  // Space for the texts around the plot.
  double top = top0 + pad + (fig.title.empty() ? f * 0.3 : f * 1.15 * 1.3);
  double estimated_h = height * 0.6;
  int y_count = std::clamp(static_cast<int>(estimated_h / (f * 2.8)), 2, 8);
  std::vector<Tick> y_ticks = spec.log_y ? LogTicks(y0, y1) : NumberTicks(y0, y1, y_count);
  double y_label_w = 0;
  for (const Tick& t : y_ticks) y_label_w = std::max(y_label_w, TextWidth(t.label, tick_size));
  double left = left0 + pad + f * 1.1 + pad * 0.6 + y_label_w + tick;

  const LegendLayout legend = LayOutLegend(fig, spec, width);
  const std::vector<std::vector<LegendEntry>>& rows = legend.rows;
  const double swatch = f * 2.2;
  double bottom = top0 + height - pad - legend.height - line_h - tick - tick_size * 1.3;
  double right = left0 + width - pad - f * 1.2;
  double plot_w = right - left, plot_h = bottom - top;
  if (plot_w < 3 * f || plot_h < 3 * f) {
    // Most often a legend of many lines: say so, and how to leave it out.
    if (plot_w >= 3 * f && plot_h + legend.height >= 3 * f) {
      return Status::InvalidArgument("the legend's " + std::to_string(fig.lines.size()) +
                                     " names leave no room for the plot: leave the legend out "
                                     "(--no-legend; in the web UI, Figure > No legend), or make the "
                                     "figure taller (--height) or the font smaller (--font-size)");
    }
    return Status::InvalidArgument(
        "the figure is too small for its text: make it larger (--width, --height) or the font smaller "
        "(--font-size)");
  }

  auto px = [&](double x) { return left + (x - fig.x_min) / (fig.x_max - fig.x_min) * plot_w; };
  auto py = [&](double y) -> std::optional<double> {
    if (spec.log_y) {
      if (y <= 0) return std::nullopt;
      return bottom - (std::log10(y) - std::log10(y0)) / (std::log10(y1) - std::log10(y0)) * plot_h;
    }
    return bottom - (y - y0) / (y1 - y0) * plot_h;
  };
  auto point = [&](double x, double y) -> std::optional<Pt> {
    std::optional<double> v = py(y);
    if (!v) return std::nullopt;
    return Pt{px(x), *v};
  };

  // Phases under everything.
  for (const FigureSpan& s : fig.phases) {
    double a = std::max(left, px(s.from)), b = std::min(right, px(s.to));
    if (b <= a) continue;
    p.Rect(a, top, b - a, plot_h, PhaseColor(s.kind), 0.13);
    if (b - a > TextWidth(s.kind, f * 0.8) + 2)
      p.Text(a + 1.5, bottom - 2, s.kind, f * 0.8, Anchor::kStart, kMuted);
  }

  // Grid and ticks.
  double span_s = fig.x == XAxis::kWall ? (fig.x_max - fig.x_min) / 1000 : fig.x_max - fig.x_min;
  std::string widest = fig.x == XAxis::kStep ? ShortNumber(fig.x_max) : span_s >= 3600 ? "0:00:00" : "00:00";
  double x_label_w = TextWidth(widest, tick_size);
  int x_count = std::clamp(static_cast<int>(plot_w / (x_label_w + f * 1.2)), 2, 12);
  std::vector<Tick> x_ticks = XTicks(fig.x, fig.x_min, fig.x_max, x_count, spec.utc_offset_min);
  // A run of a few seconds has ticks under a second apart, read in seconds ("3.5s"): its
  // default title says so rather than "(m:ss)".
  std::string x_title = fig.x_title;
  if (fig.x == XAxis::kRelative && !spec.x_title && x_ticks.size() > 1 && x_ticks[1].at - x_ticks[0].at < 1)
    x_title = "Time since start (s)";
  for (const Tick& t : y_ticks) {
    std::optional<double> y = py(t.at);
    if (!y || *y < top - 0.01 || *y > bottom + 0.01) continue;
    p.Polyline({{left, *y}, {right, *y}}, kGrid, 0.4, {});
    p.Polyline({{left - tick, *y}, {left, *y}}, kInk, 0.5, {});
    p.Text(left - tick - f * 0.25, *y + tick_size * 0.35, t.label, tick_size, Anchor::kEnd, kInk);
  }
  for (const Tick& t : x_ticks) {
    double x = px(t.at);
    if (x < left - 0.01 || x > right + 0.01) continue;
    p.Polyline({{x, top}, {x, bottom}}, kGrid, 0.4, {});
    p.Polyline({{x, bottom}, {x, bottom + tick}}, kInk, 0.5, {});
    p.Text(x, bottom + tick + tick_size * 1.05, t.label, tick_size, Anchor::kMiddle, kInk);
  }

  // Bands, lines and events, clipped to the plot.
  p.Clip(left, top, plot_w, plot_h);
  for (const FigureLine& l : fig.lines) {
    if (l.lo.empty()) continue;
    LineStyle st = StyleOf(l.style, spec.mono);
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
      std::optional<double> a = std::isfinite(l.hi[i]) ? py(l.hi[i]) : std::nullopt;
      std::optional<double> b = std::isfinite(l.lo[i]) ? py(l.lo[i]) : std::nullopt;
      if (!a || !b) {
        flush();
        continue;
      }
      upper.emplace_back(px(l.x[i]), *a);
      lower.emplace_back(px(l.x[i]), *b);
    }
    flush();
  }
  for (const FigureLine& l : fig.lines) {
    LineStyle st = StyleOf(l.style, spec.mono);
    double w = l.lo.empty() ? spec.line_pt : spec.line_pt * 1.5;
    std::vector<double> dash;
    for (double d : st.dash) dash.push_back(d * std::max(0.5, w) * 0.75);
    for (const std::vector<Pt>& seg : Segments(l.x, l.y, point)) {
      if (seg.size() == 1) {
        p.Polyline({seg[0], {seg[0].first + 0.01, seg[0].second}}, {st.r, st.g, st.b}, w * 1.6, {});
      } else {
        p.Polyline(seg, {st.r, st.g, st.b}, w, dash);
      }
    }
  }
  // Event markers, their labels in rows so that none overprints another (a label that
  // finds no room is left out; the marker stays).
  std::vector<double> row_end(3, -std::numeric_limits<double>::infinity());
  double event_size = f * 0.8;
  for (const FigureMark& e : fig.events) {
    if (e.x < fig.x_min || e.x > fig.x_max) continue;
    double x = px(e.x);
    p.Polyline({{x, top}, {x, bottom}}, kEventInk, 0.5, {2, 2});
    double w = TextWidth(e.label, event_size);
    for (size_t r = 0; r < row_end.size(); ++r) {
      if (x + 1.5 > row_end[r] && x + 1.5 + w < right) {
        p.Text(x + 1.5, top + event_size * (1.1 + 1.15 * static_cast<double>(r)), e.label, event_size,
               Anchor::kStart, kEventInk);
        row_end[r] = x + 1.5 + w + f * 0.5;
        break;
      }
    }
  }
  p.Unclip();

  // Frame, titles, legend.
  p.Polyline({{left, top}, {left, bottom}, {right, bottom}}, kInk, 0.6, {});
  p.Polyline({{left, top}, {right, top}, {right, bottom}}, kGrid, 0.4, {});
  if (!fig.title.empty())
    p.Text(left0 + pad, top0 + pad + f * 1.15, fig.title, f * 1.15, Anchor::kStart, kInk, true);
  p.Text(left0 + pad + f * 0.9, top + plot_h / 2, fig.y_title, f, Anchor::kMiddle, kInk, false, true);
  double x_title_y = bottom + tick + tick_size * 1.3 + f * 1.05;
  p.Text(left + plot_w / 2, x_title_y, x_title, f, Anchor::kMiddle, kInk);
  double y = x_title_y + pad * 0.6;
  for (const auto& row : rows) {
    double x = left0 + pad;
    y += line_h;
    for (const LegendEntry& e : row) {
      LineStyle st = StyleOf(e.line->style, spec.mono);
      double w = e.line->lo.empty() ? spec.line_pt : spec.line_pt * 1.5;
      if (!e.line->lo.empty())
        p.Rect(x, y - f * 0.75, swatch, f * 0.7, {st.r, st.g, st.b}, spec.mono ? 0.15 : 0.18);
      std::vector<double> dash;
      for (double d : st.dash) dash.push_back(d * std::max(0.5, w) * 0.75);
      p.Polyline({{x, y - f * 0.4}, {x + swatch, y - f * 0.4}}, {st.r, st.g, st.b}, w, dash);
      p.Text(x + swatch + f * 0.4, y, e.line->name, f, Anchor::kStart, kInk);
      x += e.width + f * 1.2;
    }
  }
  return Status::Ok();
}

// A figure's height when the spec leaves it out: 0.62 of its width, taller where a legend of
// many lines would leave the plot less than 0.4 of the width (50 runs' names at 3.3 in take
// 20 rows).
double DefaultHeight(const Figure& figure, const FigureSpec& spec) {
  double height = std::round(spec.width_pt * 0.62 * 100) / 100;
  double legend = LayOutLegend(figure, spec, spec.width_pt).height;
  double room = height - legend - spec.font_pt * 6;  // what the title, ticks and x title leave
  if (room < spec.width_pt * 0.4) height += std::ceil(spec.width_pt * 0.4 - room);
  return height;
}

Result<std::string> RenderFigure(const Figure& figure, const FigureSpec& spec, FigureFormat format) {
  TB_RETURN_IF_ERROR(CLibraryAvailable<PangoCairo>());
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
