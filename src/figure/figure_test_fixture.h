// The fixture of the figure tests: a store of three runs of experiment "paper" (GPU
// utilization, temperature and memory every second for ten minutes, a sparse loss), a
// reader, and Draw, which collects and renders a figure to a file.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "figure/figure.h"
#include "figure/render.h"
#include "query/series_reader.h"
#include "store/series_writer.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {

constexpr int64_t kStart = 1763777000000;

inline std::string Shell(const std::string& command) {
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

class FigureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<Store>> opened = Store::Open((dir_.path() / "t.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    store_ = std::move(*opened);
    ASSERT_TRUE(store_->EnsureExperiment("paper").ok());
    for (int i = 0; i < 3; ++i) {
      RunRecord r;
      r.id = NewRunId();
      r.experiment = "paper";
      r.workload = i < 2 ? "pair" : "alone";
      r.name = "train.py " + std::to_string(i);
      r.start_ms = kStart;
      r.params = {{"batch-size", i == 0 ? "32" : "64"}, {"seed", "1"}};
      ASSERT_TRUE(store_->CreateRun(r).ok());
      SeriesWriter w(*store_, r.id);
      for (int s = 0; s <= 600; ++s) {
        int64_t t = kStart + s * 1000;
        w.Append("gpu.utilization.gpu_ratio", "gpu=0", {t, 0.5 + 0.1 * i + 0.05 * std::sin(s / 30.0)});
        w.Append("gpu.temperature.gpu_celsius", "gpu=0", {t, 60.0 + i});
        w.Append("gpu.memory.used_bytes", "gpu=0", {t, 3.0 * (1 << 30)});
        // A loss logged now and then, at other moments by each run.
        if (s % 50 == i * 10) w.Append("train.loss", "", {t, 2.0 - s / 400.0 + i * 0.1, s});
      }
      ASSERT_TRUE(w.Close().ok());
      ASSERT_TRUE(store_->FinishRun(r.id, kStart + 600000, kFinished, 0, std::nullopt, "").ok());
      ids_.push_back(r.id);
    }
    reader_ = std::make_unique<SeriesReader>(*store_);
  }

  // A run of experiment "paper" with one series: `points` values of `metric` `every_ms`
  // apart from kStart, numbered as steps when `steps`; its id.
  std::string AddRun(const std::string& name, const std::string& workload, const std::string& metric,
                     const std::string& labels, int points, int64_t every_ms, bool steps = false) {
    RunRecord r;
    r.id = NewRunId();
    r.experiment = "paper";
    r.workload = workload;
    r.name = name;
    r.start_ms = kStart;
    EXPECT_TRUE(store_->CreateRun(r).ok());
    SeriesWriter w(*store_, r.id);
    for (int i = 0; i < points; ++i)
      w.Append(metric, labels, {kStart + i * every_ms, 0.5, steps ? i : kNoStep});
    EXPECT_TRUE(w.Close().ok());
    return r.id;
  }

  std::string Draw(const FigureSpec& spec, FigureFormat format, const std::string& name) {
    Result<Figure> f = CollectFigure(*store_, *reader_, spec);
    EXPECT_TRUE(f.ok()) << f.status().message();
    if (!f.ok()) return "";
    Result<std::string> bytes = RenderFigure(*f, spec, format);
    EXPECT_TRUE(bytes.ok()) << bytes.status().message();
    std::string path = (dir_.path() / name).string();
    std::ofstream(path, std::ios::binary) << *bytes;
    return path;
  }

  ScratchDirectory dir_{"tb-figure"};
  std::unique_ptr<Store> store_;
  std::unique_ptr<SeriesReader> reader_;
  std::vector<std::string> ids_;
};

}  // namespace tb
