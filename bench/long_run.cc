// A long run does not make trainbench slower or bigger (issue 20, goal 6): a simulated run
// at 10 Hz with 200 series is written through the real SeriesWriter, flushed every simulated
// second as `trainbench run` does, as fast as the machine allows, beside 49 other running
// runs of one series each. After every simulated hour the writer waits while a reader (a
// second process, as `trainbench serve` is) measures:
//   - the writer's resident memory (VmRSS of its process);
//   - the live chart: one series of the long run at a 2,000-point budget, and one chart of
//     all 50 running runs, through ServeApi::Handle, loaded whole (what a chart's first load
//     costs; past half its budget the page thins its lines itself); and its 3-second refresh
//     as the web page asks it, for what came after the newest point it has (`since`);
//   - the live chart of the 50 runs' mean (they are one workload), as the page loads it
//     whole ("means whole": every point of every run) and as it refreshes it every 3 s
//     ("means refresh": the buckets from its last one on, on the same grid);
//   - the phase analysis of the long run made afresh, and what it costs per 3-second refresh
//     of a live chart under serve's rule (analysed again once the run has grown by a
//     fiftieth of its length, at least 30 s after the last analysis).
//
//   build/bench/long_run [hours=24] [series=200] [watched=50] [hz=10]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyze/phases.h"
#include "base/time.h"
#include "bench/bench_stats.h"
#include "bench/training_series.h"
#include "serve/serve_api.h"
#include "store/series_writer.h"
#include "store/store.h"

namespace {

using namespace tb;
// The runs started `hours` before the benchmark, so that at the last hour their points end
// about now, as a running run's do (a chart of running runs spans up to now).
int64_t kStart = 0;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

long ResidentKiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

RunRecord NewRun(Store& store, int index) {
  RunRecord run;
  run.id = NewRunId();
  run.experiment = "long";
  run.workload = "1";
  run.name = index == 0 ? "long" : "watched-" + std::to_string(index);
  run.command = "python3 train.py";
  run.start_ms = kStart;
  if (!store.CreateRun(run).ok()) std::abort();
  return run;
}

void Writer(const std::string& db, const std::vector<RunRecord>& runs, int hours, int series, int hz,
            int to_reader, int from_reader) {
  auto store = Store::Open(db).value();
  SeriesWriter writer(*store, runs[0].id);
  std::vector<SeriesWriter::SeriesHandle> handles;
  for (const auto& [metric, labels] : TrainingSeriesNames(series))
    handles.push_back(writer.Handle(metric, labels));
  std::vector<std::unique_ptr<SeriesWriter>> others;
  std::vector<SeriesWriter::SeriesHandle> other_handles;
  for (size_t r = 1; r < runs.size(); ++r) {
    others.push_back(std::make_unique<SeriesWriter>(*store, runs[r].id));
    other_handles.push_back(others.back()->Handle("gpu.utilization.gpu_ratio", "gpu=0"));
  }
  int64_t tick = 0;
  for (int hour = 1; hour <= hours; ++hour) {
    for (int second = 0; second < 3600; ++second) {
      for (int t = 0; t < hz; ++t, ++tick) {
        int64_t ms = kStart + tick * 1000 / hz;
        for (size_t s = 0; s < handles.size(); ++s)
          writer.Append(handles[s], Point{ms, TrainingValue(static_cast<int>(s), tick, hz), kNoStep});
        for (size_t r = 0; r < others.size(); ++r)
          others[r]->Append(other_handles[r],
                            Point{ms, TrainingValue(static_cast<int>(r), tick, hz), kNoStep});
      }
      // Once a simulated second, as trainbench run flushes.
      if (!writer.Flush().ok()) std::abort();
      for (auto& o : others) {
        if (!o->Flush().ok()) std::abort();
      }
    }
    char done = 1;
    if (write(to_reader, &done, 1) != 1 || read(from_reader, &done, 1) != 1) std::abort();
  }
  if (!writer.Close().ok()) std::abort();
  for (auto& o : others) {
    if (!o->Close().ok()) std::abort();
  }
}

template <typename Fn>
double MedianMs(int repeats, Fn fn) {
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    ms.push_back(Seconds(t0) * 1000);
  }
  return Median(ms);
}

// A chart of `which` (run ids, commas between) as a new server draws it (nothing cached, as
// for a running run); `since_ms` > 0: the refresh of a live chart, what came after that time.
void Chart(Store& store, const std::string& which, int64_t since_ms = 0) {
  ServeApi api(store);
  ApiRequest request{"GET",
                     "/api/v1/series",
                     {{"runs", which},
                      {"metric", "gpu.utilization.gpu_ratio"},
                      {"labels", "gpu=0"},
                      {"budget", "2000"},
                      {"x", "relative"}},
                     ""};
  if (since_ms > 0) request.query.emplace("since", std::to_string(since_ms));
  ApiResponse a = api.Handle(request);
  if (a.status != 200) {
    std::fprintf(stderr, "series: %d %s\n", a.status, a.body.c_str());
    std::abort();
  }
}

// The runs' mean as a workload chart of 500 buckets asks for it: whole, or (`from` >= 0)
// its buckets from `from` on, `width` wide. The answer's JSON.
std::string Means(Store& store, double from = -1, double width = 0) {
  ServeApi api(store);
  ApiRequest request{"GET",
                     "/api/v1/aggregate",
                     {{"workloads", "long:1"},
                      {"metric", "gpu.utilization.gpu_ratio"},
                      {"labels", "gpu=0"},
                      {"budget", "500"},
                      {"x", "relative"}},
                     ""};
  if (from >= 0) {
    request.query.emplace("from", std::to_string(from));
    request.query.emplace("to", std::to_string(from + 500 * width));
  }
  ApiResponse a = api.Handle(request);
  if (a.status != 200) {
    std::fprintf(stderr, "aggregate: %d %s\n", a.status, a.body.c_str());
    std::abort();
  }
  return a.body;
}

// What the page asks every 5 s while a running run is selected (web/src/main.ts, poll): the
// run with its summary and energy, and its metrics.
void Poll(Store& store, const std::string& id) {
  ServeApi api(store);
  for (ApiRequest request : {ApiRequest{"GET", "/api/v1/runs/" + id, {}, ""},
                             ApiRequest{"GET", "/api/v1/metrics", {{"runs", id}}, ""}}) {
    if (ApiResponse a = api.Handle(request); a.status != 200) {
      std::fprintf(stderr, "%s: %d %s\n", request.path.c_str(), a.status, a.body.c_str());
      std::abort();
    }
  }
}

// One line of the table: what a reader pays after `hour` hours written.
void MeasureHour(Store& store, const std::vector<RunRecord>& runs, const std::string& ids, int hour, int hz,
                 int series, double write_s, long rss) {
  double one = MedianMs(3, [&] { Chart(store, runs[0].id); });
  double many = MedianMs(3, [&] { Chart(store, ids); });
  // The page's refresh 3 s after its last: the points of the last 3 simulated seconds.
  int64_t newest = kStart + int64_t{hour} * 3600 * 1000 - 1000 / hz;
  double one_since = MedianMs(3, [&] { Chart(store, runs[0].id, newest - 3000); });
  double many_since = MedianMs(3, [&] { Chart(store, ids, newest - 3000); });
  double polled = MedianMs(3, [&] { Poll(store, runs[0].id); });
  double means_whole = MedianMs(3, [&] { Means(store); });
  nlohmann::json mean = nlohmann::json::parse(Means(store))["workloads"][0];
  double width = mean["bucket_width"].get<double>();
  double last_bucket = mean["x"].back().get<double>() - width / 2;
  double means_refresh = MedianMs(3, [&] { Means(store, last_bucket, width); });
  RunRecord long_run = store.FindRun(runs[0].id).value();
  double phases = MedianMs(1, [&] {
    if (!AnalyzeStoredRun(store, long_run).ok()) std::abort();
  });
  // Serve analyses a running run again once it grew by a fiftieth (at least 30 s): per
  // 3-second refresh, the analysis costs its time times 3 s over that interval.
  double per_refresh = phases * 3.0 / std::max(30.0, hour * 3600.0 / 50);
  std::printf("%4d %10lld %11.1f %10.1f %12.1f %9.1f %13.2f %11.2f %9.1f %12.1f %14.2f %14.1f %12.2f\n", hour,
              static_cast<long long>(hour) * 3600 * hz * series, static_cast<double>(rss) / 1024, write_s,
              one, many, one_since, many_since, polled, means_whole, means_refresh, phases, per_refresh);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int hours = argc > 1 ? std::atoi(argv[1]) : 24;
  int series = argc > 2 ? std::atoi(argv[2]) : 200;
  int watched = argc > 3 ? std::atoi(argv[3]) : 50;
  int hz = argc > 4 ? std::atoi(argv[4]) : 10;
  if (hours < 1 || series < 27 || watched < 1 || hz < 1) {
    std::fprintf(stderr, "usage: long_run [hours>=1] [series>=27] [watched>=1] [hz>=1]\n");
    return 2;
  }
  namespace fs = std::filesystem;
  kStart = WallMillis() - int64_t{hours} * 3600 * 1000;
  fs::path dir = fs::temp_directory_path() / "tb-bench-long-run";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string db = (dir / "long.db").string();
  std::vector<RunRecord> runs;
  {
    auto store = Store::Open(db).value();
    if (!store->EnsureExperiment("long").ok()) std::abort();
    for (int r = 0; r < watched; ++r) runs.push_back(NewRun(*store, r));
  }
  int to_reader[2], from_reader[2];
  if (pipe(to_reader) != 0 || pipe(from_reader) != 0) std::abort();
  auto started = std::chrono::steady_clock::now();
  pid_t child = fork();
  if (child == 0) {
    Writer(db, runs, hours, series, hz, to_reader[1], from_reader[0]);
    _exit(0);
  }
  std::printf("a %d-hour run at %d Hz with %d series, %d running runs watched\n", hours, hz, series, watched);
  std::printf("%4s %10s %11s %10s %12s %9s %13s %11s %9s %12s %14s %14s %12s\n", "hour", "points",
              "writer RSS", "write s/h", "chart 1 run", "chart 50", "refresh 1 run", "refresh 50", "run poll",
              "means whole", "means refresh", "phases afresh", "per refresh");
  std::printf("%4s %10s %11s %10s %12s %9s %13s %11s %9s %12s %14s %14s %12s\n", "", "(long run)", "MiB", "",
              "ms", "ms", "ms", "ms", "ms", "ms", "ms", "ms", "ms");
  auto store = Store::Open(db).value();
  std::string ids;
  for (const RunRecord& r : runs) ids += (ids.empty() ? "" : ",") + r.id;
  auto hour_started = std::chrono::steady_clock::now();
  for (int hour = 1; hour <= hours; ++hour) {
    char done;
    if (read(to_reader[0], &done, 1) != 1) std::abort();
    MeasureHour(*store, runs, ids, hour, hz, series, Seconds(hour_started), ResidentKiB(child));
    hour_started = std::chrono::steady_clock::now();
    if (write(from_reader[1], &done, 1) != 1) std::abort();
  }
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("in all %.0f s; store %.0f MiB\n", Seconds(started),
              static_cast<double>(fs::file_size(db)) / (1 << 20));
  fs::remove_all(dir);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
