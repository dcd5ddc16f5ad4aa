// What MLflow's clients wait for when they read runs with long metrics: `runs/get` (the
// latest value of each metric, which MLflow's client asks for on get_run and on resuming a
// run), `runs/search` (what mlflow.search_runs() turns into a DataFrame) and one metric's
// `metrics/get-history` page after page (MlflowClient.get_metric_history), answered by
// TrackingApi::Handle in this process. `runs` runs are written with three script metrics of
// `steps` steps each (as a script logging loss, accuracy and learning rate every step);
// then, `rounds` times: get one run, search them all, read one history. Prints medians and
// the process's resident memory after.
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
  Must(store->EnsureExperiment("Default"));
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
    Must(store->FinishRun(run.id, run.start_ms + int64_t{250} * steps, kFinished, 0, std::nullopt, ""));
  }
  std::printf("%d runs of 3 metrics x %d steps (%.1f s to write)\n", runs, steps, Ms(t) / 1000);
  TrackingApi api(*store);
  long before = ResidentMiB();
  std::vector<double> get, search, history;
  for (int round = 0; round < rounds; ++round) {
    t = std::chrono::steady_clock::now();
    ApiResponse one = api.Handle({"GET", "/api/2.0/mlflow/runs/get", {{"run_id", ids[0]}}, ""});
    get.push_back(Ms(t));
    t = std::chrono::steady_clock::now();
    ApiResponse all = api.Handle(
        {"POST", "/api/2.0/mlflow/runs/search", {}, R"({"experiment_ids": ["0"], "max_results": 1000})"});
    search.push_back(Ms(t));
    // A metric's whole history as MLflow's client reads it: page after page of 25,000.
    t = std::chrono::steady_clock::now();
    std::string token;
    size_t pages = 0;
    do {
      ApiRequest page{
          "GET", "/api/2.0/mlflow/metrics/get-history", {{"run_id", ids[0]}, {"metric_key", "loss"}}, ""};
      if (!token.empty()) page.query.emplace("page_token", token);
      ApiResponse answer = api.Handle(page);
      if (answer.status != 200) return 1;
      size_t at = answer.body.find("\"next_page_token\":\"");
      token = at == std::string::npos ? ""
                                      : answer.body.substr(at + 19, answer.body.find('"', at + 19) - at - 19);
      ++pages;
    } while (!token.empty());
    history.push_back(Ms(t));
    if (pages != static_cast<size_t>((steps + 24999) / 25000)) {
      std::fprintf(stderr, "%zu pages of history\n", pages);
      return 1;
    }
    if (one.status != 200 || all.status != 200 ||
        one.body.find("\"step\":" + std::to_string(steps - 1)) == std::string::npos) {
      std::fprintf(stderr, "unexpected answer: %d %s\n", one.status, one.body.substr(0, 300).c_str());
      return 1;
    }
  }
  std::printf("  runs/get of one run, median ms                %10.1f\n", Median(get));
  std::printf("  runs/search of the %3d runs, median ms        %10.1f\n", runs, Median(search));
  std::printf("  metrics/get-history of one metric, every page, median ms %5.1f\n", Median(history));
  std::printf("  resident memory after, above before, MiB      %10ld\n", ResidentMiB() - before);
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace tb

int main(int argc, char** argv) { return tb::Main(argc, argv); }
