#include "analyze/phases.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "analyze/report.h"
#include "base/read_file.h"
#include "store/series_writer.h"
#include "tests/helpers/counting_store.h"
#include "tests/helpers/recorded_trace.h"
#include "tests/helpers/scratch_directory.h"
#include "tests/helpers/scratch_run.h"

namespace tb {
namespace {

constexpr int64_t kStart = 1763777000000;

const Phase* Find(const RunAnalysis& a, const std::string& kind, int nth = 0) {
  for (const Phase& p : a.phases) {
    if (p.kind == kind && nth-- == 0) return &p;
  }
  return nullptr;
}

double Seconds(int64_t ms) { return static_cast<double>(ms - kStart) / 1000; }

// Ten minutes at 1 Hz with planted features: a 40 s warm-up ramp, the GPU idle from 200 s
// to 230 s, a stall from 350 s to 380 s (GPU activity down while the CPU saturates),
// memory climbing from 450 s to 550 s, an evaluation phase 500-520 s, epochs every 100 s.
RunSamples Planted() {
  RunSamples run;
  run.start_ms = kStart;
  run.end_ms = kStart + 600000;
  std::vector<Point> gpu, cpu, rss, tput, power;
  for (int i = 0; i < 600; ++i) {
    int64_t t = kStart + i * 1000;
    double noise = 0.01 * std::sin(i * 1.7);
    double util = i < 40 ? 0.8 * i / 40 : 0.8 + noise;
    double load = 1.0 + noise;
    if (i >= 200 && i < 230) util = 0;
    if (i >= 350 && i < 380) {
      util = 0.3;
      load = 2.0;
    }
    double mem = 2e9 + (i >= 450 && i < 550 ? (i - 450) * 1e7 : i >= 550 ? 1e9 : 0);
    gpu.push_back({t, util, kNoStep});
    cpu.push_back({t, load, kNoStep});
    rss.push_back({t, mem, kNoStep});
    tput.push_back({t, util > 0.5 ? 1000.0 : util * 1000, kNoStep});
    power.push_back({t, 100 + 200 * util, kNoStep});
  }
  run.series["gpu.utilization.gpu_ratio"] = {{"gpu=0", gpu}};
  run.series["proc.cpu.utilization_ratio"] = {{"", cpu}};
  run.series["proc.memory.rss_bytes"] = {{"", rss}};
  run.series["train.throughput_samples_per_second"] = {{"", tput}};
  // Two listeners report power: one of them counts.
  run.series["gpu.power.draw_watts"] = {{"gpu=0", power}, {"gpu=0,listener=smi", power}};
  for (int e = 0; e < 6; ++e)
    run.events.push_back({"r", kStart + e * 100000, "epoch", "epoch " + std::to_string(e)});
  run.events.push_back({"r", kStart + 500000, "phase.start", "eval"});
  run.events.push_back({"r", kStart + 520000, "phase.end", "eval"});
  return run;
}

TEST(Phases, TheSteadyStateSpreadIsItsSecondsMedianAnd95thPercentile) {
  // Power is 100 + 200 x utilization, whose steady 0.8 wanders by 0.01 sin(1.7 i): half the
  // steady seconds lie below 260 W and 95% below 260 + 2 sin(0.45 pi) = 261.98 W.
  RunAnalysis a = AnalyzeRun(Planted());
  ASSERT_EQ(a.steady_spread.count("gpu.power.draw_watts"), 1u);
  RunAnalysis::Spread power = a.steady_spread["gpu.power.draw_watts"];
  EXPECT_NEAR(power.p50, 260, 0.3);
  EXPECT_NEAR(power.p95, 261.98, 0.1);
  EXPECT_NEAR(a.steady["gpu.power.draw_watts"], 260, 0.3);
  // The utilization's spread is the same one, in its own unit.
  EXPECT_NEAR(a.steady_spread["gpu.utilization.gpu_ratio"].p95, 0.8099, 0.0005);
}

TEST(Phases, PlantedPhasesAreFoundWithTheirBoundaries) {
  RunAnalysis a = AnalyzeRun(Planted());
  EXPECT_EQ(a.activity, "gpu.utilization.gpu_ratio");
  EXPECT_NEAR(a.steady_level, 0.8, 0.02);
  const Phase* warm = Find(a, "warm-up");
  ASSERT_NE(warm, nullptr);
  EXPECT_NEAR(Seconds(warm->end_ms), 36, 5);  // within the band (10% of 0.8) from about 36 s
  const Phase* idle = Find(a, "idle");
  ASSERT_NE(idle, nullptr);
  EXPECT_NEAR(Seconds(idle->start_ms), 200, 2);
  EXPECT_NEAR(Seconds(idle->end_ms), 230, 2);
  const Phase* stall = Find(a, "stall");
  ASSERT_NE(stall, nullptr);
  EXPECT_NEAR(Seconds(stall->start_ms), 350, 2);
  EXPECT_NEAR(Seconds(stall->end_ms), 380, 2);
  // Said for people: the metric's name and levels in its unit, not its key and a bare ratio.
  EXPECT_NE(stall->detail.find("while the run's CPU is above"), std::string::npos) << stall->detail;
  EXPECT_EQ(stall->detail.find("proc.cpu.utilization_ratio"), std::string::npos) << stall->detail;
  EXPECT_NE(Find(a, "warm-up")->detail.find(" %"), std::string::npos) << Find(a, "warm-up")->detail;
  const Phase* climb = Find(a, "memory-climb");
  ASSERT_NE(climb, nullptr);
  EXPECT_GE(Seconds(climb->start_ms), 440);
  EXPECT_LE(Seconds(climb->end_ms), 560);
  const Phase* eval = Find(a, "eval");
  ASSERT_NE(eval, nullptr);
  EXPECT_EQ(Seconds(eval->start_ms), 500);
  EXPECT_EQ(Seconds(eval->end_ms), 520);
  EXPECT_EQ(Find(a, "dip"), nullptr) << AnalysisJson(a);
  // The steady state leaves all of them out: GPU utilization at its plateau, not dragged
  // down by the idle gap and the stall.
  EXPECT_NEAR(a.steady.at("gpu.utilization.gpu_ratio"), 0.8, 0.005);
  EXPECT_NEAR(a.steady.at("proc.cpu.utilization_ratio"), 1.0, 0.01);
  EXPECT_NEAR(*a.throughput, 1000, 1);
  EXPECT_EQ(*a.epoch_seconds, 100);
  // Energy per sample against a direct computation: power integrated (one listener) over
  // samples integrated over the training, from the first logged throughput to the last
  // (each second's figure holds until the next).
  double joules = 0, samples = 0;
  // One planted run, kept while its series are read (a temporary's members would dangle).
  auto planted = Planted();
  for (const Point& p : planted.series["gpu.power.draw_watts"][0].second) joules += p.value;
  const std::vector<Point>& tput = planted.series["train.throughput_samples_per_second"][0].second;
  for (size_t i = 0; i + 1 < tput.size(); ++i) samples += tput[i].value;
  EXPECT_NEAR(*a.energy_joules, joules, 1e-6);
  EXPECT_NEAR(*a.energy_per_sample_joules, joules / samples, 1e-9);
  EXPECT_TRUE(a.caveats.empty());
}

TEST(Phases, ShortOrSimulatedRunsSaySo) {
  RunSamples run = Planted();
  run.end_ms = kStart + 20000;
  run.simulated_gpu = true;
  RunAnalysis a = AnalyzeRun(run);
  ASSERT_EQ(a.caveats.size(), 2u);
  EXPECT_NE(a.caveats[0].find("of samples only"), std::string::npos);
  EXPECT_NE(a.caveats[1].find("simulated GPU"), std::string::npos);
}

// A run sampled sparsely (as radT's imported runs can be: a minute long, GPU utilization
// read once near its start) has a steady level from what it has, no made-up departures, and
// an analysis that reads back as made.
TEST(Phases, ASparselySampledRunHasALevelAndReadsBack) {
  RunSamples run;
  run.start_ms = kStart;
  run.end_ms = kStart + 60000;
  run.series["gpu.utilization.gpu_ratio"] = {
      {"gpu=0", {{kStart + 1000, 0.95, kNoStep}, {kStart + 3000, 0.93, kNoStep}}}};
  RunAnalysis a = AnalyzeRun(run);
  EXPECT_TRUE(a.steady_level >= 0.93 && a.steady_level <= 0.95) << a.steady_level;
  EXPECT_EQ(Find(a, "dip"), nullptr) << "its own samples are no departure from its level";
  std::string json = AnalysisJson(a);
  ASSERT_TRUE(AnalysisFromJson(json).ok()) << json;
  EXPECT_EQ(AnalysisJson(AnalysisFromJson(json).value()), json);
  // Nothing sampled at all: no level (null in JSON), read back all the same.
  RunSamples empty = run;
  empty.series.clear();
  std::string none = AnalysisJson(AnalyzeRun(empty));
  EXPECT_TRUE(AnalysisFromJson(none).ok()) << none;
}

// A run in the store is analysed from its chunks and journal as the same samples held in
// memory are: sealed chunks, a provisional one and the newest points only in the journal,
// two listeners of one metric, and GPU energy counters (their first and last points).
TEST(Phases, AStoredRunReadChunkByChunkGivesTheSameAnalysis) {
  RunSamples planted = Planted();
  // Two GPUs' energy counters, and a second GPU's utilization.
  std::vector<Point> joules0, joules1, util1;
  for (int i = 0; i < 600; ++i) {
    int64_t t = kStart + i * 1000;
    joules0.push_back({t, 5000 + 250.0 * i, kNoStep});
    joules1.push_back({t, 9000 + 120.5 * i, kNoStep});
    double util0 = planted.series["gpu.utilization.gpu_ratio"][0].second[static_cast<size_t>(i)].value;
    util1.push_back({t, i % 7 == 0 ? std::nan("") : 0.9 * util0, kNoStep});
  }
  planted.series["gpu.energy.consumed_joules"] = {{"gpu=0", joules0}, {"gpu=1", joules1}};
  planted.series["gpu.utilization.gpu_ratio"].emplace_back("gpu=1", util1);
  ScratchRun scratch("tb-phases", kStart);
  std::unique_ptr<Store>& store = scratch.store;
  RunRecord& run = scratch.run;
  {
    // 10 points a flush; sealed chunks of 64, a checkpoint every 7 flushes.
    SeriesWriter writer(*store, run.id, /*seal_points=*/64, /*checkpoint_flushes=*/7);
    for (int i = 0; i < 600; ++i) {
      for (const auto& [metric, series] : planted.series) {
        for (const auto& [labels, points] : series) writer.Append(metric, labels, points[i]);
      }
      if (i % 10 == 9) {
        ASSERT_TRUE(writer.Flush().ok());
      }
    }
    ASSERT_TRUE(writer.Flush().ok());
    int64_t util = store->EnsureSeries(run.id, "gpu.utilization.gpu_ratio", "gpu=0").value();
    ASSERT_GT(store->ReadChunks({.series = {util}, .part = ChunkPart::kInfo})->size(), 5u);
    ASSERT_FALSE(store->ReadJournal(util)->empty()) << "the newest points only in the journal";
    for (const EventRecord& e : planted.events)
      ASSERT_TRUE(store->AddEvent({run.id, e.time_ms, e.kind, e.label}).ok());
    // Running: the run ends at its newest sample.
    RunSamples running = planted;
    running.end_ms = kStart + 599 * 1000 + 1;
    RunAnalysis expected = AnalyzeRun(running);
    ASSERT_TRUE(expected.energy_joules.has_value());
    EXPECT_NEAR(*expected.energy_joules, 599 * (250 + 120.5), 1e-6);
    RunAnalysis running_stored = AnalyzeStoredRun(*store, run).value();
    // What it rests on: the points in chunks (the journal's not yet), the events.
    ASSERT_TRUE(running_stored.extent.has_value());
    EXPECT_GT(running_stored.extent->points, 0);
    EXPECT_LT(running_stored.extent->points, 600 * 9);
    EXPECT_EQ(running_stored.extent->events, static_cast<int64_t>(planted.events.size()));
    running_stored.extent.reset();
    EXPECT_EQ(AnalysisJson(running_stored), AnalysisJson(expected));
    ASSERT_TRUE(writer.Close().ok());
  }
  // Finished (at the planted end, past the last sample).
  ASSERT_TRUE(store->FinishRun(run.id, planted.end_ms, kFinished, 0, std::nullopt, "").ok());
  RunRecord finished = store->FindRun(run.id).value();
  RunAnalysis stored = AnalyzeStoredRun(*store, finished).value();
  ASSERT_TRUE(stored.extent.has_value());
  // Every point of the 9 analysed series (2 power, 2 utilization, cpu, rss, throughput and
  // 2 energy counters).
  EXPECT_EQ(stored.extent->points, 600 * 9);
  stored.extent.reset();
  EXPECT_EQ(AnalysisJson(stored), AnalysisJson(AnalyzeRun(planted)));
  EXPECT_NE(std::find_if(stored.phases.begin(), stored.phases.end(),
                         [](const Phase& p) { return p.kind == "idle"; }),
            stored.phases.end());
}

// The recorded DCGM trace of testdata/: stable, plausible phases.
TEST(Phases, TheRecordedTraceGivesStablePlausiblePhases) {
  nlohmann::json trace = ReadRecordedTrace(kRecordedTrace);
  RunSamples run;
  std::vector<int64_t> times;
  for (const auto& t : trace["Timestamp"]) times.push_back(t.get<int64_t>());
  run.start_ms = times.front();
  run.end_ms = times.back() + 1000;
  // radT's columns (the trace spells SM Active "SN Actuie"; utilization is in percent).
  const std::pair<const char*, const char*> columns[] = {
      {"DCGMI - GPU Utilization", "gpu.utilization.gpu_ratio"},
      {"DCGMI - SN Actuie", "gpu.sm.active_ratio"},
      {"DCGMI - Power Usage", "gpu.power.draw_watts"}};
  for (const auto& [column, metric] : columns) {
    std::vector<Point> points;
    double scale = std::string(column).find("Utilization") != std::string::npos ? 0.01 : 1;
    for (size_t i = 0; i < times.size(); ++i) {
      if (trace[column][i].is_number())
        points.push_back({times[i], trace[column][i].get<double>() * scale, kNoStep});
    }
    run.series[metric].emplace_back("gpu=0", points);
  }
  RunAnalysis a = AnalyzeRun(run);
  ASSERT_FALSE(a.activity.empty());
  EXPECT_GE(a.steady_level, 0);
  // Most of a training run is its steady state; phases are in order and inside the run.
  double length = static_cast<double>(run.end_ms - run.start_ms) / 1000;
  EXPECT_GT(a.steady_samples, length * 0.5) << AnalysisJson(a);
  for (const Phase& p : a.phases) {
    EXPECT_LE(run.start_ms, p.start_ms);
    EXPECT_LT(p.start_ms, p.end_ms);
    EXPECT_LE(p.end_ms, run.end_ms);
  }
  // The same samples give the same phases.
  EXPECT_EQ(AnalysisJson(AnalyzeRun(run)), AnalysisJson(a));
}

// `trainbench show` of a finished run prints the analysis kept with it, read back from its
// JSON, without reading the run's points; one the run has outgrown is made again.
TEST(Phases, AFinishedRunsKeptAnalysisIsReadBackWithoutItsPoints) {
  ScratchRun scratch("tb-phases-kept", kStart);
  std::unique_ptr<Store>& store = scratch.store;
  RunRecord& run = scratch.run;
  RunSamples planted = Planted();
  {
    SeriesWriter writer(*store, run.id);
    for (const auto& [metric, series] : planted.series) {
      for (const auto& [labels, points] : series) {
        for (const Point& p : points) writer.Append(metric, labels, p);
      }
    }
    ASSERT_TRUE(writer.Close().ok());
  }
  for (const EventRecord& e : planted.events)
    ASSERT_TRUE(store->AddEvent({run.id, e.time_ms, e.kind, e.label}).ok());
  ASSERT_TRUE(store->FinishRun(run.id, planted.end_ms, kFinished, 0, std::nullopt, "").ok());
  RunRecord finished = store->FindRun(run.id).value();
  RunAnalysis made = AnalyzeStoredRun(*store, finished).value();
  ASSERT_TRUE(made.throughput.has_value());
  ASSERT_FALSE(made.steady.empty());
  std::string json = AnalysisJson(made);
  EXPECT_EQ(AnalysisJson(AnalysisFromJson(json).value()), json) << "read back as made";

  nlohmann::json kept = nlohmann::json::parse(json);
  kept["phases"][0]["detail"] = "as kept";
  ASSERT_TRUE(KeepAnalysisJson(*store, finished, kept.dump()).ok());
  CountingStore reads(*store);
  RunAnalysis shown = KeptOrStoredAnalysis(reads, finished).value();
  EXPECT_EQ(shown.phases[0].detail, "as kept");
  EXPECT_EQ(shown.steady, made.steady);
  EXPECT_EQ(shown.throughput, made.throughput);
  EXPECT_EQ(reads.data_queries + reads.whole_series_reads, 0) << "no chunk read";
  // The experiment's report too.
  CountingStore report_reads(*store);
  ExperimentReport report = BuildReport(report_reads, "e").value();
  ASSERT_EQ(report.workloads.size(), 1u);
  ASSERT_EQ(report.workloads[0].analyses.size(), 1u);
  EXPECT_EQ(report.workloads[0].analyses[0].phases[0].detail, "as kept");
  EXPECT_EQ(report_reads.data_queries + report_reads.whole_series_reads, 0) << "no chunk read";

  // Points logged after the run ended: the kept copy no longer rests on what the run holds.
  {
    SeriesWriter later(*store, run.id);
    later.Append("gpu.utilization.gpu_ratio", "gpu=0", {planted.end_ms + 1000, 0.5, kNoStep});
    ASSERT_TRUE(later.Close().ok());
  }
  EXPECT_NE(KeptOrStoredAnalysis(*store, finished)->phases[0].detail, "as kept");

  EXPECT_EQ(AnalysisFromJson("{}").status().code(), Status::Code::kCorrupt);
  kept["steady"] = "high";
  EXPECT_EQ(AnalysisFromJson(kept.dump()).status().code(), Status::Code::kCorrupt);
  EXPECT_EQ(AnalysisFromJson("not json").status().code(), Status::Code::kCorrupt);
}

// As on a fast GPU: 12 s of start-up (the GPU idle, memory climbing while PyTorch and CUDA
// load), 2 s of training logged step by step, a second after it. The steady state comes
// from the two seconds of steps, and the samples are the ones the steps trained.
TEST(Phases, TheSteadyStateLiesInsideTheStepsTheScriptLogged) {
  RunSamples run;
  run.start_ms = kStart;
  run.end_ms = kStart + 15000;
  std::vector<Point> gpu, rss, tput, compute, wait;
  for (int i = 0; i < 150; ++i) {  // 10 Hz
    int64_t t = kStart + i * 100;
    bool training = t >= kStart + 12000 && t < kStart + 14000;
    gpu.push_back({t, training ? 0.9 : 0.0, kNoStep});
    rss.push_back({t, 1e8 + (t < kStart + 13000 ? i * 1e7 : 1.3e9), kNoStep});
  }
  double trained = 0;
  int64_t step = 0;
  for (int64_t t = kStart + 12004; t < kStart + 14000; t += 4) {  // a step every 4 ms
    double samples = ++step % 23 == 0 ? 29 : 64;                  // a short last batch
    tput.push_back({t, samples / 0.004, step});
    compute.push_back({t, 0.0035, step});
    wait.push_back({t, 0.0005, step});
    trained += samples;
  }
  run.series["gpu.utilization.gpu_ratio"] = {{"gpu=0", gpu}};
  run.series["proc.memory.rss_bytes"] = {{"", rss}};
  run.series["train.throughput_samples_per_second"] = {{"", tput}};
  run.series["train.step.compute_seconds"] = {{"", compute}};
  run.series["train.step.data_wait_seconds"] = {{"", wait}};
  RunAnalysis a = AnalyzeRun(run);
  ASSERT_TRUE(a.training.has_value());
  EXPECT_EQ(a.training->source, "steps");
  EXPECT_EQ(a.training->start_ms, kStart + 12004);
  EXPECT_EQ(a.training->end_ms, tput.back().time_ms);
  ASSERT_TRUE(a.samples.has_value());
  EXPECT_NEAR(*a.samples, trained, 1e-6 * trained) << "the samples the steps trained";
  EXPECT_NEAR(a.steady.at("gpu.utilization.gpu_ratio"), 0.9, 1e-9) << "the GPU while it trained";
  ASSERT_TRUE(a.throughput.has_value());
  EXPECT_GT(*a.throughput, 15000);
  const Phase* startup = Find(a, "start-up");
  ASSERT_NE(startup, nullptr);
  EXPECT_EQ(startup->end_ms, kStart + 12004);
  const Phase* steady = Find(a, "steady");
  ASSERT_NE(steady, nullptr);
  EXPECT_GE(steady->start_ms, kStart + 12000);
  EXPECT_LE(steady->end_ms, kStart + 14000);
  EXPECT_EQ(Find(a, "memory-climb"), nullptr) << "the start-up's climb is not the training's";

  // Without the script's steps, the GPU's activity marks the training.
  run.series.erase("train.throughput_samples_per_second");
  run.series.erase("train.step.compute_seconds");
  run.series.erase("train.step.data_wait_seconds");
  RunAnalysis by_gpu = AnalyzeRun(run);
  ASSERT_TRUE(by_gpu.training.has_value());
  EXPECT_EQ(by_gpu.training->source, "gpu");
  EXPECT_EQ(by_gpu.training->start_ms, kStart + 12000);
  EXPECT_EQ(by_gpu.training->end_ms, kStart + 14000);
  EXPECT_NEAR(by_gpu.steady.at("gpu.utilization.gpu_ratio"), 0.9, 1e-9);
}

TEST(TrainingWindow, OverlapIsThePartOfARunsTrainingThatOthersShared) {
  TrainingWindow a{0, 1000, "steps"}, b{500, 3000, "steps"}, c{2000, 2500, "steps"}, d{5000, 6000, "steps"};
  EXPECT_DOUBLE_EQ(OverlapFraction(a, {b}), 0.5);
  EXPECT_DOUBLE_EQ(OverlapFraction(b, {a, c}), 1000.0 / 2500);  // 500-1000 and 2000-2500
  EXPECT_DOUBLE_EQ(OverlapFraction(c, {b, b}), 1.0) << "the same time counted once";
  EXPECT_DOUBLE_EQ(OverlapFraction(d, {a, b, c}), 0.0);
}

// The digits experiment on a real H200 (testdata/h200-digits.db.zst, see testdata/README.md):
// two MPS runs whose processes overlapped for 14 s while their one second of training each
// came one after the other, and a run alone that trained 1,437 images x 10 epochs.
TEST(Report, OnTheH200TheMpsRunsTrainedApartAndTheSamplesAreTheScripts) {
  ScratchDirectory dir("h200");
  std::string db, error;
  ASSERT_TRUE(ReadWholeFile(TRAINBENCH_TESTDATA "/h200-digits.db.zst", &db, &error)) << error;
  std::ofstream((dir.path() / "h200.db").string(), std::ios::binary) << db;
  std::unique_ptr<Store> store = Store::Open((dir.path() / "h200.db").string()).value();
  ExperimentReport report = BuildReport(*store, "digits").value();
  ASSERT_EQ(report.workloads.size(), 2u);
  const WorkloadReport& alone = report.workloads[0];
  const WorkloadReport& mps = report.workloads[1];
  ASSERT_EQ(alone.workload, "gpu-alone");
  ASSERT_EQ(mps.workload, "gpu-mps");
  EXPECT_FALSE(mps.together);
  EXPECT_EQ(mps.collocation, "not together");
  EXPECT_FALSE(mps.speedup.has_value()) << "no speed-up for runs that trained one after the other";
  ASSERT_EQ(mps.overlap.size(), 2u);
  for (double o : mps.overlap) EXPECT_LT(o, kTogetherFraction);
  const RunAnalysis& a = alone.analyses[0];
  ASSERT_TRUE(a.samples.has_value());
  EXPECT_NEAR(*a.samples, 14370, 1) << "1,437 images x 10 epochs, as the script logged them";
  ASSERT_TRUE(a.training.has_value());
  EXPECT_EQ(a.training->source, "steps");
  EXPECT_LT(a.training->length_ms(), 3000) << "the second of training, not the 15 s process";
  // The one utilization sample inside the second of training read 5%; before, the steady
  // state was the second after training (1%).
  EXPECT_NEAR(a.steady.at("gpu.utilization.gpu_ratio"), 0.05, 1e-9) << "the GPU while it trained, not after";
  const Phase* steady = nullptr;
  for (const Phase& p : a.phases)
    if (p.kind == "steady") steady = &p;
  ASSERT_NE(steady, nullptr);
  EXPECT_GE(steady->start_ms, a.training->start_ms - 1000);
  EXPECT_LE(steady->end_ms, a.training->end_ms + 1000);
  std::string table = ReportTable(report);
  EXPECT_NE(table.find("did not train at the same time"), std::string::npos) << table;
}

}  // namespace
}  // namespace tb
