// What a figure made with no options shows: nothing drawn over the data unless asked, and
// what a log axis cannot draw said rather than dropped.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "analyze/phases.h"
#include "figure/axis.h"
#include "figure/figure_test_fixture.h"
#include "figure/legend.h"
#include "figure/palette.h"
#include "figure/render.h"
#include "figure/shared_devices.h"
#include "store/run_tags.h"
#include "store/series_writer.h"

namespace tb {
namespace {

// A figure made with no options draws nothing over the data: event lines only when asked,
// and then their labels never overprint one another (a label with no room is left out).
TEST_F(FigureTest, EventsOnlyWhenAskedAndTheirLabelsNeverOverprint) {
  for (int i = 0; i < 40; ++i)
    ASSERT_TRUE(
        store_->AddEvent({ids_[0], kStart + 5000 + i * 2000, "epoch", "epoch " + std::to_string(i)}).ok());
  FigureSpec spec;
  spec.runs = {ids_[0]};
  spec.metric = "gpu.utilization.gpu_ratio";
  auto svg_of = [&](const std::string& name) {
    std::ifstream in(Draw(spec, FigureFormat::kSvg, name));
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  std::string plain = svg_of("plain.svg");
  EXPECT_EQ(plain.find(">epoch "), std::string::npos);
  EXPECT_EQ(plain.find("stroke-dasharray"), std::string::npos) << "no dashed event lines";

  spec.events = true;
  std::string marked = svg_of("events.svg");
  struct Box {
    double x, y, w;
  };
  std::vector<Box> labels;
  for (size_t at = marked.find(">epoch "); at != std::string::npos; at = marked.find(">epoch ", at + 1)) {
    size_t open = marked.rfind("<text", at);
    double x = std::stod(marked.substr(marked.find(" x=\"", open) + 4));
    double y = std::stod(marked.substr(marked.find(" y=\"", open) + 4));
    std::string text = marked.substr(at + 1, marked.find("</text>", at) - at - 1);
    labels.push_back({x, y, TextWidth(text, spec.font_pt * 0.8)});
  }
  ASSERT_GE(labels.size(), 3u) << marked;
  EXPECT_LT(labels.size(), 40u) << "labels without room are left out";
  for (size_t i = 0; i < labels.size(); ++i) {
    for (size_t j = i + 1; j < labels.size(); ++j) {
      bool same_row = std::fabs(labels[i].y - labels[j].y) < spec.font_pt * 0.8;
      bool apart = labels[i].x + labels[i].w <= labels[j].x || labels[j].x + labels[j].w <= labels[i].x;
      EXPECT_TRUE(!same_row || apart) << "labels " << i << " and " << j << " overprint";
    }
  }
}

// Phases are one run's: asked for a figure of several runs, the figure says to name whose,
// and shades that run's phases only, where its analysis found them.
TEST_F(FigureTest, PhasesAreOneNamedRunsAndSayWhoseWhenNotNamed) {
  // Run 1 idles from 200 s to 300 s of its 600.
  RunRecord r = store_->FindRun(ids_[1]).value();
  {
    SeriesWriter w(*store_, r.id);
    for (int s = 0; s <= 600; s += 2)
      w.Append("gpu.power.draw_watts", "gpu=0", {kStart + s * 1000, s >= 200 && s < 300 ? 60.0 : 300.0});
    ASSERT_TRUE(w.Close().ok());
  }
  FigureSpec spec;
  spec.runs = {ids_[0], ids_[1], ids_[2]};
  spec.metric = "gpu.utilization.gpu_ratio";
  spec.phases = true;
  Result<Figure> unnamed = CollectFigure(*store_, *reader_, spec);
  ASSERT_FALSE(unnamed.ok());
  EXPECT_NE(unnamed.status().message().find("--phases-of"), std::string::npos) << unnamed.status().message();
  for (const std::string& id : ids_)
    EXPECT_NE(unnamed.status().message().find(id.substr(0, 8)), std::string::npos) << "names the runs";

  spec.phases_of = "nobody";
  EXPECT_NE(
      CollectFigure(*store_, *reader_, spec).status().message().find("'nobody' is not a run of the figure"),
      std::string::npos);

  spec.phases_of = r.name;  // by name, as by id
  Result<Figure> named = CollectFigure(*store_, *reader_, spec);
  ASSERT_TRUE(named.ok()) << named.status().message();
  std::vector<FigureSpan> expected;
  for (const Phase& p : AnalyzeStoredRun(*store_, r).value().phases)
    if (p.kind != "steady")
      expected.push_back({(p.start_ms - kStart) / 1000.0, (p.end_ms - kStart) / 1000.0, p.kind});
  ASSERT_FALSE(expected.empty()) << "the fixture's run has phases to shade";
  ASSERT_EQ(named->phases.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(named->phases[i].kind, expected[i].kind);
    EXPECT_DOUBLE_EQ(named->phases[i].from, expected[i].from);
  }
  // A figure of one run shades its phases without naming it.
  spec.runs = {ids_[1]};
  spec.phases_of.clear();
  Result<Figure> alone = CollectFigure(*store_, *reader_, spec);
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  EXPECT_EQ(alone->phases.size(), expected.size());
}

// Smoothing is weighted by time, as on screen: a loss logged every 60 s in a figure with a
// run sampled every second follows its own values; its unsmoothed values stay, faint.
TEST_F(FigureTest, SmoothingByTimeKeepsASparseLineOnItsValuesAndItsRawValuesFaint) {
  std::string dense = AddRun("dense", "d", "train.loss", "", 600, 1000);
  RunRecord r;
  r.id = NewRunId();
  r.experiment = "paper";
  r.name = "sparse";
  r.start_ms = kStart;
  ASSERT_TRUE(store_->CreateRun(r).ok());
  SeriesWriter w(*store_, r.id);
  for (int i = 1; i <= 10; ++i) w.Append("train.loss", "", {kStart + i * 60000, 2.0 - 0.197 * i});
  ASSERT_TRUE(w.Close().ok());
  FigureSpec spec;
  spec.runs = {dense, r.id};
  spec.metric = "train.loss";
  spec.smoothing = 90;
  Result<Figure> f = CollectFigure(*store_, *reader_, spec);
  ASSERT_TRUE(f.ok()) << f.status().message();
  const FigureLine& sparse = f->lines[1];
  ASSERT_EQ(sparse.y.size(), 10u);
  EXPECT_LT(sparse.y.back(), sparse.raw[8]) << "below the value logged before it: " << sparse.y.back();
  EXPECT_NEAR(sparse.y.back(), 0.03, 0.01);
  EXPECT_NEAR(sparse.raw.back(), 0.03, 1e-9) << "its own values kept";
  spec.smoothing = 0;
  EXPECT_TRUE(CollectFigure(*store_, *reader_, spec)->lines[1].raw.empty()) << "nothing faint unsmoothed";
  spec.smoothing = 90;
  std::ifstream in(Draw(spec, FigureFormat::kSvg, "smooth.svg"));
  std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Rgb first = ParseRgb(kLineColors[0]);
  char faint[8];
  std::snprintf(faint, sizeof faint, "#%02x%02x%02x",
                static_cast<int>(std::lround((first.r * 0.3 + 0.7) * 255)),
                static_cast<int>(std::lround((first.g * 0.3 + 0.7) * 255)),
                static_cast<int>(std::lround((first.b * 0.3 + 0.7) * 255)));
  EXPECT_NE(svg.find(std::string("stroke=\"") + faint + "\""), std::string::npos)
      << "the first line's colour, faint";
}

// The y axis's title stands clear of its tick labels, however wide they are (the report's
// throughput chart had "Throughput (samples/s)" touching "10000").
TEST_F(FigureTest, TheYTitleNeverTouchesTheTickLabels) {
  std::string id = AddRun("fast", "f", "train.throughput_samples_per_second", "", 60, 1000);
  {
    SeriesWriter w(*store_, id);
    for (int i = 60; i < 120; ++i)
      w.Append("train.throughput_samples_per_second", "", {kStart + i * 1000, 18000.0 + 300 * (i % 7)});
    ASSERT_TRUE(w.Close().ok());
  }
  for (double font : {6.0, 8.0, 12.0}) {
    FigureSpec spec;
    spec.runs = {id};
    spec.metric = "train.throughput_samples_per_second";
    spec.font_pt = font;
    std::ifstream in(Draw(spec, FigureFormat::kSvg, "title.svg"));
    std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto number_after = [&](size_t from, const char* key) {
      return std::stod(svg.substr(svg.find(key, from) + 4));
    };
    size_t title = svg.rfind("<text", svg.find("rotate(-90"));
    double title_right = number_after(title, " x=\"") + 0.25 * font;  // descenders past the baseline
    double labels_left = 1e9;
    int labels = 0;
    for (size_t at = svg.find("text-anchor=\"end\""); at != std::string::npos;
         at = svg.find("text-anchor=\"end\"", at + 1)) {
      size_t open = svg.rfind("<text", at);
      size_t text = svg.find('>', at) + 1;
      std::string label = svg.substr(text, svg.find("</text>", text) - text);
      double x = number_after(open, " x=\"");
      if (x > labels_left + 50) continue;  // not a y tick label
      labels_left = std::min(labels_left, x - TextWidth(label, font * 0.9));
      ++labels;
    }
    ASSERT_GE(labels, 2) << svg;
    EXPECT_GT(labels_left - title_right, 0.1 * font) << "font " << font;
  }
}

// Runs with nvml's, nvidia-smi's and dcgmi's reading of GPU 0: one line each, nvml's (not
// six entries for two curves); another source when asked by its labels; smi's where nvml's
// is missing.
TEST_F(FigureTest, EachQuantityIsDrawnFromOneSource) {
  FigureSpec spec;
  spec.metric = "gpu.power.draw_watts";
  for (const char* name : {"A", "B", "C"}) {
    RunRecord r;
    r.id = NewRunId();
    r.experiment = "paper";
    r.name = name;
    r.start_ms = kStart;
    ASSERT_TRUE(store_->CreateRun(r).ok());
    SeriesWriter w(*store_, r.id);
    for (int i = 0; i < 30; ++i) {
      for (const char* labels : {"gpu=0", "gpu=0,listener=smi", "gpu=0,listener=dcgmi"}) {
        if (std::string(name) == "C" && std::string(labels) == "gpu=0") continue;  // no nvml
        w.Append(spec.metric, labels, {kStart + i * 1000, 200.0 + i});
      }
    }
    ASSERT_TRUE(w.Close().ok());
    spec.runs.push_back(r.id);
  }
  Result<Figure> f = CollectFigure(*store_, *reader_, spec);
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->lines.size(), 3u);
  EXPECT_EQ(f->lines[0].key, spec.runs[0] + "|gpu=0");
  EXPECT_EQ(f->lines[1].key, spec.runs[1] + "|gpu=0");
  EXPECT_EQ(f->lines[2].key, spec.runs[2] + "|gpu=0,listener=smi");
  spec.labels = "gpu=0,listener=dcgmi";
  f = CollectFigure(*store_, *reader_, spec);
  ASSERT_TRUE(f.ok());
  ASSERT_EQ(f->lines.size(), 3u);
  EXPECT_EQ(f->lines[0].key, spec.runs[0] + "|gpu=0,listener=dcgmi");
}

// Runs that shared a GPU at the same time (same host, same devices, overlapping) recorded its
// series alike: drawn once, named for the device and its runs. The same GPU at another time,
// or another GPU of the host, is a line of its own.
TEST_F(FigureTest, AGpuSharedAtTheSameTimeIsDrawnOnce) {
  FigureSpec spec;
  spec.metric = "gpu.power.draw_watts";
  auto add = [&](const char* name, const char* devices, int64_t start) {
    RunRecord r;
    r.id = NewRunId();
    r.experiment = "paper";
    r.name = name;
    r.host = "gpu-server";
    r.devices = devices;
    r.start_ms = start;
    EXPECT_TRUE(store_->CreateRun(r).ok());
    SeriesWriter w(*store_, r.id);
    for (int i = 0; i < 30; ++i) w.Append(spec.metric, "gpu=0", {start + i * 1000, 200.0 + i});
    EXPECT_TRUE(w.Close().ok());
    EXPECT_TRUE(store_->FinishRun(r.id, start + 30000, kFinished, 0, std::nullopt, "").ok());
    spec.runs.push_back(r.id);
  };
  add("A", "GPU-484204d4", kStart);
  add("B", "GPU-484204d4", kStart + 2000);
  add("later", "GPU-484204d4", kStart + 60000);
  add("other", "GPU-99999999", kStart);
  Result<Figure> f = CollectFigure(*store_, *reader_, spec);
  ASSERT_TRUE(f.ok()) << f.status().message();
  std::vector<std::string> names;
  for (const FigureLine& l : f->lines) names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{"GPU 0, shared by A and B", "later", "other"}));
  EXPECT_EQ(f->lines[0].key, spec.runs[0] + "|gpu=0");
  // A run's own share of the GPU is its own, shared or not.
  EXPECT_FALSE(IsDeviceMetric("proc.gpu.energy_joules"));
  EXPECT_TRUE(IsDeviceMetric("gpu.utilization.gpu_ratio"));
}

// On a log axis, values at or below zero cannot be drawn: the figure says how many.
TEST_F(FigureTest, ALogAxisSaysWhatItCannotDraw) {
  FigureSpec spec;
  spec.runs = {AddRun("zeros", "", "train.loss", "", 30, 1000, true)};
  spec.metric = "train.loss";
  spec.log_y = true;
  std::ifstream in(Draw(spec, FigureFormat::kSvg, "log.svg"));
  std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(svg.find("not drawn"), std::string::npos) << "0.5 everywhere: all drawn";
  spec.runs = {AddRun("with zeros", "", "gpu.power.draw_watts", "gpu=0", 0, 1000)};
  SeriesWriter w(*store_, spec.runs[0]);
  for (int i = 0; i < 20; ++i)
    w.Append("gpu.power.draw_watts", "gpu=0", {kStart + i * 1000, i < 5 ? 0.0 : 100.0 + i});
  ASSERT_TRUE(w.Close().ok());
  spec.metric = "gpu.power.draw_watts";
  std::ifstream in2(Draw(spec, FigureFormat::kSvg, "log2.svg"));
  std::string zeros((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  EXPECT_NE(zeros.find(">5 values at or below 0 not drawn (log scale)</text>"), std::string::npos) << zeros;
}

// Default legend names are short and distinct: the runs' names; where names repeat (a
// schedule's "train.py 0A-" in every workload), workload and letter; never "seed=" for a
// param one run lacks, never a suffix repeated on lines it does not tell apart.
TEST(DefaultLegendTest, NamesAreShortAndDistinct) {
  auto run = [](const std::string& id, const std::string& name, const std::string& workload,
                const std::string& letter, KeyValues params) {
    RunRecord r;
    r.id = id;
    r.name = name;
    r.workload = workload;
    r.tags = {{kLetterTag, letter}};
    r.params = std::move(params);
    return r;
  };
  RunRecord a = run("aaaaaaaa11", "bs32", "1", "0A-", {{"batch-size", "32"}, {"seed", "1"}});
  RunRecord b = run("bbbbbbbb22", "bs64", "1", "0B-", {{"batch-size", "64"}});
  EXPECT_EQ(DefaultLegend({{&a, "", "", 0, {}}, {&b, "", "", 0, {}}}),
            (std::vector<std::string>{"bs32", "bs64"}));
  RunRecord c = run("cccccccc33", "train.py 0A-", "1", "0A-", {});
  RunRecord d = run("dddddddd44", "train.py 0A-", "2", "0A-", {});
  EXPECT_EQ(DefaultLegend({{&c, "", "", 0, {}}, {&d, "", "", 0, {}}}),
            (std::vector<std::string>{"1 0A-", "2 0A-"}));
  RunRecord e = run("eeeeeeee55", "train.py", "", "", {});
  RunRecord f = run("ffffffff66", "train.py", "", "", {});
  EXPECT_EQ(DefaultLegend({{&e, "gpu=0", "", 0, {}}, {&f, "gpu=1", "", 0, {}}}),
            (std::vector<std::string>{"train.py #1 [gpu=0]", "train.py #2 [gpu=1]"}));
  // Repeats of one configuration: by their place in start order, not by a hex id.
  RunRecord later = run("00000000aa", "train.py 0A-", "1", "0A-", {});
  later.start_ms = c.start_ms + 1000;
  EXPECT_EQ(DefaultLegend({{&later, "", "", 0, {}}, {&c, "", "", 0, {}}}),
            (std::vector<std::string>{"1 0A- #2", "1 0A- #1"}));
  EXPECT_EQ(DefaultLegend({{&a, "gpu=0", "", 0, {&b}}}),
            (std::vector<std::string>{"GPU 0, shared by 0A- and 0B-"}));
  // The GPU each repeat of one pair shared, once a repeat: told apart by the repeat.
  RunRecord a2 = a, b2 = b;
  a.tags.emplace_back(kRepeatTag, "1/2");
  b.tags.emplace_back(kRepeatTag, "1/2");
  a2.tags.emplace_back(kRepeatTag, "2/2");
  b2.tags.emplace_back(kRepeatTag, "2/2");
  a2.id = "aaaaaaaa12", b2.id = "bbbbbbbb23";
  a2.start_ms = b2.start_ms = a.start_ms + 60000;
  EXPECT_EQ(DefaultLegend({{&a2, "gpu=0", "", 0, {&b2}}, {&a, "gpu=0", "", 0, {&b}}}),
            (std::vector<std::string>{"GPU 0, shared by 0A- and 0B- (repeat 2/2)",
                                      "GPU 0, shared by 0A- and 0B- (repeat 1/2)"}));
  EXPECT_EQ(DefaultLegend({{nullptr, "", "paper:pair", 3, {}}, {nullptr, "", "paper:7", 1, {}}}),
            (std::vector<std::string>{"pair, mean of 3 runs", "workload 7, 1 run"}));
}

}  // namespace
}  // namespace tb
