// Figures as a paper's checker and a reader see them: the files themselves (pdffonts: every
// font embedded, none Type 3; the page size asked for; axis titles with units as text; SVG
// text as <text>; colours as on screen), round ticks and readable units.
#include "figure/figure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "analyze/phases.h"
#include "figure/axis.h"
#include "figure/bar_chart.h"
#include "figure/figure_test_fixture.h"
#include "figure/palette.h"
#include "figure/render.h"
#include "query/chart_series.h"
#include "query/downsample.h"
#include "query/series_reader.h"
#include "report/report_document.h"
#include "store/series_writer.h"
#include "tests/helpers/bucket_slack.h"
#include "tests/helpers/counting_store.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {
namespace {

// The SVG attribute of a line drawn in palette colour `k`.
std::string Stroke(size_t k) { return "stroke=\"" + std::string(kLineColors[k]) + "\""; }

TEST_F(FigureTest, PdfEmbedsItsFontsAtTheAskedSizeWithAxisTitlesAsText) {
  FigureSpec spec;
  spec.runs = {ids_[0], ids_[1]};
  spec.metric = "gpu.temperature.gpu_celsius";
  spec.width_pt = *ParseLength("3.3in");
  spec.height_pt = *ParseLength("2in");
  std::string pdf = Draw(spec, FigureFormat::kPdf, "fig.pdf");
  std::string fonts = Shell("pdffonts " + pdf);
  ASSERT_NE(fonts.find("------"), std::string::npos) << fonts;  // pdffonts ran
  size_t rows = 0;
  std::istringstream lines(fonts.substr(fonts.find("------")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    ++rows;
    EXPECT_EQ(line.find("Type 3"), std::string::npos) << line;
    EXPECT_NE(line.find(" yes yes "), std::string::npos) << "embedded as a subset: " << line;
  }
  EXPECT_GE(rows, 1u);
  EXPECT_NE(Shell("pdfinfo " + pdf).find(" 237.6 x 144 pts"), std::string::npos) << Shell("pdfinfo " + pdf);
  std::string text = Shell("pdftotext " + pdf + " -");
  EXPECT_NE(text.find("GPU temperature (°C)"), std::string::npos) << text;
  EXPECT_NE(text.find("Time since start (m:ss)"), std::string::npos) << text;
  EXPECT_NE(text.find("train.py 0"), std::string::npos) << "legend named by the runs' names: " << text;
  EXPECT_EQ(text.find("seed="), std::string::npos) << text;
  EXPECT_NE(text.find("2:00"), std::string::npos) << "round time ticks: " << text;
}

TEST_F(FigureTest, SvgTextIsTextAndHidingALineKeepsTheOthersColours) {
  FigureSpec spec;
  spec.runs = {ids_[0], ids_[1]};
  spec.metric = "gpu.utilization.gpu_ratio";
  spec.legend = "bs {batch-size}";
  std::string path = Draw(spec, FigureFormat::kSvg, "fig.svg");
  std::ifstream in(path);
  std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(svg.find(">GPU utilization (%)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">bs 32</text>"), std::string::npos);
  EXPECT_NE(svg.find(Stroke(0)), std::string::npos);  // the screen's first colour
  EXPECT_NE(svg.find(Stroke(1)), std::string::npos);  // and its second
  spec.hidden = {ids_[0] + "|gpu=0"};
  path = Draw(spec, FigureFormat::kSvg, "hidden.svg");
  std::ifstream in2(path);
  std::string hidden((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  EXPECT_EQ(hidden.find(Stroke(0)), std::string::npos);
  EXPECT_NE(hidden.find(Stroke(1)), std::string::npos) << "the second line keeps its colour";
  EXPECT_EQ(hidden.find(">bs 32</text>"), std::string::npos);
}

// As on the web page: a run keeps its colour in every figure of the same runs, whichever
// runs before it have the figure's metric.
TEST_F(FigureTest, ARunKeepsItsColourWhicheverRunsBeforeItHaveTheMetric) {
  std::string loss_only = AddRun("cpu.py", "", "train.loss", "", 12, 50000, true);
  FigureSpec spec;
  spec.runs = {loss_only, ids_[0], ids_[1]};
  auto styles = [&](const std::string& metric) {
    spec.metric = metric;
    std::map<std::string, size_t> out;
    Result<Figure> f = CollectFigure(*store_, *reader_, spec);
    EXPECT_TRUE(f.ok()) << f.status().message();
    if (f.ok())
      for (const FigureLine& l : f->lines) out[l.run_id] = l.style;
    return out;
  };
  std::map<std::string, size_t> all = styles("train.loss"), some = styles("gpu.utilization.gpu_ratio");
  ASSERT_EQ(all.size(), 3u);
  ASSERT_EQ(some.size(), 2u);
  EXPECT_EQ(some[ids_[0]], all[ids_[0]]);
  EXPECT_EQ(some[ids_[1]], all[ids_[1]]);
  EXPECT_EQ(some[ids_[0]], 1u) << "the second colour, as the second run of the selection";
}

// The report's figures over time: a workload keeps its colour from figure to figure, its
// place among the report's workloads, whichever workloads before it have the metric.
TEST_F(FigureTest, AReportsWorkloadKeepsItsColourFromFigureToFigure) {
  std::string first = AddRun("cpu.py", "first", "train.throughput_samples_per_second", "", 600, 1000);
  ExperimentReport report;
  report.experiment = "paper";
  report.workloads.resize(2);
  report.workloads[0].workload = "first";
  report.workloads[0].runs = {store_->FindRun(first).value()};
  report.workloads[1].workload = "pair";
  report.workloads[1].runs = {store_->FindRun(ids_[0]).value(), store_->FindRun(ids_[1]).value()};
  Result<std::vector<ReportFigure>> figures = CollectReportFigures(*store_, *reader_, report);
  ASSERT_TRUE(figures.ok()) << figures.status().message();
  ASSERT_EQ(figures->size(), 2u);
  EXPECT_EQ((*figures)[0].spec.metric, "gpu.utilization.gpu_ratio");  // the pair's only
  ASSERT_EQ((*figures)[0].figure.lines.size(), 1u);
  EXPECT_EQ((*figures)[0].figure.lines[0].style, 1u) << "the pair's colour, the report's second workload";
  ASSERT_EQ((*figures)[1].figure.lines.size(), 1u);
  EXPECT_EQ((*figures)[1].figure.lines[0].style, 0u);
}

// The report's means over time take the runs it counted: its repeats give the band, a
// retry it left out gives nothing.
TEST_F(FigureTest, AReportsMeanOverTimeHasTheBandOfItsRepeatsAndNoRetry) {
  auto run = [&](double value) {
    RunRecord r;
    r.id = NewRunId();
    r.experiment = "paper";
    r.workload = "repeated";
    r.start_ms = kStart;
    EXPECT_TRUE(store_->CreateRun(r).ok());
    SeriesWriter w(*store_, r.id);
    for (int i = 0; i < 300; ++i)
      w.Append("train.throughput_samples_per_second", "", {kStart + i * 1000, value});
    EXPECT_TRUE(w.Close().ok());
    return store_->FindRun(r.id).value();
  };
  ExperimentReport report;
  report.experiment = "paper";
  report.workloads.resize(1);
  report.workloads[0].workload = "repeated";
  report.workloads[0].runs = {run(100), run(300)};
  run(900);  // a retry: in the store, not in the report
  Result<std::vector<ReportFigure>> figures = CollectReportFigures(*store_, *reader_, report);
  ASSERT_TRUE(figures.ok()) << figures.status().message();
  ASSERT_EQ(figures->size(), 1u);
  EXPECT_NE((*figures)[0].spec.title.find("workload mean, range"), std::string::npos)
      << (*figures)[0].spec.title;
  ASSERT_EQ((*figures)[0].figure.lines.size(), 1u);
  const FigureLine& mean = (*figures)[0].figure.lines[0];
  ASSERT_FALSE(mean.y.empty());
  for (size_t i = 0; i < mean.y.size(); ++i) {
    EXPECT_DOUBLE_EQ(mean.y[i], 200) << i;
    EXPECT_DOUBLE_EQ(mean.lo[i], 100) << i;
    EXPECT_DOUBLE_EQ(mean.hi[i], 300) << i;
  }
}

// The report's bars: a workload's runs that ran one after another each ran alone, and are
// drawn as such, not as runs together.
TEST(ReportBarsTest, RunsThatDidNotRunTogetherAreNotDrawnAsTogether) {
  ExperimentReport report;
  report.experiment = "e";
  report.workloads.resize(3);
  const char* names[] = {"alone", "pair", "repeats"};
  for (size_t i = 0; i < 3; ++i) {
    report.workloads[i].workload = names[i];
    report.workloads[i].runs.resize(i == 0 ? 1 : 2);
    report.workloads[i].attempts.push_back({});
    report.workloads[i].attempts[0].members = i == 0 ? std::vector<size_t>{0} : std::vector<size_t>{0, 1};
    report.workloads[i].run_throughput = EstimateOf({100});
  }
  report.workloads[2].together = false;
  std::vector<BarChart> charts = ReportBarCharts(report);
  auto per_run = std::find_if(charts.begin(), charts.end(),
                              [](const BarChart& c) { return c.title == "Throughput per run"; });
  ASSERT_NE(per_run, charts.end());
  ASSERT_EQ(per_run->bars.size(), 3u);
  EXPECT_EQ(per_run->bars[0].style, 0u);
  EXPECT_EQ(per_run->bars[1].style, 1u) << "a pair that ran together";
  EXPECT_EQ(per_run->bars[2].style, 0u) << "runs one after another, each alone";
  EXPECT_FALSE(per_run->bars[0].interval) << "one attempt has no interval to draw";
}

// A workload measured three times: its bar is the mean, its error bar the 95 % interval
// (Student's t, n = 3), drawn inside the axis and labelled with its half-width.
TEST(ReportBarsTest, RepeatsGiveABarWithItsConfidenceInterval) {
  ExperimentReport report;
  report.experiment = "e";
  report.workloads.resize(1);
  WorkloadReport& w = report.workloads[0];
  w.workload = "pair";
  w.runs.resize(6);
  for (size_t k = 0; k < 3; ++k) {
    AttemptReport& a = w.attempts.emplace_back();
    a.repeat = static_cast<int>(k + 1);
    a.members = {2 * k, 2 * k + 1};
  }
  w.combined_throughput = EstimateOf({110, 120, 130});  // mean 120, sd 10: 120 +- 4.303 * 10 / sqrt(3)
  std::vector<BarChart> charts = ReportBarCharts(report);
  ASSERT_FALSE(charts.empty());
  const Bar& bar = charts[0].bars.at(0);
  ASSERT_TRUE(bar.interval);
  EXPECT_NEAR(bar.interval->first, 120 - 24.84, 0.01);
  EXPECT_NEAR(bar.interval->second, 120 + 24.84, 0.01);
  std::string svg = RenderPages(FigureFormat::kSvg, 400, BarChartHeight(charts[0], 9), 96, "bars",
                                {[&](Painter& p) { DrawBarChart(p, charts[0], 9, 0, 0, 400); }})
                        .value();
  EXPECT_NE(svg.find("120 \u00b124.8"), std::string::npos) << svg;
}

// A run of a few seconds: its ticks fall under a second apart and read "2.5s", and the
// axis title says seconds, not "(m:ss)".
TEST_F(FigureTest, AFewSecondsRunReadsInSeconds) {
  FigureSpec spec;
  spec.runs = {AddRun("short", "", "gpu.utilization.gpu_ratio", "gpu=0", 25, 100)};
  spec.metric = "gpu.utilization.gpu_ratio";
  std::ifstream in(Draw(spec, FigureFormat::kSvg, "short.svg"));
  std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(svg.find(">Time since start (s)</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("s</text>"), std::string::npos);
  EXPECT_EQ(svg.find("(m:ss)"), std::string::npos);
}

TEST_F(FigureTest, PngCarriesItsResolution) {
  FigureSpec spec;
  spec.runs = {ids_[0]};
  spec.metric = "gpu.memory.used_bytes";
  spec.dpi = 300;
  std::string path = Draw(spec, FigureFormat::kPng, "fig.png");
  std::ifstream in(path, std::ios::binary);
  std::string png((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(png.size(), 33u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  auto be32 = [&](size_t at) {
    return (static_cast<uint32_t>(static_cast<unsigned char>(png[at])) << 24) |
           (static_cast<uint32_t>(static_cast<unsigned char>(png[at + 1])) << 16) |
           (static_cast<uint32_t>(static_cast<unsigned char>(png[at + 2])) << 8) |
           static_cast<uint32_t>(static_cast<unsigned char>(png[at + 3]));
  };
  EXPECT_EQ(be32(16), 990u);  // 3.3 in at 300 dpi
  size_t phys = png.find("pHYs");
  ASSERT_NE(phys, std::string::npos);
  EXPECT_EQ(be32(phys + 4), 11811u);  // pixels per metre
}

TEST_F(FigureTest, UnitsReadAsPeopleReadThem) {
  FigureSpec spec;
  spec.runs = {ids_[0]};
  spec.metric = "gpu.memory.used_bytes";
  Result<Figure> f = CollectFigure(*store_, *reader_, spec);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->y_title, "GPU memory used (GiB)");
  EXPECT_NEAR(f->lines[0].y[0], 3.0, 1e-9);
  spec.metric = "gpu.utilization.gpu_ratio";
  f = CollectFigure(*store_, *reader_, spec);
  EXPECT_NEAR(f->lines[0].y[0], 50.0, 1e-9);  // percent
}

TEST_F(FigureTest, WorkloadMeanBySparseStepsHasNoBandForOneRun) {
  FigureSpec spec;
  spec.workloads = {"paper:pair", "paper:alone"};
  spec.metric = "train.loss";
  spec.x = XAxis::kStep;
  Result<Figure> f = CollectFigure(*store_, *reader_, spec);
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->lines.size(), 2u);
  const FigureLine& pair = f->lines[0];
  EXPECT_EQ(pair.name, "pair, mean of 2 runs");
  EXPECT_EQ(f->lines[1].name, "alone, 1 run");
  int both = 0;
  for (size_t i = 0; i < pair.x.size(); ++i) {
    if (pair.runs[i] == 2) {
      ++both;
      // Run 0 and run 1 differ by 0.1 at every step: the mean lies between, never on one run.
      EXPECT_NEAR(pair.hi[i] - pair.lo[i], 0.1, 0.02) << "at step " << pair.x[i];
    }
  }
  EXPECT_GT(both, static_cast<int>(pair.x.size()) / 2);
  for (double v : f->lines[1].lo) EXPECT_TRUE(std::isnan(v)) << "no band for a workload of one run";
  std::string csv = FigureCsv(*f);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "step,\"pair, mean of 2 runs\",\"pair, mean of 2 runs min\",\"pair, mean of 2 runs "
            "max\",\"alone, 1 run\",\"alone, 1 run min\",\"alone, 1 run max\"");
}

// A figure of long runs reads what its width needs, as a chart on screen does: the runs'
// overviews (their chunks' summaries and group means) in a query or two, not every point.
// Each run's spike is drawn at its own time and value, and the workload's mean is what
// every point gives to within a bucket.
TEST(FigureOfLongRunsTest, ReadsTheRunsOverviewsNotEveryPoint) {
  ScratchDirectory dir{"tb-figure-long"};
  std::unique_ptr<Store> store = Store::Open((dir.path() / "t.db").string()).value();
  ASSERT_TRUE(store->EnsureExperiment("paper").ok());
  constexpr int kPoints = 100000;  // at 10 Hz: 200 points a bucket of a one-column figure
  std::vector<std::string> ids;
  std::vector<std::vector<Point>> written;
  for (int r = 0; r < 2; ++r) {
    RunRecord run;
    run.id = NewRunId();
    run.experiment = "paper";
    run.workload = "long";
    run.name = "long " + std::to_string(r);
    run.start_ms = kStart;
    ASSERT_TRUE(store->CreateRun(run).ok());
    SeriesWriter w(*store, run.id);
    std::vector<Point>& points = written.emplace_back();
    for (int i = 0; i < kPoints; ++i) {
      double v = 0.5 + 0.3 * std::sin(i / 5000.0 + r) + (i == 55555 + r ? 4.0 : 0.0);
      points.push_back({kStart + int64_t{100} * i, v, kNoStep});
      w.Append("gpu.utilization.gpu_ratio", "gpu=0", points.back());
    }
    ASSERT_TRUE(w.Close().ok());
    ASSERT_TRUE(
        store->FinishRun(run.id, kStart + int64_t{100} * kPoints, kFinished, 0, std::nullopt, "").ok());
    ids.push_back(run.id);
  }
  CountingStore counting(*store);
  SeriesReader reader(counting);
  FigureSpec spec;
  spec.metric = "gpu.utilization.gpu_ratio";
  spec.runs = ids;
  spec.workloads = {"paper:long"};
  spec.percent = false;
  Result<Figure> f = CollectFigure(counting, reader, spec);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(counting.whole_series_reads, 0) << "no run's points read whole";
  EXPECT_EQ(counting.chunk_data_reads, 0) << "nor a chunk's";
  EXPECT_LE(counting.overview_reads, 2) << "the two runs' overviews together, for the mean and the lines";
  ASSERT_EQ(f->lines.size(), 3u);
  for (int r = 0; r < 2; ++r) {
    const FigureLine& line = f->lines[1 + r];
    auto top = std::max_element(line.y.begin(), line.y.end());
    ASSERT_NE(top, line.y.end());
    EXPECT_DOUBLE_EQ(*top, written[r][55555 + r].value) << "the spike";
    EXPECT_DOUBLE_EQ(line.x[top - line.y.begin()], (55555 + r) / 10.0) << "at its own time";
    EXPECT_LE(line.x.size(), 2000u);
  }
  // The mean as every point gives it, in the figure's buckets.
  std::vector<XYSeries> every;
  every.reserve(written.size());
  for (const std::vector<Point>& points : written)
    every.push_back(AlignedRun(points, kStart, XAxis::kRelative));
  const FigureLine& mean = f->lines[0];
  Band exact = Aggregate(every, 0, every[0].x.back(), mean.x.size());
  ASSERT_EQ(exact.x.size(), mean.x.size());
  for (size_t b = 0; b < exact.x.size(); ++b) {
    EXPECT_DOUBLE_EQ(mean.x[b], exact.x[b]) << b;
    EXPECT_LE(std::abs(mean.y[b] - exact.mean[b]), BucketSlack(exact.mean, b) + 1e-9) << b;
  }
  // Phases shaded: each finished run's analysis kept with it, not its points read again.
  for (const std::string& id : ids) {
    RunRecord r = store->FindRun(id).value();
    ASSERT_TRUE(KeepAnalysisJson(*store, r, AnalysisJson(AnalyzeStoredRun(*store, r).value())).ok());
  }
  spec.phases = true;
  spec.phases_of = ids[1];
  CountingStore shaded(*store);
  SeriesReader shaded_reader(shaded);
  ASSERT_TRUE(CollectFigure(shaded, shaded_reader, spec).ok());
  EXPECT_EQ(shaded.whole_series_reads + shaded.chunk_data_reads, 0)
      << "the runs' kept analyses, not their points";
}

TEST_F(FigureTest, MistakesSayWhatToDo) {
  FigureSpec spec;
  spec.runs = {ids_[0]};
  spec.metric = "gpu.nothing";
  Result<Figure> f = CollectFigure(*store_, *reader_, spec);
  EXPECT_EQ(f.status().code(), Status::Code::kNotFound);
  EXPECT_NE(f.status().message().find("trainbench"), std::string::npos);
  EXPECT_FALSE(ParseLength("3.3 parsecs").ok());
  EXPECT_NE(ParseLength("wide").status().message().find("3.3in"), std::string::npos);
  EXPECT_FALSE(ParseFigureSpec(R"({"metric": "m"})").ok());
  EXPECT_FALSE(ParseFigureSpec(R"({"metric": "m", "runs": ["a"], "smoothing": 150})").ok());
  spec.metric = "gpu.utilization.gpu_ratio";
  spec.width_pt = 40;
  spec.font_pt = 30;
  f = CollectFigure(*store_, *reader_, spec);
  ASSERT_TRUE(f.ok());
  Result<std::string> drawn = RenderFigure(*f, spec, FigureFormat::kPdf);
  EXPECT_FALSE(drawn.ok());
  EXPECT_NE(drawn.status().message().find("--font-size"), std::string::npos);
}

// A figure of many runs (as a chart of a whole experiment's runs is): at the page's
// default size its legend takes the room; the figure grows to hold it under a plot of a
// usable height, unless a height is asked, where the error says how to leave it out.
// A legend makes the figure taller where its rows need it, never taller than wide: past that
// it is left out, and the figure says so and how to have it.
TEST_F(FigureTest, ALegendNeverMakesTheFigureTallerThanWide) {
  FigureSpec spec;
  spec.metric = "gpu.utilization.gpu_ratio";
  spec.width_pt = *ParseLength("3.3in");
  for (int i = 0; i < 40; ++i) {
    RunRecord r;
    r.id = NewRunId();
    r.experiment = "paper";
    r.workload = "sweep";
    r.name = "sweep run " + std::to_string(i);
    r.start_ms = kStart;
    r.params = {{"lr", std::to_string(0.001 * (i + 1))}};
    ASSERT_TRUE(store_->CreateRun(r).ok());
    SeriesWriter w(*store_, r.id);
    for (int s = 0; s <= 60; ++s) w.Append(spec.metric, "gpu=0", {kStart + s * 1000, 0.3 + 0.01 * i});
    ASSERT_TRUE(w.Close().ok());
    spec.runs.push_back(r.id);
  }
  auto page = [&](const std::string& name) {
    std::string info = Shell("pdfinfo " + Draw(spec, FigureFormat::kPdf, name));
    double w = 0, h = 0;
    size_t at = info.find("Page size:");
    EXPECT_NE(at, std::string::npos) << info;
    if (at != std::string::npos) {
      EXPECT_EQ(std::sscanf(info.c_str() + at, "Page size: %lf x %lf pts", &w, &h), 2);
    }
    return std::pair{w, h};
  };
  // Twelve runs: their legend's rows make the figure taller than 0.62 of its width, not past it.
  std::vector<std::string> all = spec.runs;
  spec.runs.resize(12);
  auto [w12, h12] = page("twelve.pdf");
  EXPECT_DOUBLE_EQ(w12, 237.6);
  EXPECT_GT(h12, 237.6 * 0.62 + 20) << "taller than the default by the legend's rows";
  EXPECT_LE(h12, 237.6);
  EXPECT_NE(Shell("pdftotext " + (dir_.path() / "twelve.pdf").string() + " -").find("sweep run 11"),
            std::string::npos);
  // Forty: the names would make it taller than wide; left out, said.
  spec.runs = all;
  auto [w40, h40] = page("many.pdf");
  EXPECT_LE(h40, w40);
  std::string text = Shell("pdftotext -raw " + (dir_.path() / "many.pdf").string() + " - | tr '\\n' ' '");
  EXPECT_EQ(text.find("sweep run 39"), std::string::npos) << text;
  EXPECT_NE(text.find("40 names left out of the legend"), std::string::npos) << text;
  EXPECT_NE(text.find("--legend"), std::string::npos) << text;
  // Asked 2 in tall: no room, and the error names the legend and how to leave it out.
  spec.height_pt = *ParseLength("2in");
  Result<Figure> f = CollectFigure(*store_, *reader_, spec);
  ASSERT_TRUE(f.ok());
  Result<std::string> drawn = RenderFigure(*f, spec, FigureFormat::kPdf);
  ASSERT_FALSE(drawn.ok());
  EXPECT_NE(drawn.status().message().find("legend's 40 names"), std::string::npos)
      << drawn.status().message();
  EXPECT_NE(drawn.status().message().find("--no-legend"), std::string::npos);
  spec.show_legend = false;
  EXPECT_TRUE(RenderFigure(*f, spec, FigureFormat::kPdf).ok());
}

}  // namespace
}  // namespace tb
