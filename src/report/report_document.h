// `trainbench report` as a document: the table, what collocation gave, bar charts of the
// workloads' figures (throughput together and per run, steady GPU utilization, energy per
// sample, speed-up) and, over time, each workload's mean GPU activity and throughput with the
// min-max band of its runs. Every chart is drawn by the figure renderer of `trainbench plot`
// (figure/), so the report looks like the paper's figures: an HTML page with the charts as
// inline SVG (text as text), or a PDF of A4 landscape pages with its font embedded.
#pragma once

#include <string>
#include <vector>

#include "analyze/report.h"
#include "figure/bar_chart.h"
#include "figure/figure.h"
#include "query/series_reader.h"

namespace tb {

// A line figure of the report, with the description it was collected for.
struct ReportFigure {
  FigureSpec spec;
  Figure figure;
};

// The bar charts of the report's figures; a chart none of the workloads has a value for is
// left out. Collocated workloads are red, single runs blue.
std::vector<BarChart> ReportBarCharts(const ExperimentReport& report);

// The figures over time: GPU activity (SM active, else GPU utilization, else the run's CPU)
// and the script's throughput, each workload's mean (at most 10 workloads; those without the
// metric left out). A figure no workload has data for is left out.
Result<std::vector<ReportFigure>> CollectReportFigures(Store& store, SeriesReader& reader,
                                                       const ExperimentReport& report);

std::string ReportHtml(const ExperimentReport& report, const std::vector<ReportFigure>& figures);
Result<std::string> ReportPdf(const ExperimentReport& report, const std::vector<ReportFigure>& figures);

}  // namespace tb
