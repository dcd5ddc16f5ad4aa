// The drawing routines behind RenderFigure, for documents that place figures on their own
// pages (trainbench report's PDF): one page of `width` x `height` points in `format`, and a
// line figure drawn into a box of a page.
#pragma once

#include <functional>
#include <string>

#include "figure/figure.h"
#include "figure/painter.h"

namespace tb {

// Draws through `draw` onto a white page (PNG at `dpi`; PDF with `title` in its metadata).
Result<std::string> RenderPages(FigureFormat format, double width, double height, int dpi,
                                const std::string& title, const std::function<void(Painter&)>& draw);

// The figure in the box (left, top, width, height); InvalidArgument when its text leaves no
// room for the plot.
Status DrawFigure(Painter& p, const Figure& figure, const FigureSpec& spec, double left, double top,
                  double width, double height);

}  // namespace tb
