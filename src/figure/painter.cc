#include "figure/painter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "base/strings.h"
#include "figure/pango_cairo.h"

namespace tb {
namespace {

// The family text is drawn in on this thread (FigureFontScope).
thread_local std::string current_font = kFigureFont;

std::string Hex(Rgb c) {
  auto byte = [](double v) { return static_cast<int>(std::lround(std::clamp(v, 0.0, 1.0) * 255)); };
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", byte(c.r), byte(c.g), byte(c.b));
  return buf;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

// A pango layout of `text` in the figure font, without hinting so that a size measured on
// one surface is the size drawn on another.
struct LayoutDeleter {
  void operator()(PangoLayout* l) const { Pc().g_object_unref(l); }
};
std::unique_ptr<PangoLayout, LayoutDeleter> MakeLayout(cairo_t* cr, const std::string& text, double size,
                                                       bool bold) {
  PangoLayout* layout = Pc().pango_cairo_create_layout(cr);
  cairo_font_options_t* options = Pc().cairo_font_options_create();
  Pc().cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF);
  Pc().cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE);
  Pc().pango_cairo_context_set_font_options(Pc().pango_layout_get_context(layout), options);
  Pc().cairo_font_options_destroy(options);
  Pc().pango_layout_context_changed(layout);
  PangoFontDescription* font = Pc().pango_font_description_new();
  Pc().pango_font_description_set_family(font, current_font.c_str());
  Pc().pango_font_description_set_absolute_size(font, size * PANGO_SCALE);
  if (bold) Pc().pango_font_description_set_weight(font, PANGO_WEIGHT_BOLD);
  Pc().pango_layout_set_font_description(layout, font);
  Pc().pango_font_description_free(font);
  Pc().pango_layout_set_text(layout, text.c_str(), static_cast<int>(text.size()));
  return std::unique_ptr<PangoLayout, LayoutDeleter>(layout);
}

// A context to measure text with, one per thread.
cairo_t* MeasureContext() {
  thread_local struct Holder {
    cairo_surface_t* surface = Pc().cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1);
    cairo_t* cr = Pc().cairo_create(surface);
    ~Holder() {
      Pc().cairo_destroy(cr);
      Pc().cairo_surface_destroy(surface);
    }
  } holder;
  return holder.cr;
}

}  // namespace

Rgb ParseRgb(std::string_view hex) {
  if (hex.size() != 7 || hex[0] != '#') return {};
  auto part = [&](size_t i) { return std::stoi(std::string(hex.substr(i, 2)), nullptr, 16) / 255.0; };
  return {part(1), part(3), part(5)};
}

double TextWidth(const std::string& text, double size, bool bold) {
  auto layout = MakeLayout(MeasureContext(), text, size, bold);
  PangoRectangle logical;
  Pc().pango_layout_get_extents(layout.get(), nullptr, &logical);
  return static_cast<double>(logical.width) / PANGO_SCALE;
}

std::vector<std::string> WrapText(const std::string& text, double size, double width, bool bold) {
  std::vector<std::string> lines;
  std::string line;
  for (std::string_view word : SplitWhitespace(text)) {
    std::string longer = line.empty() ? std::string(word) : line + " " + std::string(word);
    if (!line.empty() && TextWidth(longer, size, bold) > width) {
      lines.push_back(std::move(line));
      line = std::string(word);
    } else {
      line = std::move(longer);
    }
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

// --- cairo --------------------------------------------------------------------------------

void CairoPainter::Polyline(const std::vector<Pt>& points, Rgb color, double width,
                            const std::vector<double>& dash) {
  if (points.size() < 2) return;
  Pc().cairo_set_source_rgb(cr_, color.r, color.g, color.b);
  Pc().cairo_set_line_width(cr_, width);
  Pc().cairo_set_line_join(cr_, CAIRO_LINE_JOIN_ROUND);
  Pc().cairo_set_line_cap(cr_, dash.empty() ? CAIRO_LINE_CAP_ROUND : CAIRO_LINE_CAP_BUTT);
  Pc().cairo_set_dash(cr_, dash.data(), static_cast<int>(dash.size()), 0);
  Pc().cairo_move_to(cr_, points[0].first, points[0].second);
  for (size_t i = 1; i < points.size(); ++i) Pc().cairo_line_to(cr_, points[i].first, points[i].second);
  Pc().cairo_stroke(cr_);
  Pc().cairo_set_dash(cr_, nullptr, 0, 0);
}

void CairoPainter::Polygon(const std::vector<Pt>& points, Rgb color, double opacity) {
  if (points.size() < 3) return;
  Pc().cairo_set_source_rgba(cr_, color.r, color.g, color.b, opacity);
  Pc().cairo_move_to(cr_, points[0].first, points[0].second);
  for (size_t i = 1; i < points.size(); ++i) Pc().cairo_line_to(cr_, points[i].first, points[i].second);
  Pc().cairo_close_path(cr_);
  Pc().cairo_fill(cr_);
}

void CairoPainter::Rect(double x, double y, double w, double h, Rgb color, double opacity) {
  Pc().cairo_set_source_rgba(cr_, color.r, color.g, color.b, opacity);
  Pc().cairo_rectangle(cr_, x, y, w, h);
  Pc().cairo_fill(cr_);
}

void CairoPainter::Text(double x, double y, const std::string& text, double size, Anchor anchor, Rgb color,
                        bool bold, bool vertical) {
  auto layout = MakeLayout(cr_, text, size, bold);
  PangoRectangle logical;
  Pc().pango_layout_get_extents(layout.get(), nullptr, &logical);
  double width = static_cast<double>(logical.width) / PANGO_SCALE;
  double baseline = static_cast<double>(Pc().pango_layout_get_baseline(layout.get())) / PANGO_SCALE;
  double shift = anchor == Anchor::kMiddle ? width / 2 : anchor == Anchor::kEnd ? width : 0;
  Pc().cairo_save(cr_);
  Pc().cairo_translate(cr_, x, y);
  if (vertical) Pc().cairo_rotate(cr_, -M_PI / 2);
  Pc().cairo_move_to(cr_, -shift, -baseline);
  Pc().cairo_set_source_rgb(cr_, color.r, color.g, color.b);
  Pc().pango_cairo_show_layout(cr_, layout.get());
  Pc().cairo_restore(cr_);
}

void CairoPainter::Clip(double x, double y, double w, double h) {
  Pc().cairo_save(cr_);
  Pc().cairo_rectangle(cr_, x, y, w, h);
  Pc().cairo_clip(cr_);
}

void CairoPainter::Unclip() { Pc().cairo_restore(cr_); }

FigureFontScope::FigureFontScope(const std::string& family) : previous_(current_font) {
  current_font = family;
}
FigureFontScope::~FigureFontScope() { current_font = previous_; }

Status FigureFontScope::Check(const std::string& family) {
  std::string want = ToLower(family);
  if (want == "serif" || want == "sans-serif" || want == "sans" || want == "monospace") return Status::Ok();
  PangoFontFamily** families = nullptr;
  int n = 0;
  Pc().pango_font_map_list_families(Pc().pango_cairo_font_map_get_default(), &families, &n);
  std::vector<std::string> names;
  bool found = false;
  for (int i = 0; i < n; ++i) {
    std::string name = Pc().pango_font_family_get_name(families[i]);
    found = found || ToLower(name) == want;
    names.push_back(name);
  }
  Pc().g_free(families);
  if (found) return Status::Ok();
  std::sort(names.begin(), names.end());
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  return Status::InvalidArgument(
      Concat({"font '", family, "' is not installed here; installed: ", list,
              " (or serif, sans-serif, monospace; install a family's fonts ", "and it can be named)"}));
}

// --- SVG ----------------------------------------------------------------------------------

SvgPainter::SvgPainter(double width, double height) {
  out_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         Num(width) + "pt\" height=\"" + Num(height) + "pt\" viewBox=\"0 0 " + Num(width) + " " +
         Num(height) + "\">\n";
}

void SvgPainter::Polyline(const std::vector<Pt>& points, Rgb color, double width,
                          const std::vector<double>& dash) {
  if (points.size() < 2) return;
  out_ += "<path d=\"";
  for (size_t i = 0; i < points.size(); ++i) {
    out_ += (i == 0 ? "M" : "L") + Num(points[i].first) + "," + Num(points[i].second);
  }
  out_ += "\" fill=\"none\" stroke=\"" + Hex(color) + "\" stroke-width=\"" + Num(width) +
          "\" stroke-linejoin=\"round\" stroke-linecap=\"" + (dash.empty() ? "round" : "butt") + "\"";
  if (!dash.empty()) {
    out_ += " stroke-dasharray=\"";
    for (size_t i = 0; i < dash.size(); ++i) out_ += (i ? " " : "") + Num(dash[i]);
    out_ += "\"";
  }
  out_ += "/>\n";
}

void SvgPainter::Polygon(const std::vector<Pt>& points, Rgb color, double opacity) {
  if (points.size() < 3) return;
  out_ += "<path d=\"";
  for (size_t i = 0; i < points.size(); ++i) {
    out_ += (i == 0 ? "M" : "L") + Num(points[i].first) + "," + Num(points[i].second);
  }
  out_ += "Z\" fill=\"" + Hex(color) + "\" fill-opacity=\"" + Num(opacity) + "\" stroke=\"none\"/>\n";
}

void SvgPainter::Rect(double x, double y, double w, double h, Rgb color, double opacity) {
  out_ += "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(w) + "\" height=\"" + Num(h) +
          "\" fill=\"" + Hex(color) + "\"" + (opacity < 1 ? " fill-opacity=\"" + Num(opacity) + "\"" : "") +
          "/>\n";
}

void SvgPainter::Text(double x, double y, const std::string& text, double size, Anchor anchor, Rgb color,
                      bool bold, bool vertical) {
  const char* anchors[] = {"start", "middle", "end"};
  std::string lower = ToLower(current_font);
  bool serif = lower.find("serif") != std::string::npos && lower.find("sans") == std::string::npos;
  out_ += "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" font-family=\"" + XmlEscape(current_font) +
          (serif ? ", Times, serif" : ", Helvetica, Arial, sans-serif") + "\" font-size=\"" + Num(size) +
          "\" fill=\"" + Hex(color) + "\"";
  if (anchor != Anchor::kStart)
    out_ += std::string(" text-anchor=\"") + anchors[static_cast<int>(anchor)] + "\"";
  if (bold) out_ += " font-weight=\"bold\"";
  if (vertical) out_ += " transform=\"rotate(-90 " + Num(x) + " " + Num(y) + ")\"";
  out_ += ">" + XmlEscape(text) + "</text>\n";
}

void SvgPainter::Clip(double x, double y, double w, double h) {
  std::string id = "clip" + std::to_string(++clips_);
  out_ += "<clipPath id=\"" + id + "\"><rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(w) +
          "\" height=\"" + Num(h) + "\"/></clipPath>\n<g clip-path=\"url(#" + id + ")\">\n";
  clipped_ = true;
}

void SvgPainter::Unclip() {
  if (clipped_) out_ += "</g>\n";
  clipped_ = false;
}

std::string SvgPainter::Finish() {
  Unclip();
  return out_ + "</svg>\n";
}

}  // namespace tb
