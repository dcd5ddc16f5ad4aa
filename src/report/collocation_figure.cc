#include "report/collocation_figure.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "figure/pango_cairo.h"
#include "figure/render.h"
#include "query/export.h"
#include "report/report_document.h"

namespace tb {
namespace {

constexpr double kPanelWidth = 2.6 * 72;  // the narrowest a panel of names and bars reads at

constexpr std::string_view kPanels[] = {"throughput", "run-throughput", "time",          "gpu",
                                        "sm",         "energy-run",     "energy-sample", "speedup"};

std::string KnownPanels() {
  std::string out;
  for (std::string_view k : kPanels) out += Concat({out.empty() ? "" : ", ", k});
  return out;
}

}  // namespace

Result<std::vector<BarChart>> CollocationPanels(const ExperimentReport& report,
                                                const std::vector<std::string>& panels) {
  std::vector<BarChart> all = ReportBarCharts(report);
  std::vector<BarChart> out;
  std::vector<std::string> empty;
  for (const std::string& key : panels.empty() ? kDefaultBarPanels : panels) {
    if (std::find(std::begin(kPanels), std::end(kPanels), key) == std::end(kPanels))
      return Status::InvalidArgument(
          Concat({"no panel '", key, "' of bars; the panels are ", KnownPanels()}));
    auto it = std::find_if(all.begin(), all.end(), [&](const BarChart& c) { return c.key == key; });
    if (it == all.end()) {
      empty.push_back(key);
      continue;
    }
    out.push_back(*it);
  }
  if (out.empty()) {
    std::string list;
    for (const std::string& k : empty) list += (list.empty() ? "" : ", ") + k;
    const std::string needs =
        "throughput and energy per sample need the scripts' samples (the trainbench client, MLflow's, or run "
        "--progress), energy a GPU with a power reading, the speed-up a workload run alone and together";
    return Status::NotFound(
        Concat({"experiment '", report.experiment, "' has no value for the panels asked (", list,
                "): ", needs, "; trainbench report ", report.experiment, " says what each workload has"}));
  }
  return out;
}

Result<FigureSpec> BarFigureLook(const std::vector<std::pair<std::string, std::string>>& options) {
  nlohmann::json j = {{"metric", "-"}, {"runs", {"-"}}};  // a line figure's musts, unused by bars
  for (const auto& [field, v] : options) {
    if (v.empty()) continue;
    if (field == "mono") {
      j[field] = v == "true" || v == "1";
    } else if (field == "font_size" || field == "dpi") {
      std::optional<double> d = ParseDouble(v);
      if (!d) return Status::InvalidArgument(Concat({field, " takes a number, not '", v, "'"}));
      j[field] = *d;
    } else {
      j[field] = v;
    }
  }
  return FigureSpecFromJson(j);
}

Result<std::string> RenderCollocationBars(const std::vector<BarChart>& panels, const FigureSpec& look,
                                          FigureFormat format) {
  TB_RETURN_IF_ERROR(CLibraryAvailable<PangoCairo>());
  TB_RETURN_IF_ERROR(FigureFontScope::Check(look.font));
  FigureFontScope font(look.font);
  const double f = look.font_pt, width = look.width_pt, pad = f * 0.5;
  size_t columns = std::clamp<size_t>(static_cast<size_t>(width / kPanelWidth), 1, panels.size());
  double column_w = width / static_cast<double>(columns);
  // Each row as tall as its tallest panel; the legend, shared, under them all.
  std::vector<std::pair<size_t, std::string>> legend;
  std::vector<BarChart> drawn = panels;
  for (BarChart& c : drawn) {
    for (const auto& entry : c.legend) {
      if (std::find(legend.begin(), legend.end(), entry) == legend.end()) legend.push_back(entry);
    }
    c.legend.clear();
    c.mono = look.mono;
  }
  std::sort(legend.begin(), legend.end());
  std::vector<double> row_h((drawn.size() + columns - 1) / columns, 0);
  for (size_t i = 0; i < drawn.size(); ++i)
    row_h[i / columns] = std::max(row_h[i / columns], BarChartHeight(drawn[i], f));
  double title_h = look.title.empty() ? 0 : f * 1.15 * 1.6;
  double height = title_h + pad;
  for (double h : row_h) height += h;
  if (!legend.empty()) height += f * 1.8;
  if (format == FigureFormat::kPng) TB_RETURN_IF_ERROR(CheckFigurePixels(width, height, look.dpi));
  auto draw = [&](Painter& p) {
    if (!look.title.empty())
      p.Text(pad, pad + f * 1.15, look.title, f * 1.15, Anchor::kStart, {0.13, 0.13, 0.13}, true);
    double top = title_h;
    for (size_t row = 0; row < row_h.size(); ++row) {
      for (size_t c = 0; c < columns && row * columns + c < drawn.size(); ++c)
        DrawBarChart(p, drawn[row * columns + c], f, static_cast<double>(c) * column_w, top, column_w);
      top += row_h[row];
    }
    if (!legend.empty()) DrawBarLegend(p, legend, look.mono, f, pad * 2, top + f * 1.1);
  };
  return RenderPages(format, width, height, look.dpi, look.title.empty() ? "Collocation" : look.title,
                     {draw});
}

std::string CollocationBarsCsv(const std::vector<BarChart>& panels) {
  std::string out = "panel,axis,workload,mean,ci95_low,ci95_high\n";
  for (const BarChart& c : panels) {
    for (const Bar& b : c.bars) {
      out += Concat({CsvField(c.key), ",", CsvField(c.axis_title), ",", CsvField(b.name), ","});
      if (b.value) out += FormatDouble(*b.value);
      out += ",";
      if (b.interval)
        out += FormatDouble(b.interval->first) + "," + FormatDouble(b.interval->second);
      else
        out += ",";
      out += "\n";
    }
  }
  return out;
}

}  // namespace tb
