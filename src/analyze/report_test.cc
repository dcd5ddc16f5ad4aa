// The experiment report: its CSV as a spreadsheet or pandas reads it back, and what it calls
// a workload's collocation.
#include "analyze/report.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store/run_tags.h"
#include "store/series_writer.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {
namespace {

// The fields of a CSV line (RFC 4180: quoted fields, doubled quotes), as pandas splits them.
std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// An experiment or workload named with a comma or a quote stays one field.
TEST(ReportCsv, NamesWithCommasAndQuotesStayInTheirColumn) {
  ExperimentReport r;
  r.experiment = "resnet \"wide\", bs sweep";
  WorkloadReport w;
  w.workload = "1,2";
  w.collocation = "mps";
  r.workloads.push_back(w);
  std::string csv = ReportCsv(r);
  std::string header = csv.substr(0, csv.find('\n'));
  std::string row = csv.substr(header.size() + 1);
  row = row.substr(0, row.find('\n'));
  std::vector<std::string> names = Fields(header), cells = Fields(row);
  ASSERT_EQ(cells.size(), names.size()) << csv;
  EXPECT_EQ(cells[0], r.experiment);
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "workload") {
      EXPECT_EQ(cells[i], "1,2");
    } else if (names[i] == "collocation") {
      EXPECT_EQ(cells[i], "mps");
    }
  }
}

// Runs of one workload on different GPUs share nothing: the report says so rather than
// calling them a naive collocation.
TEST(ReportCollocation, RunsOnSeparateGpusAreNotACollocation) {
  ScratchDirectory scratch("tb-report");
  std::unique_ptr<Store> store = Store::Open((scratch.path() / "r.db").string()).value();
  ASSERT_TRUE(store->EnsureExperiment("e").ok());
  auto add = [&](const std::string& workload, const std::string& devices, const std::string& socket = "") {
    RunRecord r;
    r.id = NewRunId();
    r.experiment = "e";
    r.workload = workload;
    r.devices = devices;
    r.start_ms = 1763777000000;
    r.tags = {{std::string(kCollocationTag), "-"}};
    if (!socket.empty()) r.tags.insert(r.tags.end(), {{kGpuSocketsTag, socket}, {kGpuPartitionTag, "CPX"}});
    ASSERT_TRUE(store->CreateRun(r).ok());
    ASSERT_TRUE(store->FinishRun(r.id, r.start_ms + 1000, kFinished, 0, std::nullopt, "").ok());
  };
  add("separate", "0");
  add("separate", "1+2");
  add("shared", "0");
  add("shared", "0+1");
  // An MI300X's CPX partitions 2 and 5 of socket 0 share its memory and power; partitions
  // of two sockets are separate GPUs.
  add("partitions", "2", "0");
  add("partitions", "5", "0");
  add("two sockets", "2", "0");
  add("two sockets", "9", "1");
  ExperimentReport report = BuildReport(*store, "e").value();
  std::map<std::string, std::string> collocation;
  for (const WorkloadReport& w : report.workloads) collocation[w.workload] = w.collocation;
  EXPECT_EQ(collocation["separate"], "separate GPUs");
  EXPECT_EQ(collocation["shared"], "naive");
  EXPECT_EQ(collocation["partitions"], "CPX partitions of one GPU");
  EXPECT_EQ(collocation["two sockets"], "separate GPUs");
}

// Repeats and retries: three finished attempts of each workload count, an interrupted one
// is left out and said; scripts that logged no steps are compared by their training time.
TEST(ReportRepeats, FinishedAttemptsAreRepeatsAndTimeGivesTheSpeedUp) {
  ScratchDirectory scratch("tb-report");
  std::unique_ptr<Store> store = Store::Open((scratch.path() / "r.db").string()).value();
  ASSERT_TRUE(store->EnsureExperiment("e").ok());
  int64_t t0 = 1763777000000;
  auto add = [&](const std::string& workload, const std::string& attempt, const std::string& letter,
                 int64_t start_s, int64_t seconds, const std::string& status) {
    RunRecord r;
    r.id = NewRunId();
    r.experiment = "e";
    r.workload = workload;
    r.command = "/usr/bin/python3 /data/fixed.py --n 5 --seed " + letter;
    r.devices = "0";
    r.start_ms = t0 + start_s * 1000;
    r.tags = {{std::string(kCollocationTag), "-"},
              {std::string(kLetterTag), letter},
              {std::string(kAttemptTag), attempt}};
    ASSERT_TRUE(store->CreateRun(r).ok());
    ASSERT_TRUE(store->FinishRun(r.id, r.start_ms + seconds * 1000, status, 0, std::nullopt, "").ok());
  };
  // Interleaved: alone, pair, alone, pair, ...; the second pair attempt was interrupted.
  const int64_t alone_s[] = {10, 11, 12};
  const int64_t pair_s[][2] = {{18, 19}, {20, 20}, {19, 21}};
  int64_t at = 0;
  for (int k = 0; k < 3; ++k) {
    add("alone", "a" + std::to_string(k), "0A", at, alone_s[k], kFinished);
    at += 100;
    if (k == 1) {
      add("pair", "interrupted", "0A", at, 5, kKilled);
      add("pair", "interrupted", "0B", at, 5, kKilled);
      at += 100;
    }
    add("pair", "p" + std::to_string(k), "0A", at, pair_s[k][0], kFinished);
    add("pair", "p" + std::to_string(k), "0B", at, pair_s[k][1], kFinished);
    at += 100;
  }
  ExperimentReport report = BuildReport(*store, "e").value();
  ASSERT_EQ(report.workloads.size(), 2u);
  const WorkloadReport& alone = report.workloads[0];
  const WorkloadReport& pair = report.workloads[1];
  EXPECT_EQ(alone.repeats(), 3);
  EXPECT_EQ(pair.repeats(), 3) << "the interrupted attempt is a retry, not a repeat";
  EXPECT_EQ(pair.runs.size(), 6u);
  bool said = false;
  for (const std::string& c : report.caveats)
    said |= c.find("2 runs of 1 earlier, interrupted attempt") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_EQ(pair.basis, "time");
  ASSERT_TRUE(pair.speedup);
  // The truth from the runs' own times: each repeat's pair did 1/t1 + 1/t2 runs a second,
  // one run alone 1/t (its mean over the repeats).
  std::vector<double> combined;
  for (const auto& p : pair_s) combined.push_back(1.0 / p[0] + 1.0 / p[1]);
  double alone_rate = (1.0 / 10 + 1.0 / 11 + 1.0 / 12) / 3;
  double mean_combined = (combined[0] + combined[1] + combined[2]) / 3;
  EXPECT_NEAR(pair.speedup->mean, mean_combined / alone_rate, 1e-9);
  EXPECT_EQ(pair.speedup->n, 3);
  EXPECT_LT(pair.speedup->low, pair.speedup->mean);
  EXPECT_NEAR(pair.run_seconds->mean, (18 + 19 + 20 + 20 + 19 + 21) / 6.0, 1e-9);
  EXPECT_NEAR(pair.alone_throughput->mean, 11, 1e-9) << "seconds per run alone";
  std::string table = ReportTable(report);
  EXPECT_NE(table.find("by the training time of the same command (the scripts logged no samples)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("n = 3"), std::string::npos) << table;
}

// A store analysed by an older trainbench (its energies split another way): the report says
// so and gives this version's figures from what the runs recorded, not the kept ones.
TEST(ReportRepeats, AnAnalysisKeptByAnOlderTrainbenchIsSaidAndRedone) {
  ScratchDirectory scratch("tb-report");
  std::unique_ptr<Store> store = Store::Open((scratch.path() / "r.db").string()).value();
  ASSERT_TRUE(store->EnsureExperiment("e").ok());
  RunRecord r;
  r.id = NewRunId();
  r.experiment = "e";
  r.workload = "alone";
  r.command = "/usr/bin/python3 train.py";
  r.start_ms = 1763777000000;
  ASSERT_TRUE(store->CreateRun(r).ok());
  {
    SeriesWriter w(*store, r.id);
    for (int i = 0; i < 120; ++i)
      w.Append("train.throughput_samples_per_second", "", {r.start_ms + i * 1000, 100, i});
    ASSERT_TRUE(w.Close().ok());
  }
  ASSERT_TRUE(store->FinishRun(r.id, r.start_ms + 120000, kFinished, 0, std::nullopt, "").ok());
  std::string old = R"({"version":1,"phases":[],"throughput":5,"energy_joules":999})";
  ASSERT_TRUE(store->PutArtifact({r.id, "phases.json", static_cast<int64_t>(old.size()), old, ""}).ok());
  ExperimentReport report = BuildReport(*store, "e").value();
  ASSERT_TRUE(report.workloads[0].run_throughput);
  EXPECT_NEAR(report.workloads[0].run_throughput->mean, 100, 1) << "not the old analysis's 5";
  bool said = false;
  for (const std::string& c : report.caveats)
    said |= c.find("analysed by an older trainbench") != std::string::npos;
  EXPECT_TRUE(said);
}

// A run with its GPUs' and its CPU share's energy (the nvml or amdsmi listener's and rapl's
// counters): the report gives each per run and both together per sample; an experiment
// whose runs recorded no CPU energy says why its CPU column is empty.
TEST(ReportEnergy, GpuAndCpuEnergyArePerRunAndTogetherPerSample) {
  ScratchDirectory scratch("tb-report");
  std::unique_ptr<Store> store = Store::Open((scratch.path() / "r.db").string()).value();
  auto add = [&](const std::string& experiment, bool cpu) {
    ASSERT_TRUE(store->EnsureExperiment(experiment).ok());
    RunRecord r;
    r.id = NewRunId();
    r.experiment = experiment;
    r.workload = "w";
    r.command = "/usr/bin/python3 train.py";
    r.start_ms = 1763777000000;
    ASSERT_TRUE(store->CreateRun(r).ok());
    SeriesWriter w(*store, r.id);
    for (int i = 0; i <= 120; ++i) {
      w.Append("train.throughput_samples_per_second", "", {r.start_ms + i * 1000, 100, i});
      w.Append("proc.gpu.energy_joules", "gpu=0", {r.start_ms + i * 1000, 300.0 * i, 0});
      if (cpu) {
        w.Append("proc.cpu.energy_joules", "domain=package-0", {r.start_ms + i * 1000, 40.0 * i, 0});
        w.Append("proc.cpu.energy_joules", "domain=package-0/dram", {r.start_ms + i * 1000, 5.0 * i, 0});
      }
    }
    ASSERT_TRUE(w.Close().ok());
    ASSERT_TRUE(store->FinishRun(r.id, r.start_ms + 120000, kFinished, 0, std::nullopt, "").ok());
  };
  add("with", true);
  add("without", false);
  ExperimentReport with = BuildReport(*store, "with").value();
  const WorkloadReport& w = with.workloads.at(0);
  ASSERT_TRUE(w.energy_per_run && w.cpu_energy_per_run && w.energy_per_sample_joules);
  EXPECT_DOUBLE_EQ(w.energy_per_run->mean, 300.0 * 120);
  EXPECT_DOUBLE_EQ(w.cpu_energy_per_run->mean, 45.0 * 120);
  ASSERT_TRUE(w.analyses[0].samples);
  EXPECT_NEAR(w.energy_per_sample_joules->mean, 345.0 * 120 / *w.analyses[0].samples, 1e-9);
  std::string table = ReportTable(with);
  EXPECT_NE(table.find("CPU J per run"), std::string::npos) << table;
  EXPECT_EQ(table.find("no run recorded CPU energy"), std::string::npos) << table;
  ExperimentReport without = BuildReport(*store, "without").value();
  EXPECT_FALSE(without.workloads.at(0).cpu_energy_per_run);
  EXPECT_NEAR(without.workloads.at(0).energy_per_sample_joules->mean,
              300.0 * 120 / *without.workloads.at(0).analyses[0].samples, 1e-9);
  EXPECT_NE(ReportTable(without).find("CPU J per run: no run recorded CPU energy"), std::string::npos);
}

}  // namespace
}  // namespace tb
