// A sweep over an ordered parameter as a figure shows it: each run's line coloured on the
// sequential map (figure/palette.h) by the run's value of the parameter, dark for the least,
// light for the greatest (on a log scale where the values are positive and span 8x or more,
// as batch sizes and learning rates do), and the lines ordered by value so that the legend
// reads in order. Internal to figure/. Pure.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "figure/figure.h"
#include "store/store.h"

namespace tb {

// Shades `figure`'s run lines by `param` (FigureSpec::color_by) and sets figure.sweep.
// InvalidArgument when no run of the figure has the param (naming those it has) or a run's
// value is not a number (naming the run and the value).
Status ShadeBySweep(const std::string& param, const std::vector<RunRecord>& runs, Figure& figure);

// Where the colour bar's ticks go: every value where there are at most eight, else round values.
std::vector<double> SweepTicks(const FigureSweep& sweep);

}  // namespace tb
