// Where figures are drawn: a Painter takes lines, filled shapes and text in points (1/72
// inch, y downwards). CairoPainter draws through cairo and pango (PDF pages, PNG images);
// SvgPainter writes SVG elements, its text as <text> so that it stays text in the file and
// in LaTeX. Both measure text with pango in the same font, so a layout fits either.
#pragma once

#include <cairo.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tb {

struct Rgb {
  double r = 0, g = 0, b = 0;
};
Rgb ParseRgb(std::string_view hex);  // "#1f77b4"

enum class Anchor { kStart, kMiddle, kEnd };

using Pt = std::pair<double, double>;

// The font figures use unless asked for another (embedded in PDFs; named first in SVG's
// font-family).
inline constexpr const char* kFigureFont = "DejaVu Sans";

// While one lives, text on this thread is measured and drawn in `family` (a figure's
// --font): RenderFigure holds one for the figure it draws. InvalidArgument, from Check(),
// when fontconfig has no such family, with the families it has.
class FigureFontScope {
 public:
  explicit FigureFontScope(const std::string& family);
  ~FigureFontScope();
  FigureFontScope(const FigureFontScope&) = delete;
  FigureFontScope& operator=(const FigureFontScope&) = delete;
  static Status Check(const std::string& family);

 private:
  std::string previous_;
};

// The advance width of `text` at `size` points.
double TextWidth(const std::string& text, double size, bool bold = false);

// `text` broken at spaces into lines at most `width` points wide at `size` (a word wider than
// that stands alone on its line).
std::vector<std::string> WrapText(const std::string& text, double size, double width, bool bold = false);

class Painter {
 public:
  virtual ~Painter() = default;
  virtual void Polyline(const std::vector<Pt>& points, Rgb color, double width,
                        const std::vector<double>& dash) = 0;
  virtual void Polygon(const std::vector<Pt>& points, Rgb color, double opacity) = 0;
  virtual void Rect(double x, double y, double w, double h, Rgb color, double opacity) = 0;
  // Text with its baseline at y; `vertical` turns it a quarter left around (x, y).
  virtual void Text(double x, double y, const std::string& text, double size, Anchor anchor, Rgb color,
                    bool bold = false, bool vertical = false) = 0;
  virtual void Clip(double x, double y, double w, double h) = 0;
  virtual void Unclip() = 0;
};

class CairoPainter : public Painter {
 public:
  explicit CairoPainter(cairo_t* cr) : cr_(cr) {}
  void Polyline(const std::vector<Pt>& points, Rgb color, double width,
                const std::vector<double>& dash) override;
  void Polygon(const std::vector<Pt>& points, Rgb color, double opacity) override;
  void Rect(double x, double y, double w, double h, Rgb color, double opacity) override;
  void Text(double x, double y, const std::string& text, double size, Anchor anchor, Rgb color, bool bold,
            bool vertical) override;
  void Clip(double x, double y, double w, double h) override;
  void Unclip() override;

 private:
  cairo_t* cr_;
};

class SvgPainter : public Painter {
 public:
  SvgPainter(double width, double height);
  void Polyline(const std::vector<Pt>& points, Rgb color, double width,
                const std::vector<double>& dash) override;
  void Polygon(const std::vector<Pt>& points, Rgb color, double opacity) override;
  void Rect(double x, double y, double w, double h, Rgb color, double opacity) override;
  void Text(double x, double y, const std::string& text, double size, Anchor anchor, Rgb color, bool bold,
            bool vertical) override;
  void Clip(double x, double y, double w, double h) override;
  void Unclip() override;
  std::string Finish();

 private:
  std::string out_;
  int clips_ = 0;
  bool clipped_ = false;
};

}  // namespace tb
