// The report's collocation bars as one figure for a paper (`trainbench plot --bars`): the
// panels asked for (combined throughput, steady GPU utilization, energy per sample and the
// speed-up by default) at any width, as many side by side as fit (2.6 in each), every bar the
// mean over the repeats with its 95 % interval as an error bar, labels of 3 significant
// digits, and one legend for all the panels under them; PDF, SVG or PNG through the figure
// renderer, in the font and size a FigureSpec gives.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analyze/report.h"
#include "figure/bar_chart.h"
#include "figure/figure_spec.h"

namespace tb {

// The panels' keys in the order drawn when none are named.
inline const std::vector<std::string> kDefaultBarPanels = {"throughput", "gpu", "energy-sample", "speedup"};

// The report's bar charts named by `panels` (keys of ReportBarCharts: throughput,
// run-throughput, time, gpu, sm, energy-run, energy-sample, speedup), in that order.
// InvalidArgument for a key that is none of them; NotFound when none of the panels has a
// value for the experiment (the message says what the report needs for each).
Result<std::vector<BarChart>> CollocationPanels(const ExperimentReport& report,
                                                const std::vector<std::string>& panels);

// The look of a bars figure from its options as text ("width" "7in", "font_size" "9", "font",
// "title", "mono" "true", "dpi"; an empty value is left at its default): InvalidArgument names
// the option and what it takes. The same options for `plot --bars` and the server's bars.
Result<FigureSpec> BarFigureLook(const std::vector<std::pair<std::string, std::string>>& options);

// The figure: `look` gives its width, font, font size, title, mono and dpi.
Result<std::string> RenderCollocationBars(const std::vector<BarChart>& panels, const FigureSpec& look,
                                          FigureFormat format);

// The plotted values: one row per panel and workload with the mean, the interval and n.
std::string CollocationBarsCsv(const std::vector<BarChart>& panels);

}  // namespace tb
