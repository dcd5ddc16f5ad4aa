// The default looks of lines, read back from rendered figures: colours that print as distinct
// greys and stay apart for colour-blind readers, then dashes, then markers; a sweep's lines
// from dark to light by their parameter.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "base/read_file.h"
#include "figure/figure_test_fixture.h"

namespace tb {
namespace {

using Rgb3 = std::array<double, 3>;

Rgb3 Linear(const std::string& hex) {
  Rgb3 out{};
  for (int k = 0; k < 3; ++k) {
    double c = std::stoi(hex.substr(1 + 2 * k, 2), nullptr, 16) / 255.0;
    out[k] = c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
  }
  return out;
}

// CIELAB (D65) of linear RGB.
Rgb3 Lab(Rgb3 c) {
  double x = 0.4124 * c[0] + 0.3576 * c[1] + 0.1805 * c[2];
  double y = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  double z = 0.0193 * c[0] + 0.1192 * c[1] + 0.9505 * c[2];
  auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116; };
  double fx = f(x / 0.95047), fy = f(y), fz = f(z / 1.08883);
  return {116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)};
}

// How a reader with a dichromacy sees a colour (Machado, Oliveira and Fernandes 2009,
// severity 1).
Rgb3 Simulate(Rgb3 c, const double (&m)[3][3]) {
  Rgb3 out{};
  for (int i = 0; i < 3; ++i)
    out[i] = std::clamp(m[i][0] * c[0] + m[i][1] * c[1] + m[i][2] * c[2], 0.0, 1.0);
  return out;
}
constexpr double kDeutan[3][3] = {
    {0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}};
constexpr double kProtan[3][3] = {
    {0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}};
constexpr double kTritan[3][3] = {
    {1.255528, -0.076749, -0.178779}, {-0.078411, 0.930809, 0.147602}, {0.004733, 0.691367, 0.303900}};

double Distance(Rgb3 a, Rgb3 b) { return std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]); }

// The data lines of an SVG figure drawn with 1 pt lines: each stroke and dash pattern, in
// the order drawn (the legend's swatches repeat them, 1 pt too).
std::vector<std::pair<std::string, std::string>> LineLooks(const std::string& svg) {
  std::vector<std::pair<std::string, std::string>> out;
  std::regex path(R"re(stroke="(#[0-9a-f]{6})" stroke-width="1" [^>]*?(?:stroke-dasharray="([^"]*)")?/>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), path); it != std::sregex_iterator(); ++it)
    out.emplace_back((*it)[1], (*it)[2]);
  return out;
}

TEST_F(FigureTest, TheDefaultColoursPrintAsDistinctGreysAndStayApartForColourBlindReaders) {
  FigureSpec spec;
  spec.metric = "gpu.utilization.gpu_ratio";
  for (int i = 0; i < 5; ++i)
    spec.runs.push_back(AddRun("r" + std::to_string(i), "w", spec.metric, "gpu=0", 50, 1000));
  std::string svg;
  ASSERT_TRUE(ReadWholeFile(Draw(spec, FigureFormat::kSvg, "five.svg"), &svg, nullptr));
  std::vector<std::string> colours;
  for (const auto& [stroke, dash] : LineLooks(svg)) {
    if (std::find(colours.begin(), colours.end(), stroke) == colours.end()) colours.push_back(stroke);
  }
  ASSERT_EQ(colours.size(), 5u) << svg;
  std::vector<double> lightness;
  for (const std::string& c : colours) lightness.push_back(Lab(Linear(c))[0]);
  std::sort(lightness.begin(), lightness.end());
  for (size_t i = 1; i < lightness.size(); ++i)
    EXPECT_GE(lightness[i] - lightness[i - 1], 10) << "two lines print as about the same grey";
  for (const auto* m : {&kDeutan, &kProtan, &kTritan}) {
    for (size_t i = 0; i < colours.size(); ++i) {
      for (size_t j = i + 1; j < colours.size(); ++j) {
        EXPECT_GE(Distance(Lab(Simulate(Linear(colours[i]), *m)), Lab(Simulate(Linear(colours[j]), *m))), 20)
            << colours[i] << " and " << colours[j] << " look alike to a colour-blind reader";
      }
    }
  }
}

TEST_F(FigureTest, LinesPastTheColoursTakeDashesThenMarkersAndNoTwoLookAlike) {
  FigureSpec spec;
  spec.metric = "gpu.utilization.gpu_ratio";
  spec.show_legend = false;
  for (int i = 0; i < 25; ++i)
    spec.runs.push_back(AddRun("r" + std::to_string(i), "w", spec.metric, "gpu=0", 200, 1000));
  spec.width_pt = 7 * 72;
  std::string svg;
  ASSERT_TRUE(ReadWholeFile(Draw(spec, FigureFormat::kSvg, "many.svg"), &svg, nullptr));
  std::vector<std::pair<std::string, std::string>> looks = LineLooks(svg);
  ASSERT_EQ(looks.size(), 25u);
  std::set<std::pair<std::string, std::string>> first20(looks.begin(), looks.begin() + 20);
  EXPECT_EQ(first20.size(), 20u) << "the first 20 lines differ in colour or dash";
  EXPECT_TRUE(looks[5].second.size() > 0 && looks[5].first == looks[0].first)
      << "the sixth line is the first's colour, dashed";
  // Lines 21-25 repeat the first five's colour and dash, with dots along them.
  for (int i = 20; i < 25; ++i) {
    EXPECT_EQ(looks[i], looks[i - 20]);
    std::string dot = "fill=\"" + looks[i].first + "\" fill-opacity=\"1\"";
    EXPECT_NE(svg.find(dot), std::string::npos) << "line " << i + 1 << " has no markers";
  }
}

}  // namespace
}  // namespace tb
