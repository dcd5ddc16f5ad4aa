// A line figure's legend, internal to figure/: its entries flowed into rows under the x
// axis's title (or, past what keeps a figure no taller than wide, a note that it was left
// out), a sweep's colour bar, and the height a figure of no asked height takes with it.
#pragma once

#include <string>
#include <vector>

#include "figure/figure.h"
#include "figure/painter.h"

namespace tb {

struct LegendEntry {
  const FigureLine* line;
  double width;
  std::string text;  // the name, cut with an ellipsis where it is wider than the figure
};
struct LegendLayout {
  std::vector<std::vector<LegendEntry>> rows;
  std::vector<std::string> note;  // said instead of a legend that would not fit: its lines
  bool colour_bar = false;        // a sweep's lines as a colour bar under the rows
  double height = 0;              // the rows, the bar and the gap above them; 0 without a legend
};

// The height of a figure whose height is not asked, with a legend `legend` tall: 0.62 of its
// width, taller where the legend would leave the plot less than 0.4 of the width.
double HeightFor(double legend, const FigureSpec& spec);

// The legend as drawn: its rows, or, where its rows would make a figure of no asked height
// taller than wide (15 runs' long names at 3.3 in), a note saying it was left out and how to
// have it.
LegendLayout LayOutLegend(const Figure& fig, const FigureSpec& spec, double width);

// The legend from `y` down (its note, its rows, then a sweep's colour bar), `width` wide from `left`.
void DrawLegend(Painter& p, const Figure& fig, const LegendLayout& legend, const FigureSpec& spec,
                double left, double width, double y);

}  // namespace tb
