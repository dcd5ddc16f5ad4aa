// A run's host and GPU series reach MLflow's clients (its UI, radT's tools) under the names
// MLflow's system-metrics monitor gives them, in its units, from the best source.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "track/tracking_api_fixture.h"

namespace tb {
namespace {

TEST_F(TrackingApiTest, HostAndGpuSeriesAreMlflowsSystemMetricsInItsUnits) {
  std::string run_id = CreateRun();
  {
    SeriesWriter writer(*store_, run_id, /*seal_points=*/512, /*checkpoint_flushes=*/4);
    for (int i = 0; i < 5; ++i) {
      int64_t t = 1763777000000 + int64_t{1000} * i;
      writer.Append("gpu.utilization.gpu_ratio", "gpu=0", {t, 0.1 * i, 0});
      writer.Append("gpu.utilization.gpu_ratio", "gpu=0,listener=smi", {t, 0.9, 0});  // a later source
      writer.Append("gpu.memory.used_bytes", "gpu=1", {t, 2e9, 0});
      writer.Append("gpu.power.draw_watts", "gpu=0", {t, 100.0 + i, 0});
      writer.Append("host.cpu.utilization_ratio", "", {t, 0.25, 0});
      writer.Append("host.cpu.utilization_ratio", "cpu=3", {t, 1.0, 0});  // one core: not the host's
      writer.Append("host.memory.used_bytes", "", {t, 8e9, 0});
      writer.Append("train.loss", "", {t, 1.0, i});
    }
    ASSERT_TRUE(writer.Close().ok());
  }
  Answer one = Get("runs/get?run_id=" + run_id);
  ASSERT_EQ(one.status, 200) << one.body.dump();
  std::map<std::string, json> got;
  for (const json& m : one.body["run"]["data"]["metrics"]) got[m["key"].get<std::string>()] = m;
  std::vector<std::string> keys;
  for (const auto& [k, m] : got) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "loss", "system/Free - Mem Used GB", "system/SMI - GPU Util", "system/SMI - Mem Used",
                      "system/SMI - Power Draw", "system/cpu_utilization_percentage",
                      "system/gpu_0_power_usage_watts", "system/gpu_0_utilization_percentage",
                      "system/gpu_1_memory_usage_megabytes", "system/system_memory_usage_megabytes"}));
  // radT's names, in radT's units, for the run's first GPU (radT's `nvidia-smi -i`).
  EXPECT_DOUBLE_EQ(got["system/SMI - GPU Util"]["value"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(got["system/SMI - Power Draw"]["value"].get<double>(), 104.0);
  EXPECT_NEAR(got["system/SMI - Mem Used"]["value"].get<double>(), 2e9 / (1024.0 * 1024.0), 1e-6)
      << "GPU 1's: the only GPU with a memory series";
  EXPECT_NEAR(got["system/Free - Mem Used GB"]["value"].get<double>(), 8e9 / 1024e6, 1e-9);
  EXPECT_DOUBLE_EQ(got["system/gpu_0_utilization_percentage"]["value"].get<double>(), 40.0) << "NVML's, in %";
  EXPECT_EQ(got["system/gpu_0_utilization_percentage"]["step"], 4);
  EXPECT_EQ(got["system/gpu_0_utilization_percentage"]["timestamp"], 1763777004000);
  EXPECT_DOUBLE_EQ(got["system/gpu_1_memory_usage_megabytes"]["value"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(got["system/gpu_0_power_usage_watts"]["value"].get<double>(), 104.0);
  EXPECT_DOUBLE_EQ(got["system/cpu_utilization_percentage"]["value"].get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(got["system/system_memory_usage_megabytes"]["value"].get<double>(), 8000.0);

  // Their history, page by page, numbered as MLflow's monitor numbers its samples.
  json all =
      Get("metrics/get-history?run_id=" + run_id + "&metric_key=system/gpu_0_utilization_percentage").body;
  ASSERT_EQ(all["metrics"].size(), 5u) << all.dump();
  for (int i = 0; i < 5; ++i) {
    EXPECT_NEAR(all["metrics"][i]["value"].get<double>(), 10.0 * i, 1e-9);
    EXPECT_EQ(all["metrics"][i]["step"], i);
    EXPECT_EQ(all["metrics"][i]["key"], "system/gpu_0_utilization_percentage");
  }
  json page = Get("metrics/get-history?run_id=" + run_id +
                  "&metric_key=system/gpu_0_utilization_percentage&max_results=2&page_token=2")
                  .body;
  ASSERT_EQ(page["metrics"].size(), 2u);
  EXPECT_EQ(page["metrics"][0]["step"], 2);
  EXPECT_EQ(page["next_page_token"], "4");
  EXPECT_TRUE(Get("metrics/get-history?run_id=" + run_id + "&metric_key=system/gpu_7_utilization_percentage")
                  .body.value("metrics", json::array())
                  .empty());
  // A table of runs lists the script's metrics only.
  json searched = Post("runs/search", json{{"experiment_ids", {ExperimentOf(run_id)}}}).body;
  ASSERT_EQ(searched["runs"].size(), 1u);
  EXPECT_EQ(searched["runs"][0]["data"]["metrics"].size(), 1u);
}

}  // namespace
}  // namespace tb
