// runs?format=columns|columnar: the table of runs a notebook's store.runs() reads, checked
// against the points the runs hold and the phases the API gives for them.
#include <algorithm>
#include <cstring>

#include "serve/serve_api_fixture.h"
#include "tests/helpers/sorted_quantile.h"

namespace tb {
namespace {

class RunTableTest : public ServeApiTest {
 protected:
  void SetUp() override {
    ServeApiTest::SetUp();
    // Run A, finished: 120 s of GPU utilization at 1 Hz wandering around 0.8 (NVML), the
    // same GPU read by nvidia-smi at 0.5 (a source the table must not average in), a
    // param and a tag of the user's.
    SeriesWriter writer(*store_, run_.id);
    for (int i = 0; i < 120; ++i) {
      double v = 0.8 + 0.04 * std::sin(i * 1.3);
      nvml_.push_back(v);
      writer.Append("gpu.utilization.gpu_ratio", "gpu=0", {kStart + i * 1000, v, kNoStep});
      writer.Append("gpu.utilization.gpu_ratio", "gpu=0,listener=smi", {kStart + i * 1000, 0.5, kNoStep});
    }
    ASSERT_TRUE(writer.Close().ok());
    ASSERT_TRUE(store_->LogParams(run_.id, {{"lr", "0.1"}}).ok());
    ASSERT_TRUE(store_->SetTags(run_.id, {{"note", "baseline"}, {"trainbench.letter", "0A-"}}).ok());
    ASSERT_TRUE(store_->FinishRun(run_.id, kStart + 120000, kFinished, 0, std::nullopt, "").ok());
    // Run B, still running, of workload "bs32".
    other_ = SecondRun(5000);
  }

  json Table(std::multimap<std::string, std::string> query) {
    query.emplace("format", "columns");
    ApiResponse r = Call("runs", query);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body);
  }

  std::vector<double> nvml_;
  RunRecord other_;
};

TEST_F(RunTableTest, EachRunIsARowOfItsFieldsItsMetricsFromOneSourceAndItsSteadyState) {
  json t = Table({{"experiment", "live"}});
  const json& c = t["columns"];
  ASSERT_EQ(t["count"], 2);
  EXPECT_EQ(c["id"], json({run_.id, other_.id}));
  EXPECT_EQ(c["status"], json({"FINISHED", "RUNNING"}));
  EXPECT_EQ(c["end"][0], static_cast<double>(kStart + 120000));
  EXPECT_TRUE(c["end"][1].is_null()) << "a running run has no end";
  EXPECT_EQ(c["duration"][0], 120.0);
  EXPECT_EQ(c["params.lr"], json({"0.1", nullptr}));
  EXPECT_EQ(c["tags.note"], json({"baseline", nullptr}));
  EXPECT_EQ(c["letter"][0], "0A-");
  EXPECT_FALSE(c.contains("tags.trainbench.letter")) << "trainbench's own records are fields, not tags";

  // The whole run's figures from NVML only: smi's 0.5 would pull the mean to 0.65.
  double sum = 0;
  for (double v : nvml_) sum += v;
  EXPECT_NEAR(c["gpu.utilization.gpu_ratio.mean"][0].get<double>(), sum / 120, 1e-12);
  EXPECT_EQ(c["gpu.utilization.gpu_ratio.max"][0], *std::max_element(nvml_.begin(), nvml_.end()));
  EXPECT_TRUE(c["gpu.utilization.gpu_ratio.mean"][1].is_null()) << "run B has no samples";
  EXPECT_EQ(t["units"]["gpu.utilization.gpu_ratio.mean"], "ratio");

  // The steady state's median and 95th percentile are those of the points inside the
  // steady phase the API gives for the run (at 1 Hz, a point a second).
  json phases = json::parse(Call("runs/" + run_.id + "/phases", {}).body)["phases"];
  auto steady =
      std::find_if(phases.begin(), phases.end(), [](const json& p) { return p["kind"] == "steady"; });
  ASSERT_NE(steady, phases.end()) << phases.dump();
  std::vector<double> inside;
  for (size_t i = 0; i < nvml_.size(); ++i) {
    int64_t t_ms = kStart + static_cast<int64_t>(i) * 1000;
    if (t_ms >= (*steady)["start_ms"].get<int64_t>() && t_ms < (*steady)["end_ms"].get<int64_t>())
      inside.push_back(nvml_[i]);
  }
  ASSERT_GT(inside.size(), 60u);
  EXPECT_NEAR(c["gpu.utilization.gpu_ratio.steady_p50"][0].get<double>(), SortedQuantile(inside, 0.5), 1e-12);
  EXPECT_NEAR(c["gpu.utilization.gpu_ratio.steady_p95"][0].get<double>(), SortedQuantile(inside, 0.95),
              1e-12);
  EXPECT_EQ(c["steady_seconds"][0], static_cast<double>(inside.size()));
}

TEST_F(RunTableTest, WorkloadsMatchAPatternAndNoRunsIsATableOfNoRows) {
  RunRecord c = run_;
  c.id = NewRunId();
  c.workload = "bs32";
  ASSERT_TRUE(store_->CreateRun(c).ok());
  EXPECT_EQ(Table({{"workload", "bs*"}})["columns"]["id"], json({c.id}));
  json none = Table({{"workload", "nothing*"}});
  EXPECT_EQ(none["count"], 0);
  EXPECT_TRUE(none["columns"].contains("id") && none["columns"].contains("start"));
  EXPECT_EQ(Table({{"workload", "[1]"}})["count"], 2);
  ApiResponse wrong = Call("runs", {{"format", "rows"}});
  EXPECT_EQ(wrong.status, 400);
  EXPECT_NE(wrong.body.find("runs, columns or columnar"), std::string::npos) << wrong.body;
}

TEST_F(RunTableTest, TheColumnarFormHoldsTheSameNumbersAsArrays) {
  json t = Table({});
  ApiResponse r = Call("runs", {{"format", "columnar"}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/octet-stream");
  const std::string& b = r.body;
  ASSERT_EQ(b.substr(0, 8), "TBRUNS1\n");
  uint32_t length = 0;
  std::memcpy(&length, b.data() + 8, 4);
  json head = json::parse(b.substr(12, length));
  size_t at = (12 + length + 7) / 8 * 8;
  size_t rows = head["count"].get<size_t>();
  ASSERT_EQ(rows, 2u);
  int numbers = 0;
  for (const std::string name : head["columns"]) {
    if (!head["units"].contains(name)) {
      EXPECT_EQ(head["text"][name], t["columns"][name]) << name;
      continue;
    }
    for (size_t i = 0; i < rows; ++i, at += 8) {
      double v;
      std::memcpy(&v, b.data() + at, 8);
      if (name == "duration" && i == 1) continue;  // run B's grows while it runs
      const json& want = t["columns"][name][i];
      if (want.is_null()) {
        EXPECT_TRUE(std::isnan(v)) << name;
      } else {
        EXPECT_EQ(v, want.get<double>()) << name;
      }
    }
    ++numbers;
  }
  EXPECT_EQ(at, b.size());
  EXPECT_GT(numbers, 5);
}

TEST_F(RunTableTest, AFinishedRunsAnalysisIsKeptSoTheNextTableReadsNoPoints) {
  Table({});  // run A had none kept: analysed from its points, and kept
  CountingStore reads(*store_);
  ServeApi api(reads);
  ApiResponse r = api.Handle({"GET", "/api/v1/runs", {{"format", "columns"}, {"status", "FINISHED"}}, ""});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["columns"]["id"], json({run_.id}));
  EXPECT_EQ(reads.data_queries + reads.whole_series_reads, 0) << "no chunk read";
  EXPECT_FALSE(json::parse(r.body)["columns"]["gpu.utilization.gpu_ratio.steady_p95"][0].is_null());
}

}  // namespace
}  // namespace tb
