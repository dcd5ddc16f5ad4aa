#include "query/export.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "store/series_writer.h"
#include "tests/helpers/scratch_run.h"

namespace tb {
namespace {

constexpr int64_t kStart = 1763777000000;

// A run with a script's loss (steps, one point without, a NaN) and a GPU's power (no steps).
struct ExportFixture {
  ScratchRun scratch{"tb-export", kStart};
  ExportFixture() {
    SeriesWriter w(*scratch.store, scratch.run.id);
    for (int i = 0; i < 1000; ++i) {
      w.Append("train.loss", "",
               {kStart + i * 100, i == 7 ? std::nan("") : 2.0 / (i + 1), i == 3 ? kNoStep : i * 10});
      w.Append("gpu.power.draw_watts", "gpu=0", {kStart + i * 1000, 200.0 + i});
    }
    if (!w.Close().ok()) std::abort();
  }
  std::string Export(ExportFormat format, const std::string& metric = "") {
    std::string path = (scratch.dir.path() / "out").string();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    EXPECT_TRUE(ExportRuns(*scratch.store, {scratch.run.id}, metric, format, f).ok());
    std::fclose(f);
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
};

// The columnar answer holds every point bit for bit, in arrays 8-byte aligned from its start
// (what numpy.frombuffer maps without copying), each series' header saying what follows.
TEST(ExportTest, ColumnarHoldsEveryPointInAlignedTypedArrays) {
  ExportFixture fx;
  std::string out = fx.Export(ExportFormat::kColumnar);
  ASSERT_EQ(out.substr(0, kColumnarMagic.size()), kColumnarMagic);
  size_t at = kColumnarMagic.size();
  std::map<std::string, nlohmann::json> headers;
  while (at < out.size()) {
    uint32_t length = 0;
    std::memcpy(&length, out.data() + at, 4);
    nlohmann::json head = nlohmann::json::parse(out.substr(at + 4, length));
    at += 4 + length;
    at += (8 - at % 8) % 8;
    ASSERT_EQ(at % 8, 0u);
    size_t n = head["count"];
    ASSERT_EQ(n, 1000u);
    std::vector<int64_t> times(n), steps(n);
    std::vector<double> values(n);
    std::memcpy(times.data(), out.data() + at, 8 * n);
    std::memcpy(values.data(), out.data() + at + 8 * n, 8 * n);
    at += 16 * n;
    if (head["steps"]) {
      std::memcpy(steps.data(), out.data() + at, 8 * n);
      at += 8 * n;
    }
    std::string metric = head["metric"];
    EXPECT_EQ(head["run_id"], fx.scratch.run.id);
    EXPECT_EQ(head["start_ms"], kStart);
    headers[metric] = head;
    if (metric == "train.loss") {
      EXPECT_EQ(head["labels"], "");
      EXPECT_EQ(times[999], kStart + 99900);
      EXPECT_DOUBLE_EQ(values[999], 2.0 / 1000);
      EXPECT_TRUE(std::isnan(values[7]));
      EXPECT_EQ(steps[999], 9990);
      EXPECT_EQ(steps[3], kNoStep) << "a point without a step (a script may log -1)";
    } else {
      EXPECT_EQ(head["labels"], "gpu=0");
      EXPECT_EQ(head["unit"], "W");
      EXPECT_FALSE(head["steps"]) << "no step array for samples in time";
      EXPECT_DOUBLE_EQ(values[10], 210.0);
    }
  }
  EXPECT_EQ(at, out.size());
  EXPECT_EQ(headers.size(), 2u);
}

// JSON lines: a point a line, each a whole JSON object; no step is null, NaN a string.
TEST(ExportTest, JsonLinesGiveAPointALine) {
  ExportFixture fx;
  std::istringstream lines(fx.Export(ExportFormat::kJsonLines, "train.loss"));
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    nlohmann::json p = nlohmann::json::parse(line);
    EXPECT_EQ(p["run_id"], fx.scratch.run.id);
    EXPECT_EQ(p["metric"], "train.loss");
    EXPECT_EQ(p["time_ms"], kStart + count * 100);
    if (count == 3) {
      EXPECT_TRUE(p["step"].is_null());
    } else if (count == 7) {
      EXPECT_EQ(p["value"], "NaN");
    } else if (count == 5) {
      EXPECT_DOUBLE_EQ(p["value"].get<double>(), 2.0 / 6);
    }
    ++count;
  }
  EXPECT_EQ(count, 1000);
  EXPECT_FALSE(ParseExportFormat("parquet").ok());
  EXPECT_NE(ParseExportFormat("parquet").status().message().find("jsonl"), std::string::npos);
}

}  // namespace
}  // namespace tb
