// How a figure line looks on the page, internal to figure/: its dash scaled to its width,
// its width (a workload mean's thicker), and its markers. The colours and patterns are
// figure/palette.h's; StyleOf (figure.h) picks them.
#pragma once

#include <vector>

#include "figure/figure.h"
#include "figure/painter.h"

namespace tb {

// The text and rule colours of figures.
inline constexpr Rgb kFigureInk{0.13, 0.13, 0.13}, kFigureMuted{0.33, 0.33, 0.33};

// A line's dash pattern scaled to its width.
std::vector<double> DashFor(const LineStyle& st, double width);
// A line's width in points: a workload mean's half as wide again.
double LineWidth(const FigureLine& l, const FigureSpec& spec);
// A marker of `st` (a filled dot, or a ring around white) `size` points across at `at`;
// nothing for a style without one.
void DrawMarker(Painter& p, Pt at, const LineStyle& st, double size);

}  // namespace tb
