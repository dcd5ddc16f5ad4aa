// What MLflow's clients wait for when they read runs with long metrics: `runs/get` (the
// latest value of each metric, which MLflow's client asks for on get_run and on resuming a
// run) and `runs/search` (what mlflow.search_runs() turns into a DataFrame), answered by
// TrackingApi::Handle in this process. `runs` runs are written with three script metrics of
// `steps` steps each (as a script logging loss, accuracy and learning rate every step),
// then, `rounds` times: get one run, search them all. Prints medians and the process's
// resident memory after.
//   build/bench/mlflow_reads [runs=20] [steps=1000000] [rounds=3]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_stats.h"
#include "store/series_writer.h"
#include "store/store.h"
#include "track/tracking_api.h"

namespace tb {
namespace {

double Ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

long ResidentMiB() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  char line[256];
  long kib = 0;
  while (f != nullptr && std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "VmRSS: %ld", &kib) == 1) break;
  }
  if (f != nullptr) std::fclose(f);
  return kib / 1024;
}

int Main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 20;
  int steps = argc > 2 ? std::atoi(argv[2]) : 1000000;
  int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tb-mlflow-reads-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto store = Store::Open((dir / "s.db").string()).value();
  store->EnsureExperiment("Default");
  std::vector<std::string> ids;
  auto t = std::chrono::steady_clock::now();
  for (int r = 0; r < runs; ++r) {
    RunRecord run;
    run.id = NewRunId();
    run.experiment = "Default";
    run.start_ms = 1763777000000;
    if (!store->CreateRun(run).ok()) return 1;
    ids.push_back(run.id);
    SeriesWriter writer(*store, run.id);
    for (const char* key : {"train.loss", "train.accuracy", "train.lr"}) {
      SeriesWriter::SeriesHandle h = writer.Handle(key, "");
      for (int s = 0; s < steps; ++s) {
        writer.Append(h, Point{run.start_ms + int64_t{250} * s, std::round(1e4 / (s + 10)) / 1e4, s});
        if (s % 1000000 == 999999 && !writer.Flush().ok()) return 1;
      }
    }
    if (!writer.Close().ok()) return 1;
    store->FinishRun(run.id, run.start_ms + int64_t{250} * steps, kFinished, 0, std::nullopt, "");
  }
  std::printf("%d runs of 3 metrics x %d steps (%.1f s to write)\n", runs, steps, Ms(t) / 1000);
  TrackingApi api(*store);
  long before = ResidentMiB();
  std::vector<double> get, search;
  for (int round = 0; round < rounds; ++round) {
    t = std::chrono::steady_clock::now();
    ApiResponse one = api.Handle({"GET", "/api/2.0/mlflow/runs/get", {{"run_id", ids[0]}}, ""});
    get.push_back(Ms(t));
    t = std::chrono::steady_clock::now();
    ApiResponse all = api.Handle(
        {"POST", "/api/2.0/mlflow/runs/search", {}, R"({"experiment_ids": ["0"], "max_results": 1000})"});
    search.push_back(Ms(t));
    if (one.status != 200 || all.status != 200 ||
        one.body.find("\"step\":" + std::to_string(steps - 1)) == std::string::npos) {
      std::fprintf(stderr, "unexpected answer: %d %s\n", one.status, one.body.substr(0, 300).c_str());
      return 1;
    }
  }
  std::printf("  runs/get of one run, median ms                %10.1f\n", Median(get));
  std::printf("  runs/search of the %3d runs, median ms        %10.1f\n", runs, Median(search));
  std::printf("  resident memory after, above before, MiB      %10ld\n", ResidentMiB() - before);
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace tb

int main(int argc, char** argv) { return tb::Main(argc, argv); }
