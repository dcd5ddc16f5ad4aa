// Writes a store for the web UI's browser tests and benchmark:
//   tb_fixture_store DB TRACE_JSON [--bench-runs N --bench-points P] [--big P]
// - experiment "traces": the recorded DCGM trace of testdata/ as one run;
// - experiment "synth": workloads 1 and 2 with runs A and B each, 10 minutes at 1 Hz of GPU
//   utilization (workload*10 + run, plus a slow wave; run 2A idle from 300 s to 330 s), SM activity, power,
//   energy (workload 1's runs share their GPU: attributed energy, and dcgmi's reading too; their CPU energy
//   share), a training loss with steps and throughput, epoch events and a batch-size param;
// - with --bench-runs: experiment "bench", workload "w", N runs of P points at 1 Hz (and with
//   --bench-metrics M, M - 1 more metrics a run, "train.metric1" on, logged with steps),
//   each with its analysis kept as `trainbench run` keeps it;
// - with --big: experiment "big", one run of P points at 1 Hz;
// - with --big-loss: experiment "big", one run "bigloss" whose script logged P losses
//   ("train.loss", no labels, as the tracking API stores them) at steps 0..P-1, 10 a second.
// Prints the run ids as JSON ({"synth": {"1": [a, b], "2": [...]}, "trace": id, ...}).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "analyze/phases.h"
#include "store/series_writer.h"
#include "store/store.h"
#include "tests/helpers/recorded_trace.h"

namespace tb {
namespace {

constexpr int64_t kStart = 1763777000000;

RunRecord NewRun(Store& store, const std::string& experiment, const std::string& workload,
                 const std::string& name, const std::string& letter, KeyValues params) {
  RunRecord run;
  run.id = NewRunId();
  run.experiment = experiment;
  run.workload = workload;
  run.name = name;
  run.command = "/usr/bin/python3 train.py --batch-size " + (params.empty() ? "64" : params[0].second);
  run.start_ms = kStart;
  run.params = std::move(params);
  run.tags = {{"trainbench.letter", letter}, {"trainbench.collocation", "-"}};
  run.devices = "0";
  if (!store.EnsureExperiment(experiment).ok() || !store.CreateRun(run).ok()) {
    std::fprintf(stderr, "cannot create run %s\n", name.c_str());
    std::exit(1);
  }
  return run;
}

void Finish(Store& store, SeriesWriter& writer, const RunRecord& run, int64_t end_ms) {
  if (!writer.Close().ok() || !store.FinishRun(run.id, end_ms, kFinished, 0, std::nullopt, "").ok()) {
    std::fprintf(stderr, "cannot finish run %s\n", run.name.c_str());
    std::exit(1);
  }
}

std::string SyntheticRun(Store& store, int workload, int r) {
  std::string letter = std::string("0") + static_cast<char>('A' + r) + "-";
  std::string batch = workload == 1 ? "64" : "128";
  RunRecord run =
      NewRun(store, "synth", std::to_string(workload), "train.py " + letter, letter, {{"batch-size", batch}});
  SeriesWriter writer(store, run.id);
  double base = workload * 10 + r;
  double energy = 0;
  for (int i = 0; i < 600; ++i) {
    int64_t t = kStart + i * 1000;
    double util = (base + 5 * std::sin(i / 30.0)) / 100;
    if (workload == 2 && r == 0 && i >= 300 && i < 330) util = 0;  // an idle gap to find
    writer.Append("gpu.utilization.gpu_ratio", "gpu=0", Point{t, util});
    writer.Append("gpu.sm.active_ratio", "gpu=0", Point{t, util * 0.8});
    double power = 100 + 200 * util;
    energy += power;
    writer.Append("gpu.power.draw_watts", "gpu=0", Point{t, power});
    writer.Append("gpu.energy.consumed_joules", "gpu=0", Point{t, energy});
    if (workload == 1) {
      // Workload 1's runs share GPU 0: A is credited with 60% of its energy, B with 40%,
      // and dcgmi read the same counter beside NVML.
      writer.Append("gpu.energy.consumed_joules", "gpu=0,listener=dcgmi", Point{t, energy});
      writer.Append("proc.gpu.energy_joules", "gpu=0", Point{t, energy * (r == 0 ? 0.6 : 0.4)});
      // And the rapl listener's share of the CPU package's energy: 20 W for A, 10 W for B.
      writer.Append("proc.cpu.energy_joules", "domain=package-0", Point{t, i * (r == 0 ? 20.0 : 10.0)});
    }
    if (i % 5 == 0) {
      Point loss{t, 2.0 * std::exp(-i / (150.0 + 50 * workload)) + 0.01 * r};
      loss.step = i / 5;
      writer.Append("train.loss", "", loss);
      writer.Append("train.throughput_samples_per_second", "", Point{t, 1000.0 * workload + 50 * r});
    }
    if (i % 120 == 0 && !store.AddEvent({run.id, t, "epoch", "epoch " + std::to_string(i / 120 + 1)}).ok()) {
      std::fprintf(stderr, "cannot record an event of run %s\n", run.name.c_str());
      std::exit(1);
    }
  }
  Finish(store, writer, run, kStart + 600000);
  return run.id;
}

std::string FlatRun(Store& store, const std::string& experiment, const std::string& name, int64_t points,
                    double base, int64_t metrics = 1) {
  RunRecord run =
      NewRun(store, experiment, experiment == "big" ? "" : "w", name, name, {{"batch-size", "64"}});
  SeriesWriter writer(store, run.id);
  for (int64_t i = 0; i < points; ++i) {
    double v = base + std::sin(static_cast<double>(i) / 500.0) + (i % 97 == 0 ? 3 : 0);
    writer.Append("gpu.utilization.gpu_ratio", "gpu=0", Point{kStart + i * 1000, v});
    for (int64_t m = 1; m < metrics; ++m)
      writer.Append("train.metric" + std::to_string(m), "",
                    Point{kStart + i * 1000, v + static_cast<double>(m), i});
  }
  Finish(store, writer, run, kStart + points * 1000);
  if (experiment == "bench") {
    // Its analysis kept with it, as `trainbench run` keeps one when a run ends.
    Result<RunRecord> finished = store.FindRun(run.id);
    if (!finished.ok() || !AnalyseAndKeep(store, *finished).ok()) {
      std::fprintf(stderr, "cannot keep the analysis of run %s\n", name.c_str());
      std::exit(1);
    }
  }
  return run.id;
}

// Run k of a batch-size sweep (experiment "sweep", batch size 4 x 2^k): GPU utilization for
// five minutes, higher for larger batches.
std::string SweepRun(Store& store, int64_t k) {
  std::string bs = std::to_string(4 << k);
  RunRecord run = NewRun(store, "sweep", "bs", "bs" + bs,
                         "0" + std::string(1, static_cast<char>('A' + k)) + "-", {{"batch-size", bs}});
  SeriesWriter writer(store, run.id);
  for (int64_t i = 0; i < 300; ++i) {
    double v =
        std::min(0.98, 0.3 + 0.06 * static_cast<double>(k)) + 0.01 * std::sin(static_cast<double>(i) / 20);
    writer.Append("gpu.utilization.gpu_ratio", "gpu=0", Point{kStart + i * 1000, v});
  }
  Finish(store, writer, run, kStart + 300 * 1000);
  return run.id;
}

// A run of `days` days (experiment "long"): GPU utilization every hour from 1 % to 100 % on
// a log scale over each day, 0 every 50th hour (what a log axis cannot draw).
std::string LongRun(Store& store, int64_t days) {
  RunRecord run = NewRun(store, "long", "w", "long", "0A-", {{"batch-size", "64"}});
  SeriesWriter writer(store, run.id);
  for (int64_t h = 0; h <= days * 24; ++h) {
    double v = h % 50 == 0 ? 0 : std::pow(10.0, -2 + 2 * static_cast<double>(h % 24) / 23);
    writer.Append("gpu.utilization.gpu_ratio", "gpu=0", Point{kStart + h * 3600 * 1000, v});
  }
  Finish(store, writer, run, kStart + days * 86400 * 1000);
  return run.id;
}

std::string LossRun(Store& store, int64_t points) {
  RunRecord run = NewRun(store, "big", "", "bigloss", "bigloss", {{"batch-size", "64"}});
  SeriesWriter writer(store, run.id);
  for (int64_t i = 0; i < points; ++i) {
    double v = 2.0 / (1.0 + static_cast<double>(i) / 1000.0) + 0.01 * std::sin(static_cast<double>(i));
    writer.Append("train.loss", "", Point{kStart + i * 100, v, i});
  }
  Finish(store, writer, run, kStart + points * 100);
  return run.id;
}

int Main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(
        stderr,
        "usage: tb_fixture_store DB TRACE_JSON [--bench-runs N --bench-points P --bench-metrics M] [--big P] "
        "[--big-loss P] [--sweep N] [--long-days D]\n");
    return 2;
  }
  int64_t bench_runs = 0, bench_points = 100000, bench_metrics = 1, big = 0, big_loss = 0, sweep = 0,
          long_days = 0;
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    int64_t v = std::atoll(argv[i + 1]);
    if (a == "--bench-runs") bench_runs = v;
    if (a == "--bench-points") bench_points = v;
    if (a == "--bench-metrics") bench_metrics = v;
    if (a == "--big") big = v;
    if (a == "--big-loss") big_loss = v;
    if (a == "--sweep") sweep = v;
    if (a == "--long-days") long_days = v;
  }
  Result<std::unique_ptr<Store>> opened = Store::Open(argv[1]);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().message().c_str());
    return 1;
  }
  Store& store = **opened;
  std::string out = "{\"synth\": {";
  for (int w = 1; w <= 2; ++w) {
    out += std::string(w > 1 ? ", " : "") + "\"" + std::to_string(w) + "\": [";
    for (int r = 0; r < 2; ++r) out += std::string(r ? ", " : "") + "\"" + SyntheticRun(store, w, r) + "\"";
    out += "]";
  }
  out += "}";
  RunRecord trace = NewRun(store, "traces", "", "recorded", "recorded", {});
  SeriesWriter writer(store, trace.id);
  RecordedTrace recorded = WriteRecordedTrace(writer, argv[2]);
  Finish(store, writer, trace, recorded.start_ms + static_cast<int64_t>(recorded.power_watts.size()) * 1000);
  out += ", \"trace\": \"" + trace.id + "\"";
  if (bench_runs > 0) {
    out += ", \"bench\": [";
    for (int64_t r = 0; r < bench_runs; ++r) {
      out += std::string(r ? ", " : "") + "\"" +
             FlatRun(store, "bench", "b" + std::to_string(r), bench_points, static_cast<double>(r),
                     bench_metrics) +
             "\"";
    }
    out += "]";
  }
  if (sweep > 0) {
    out += ", \"sweep\": [";
    for (int64_t k = 0; k < sweep; ++k) out += std::string(k ? ", " : "") + "\"" + SweepRun(store, k) + "\"";
    out += "]";
  }
  if (long_days > 0) out += ", \"long\": \"" + LongRun(store, long_days) + "\"";
  if (big > 0) out += ", \"big\": \"" + FlatRun(store, "big", "big", big, 0) + "\"";
  if (big_loss > 0) out += ", \"bigloss\": \"" + LossRun(store, big_loss) + "\"";
  std::printf("%s}\n", out.c_str());
  return 0;
}

}  // namespace
}  // namespace tb

int main(int argc, char** argv) {
  try {
    return tb::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tb_fixture_store: %s\n", e.what());
    return 1;
  }
}
