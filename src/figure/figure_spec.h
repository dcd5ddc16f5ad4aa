// A figure as a researcher describes it for a paper: what to plot (runs by id or name,
// workloads as their mean with a min-max band, one metric, an x axis, a range, smoothing)
// and how it looks (size in inches, centimetres or points, font size in points, axis
// titles, legend names made from the runs' params, colours as on screen or monochrome with
// dashes, events and phases on or off, y range and log scale). One description serves
// `trainbench plot`, the web UI's exports and `trainbench report`; it reads from and writes
// to JSON so that a figure reruns from a file.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "query/chart_series.h"

namespace tb {

enum class FigureFormat { kPdf, kSvg, kPng };
// "pdf", "svg", "png"; also the extension of a file name ("fig.pdf").
Result<FigureFormat> ParseFigureFormat(std::string_view text);
Result<FigureFormat> FigureFormatOfPath(std::string_view path);
std::string_view FigureFormatName(FigureFormat format);
std::string_view FigureContentType(FigureFormat format);

// A length as people write it for a page: "3.3in", "8.4cm", "85mm", "240pt" (a bare number
// is points); in points (1/72 inch).
Result<double> ParseLength(std::string_view text);

struct FigureSpec {
  // What to plot.
  std::vector<std::string> runs;       // ids, id prefixes or names
  std::vector<std::string> workloads;  // "EXPERIMENT:WORKLOAD": mean of its runs, min-max band
  // Run ids: when not empty, a workload's mean and band take only these of its runs (the
  // report's: every repeat, no retry).
  std::set<std::string> workload_runs;
  std::string metric;
  std::optional<std::string> labels;  // one label set ("gpu=0"); every label set when absent
  XAxis x = XAxis::kRelative;
  std::optional<double> from, to;  // x range (seconds, Unix ms or steps)
  int smoothing = 0;               // 0..99: weight of an exponential moving average, as on screen

  // How it looks.
  double width_pt = 3.3 * 72;  // a single column of a two-column paper
  double height_pt = 0;        // 0: 0.62 of the width
  double font_pt = 8;
  std::string font = "DejaVu Sans";  // a font family ("DejaVu Serif"), or serif, sans-serif, monospace
  double line_pt = 1;
  std::string title;                            // none when empty
  std::optional<std::string> x_title, y_title;  // derived from the axis and the metric when absent
  std::string legend;  // "{batch-size} ({letter})"; derived from what differs when empty
  bool show_legend = true;
  std::vector<std::string> hidden;  // lines left out, by key (run id|labels, or EXP:WORKLOAD)
  bool mono = false;                // black and grey with dash patterns
  // A sweep: the param whose value colours each run's line on a sequential map, the lines
  // ordered by it, and a colour bar for a legend where there are more than six.
  std::string color_by;
  bool events = false;  // event lines drawn over the data only when asked
  bool phases = false;
  std::string phases_of;  // the run whose phases are shaded (id, prefix or name); "": the only run
  std::optional<double> y_min, y_max;  // in the units shown (percent for ratios)
  bool log_y = false;
  bool percent = true;     // ratios as percent
  int dpi = 300;           // PNG only
  int utc_offset_min = 0;  // wall-clock times are shown in this time zone
};

// Reads a figure description (every field optional but the metric and something to plot);
// an error names the field and what it takes.
Result<FigureSpec> FigureSpecFromJson(const nlohmann::json& j);
Result<FigureSpec> ParseFigureSpec(std::string_view text);

// The most pixels a PNG figure is drawn with: 50 million (7 in x 7 in at 1000 dpi), so that
// a request cannot make the server draw gigabytes (docs/PERFORMANCE.md, "Figures once kept
// in headers").
inline constexpr int64_t kMaxFigurePixels = 50'000'000;
// An error saying the limit and the dpi that would fit, when a PNG of that size and dpi
// has more pixels than kMaxFigurePixels.
Status CheckFigurePixels(double width_pt, double height_pt, int dpi);
// Writes every field, so that the file documents the figure and reruns it.
std::string FigureSpecJson(const FigureSpec& spec);

}  // namespace tb
