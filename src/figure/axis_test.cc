// What a figure's parts draw, read off an SVG or their labels: the report's bar charts
// (names never overprint, values as text) and the axes' ticks (round times, decades).
#include "figure/axis.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "figure/bar_chart.h"
#include "figure/palette.h"
#include "figure/render.h"

namespace tb {
namespace {

// The report's bar charts: however many workloads and however long their names, every name
// has a row of its own and fits its column; values stand at the bars' ends as text.
TEST(BarChartTest, NamesNeverOverprintAndValuesAreText) {
  BarChart chart{"", "Throughput per run", "Samples per second", {}, {{0, "one run"}, {1, "runs together"}}};
  for (int i = 0; i < 12; ++i)
    chart.bars.push_back({"w" + std::to_string(i), 100.0 + 10 * i, i % 2 ? 1u : 0u});
  chart.bars.push_back({"a workload with a name far longer than any column would hold", 42.0, 0});
  chart.bars.push_back({"crashed", std::nullopt, 0});
  const double f = 8, width = 300, height = BarChartHeight(chart, f);
  Result<std::string> svg = RenderPages(FigureFormat::kSvg, width, height, 96, chart.title,
                                        {[&](Painter& p) { DrawBarChart(p, chart, f, 0, 0, width); }});
  ASSERT_TRUE(svg.ok()) << svg.status().message();
  // Every <text>: its y and its content.
  std::vector<std::pair<double, std::string>> texts;
  for (size_t at = svg->find("<text"); at != std::string::npos; at = svg->find("<text", at + 1)) {
    size_t y = svg->find(" y=\"", at) + 4, open = svg->find('>', at) + 1;
    texts.emplace_back(std::stod(svg->substr(y)), svg->substr(open, svg->find("</text>", open) - open));
  }
  auto find = [&](const std::string& s) {
    for (const auto& t : texts) {
      if (t.second == s) return t.first;
    }
    ADD_FAILURE() << "no text '" << s << "' in\n" << *svg;
    return -1.0;
  };
  std::set<double> name_rows;
  for (int i = 0; i < 12; ++i) name_rows.insert(find("w" + std::to_string(i)));
  EXPECT_EQ(name_rows.size(), 12u) << "each name on a row of its own";
  EXPECT_GE(*name_rows.begin() - find("Throughput per run"), f) << "names start under the title";
  EXPECT_LE(*name_rows.rbegin(), height);
  // The long name is cut with an ellipsis to a third of the width.
  std::string cut;
  for (const auto& t : texts) {
    if (t.second.starts_with("a workload")) cut = t.second;
  }
  EXPECT_TRUE(cut.ends_with("\u2026")) << cut;
  EXPECT_LE(TextWidth(cut, f), width / 3 + 0.01);
  find("210");      // w11's value at its bar's end
  find("no data");  // a workload without the figure
  find("Samples per second");
  find("runs together");
  EXPECT_NE(svg->find("fill=\"" + std::string(kLineColors[1]) + "\""), std::string::npos)
      << "collocated workloads in the second colour";
  EXPECT_EQ(FitText("short", f, 100), "short");
}

// The labels of the ticks that carry one, each followed by a space.
std::string Labels(const std::vector<Tick>& ticks) {
  std::string s;
  for (const Tick& t : ticks) {
    if (!t.label.empty()) s += t.label + " ";
  }
  return s;
}

TEST(Axis, TicksAtRoundTimes) {
  EXPECT_EQ(Labels(XTicks(XAxis::kRelative, 0, 600, 6)), "0:00 2:00 4:00 6:00 8:00 10:00 ");
  EXPECT_EQ(Labels(XTicks(XAxis::kRelative, 0, 30, 6)), "0:00 0:05 0:10 0:15 0:20 0:25 0:30 ");
  EXPECT_EQ(Labels(XTicks(XAxis::kRelative, 0, 4 * 3600, 4)), "0:00 1:00:00 2:00:00 3:00:00 4:00:00 ");
  EXPECT_EQ(Labels(XTicks(XAxis::kWall, 3600e3, 3600e3 + 1800e3, 3, 60)), "02:00 02:10 02:20 02:30 ");
  EXPECT_EQ(Labels(LogTicks(1, 1000)), "1 10 100 1000 ");
  EXPECT_EQ(ChooseDisplayUnit("bytes/s", 5e6).unit, "MiB/s");
}

// Tick and bar labels as a paper prints them: plain numbers, never "1e+04".
TEST(Axis, NumbersWithoutExponents) {
  EXPECT_EQ(Labels(NumberTicks(0, 40000, 4)), "0 10000 20000 30000 40000 ");
  EXPECT_EQ(ShortNumber(36940), "36940");
  EXPECT_EQ(ShortNumber(1.5e9), "1.5G");
  EXPECT_EQ(ShortNumber(2e6), "2M");
  EXPECT_EQ(ShortNumber(-250000), "-250000");
  EXPECT_EQ(ShortNumber(0.25), "0.25");
  EXPECT_EQ(ShortNumber(0.00005), "0.00005");
  EXPECT_EQ(ShortNumber(0.0001234), "0.000123");
  for (double v : {1e4, 3.694e4, 1e7, 1e-5, 123456.0})
    EXPECT_EQ(ShortNumber(v).find('e'), std::string::npos) << v;
}

// A log axis: labelled decades, unlabelled minor ticks between them; within one decade its
// round values are labelled so that the axis still reads.
TEST(Axis, LogTicksOnDecadesWithMinorTicks) {
  std::vector<Tick> ticks = LogTicks(0.01, 100);
  EXPECT_EQ(Labels(ticks), "0.01 0.1 1 10 100 ");
  EXPECT_EQ(ticks.size(), 5u + 4 * 8);  // 2..9 between each pair of decades
  EXPECT_EQ(Labels(LogTicks(11, 71)), "20 30 40 50 60 70 ");
  EXPECT_EQ(Labels(LogTicks(1e-3, 1e9)), "0.001 0.01 0.1 1 10 100 1000 10000 100000 1M 10M 100M 1G ");
}

// A wall-clock axis across days shows dates, its title says so, and a relative axis's title
// writes the format of its labels.
TEST(Axis, WallClockAcrossDaysShowsDates) {
  const double day_ms = 86400e3, nov27 = 1795737600e3;  // 2026-11-27 00:00 UTC
  EXPECT_EQ(Labels(XTicks(XAxis::kWall, nov27 + 20 * 3600e3, nov27 + 28 * 3600e3, 4)),
            "11-27 20:00 11-27 22:00 11-28 00:00 11-28 02:00 11-28 04:00 ");
  std::vector<Tick> year = XTicks(XAxis::kWall, nov27 - 365 * day_ms, nov27, 8);
  std::set<std::string> distinct;
  for (const Tick& t : year) distinct.insert(t.label);
  EXPECT_EQ(distinct.size(), year.size()) << Labels(year);
  EXPECT_LE(year.size(), 12u) << Labels(year);
  EXPECT_EQ(year.front().label.substr(0, 3), "202") << "dated with the year: " << Labels(year);
  EXPECT_EQ(year.front().label.size(), 10u) << Labels(year);
  EXPECT_EQ(XAxisTitle(XAxis::kWall, nov27, nov27 + 2 * day_ms, 0), "Date and time (UTC+00:00)");
  EXPECT_EQ(XAxisTitle(XAxis::kWall, nov27 + 3600e3, nov27 + 7200e3, 60), "Time of day (UTC+01:00)");
  EXPECT_EQ(XAxisTitle(XAxis::kRelative, 3000, 4000, 0), "Time since start (h:mm:ss)");
  EXPECT_EQ(XAxisTitle(XAxis::kRelative, 0, 3000, 0), "Time since start (m:ss)");
}

// A run of 115 days reads in days (0, 30, 60, 90), not in thousands of hours whose labels
// run into each other; a day and a half still reads in hours.
TEST(Axis, ALongRunReadsInDays) {
  const double day = 86400;
  EXPECT_EQ(Labels(XTicks(XAxis::kRelative, 0, 115 * day, 4)), "0 30 60 90 ");
  EXPECT_EQ(XAxisTitle(XAxis::kRelative, 0, 115 * day, 0), "Time since start (days)");
  EXPECT_EQ(Labels(XTicks(XAxis::kRelative, 0, 1.5 * day, 3)), "0:00 12:00:00 24:00:00 36:00:00 ");
  EXPECT_EQ(XAxisTitle(XAxis::kRelative, 0, 1.5 * day, 0), "Time since start (h:mm:ss)");
}

}  // namespace
}  // namespace tb
