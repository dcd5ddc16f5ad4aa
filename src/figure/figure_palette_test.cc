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
  for (int i = 0; i < 3; ++i) out[i] = std::clamp(m[i][0] * c[0] + m[i][1] * c[1] + m[i][2] * c[2], 0.0, 1.0);
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
  lightness.reserve(colours.size());
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

namespace tb {
namespace {

class SweepFigureTest : public FigureTest {
 protected:
  // Runs of a batch-size sweep, each with a GPU utilization series; in this order.
  std::vector<std::string> Sweep(const std::vector<std::string>& sizes) {
    std::vector<std::string> ids;
    for (const std::string& bs : sizes) {
      RunRecord r;
      r.id = NewRunId();
      r.experiment = "sweep";
      r.name = "bs" + bs;
      r.start_ms = kStart;
      r.params = {{"batch-size", bs}};
      EXPECT_TRUE(store_->EnsureExperiment("sweep").ok());
      EXPECT_TRUE(store_->CreateRun(r).ok());
      SeriesWriter w(*store_, r.id);
      for (int s = 0; s < 60; ++s) w.Append("gpu.utilization.gpu_ratio", "gpu=0", {kStart + s * 1000, 0.5});
      EXPECT_TRUE(w.Close().ok());
      ids.push_back(r.id);
    }
    return ids;
  }
};

TEST_F(SweepFigureTest, ASweepGoesFromDarkToLightByItsValueWithAColourBarForManyRuns) {
  FigureSpec spec;
  spec.metric = "gpu.utilization.gpu_ratio";
  // Asked for out of order: the colours follow the values, not the order asked.
  spec.runs = Sweep({"256", "16", "1024", "32", "64", "128", "512", "8", "2048", "4", "4096", "2"});
  spec.color_by = "batch-size";
  std::string svg;
  ASSERT_TRUE(ReadWholeFile(Draw(spec, FigureFormat::kSvg, "sweep.svg"), &svg, nullptr));
  std::vector<std::pair<std::string, std::string>> looks = LineLooks(svg);
  ASSERT_EQ(looks.size(), 12u) << "no legend swatches: a colour bar";
  for (size_t i = 1; i < looks.size(); ++i) {
    EXPECT_GT(Lab(Linear(looks[i].first))[0], Lab(Linear(looks[i - 1].first))[0])
        << "lines drawn from the least batch size to the greatest, each lighter";
    EXPECT_TRUE(looks[i].second.empty()) << "solid";
  }
  EXPECT_EQ(svg.find(">bs256</text>"), std::string::npos) << "no names: a colour bar";
  EXPECT_NE(svg.find(">batch-size</text>"), std::string::npos);
  // Its ticks are round values of a log scale over 2-4096; the bar is drawn in many steps.
  for (const char* tick : {">10</text>", ">100</text>", ">1000</text>"})
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  EXPECT_GE(std::count(svg.begin(), svg.end(), '\n'), 64);
}

TEST_F(SweepFigureTest, AFewRunsOfASweepAreNamedInTheOrderOfTheirValue) {
  FigureSpec spec;
  spec.metric = "gpu.utilization.gpu_ratio";
  spec.runs = Sweep({"64", "16", "32"});
  spec.color_by = "batch-size";
  Result<Figure> f = CollectFigure(*store_, *reader_, spec);
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->lines.size(), 3u);
  EXPECT_EQ(f->lines[0].name, "bs16");
  EXPECT_EQ(f->lines[2].name, "bs64");
  std::string svg;
  ASSERT_TRUE(ReadWholeFile(Draw(spec, FigureFormat::kSvg, "three.svg"), &svg, nullptr));
  EXPECT_LT(svg.find(">bs16</text>"), svg.find(">bs32</text>"));
  EXPECT_LT(svg.find(">bs32</text>"), svg.find(">bs64</text>"));
  EXPECT_EQ(svg.find(">batch-size</text>"), std::string::npos) << "three names, no colour bar";
}

TEST_F(SweepFigureTest, ColouringByAParamThatIsNotThereOrNotANumberSaysWhat) {
  FigureSpec spec;
  spec.metric = "gpu.utilization.gpu_ratio";
  spec.runs = Sweep({"16", "32"});
  spec.color_by = "lr";
  Result<Figure> f = CollectFigure(*store_, *reader_, spec);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("its runs have: batch-size"), std::string::npos)
      << f.status().message();
  std::vector<std::string> odd = Sweep({"large"});
  spec.runs.push_back(odd[0]);
  spec.color_by = "batch-size";
  f = CollectFigure(*store_, *reader_, spec);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("batch-size=large, not a number"), std::string::npos)
      << f.status().message();
}

TEST_F(FigureTest, AFigureIsSetInTheFontAskedForAndAFontNotInstalledIsNamed) {
  FigureSpec spec;
  spec.metric = "gpu.utilization.gpu_ratio";
  spec.runs = {ids_[0]};
  spec.font = "DejaVu Serif";
  std::string pdf = Draw(spec, FigureFormat::kPdf, "serif.pdf");
  std::string fonts = Shell("pdffonts " + pdf);
  EXPECT_NE(fonts.find("DejaVuSerif"), std::string::npos) << fonts;
  EXPECT_EQ(fonts.find("DejaVuSans"), std::string::npos) << fonts;
  std::string svg;
  ASSERT_TRUE(ReadWholeFile(Draw(spec, FigureFormat::kSvg, "serif.svg"), &svg, nullptr));
  EXPECT_NE(svg.find("font-family=\"DejaVu Serif, Times, serif\""), std::string::npos);
  spec.font = "No Such Family";
  Result<Figure> f = CollectFigure(*store_, *reader_, spec);
  ASSERT_TRUE(f.ok());
  Result<std::string> drawn = RenderFigure(*f, spec, FigureFormat::kPdf);
  ASSERT_FALSE(drawn.ok());
  EXPECT_NE(drawn.status().message().find("not installed here; installed: "), std::string::npos);
  EXPECT_NE(drawn.status().message().find("DejaVu Serif"), std::string::npos) << drawn.status().message();
}

}  // namespace
}  // namespace tb
