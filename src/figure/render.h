// The drawing routines behind RenderFigure, for documents that place figures on their own
// pages (trainbench report's PDF): one page of `width` x `height` points in `format`, and a
// line figure drawn into a box of a page.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "figure/figure.h"
#include "figure/painter.h"

namespace tb {

// Draws each of `pages` through its function onto a white page of `width` x `height` points
// (PDF with `title` in its metadata; SVG and PNG, at `dpi`, have exactly one page).
Result<std::string> RenderPages(FigureFormat format, double width, double height, int dpi,
                                const std::string& title,
                                const std::vector<std::function<void(Painter&)>>& pages);

// The figure in the box (left, top, width, height); InvalidArgument when its text leaves no
// room for the plot.
Status DrawFigure(Painter& p, const Figure& figure, const FigureSpec& spec, double left, double top,
                  double width, double height);

}  // namespace tb
