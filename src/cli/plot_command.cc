// trainbench plot: one figure for a paper from the command line, drawn by the same renderer
// as the web UI's exports, so that a paper's figures are a script that reruns.
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "analyze/report.h"
#include "base/read_file.h"
#include "base/strings.h"
#include "cli/cli.h"
#include "figure/figure.h"
#include "metrics/catalog.h"
#include "platform/process.h"
#include "report/collocation_figure.h"

namespace tb::cli {
namespace {

// A figure is for sharing: written with the user's own umask (0644 with the usual 022), not
// the owner-only modes trainbench keeps its stores in (RestrictFileModes).
Status WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  out.close();
  if (!out)
    return Status::IoError(Concat({"cannot write ", path, ": check the directory exists and is writable"}));
  chmod(path.c_str(), 0666 & ~UserUmask());
  return Status::Ok();
}

// "fig.pdf" -> "fig" + ext.
std::string Beside(const std::string& path, const std::string& ext) {
  size_t dot = path.rfind('.');
  size_t slash = path.rfind('/');
  std::string stem =
      dot == std::string::npos || (slash != std::string::npos && dot < slash) ? path : path.substr(0, dot);
  return stem + ext;
}

}  // namespace

// `x_given`: whether the command line or the figure file chose the x axis.
static Result<FigureSpec> PlotSpec(const PlotArgs& a, bool& x_given) {
  FigureSpec spec;
  x_given = !a.x.empty();
  if (!a.spec_file.empty()) {
    std::string text, error;
    if (!ReadWholeFile(a.spec_file, &text, &error)) return Status::IoError(error);
    nlohmann::json file = nlohmann::json::parse(text, nullptr, false);
    x_given = x_given || (file.is_object() && file.contains("x") && !file["x"].is_null());
    Result<FigureSpec> read = ParseFigureSpec(text);
    if (!read.ok()) return Status::InvalidArgument(Concat({a.spec_file, ": ", read.status().message()}));
    spec = *read;
  }
  // Options given on the command line override the file.
  nlohmann::json j = nlohmann::json::parse(FigureSpecJson(spec));
  if (!a.runs.empty()) j["runs"] = a.runs;
  if (!a.workloads.empty()) j["workloads"] = a.workloads;
  auto set = [&](const char* field, const std::string& v) {
    if (!v.empty()) j[field] = v;
  };
  set("metric", a.metric);
  set("labels", a.labels);
  set("x", a.x);
  set("width", a.width);
  set("height", a.height);
  set("title", a.title);
  set("x_title", a.x_title);
  set("y_title", a.y_title);
  set("legend", a.legend);
  set("font", a.font);
  set("color_by", a.color_by);
  auto number = [&](const char* field, const std::string& v) -> Status {
    if (v.empty()) return Status::Ok();
    std::optional<double> d = ParseDouble(v);
    if (!d) return Status::InvalidArgument(Concat({"--", field, " takes a number, not '", v, "'"}));
    j[field] = *d;
    return Status::Ok();
  };
  for (Status st :
       {number("from", a.from), number("to", a.to), number("y_min", a.y_min), number("y_max", a.y_max),
        number("font_size", a.font_size), number("line_width", a.line_width),
        number("smoothing", a.smoothing), number("dpi", a.dpi)}) {
    if (!st.ok()) return st;
  }
  if (a.mono) j["mono"] = true;
  if (a.log_y) j["log_y"] = true;
  if (a.events) j["events"] = true;
  if (a.no_events) j["events"] = false;
  if (a.phases || !a.phases_of.empty()) j["phases"] = true;
  set("phases_of", a.phases_of);
  if (a.no_legend) j["show_legend"] = false;
  if (a.ratio) j["percent"] = false;
  if (j["metric"].get<std::string>().empty())
    return Status::InvalidArgument(
        "name the metric to plot: --metric gpu.utilization.gpu_ratio (trainbench show RUN lists a run's)");
  if (j["runs"].empty() && j["workloads"].empty())
    return Status::InvalidArgument("name runs (ids or names) or --workload EXPERIMENT:WORKLOAD to plot");
  return FigureSpecFromJson(j);
}

// plot --bars EXPERIMENT: the report's collocation bars as one figure.
static int CommandPlotBars(const PlotArgs& a) {
  const std::pair<bool, const char*> lines_only[] = {{!a.runs.empty(), "runs"},
                                                     {!a.workloads.empty(), "--workload"},
                                                     {!a.metric.empty(), "--metric"},
                                                     {!a.x.empty(), "--x"},
                                                     {!a.from.empty(), "--from"},
                                                     {!a.to.empty(), "--to"},
                                                     {!a.height.empty(), "--height"},
                                                     {!a.legend.empty(), "--legend"},
                                                     {!a.labels.empty(), "--labels"},
                                                     {!a.color_by.empty(), "--color-by"},
                                                     {a.log_y, "--log-y"},
                                                     {a.events, "--events"},
                                                     {a.phases, "--phases"},
                                                     {!a.spec_file.empty(), "--spec"},
                                                     {!a.smoothing.empty(), "--smooth"}};
  for (const auto& [given, name] : lines_only) {
    if (given)
      return Fail(Status::InvalidArgument(
          Concat({"--bars draws an experiment's workloads as bars: leave out ", name,
                  ", which is for line figures (a bar figure is as tall as its bars)"})));
  }
  Result<FigureSpec> look = BarFigureLook({{"width", a.width},
                                           {"font_size", a.font_size},
                                           {"font", a.font},
                                           {"title", a.title},
                                           {"mono", a.mono ? "true" : ""},
                                           {"dpi", a.dpi}});
  if (!look.ok()) return Fail(look.status());
  Result<FigureFormat> format = FigureFormatOfPath(a.output);
  if (!format.ok()) return Fail(format.status());
  Result<std::unique_ptr<Store>> store = OpenStoreToRead(a.store);
  if (!store.ok()) return Fail(store.status());
  Result<ExperimentReport> report = BuildReport(**store, a.bars);
  if (!report.ok()) return Fail(report.status());
  Result<std::vector<BarChart>> panels = CollocationPanels(*report, a.panels);
  if (!panels.ok()) return Fail(panels.status());
  Result<std::string> drawn = RenderCollocationBars(*panels, *look, *format);
  if (!drawn.ok()) return Fail(drawn.status());
  if (Status st = WriteFile(a.output, *drawn); !st.ok()) return Fail(st);
  std::string also;
  if (a.csv) {
    std::string path = Beside(a.output, ".csv");
    if (Status st = WriteFile(path, CollocationBarsCsv(*panels)); !st.ok()) return Fail(st);
    also = ", " + path;
  }
  std::string names;
  for (const BarChart& c : *panels) names += (names.empty() ? "" : ", ") + c.key;
  std::printf("trainbench: %s written (the bars of %s: %s)%s\n", a.output.c_str(), a.bars.c_str(),
              names.c_str(), also.c_str());
  return 0;
}

int CommandPlot(const PlotArgs& a) {
  if (!a.bars.empty()) return CommandPlotBars(a);
  bool x_given = false;
  Result<FigureSpec> spec = PlotSpec(a, x_given);
  if (!spec.ok()) return Fail(spec.status());
  if (a.output.empty())
    return Fail(Status::InvalidArgument("-o FILE is required: fig.pdf, fig.svg or fig.png"));
  Result<FigureFormat> format = FigureFormatOfPath(a.output);
  if (!format.ok()) return Fail(format.status());
  Result<std::unique_ptr<Store>> store = OpenStoreToRead(a.store);
  if (!store.ok()) return Fail(store.status());
  SeriesReader reader(**store);
  // A script's own metric (a loss, an accuracy: not in the catalog of what listeners sample)
  // is drawn over the steps it was logged at, as an author plots a loss; over time where it
  // has none (or logged every point at step 0, MLflow's default).
  auto points_of = [](const Result<Figure>& f) {
    size_t n = 0;
    for (const FigureLine& l : f->lines) n += l.x.size();
    return n;
  };
  bool by_step = !x_given && FindMetric(spec->metric) == nullptr;
  if (by_step) spec->x = XAxis::kStep;
  Result<Figure> figure = CollectFigure(**store, reader, *spec);
  auto spread = [](const Result<Figure>& f) {  // logged at more than one step (MLflow's default is 0)
    return std::any_of(f->lines.begin(), f->lines.end(),
                       [](const FigureLine& l) { return !l.x.empty() && l.x.front() != l.x.back(); });
  };
  if (by_step && (!figure.ok() || points_of(figure) == 0 || !spread(figure))) {
    spec->x = XAxis::kRelative;
    figure = CollectFigure(**store, reader, *spec);
  }
  if (!figure.ok()) return Fail(figure.status());
  size_t points = points_of(figure);
  if (points == 0) {
    bool steps = spec->x == XAxis::kStep;
    return Fail(Status::NotFound(Concat(
        {"nothing to draw: no point of '", spec->metric, "'",
         spec->from || spec->to ? " lies in the range asked"
         : steps                ? " has a step"
                                : " was found",
         steps ? "; metrics sampled in time (CPU, GPU) have no steps: draw them with --x relative or --x wall"
         : spec->from || spec->to
             ? "; --from and --to are seconds since the start (--x relative), Unix ms (--x wall) or steps"
             : "; trainbench show RUN lists a run's metrics and their counts",
         "; no file was written"})));
  }
  Result<std::string> drawn = RenderFigure(*figure, *spec, *format);
  if (!drawn.ok()) return Fail(drawn.status());
  if (Status st = WriteFile(a.output, *drawn); !st.ok()) return Fail(st);
  std::string also;
  if (a.csv) {
    std::string path = Beside(a.output, ".csv");
    if (Status st = WriteFile(path, FigureCsv(*figure)); !st.ok()) return Fail(st);
    also += ", " + path;
  }
  if (a.save_spec) {
    std::string path = Beside(a.output, ".figure.json");
    FigureSpec saved = *spec;  // runs by their whole ids: a prefix or a name may match another run later
    for (std::string& key : saved.runs) {
      if (Result<RunRecord> r = (*store)->FindRun(key); r.ok()) key = r->id;
    }
    if (Status st = WriteFile(path, FigureSpecJson(saved)); !st.ok()) return Fail(st);
    also += ", " + path + " (rerun: trainbench plot --spec " + path + " -o " + a.output + ")";
  }
  std::printf("trainbench: %s written (%zu line%s, %zu points)%s\n", a.output.c_str(), figure->lines.size(),
              figure->lines.size() == 1 ? "" : "s", points, also.c_str());
  return 0;
}

void AddPlotCommand(CLI::App& app, std::vector<Subcommand>& out) {
  auto pa = std::make_shared<PlotArgs>();
  CLI::App* plot = app.add_subcommand("plot",
                                      "Draw one figure for a paper (PDF, SVG or PNG) from runs, workload "
                                      "means or an experiment's collocation bars");
  plot->add_option("runs", pa->runs, "Runs to plot: ids, unique id prefixes or names");
  plot->add_option("--bars", pa->bars,
                   "EXPERIMENT: its collocation bars (the report's) as one figure, each the mean over the "
                   "repeats with a 95 % error bar");
  plot->add_option(
          "--panels", pa->panels,
          "With --bars, which: throughput, run-throughput, time, gpu, sm, energy-run, energy-sample, "
          "speedup (default throughput gpu energy-sample speedup)")
      ->delimiter(',');
  plot->add_option("-w,--workload", pa->workloads,
                   "EXPERIMENT:WORKLOAD: the mean of its runs with a min-max band (repeatable)");
  plot->add_option("-m,--metric", pa->metric, "Metric to plot (trainbench show RUN lists a run's)");
  plot->add_option("--labels", pa->labels,
                   "Only the series with these labels (gpu=0,listener=smi); default: each quantity from one "
                   "listener (nvml, else smi, else dcgmi)");
  plot->add_option("-o,--output", pa->output, "Figure file: .pdf, .svg or .png")->required();
  plot->add_option("--spec", pa->spec_file,
                   "Figure description (JSON, as --save-spec writes it); options override it");
  plot->add_option("--x", pa->x,
                   "x axis: relative (time since start), wall or step; default: step for the script's own "
                   "metrics (loss, accuracy) where they have steps, else relative");
  plot->add_option("--from", pa->from, "x range start (seconds, Unix ms or step)");
  plot->add_option("--to", pa->to, "x range end");
  plot->add_option("--smooth", pa->smoothing,
                   "Smoothing 0-99: moving average weighted by time, raw values faint (as on screen)");
  plot->add_option("--width", pa->width, "Figure width: 3.3in (default), 8.4cm, 85mm, 240pt");
  plot->add_option("--height", pa->height,
                   "Figure height (default: 0.62 of the width, taller for a legend of many lines)");
  plot->add_option("--font-size", pa->font_size, "Text size in points (default 8)");
  plot->add_option("--font", pa->font,
                   "Font family: 'DejaVu Serif' for a serif paper, serif, or any installed family "
                   "(default DejaVu Sans)");
  plot->add_option("--line-width", pa->line_width, "Line width in points (default 1)");
  plot->add_option("--dpi", pa->dpi, "PNG resolution (default 300)");
  plot->add_option("--title", pa->title, "Title above the plot (default: none)");
  plot->add_option("--x-title", pa->x_title, "x axis title (default: from the axis, with its unit)");
  plot->add_option("--y-title", pa->y_title, "y axis title (default: the metric's name and unit)");
  plot->add_option("--legend", pa->legend,
                   "Legend names from params and fields: '{batch-size}', '{name}', '{letter}', '{workload}'");
  plot->add_option("--y-min", pa->y_min, "y axis minimum, in the units shown (values below are clipped)");
  plot->add_option("--y-max", pa->y_max, "y axis maximum, in the units shown");
  plot->add_flag("--log-y", pa->log_y, "Logarithmic y axis");
  plot->add_option("--color-by", pa->color_by,
                   "A sweep: colour the runs' lines by this numeric param on a sequential map, in its "
                   "order, with a colour bar for more than six runs");
  plot->add_flag("--mono", pa->mono, "Black and grey lines with dash patterns, for print");
  plot->add_flag("--events", pa->events, "Mark the runs' events (epochs, signals) with labelled lines");
  plot->add_flag("--no-events", pa->no_events, "No event lines (the default; overrides a figure file's)");
  plot->add_flag("--phases", pa->phases,
                 "Shade the run's phases (warm-up, idle, stalls): a figure of one run");
  plot->add_option("--phases-of", pa->phases_of, "Shade the phases of this run of the figure (id or name)");
  plot->add_flag("--no-legend", pa->no_legend, "Leave out the legend");
  plot->add_flag("--ratio", pa->ratio, "Show ratios as 0-1 instead of percent");
  plot->add_flag("--csv", pa->csv, "Also write the plotted values beside the figure (fig.csv)");
  plot->add_flag("--save-spec", pa->save_spec,
                 "Also write the figure description (fig.figure.json) to rerun it");
  plot->add_option("--store", pa->store, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();

  out.push_back({plot, [pa](const DashedCommand&) { return CommandPlot(*pa); }});
}

}  // namespace tb::cli
