// A horizontal bar chart, for comparing workloads in `trainbench report` and `plot --bars`:
// one bar per entry with its name at the left and its value (3 significant digits) at the
// bar's end, a value axis from zero with round
// ticks, titled with its unit. Names never overprint one another, however many and however
// long: each has its own row, and a name wider than a third of the chart is cut with an
// ellipsis. A bar may carry an error bar. Drawn through a Painter, so it looks the same in PDF, SVG and PNG
// as the line figures of `trainbench plot`.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "figure/painter.h"

namespace tb {

struct Bar {
  std::string name;
  std::optional<double> value;  // none: "no data" where the bar would be
  size_t style = 0;             // the palette colour, as a figure line's (0 blue, 1 red, ...)
  // An interval around the value (a 95 % confidence interval over repeats): an error bar
  // with caps, inside the axis; the label then reads "value ±half".
  std::optional<std::pair<double, double>> interval = std::nullopt;
};

struct BarChart {
  std::string key;         // what `plot --bars --panels` names it by ("speedup"); may be empty
  std::string title;       // bold, above the bars; none when empty
  std::string axis_title;  // under the value axis, with its unit ("Samples per second")
  std::vector<Bar> bars;
  std::vector<std::pair<size_t, std::string>> legend;  // a style and what it stands for
  bool mono = false;                                   // the palette's greys (figure/palette.h)
};

// The legend of bar charts on one line: each style's swatch and what it stands for, from
// (left, y) with y the text's baseline.
void DrawBarLegend(Painter& p, const std::vector<std::pair<size_t, std::string>>& legend, bool mono,
                   double font_pt, double left, double y);

// The height the chart takes at `font_pt`: bars keep their thickness whatever the width.
double BarChartHeight(const BarChart& chart, double font_pt);

// Draws the chart at (left, top), `width` wide and BarChartHeight() high.
void DrawBarChart(Painter& p, const BarChart& chart, double font_pt, double left, double top, double width);

// `v` rounded to `digits` significant digits, as a bar's label shows it ("18600", "1.63").
std::string Significant(double v, int digits = 3);

// `text` cut to at most `width` points at `size` with an ellipsis, or whole when it fits.
std::string FitText(const std::string& text, double size, double width);

}  // namespace tb
