// A figure's content, gathered from the store for a FigureSpec (the lines of runs and of
// workload means with their bands, events, phases, axis titles and units), its CSV (exactly
// what is plotted), and its rendering to PDF, SVG or PNG through cairo and pango: fonts
// embedded as TrueType subsets in PDF, text as <text> in SVG, PNG at the chosen DPI.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "figure/figure_spec.h"
#include "query/series_reader.h"
#include "store/store.h"

namespace tb {

struct FigureLine {
  std::string key;              // what `hidden` names: "RUN_ID|labels", or "EXPERIMENT:WORKLOAD"
  std::string name;             // in the legend
  std::string run_id;           // "" for a workload mean
  size_t style = 0;             // colour and dash: the line's place among all lines, hidden or not
  std::optional<double> shade;  // a sweep: its place 0-1 on the sequential map (by its value)
  std::vector<double> x, y;     // y in the units shown; NaN: a gap
  std::vector<double> raw;      // when smoothed: y before smoothing (drawn faint behind it)
  std::vector<double> lo, hi;   // a workload's min-max band (NaN where fewer than two runs)
  std::vector<int> runs;        // a workload mean: how many runs stand behind each point
};

struct FigureMark {
  double x;
  std::string label;
};

struct FigureSpan {
  double from, to;
  std::string kind;
};

// A sweep's colour scale: the param, its least and greatest values, and whether its map is logarithmic.
struct FigureSweep {
  std::string param;
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<double> values;  // the lines' distinct values, ascending
  // `v`'s place on the map, 0 (lo) to 1 (hi).
  double At(double v) const;
};

struct Figure {
  XAxis x = XAxis::kRelative;
  std::string title, x_title, y_title, unit;  // unit as shown ("%", "GiB")
  std::vector<FigureLine> lines;              // visible lines only
  std::vector<FigureMark> events;
  std::vector<FigureSpan> phases;
  std::optional<FigureSweep> sweep;  // lines coloured by a param (FigureSpec::color_by)
  double x_min = 0, x_max = 1;       // the range shown
};

// Reads what `spec` asks for. NotFound names a run, workload or metric that is not there;
// InvalidArgument says what is wrong with the request.
Result<Figure> CollectFigure(Store& store, SeriesReader& reader, const FigureSpec& spec);

// The plotted values: one row per x, one column per line (and band bound), as plotted.
std::string FigureCsv(const Figure& figure);

// Line `style`'s look from the palette, as on screen (figure/palette.h), or black and grey
// in mono; a sweep's line (shade) takes its colour from the sequential map.
struct LineStyle {
  double r, g, b;
  std::vector<double> dash;  // in multiples of the line width; empty: solid
  std::string marker;        // "", "dot", "ring"
};
LineStyle StyleOf(size_t style, bool mono);
LineStyle SweepStyle(double t);  // t: 0 (the least value) to 1 (the greatest)
LineStyle StyleOf(const FigureLine& line, bool mono);

Result<std::string> RenderFigure(const Figure& figure, const FigureSpec& spec, FigureFormat format);

}  // namespace tb
