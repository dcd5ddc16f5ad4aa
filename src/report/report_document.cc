#include "report/report_document.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "base/strings.h"
#include "figure/pango_cairo.h"
#include "figure/render.h"
#include "metrics/catalog.h"
#include "metrics/names.h"

namespace tb {
namespace {

constexpr size_t kMaxWorkloadsOverTime = 10;  // the palette's colours
const Rgb kInk{0.13, 0.13, 0.13}, kMuted{0.4, 0.4, 0.4}, kRule{0.85, 0.87, 0.89}, kNote{0.6, 0.4, 0};

const char* const kIntro =
    "Figures over each run's steady state (warm-up, idle gaps, stalls and the script's evaluation phases "
    "left "
    "out).";

std::string WorkloadName(const WorkloadReport& w) { return w.workload.empty() ? "-" : w.workload; }

// A bar per workload: the mean over its repeats, with their 95 % interval as an error bar
// where there are two or more.
BarChart Chart(const ExperimentReport& r, std::string key, std::string title, std::string axis,
               std::optional<Estimate> WorkloadReport::*field, double factor = 1) {
  BarChart chart{std::move(key), std::move(title), std::move(axis), {}, {}};
  bool any = false, collocated = false, alone = false;
  for (const WorkloadReport& w : r.workloads) {
    std::optional<Estimate> e = w.*field;
    if (e) *e = Scaled(*e, factor);
    any = any || e.has_value();
    // runs one after another each ran alone
    bool shared = (w.attempts.empty() ? w.runs.size() : w.attempts.front().members.size()) > 1 && w.together;
    (shared ? collocated : alone) = true;
    Bar bar{WorkloadName(w), e ? std::optional<double>(e->mean) : std::nullopt,
            shared ? size_t{1} : size_t{0}, std::nullopt};
    if (e && e->HasInterval()) bar.interval = {e->low, e->high};
    chart.bars.push_back(std::move(bar));
  }
  if (!any) chart.bars.clear();
  if (alone) chart.legend.emplace_back(0, "one run");
  if (collocated) chart.legend.emplace_back(1, "runs together");
  return chart;
}

// The workloads of the report whose runs have `metric`, as "EXPERIMENT:WORKLOAD".
Result<std::vector<std::string>> WorkloadsWith(SeriesReader& reader, const ExperimentReport& r,
                                               std::string_view metric) {
  std::vector<std::string> out;
  for (const WorkloadReport& w : r.workloads) {
    bool has = false;
    for (const RunRecord& run : w.runs) {
      Result<std::shared_ptr<const std::vector<SeriesInfo>>> series = reader.SeriesOf(run);
      if (!series.ok()) return series.status();
      has = has || std::any_of((*series)->begin(), (*series)->end(),
                               [&](const SeriesInfo& s) { return s.metric == metric; });
    }
    if (has && out.size() < kMaxWorkloadsOverTime) out.push_back(Concat({r.experiment, ":", w.workload}));
  }
  return out;
}

// --- the PDF's layout ---------------------------------------------------------------------

// A piece of the document: its height at a width, and how it draws at a place.
struct Block {
  bool half = false;  // stands beside the next half block
  std::function<double(double width)> height;
  std::function<void(Painter&, double left, double top, double width)> draw;
};

constexpr double kPageW = 841.89, kPageH = 595.28, kMargin = 40, kFont = 8.5, kGap = 14;

Block Paragraph(const std::string& text, double size, Rgb color, bool bold = false) {
  auto lines = [text, size, bold](double width) { return WrapText(text, size, width, bold); };
  return {false, [=](double width) { return static_cast<double>(lines(width).size()) * size * 1.35; },
          [=](Painter& p, double left, double top, double width) {
            double y = top;
            for (const std::string& line : lines(width)) {
              y += size * 1.35;
              p.Text(left, y - size * 0.3, line, size, Anchor::kStart, color, bold);
            }
          }};
}

// The table, its font made smaller (to 5.5 pt) until it fits the width; headers break at
// spaces into at most two lines.
struct TableLayout {
  double font;
  std::vector<double> widths;
  std::vector<std::vector<std::string>> head;  // each column's header lines
};

TableLayout LayOutTable(const std::vector<std::vector<std::string>>& rows, double width) {
  const std::vector<ReportColumn>& columns = ReportColumns();
  TableLayout t;
  for (t.font = kFont;; t.font -= 0.5) {
    t.widths.assign(columns.size(), 0);
    t.head.clear();
    for (size_t i = 0; i < columns.size(); ++i) {
      double widest_word = 0;
      for (std::string_view word : SplitWhitespace(columns[i].title))
        widest_word = std::max(widest_word, TextWidth(std::string(word), t.font, true));
      for (const auto& row : rows) t.widths[i] = std::max(t.widths[i], TextWidth(row[i], t.font));
      t.widths[i] = std::max(t.widths[i], widest_word);
      // A header breaks into lines as narrow as the column allows, at most two.
      std::vector<std::string> lines = WrapText(columns[i].title, t.font, t.widths[i], true);
      if (lines.size() > 2) {
        t.widths[i] = std::max(t.widths[i], TextWidth(columns[i].title, t.font, true) / 2 + t.font);
        lines = WrapText(columns[i].title, t.font, t.widths[i], true);
      }
      t.head.push_back(std::move(lines));
    }
    double total = 0;
    for (double w : t.widths) total += w + t.font * 1.2;
    if (total <= width || t.font <= 5.5) {
      // What is left over widens every column alike.
      double spare = std::max(0.0, width - total) / static_cast<double>(t.widths.size());
      for (double& w : t.widths) w += spare;
      return t;
    }
  }
}

std::vector<Block> TableBlocks(const ExperimentReport& r, double width) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(r.workloads.size());
  for (const WorkloadReport& w : r.workloads) rows.push_back(ReportRow(w));
  auto t = std::make_shared<TableLayout>(LayOutTable(rows, width));
  double row_h = t->font * 1.7;
  std::vector<Block> out;
  out.push_back({false, [t](double) { return t->font * (1.25 * 2 + 0.8); },
                 [t](Painter& p, double left, double top, double) {
                   double x = left, bottom = top + t->font * (1.25 * 2 + 0.5);
                   for (size_t i = 0; i < t->widths.size(); ++i) {
                     const std::vector<std::string>& lines = t->head[i];
                     for (size_t k = 0; k < lines.size(); ++k) {
                       double y = bottom - t->font * 0.35 -
                                  t->font * 1.25 * static_cast<double>(lines.size() - 1 - k);
                       p.Text(x, y, lines[k], t->font, Anchor::kStart, kInk, true);
                     }
                     x += t->widths[i] + t->font * 1.2;
                   }
                   p.Polyline({{left, bottom}, {x - t->font * 1.2, bottom}}, kInk, 0.6, {});
                 }});
  std::string parent;  // a sweep's workloads under their parent run, as in the terminal's table
  for (size_t k = 0; k < rows.size(); ++k) {
    std::vector<std::string>& row = rows[k];
    if (r.workloads[k].parent != parent) {
      parent = r.workloads[k].parent;
      std::string heading = parent.empty() ? "not nested" : "parent run " + parent;
      out.push_back({false, [row_h](double) { return row_h; },
                     [t, row_h, heading](Painter& p, double left, double top, double) {
                       p.Text(left, top + row_h * 0.68, heading, t->font, Anchor::kStart, kInk, true);
                     }});
    }
    out.push_back({false, [row_h](double) { return row_h; },
                   [t, row_h, row = std::move(row)](Painter& p, double left, double top, double) {
                     double x = left;
                     for (size_t i = 0; i < row.size(); ++i) {
                       p.Text(x, top + row_h * 0.68, row[i], t->font, Anchor::kStart, kInk);
                       x += t->widths[i] + t->font * 1.2;
                     }
                     p.Polyline({{left, top + row_h}, {x - t->font * 1.2, top + row_h}}, kRule, 0.4, {});
                   }});
  }
  return out;
}

// Blocks placed on pages: a block that does not fit what is left of a page starts the next
// one; two half blocks in a row stand side by side.
struct Placed {
  const Block* block;
  double left, top, width;
};

std::vector<std::vector<Placed>> Paginate(const std::vector<Block>& blocks) {
  const double width = kPageW - 2 * kMargin, half = (width - kGap) / 2, bottom = kPageH - kMargin - 14;
  std::vector<std::vector<Placed>> pages(1);
  double y = kMargin;
  for (size_t i = 0; i < blocks.size(); ++i) {
    std::vector<const Block*> row = {&blocks[i]};
    if (blocks[i].half && i + 1 < blocks.size() && blocks[i + 1].half) row.push_back(&blocks[++i]);
    double w = blocks[i].half ? half : width, h = 0;
    for (const Block* b : row) h = std::max(h, b->height(w));
    if (y + h > bottom && !pages.back().empty()) {
      pages.emplace_back();
      y = kMargin;
    }
    for (size_t k = 0; k < row.size(); ++k)
      pages.back().push_back({row[k], kMargin + static_cast<double>(k) * (half + kGap), y, w});
    y += h + (row[0]->half ? kGap : 2);
  }
  return pages;
}

}  // namespace

std::vector<BarChart> ReportBarCharts(const ExperimentReport& r) {
  std::vector<BarChart> charts = {
      Chart(r, "throughput", "Throughput, all runs of a workload together", "Samples per second",
            &WorkloadReport::combined_throughput),
      Chart(r, "run-throughput", "Throughput per run", "Samples per second", &WorkloadReport::run_throughput),
      Chart(r, "time", "Training time per run", "Seconds", &WorkloadReport::run_seconds),
      Chart(r, "gpu", "Steady GPU utilization", "GPU utilization (%)", &WorkloadReport::gpu_util, 100),
      Chart(r, "sm", "Steady SM active", "SM active (%)", &WorkloadReport::sm_active, 100),
      Chart(r, "energy-run", "Energy per run", "Energy (J)", &WorkloadReport::energy_per_run),
      Chart(r, "energy-sample", "Energy per training sample", "Energy per sample (J)",
            &WorkloadReport::energy_per_sample_joules),
      Chart(r, "speedup", "Collocation speed-up over the same runs alone", "Speed-up (x)",
            &WorkloadReport::speedup),
  };
  // The speed-up is only the collocated workloads'.
  std::erase_if(charts.back().bars, [](const Bar& b) { return !b.value; });
  charts.back().legend.clear();
  std::erase_if(charts, [](const BarChart& c) { return c.bars.empty(); });
  return charts;
}

Result<std::vector<ReportFigure>> CollectReportFigures(Store& store, SeriesReader& reader,
                                                       const ExperimentReport& r) {
  struct Wanted {
    std::vector<std::string_view> metrics;  // the first one some workload has
    const char* title;
  };
  const Wanted wanted[] = {
      {{metric::kGpuSmActiveRatio, metric::kGpuUtilizationGpuRatio, metric::kProcCpuUtilizationRatio},
       "over time: workload mean, range"},
      {{metric::kTrainThroughputSamplesPerSecond}, "over time: workload mean, range"},
  };
  std::vector<ReportFigure> out;
  for (const Wanted& w : wanted) {
    for (std::string_view metric : w.metrics) {
      Result<std::vector<std::string>> workloads = WorkloadsWith(reader, r, metric);
      if (!workloads.ok()) return workloads.status();
      if (workloads->empty()) continue;
      ReportFigure f;
      f.spec.metric = std::string(metric);
      f.spec.workloads = std::move(*workloads);
      for (const WorkloadReport& counted : r.workloads)
        for (const RunRecord& run : counted.runs) f.spec.workload_runs.insert(run.id);
      f.spec.title = Concat({MetricTitle(metric), " ", w.title});
      f.spec.legend = "{workload}";
      f.spec.events = false;
      f.spec.font_pt = kFont;
      f.spec.width_pt = (kPageW - 2 * kMargin - kGap) / 2;
      f.spec.height_pt = std::round(f.spec.width_pt * 0.62);
      Result<Figure> figure = CollectFigure(store, reader, f.spec);
      if (!figure.ok()) return figure.status();
      f.figure = std::move(*figure);
      // A workload keeps its colour from figure to figure, whichever workloads before it
      // have the metric (while the palette has a colour for each).
      if (r.workloads.size() <= kMaxWorkloadsOverTime) {
        for (size_t k = 0; k < r.workloads.size(); ++k) {
          for (FigureLine& line : f.figure.lines)
            if (line.key == Concat({r.experiment, ":", r.workloads[k].workload})) line.style = k;
        }
      }
      out.push_back(std::move(f));
      break;
    }
  }
  return out;
}

std::string ReportHtml(const ExperimentReport& r, const std::vector<ReportFigure>& figures) {
  std::string out = Concat(
      {"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>trainbench report: ",
       XmlEscape(r.experiment),
       "</title><style>body{font:14px system-ui,sans-serif;margin:2em;color:#1f2328;max-width:1100px}"
       "table{border-collapse:collapse}td,th{border-bottom:1px solid #d8dee4;padding:3px 8px;text-align:left}"
       ".note{color:#9a6700}.charts{display:flex;flex-wrap:wrap;gap:1em}.charts "
       "svg{max-width:100%;height:auto}"
       "</style></head><body><h1>Experiment ",
       XmlEscape(r.experiment), "</h1><p>", kIntro, "</p><table><tr>"});
  for (const ReportColumn& c : ReportColumns()) out += "<th>" + XmlEscape(c.title) + "</th>";
  out += "</tr>";
  std::string parent;  // a sweep's workloads under their parent run, as in the terminal's table
  for (const WorkloadReport& w : r.workloads) {
    if (w.parent != parent) {
      parent = w.parent;
      out += Concat({"<tr class=\"group\"><th colspan=\"", std::to_string(ReportColumns().size()), "\">",
                     parent.empty() ? "not nested" : "parent run " + XmlEscape(parent), "</th></tr>"});
    }
    out += "<tr>";
    for (const std::string& cell : ReportRow(w)) out += "<td>" + XmlEscape(cell) + "</td>";
    out += "</tr>";
  }
  out += "</table>";
  for (const WorkloadReport& w : r.workloads) {
    if (w.speedup)
      out += Concat(
          {"<p>Workload <b>", XmlEscape(w.workload), "</b>: ", SpeedupSentence(w, "<b>", "</b>"), ".</p>"});
  }
  // Charts as inline SVG, without the XML declaration a file has.
  auto inline_svg = [](Result<std::string> svg) {
    if (!svg.ok()) return std::string();
    size_t at = svg->find("<svg");
    return at == std::string::npos ? std::string() : svg->substr(at);
  };
  out += "<div class=\"charts\">";
  constexpr double kChartWidth = 390, kChartFont = 9;
  for (const BarChart& chart : ReportBarCharts(r)) {
    double h = BarChartHeight(chart, kChartFont);
    out +=
        inline_svg(RenderPages(FigureFormat::kSvg, kChartWidth, h, 96, chart.title,
                               {[&](Painter& p) { DrawBarChart(p, chart, kChartFont, 0, 0, kChartWidth); }}));
  }
  for (const ReportFigure& f : figures) {
    FigureSpec spec = f.spec;
    spec.width_pt = kChartWidth;
    spec.height_pt = std::round(kChartWidth * 0.62);
    spec.font_pt = kChartFont;
    out += inline_svg(RenderFigure(f.figure, spec, FigureFormat::kSvg));
  }
  out += "</div>";
  for (const std::string& c : r.caveats) out += "<p class=\"note\">Note: " + XmlEscape(c) + "</p>";
  out += "</body></html>\n";
  return out;
}

Result<std::string> ReportPdf(const ExperimentReport& r, const std::vector<ReportFigure>& figures) {
  TB_RETURN_IF_ERROR(CLibraryAvailable<PangoCairo>());
  const double width = kPageW - 2 * kMargin;
  std::vector<Block> blocks;
  blocks.push_back(Paragraph("Experiment " + r.experiment, 16, kInk, true));
  size_t runs = 0;
  for (const WorkloadReport& w : r.workloads) runs += w.runs.size();
  blocks.push_back(Paragraph(
      Concat({std::to_string(r.workloads.size()), r.workloads.size() == 1 ? " workload, " : " workloads, ",
              std::to_string(runs), runs == 1 ? " run. " : " runs. ", kIntro}),
      kFont, kMuted));
  blocks.push_back({false, [](double) { return 6.0; }, [](Painter&, double, double, double) {}});
  for (Block& b : TableBlocks(r, width)) blocks.push_back(std::move(b));
  blocks.push_back({false, [](double) { return 6.0; }, [](Painter&, double, double, double) {}});
  for (const WorkloadReport& w : r.workloads) {
    if (w.speedup)
      blocks.push_back(
          Paragraph("Workload " + w.workload + ": " + SpeedupSentence(w, "", "") + ".", kFont, kInk));
  }
  for (const std::string& c : r.caveats) blocks.push_back(Paragraph("Note: " + c, kFont, kNote));
  blocks.push_back({false, [](double) { return 10.0; }, [](Painter&, double, double, double) {}});

  std::vector<BarChart> charts = ReportBarCharts(r);
  for (const BarChart& chart : charts) {
    blocks.push_back({true, [&chart](double) { return BarChartHeight(chart, kFont); },
                      [&chart](Painter& p, double left, double top, double w) {
                        DrawBarChart(p, chart, kFont, left, top, w);
                      }});
  }
  if (charts.size() % 2 == 1)
    blocks.push_back({true, [](double) { return 0.0; }, [](Painter&, double, double, double) {}});
  Status drawn = Status::Ok();
  for (const ReportFigure& f : figures) {
    blocks.push_back({true, [&f](double) { return f.spec.height_pt; },
                      [&f, &drawn](Painter& p, double left, double top, double w) {
                        Status s = DrawFigure(p, f.figure, f.spec, left, top, w, f.spec.height_pt);
                        if (drawn.ok()) drawn = s;
                      }});
  }

  std::vector<std::vector<Placed>> pages = Paginate(blocks);
  std::vector<std::function<void(Painter&)>> draws;
  for (size_t i = 0; i < pages.size(); ++i) {
    draws.emplace_back([&, i](Painter& p) {
      for (const Placed& b : pages[i]) b.block->draw(p, b.left, b.top, b.width);
      p.Text(kPageW - kMargin, kPageH - kMargin + 6,
             Concat({"trainbench report: ", r.experiment, " \u00b7 page ", std::to_string(i + 1), " of ",
                     std::to_string(pages.size())}),
             7, Anchor::kEnd, kMuted);
    });
  }
  Result<std::string> pdf =
      RenderPages(FigureFormat::kPdf, kPageW, kPageH, 72, "trainbench report: " + r.experiment, draws);
  if (!drawn.ok()) return drawn;
  return pdf;
}

}  // namespace tb
