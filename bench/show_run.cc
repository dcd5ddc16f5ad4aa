// `trainbench show` of a long finished run: what a user waits for after a day-long run.
// A run at `hz` with `series` series over `hours` is written through the real SeriesWriter
// and finished as `trainbench run` leaves it (its analysis kept with it); then, alternating
// round by round:
//   - `trainbench show RUN` of this build, a process just started, its wall and CPU time;
//   - `trainbench report` of its experiment (the run alone), the same way;
//   - both with another build (OTHER_TRAINBENCH=PATH), when given;
//   - in this process, the metrics table's statistics of every series: summarized chunk by
//     chunk with percentiles by selection on two threads, against every point read whole
//     and sorted (how `show` made them before).
//   [OTHER_TRAINBENCH=PATH] [KEEP=1] build/bench/show_run [hours=24] [series=200] [hz=10] [rounds=3]
// KEEP=1 leaves the store in /tmp/tb-show-bench-PID/ for a look afterwards.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "analyze/phases.h"
#include "bench/bench_stats.h"
#include "bench/training_series.h"
#include "query/summary.h"
#include "store/series_writer.h"
#include "store/store.h"

namespace tb {
namespace {

double Ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

struct Timed {
  double wall_ms = 0, cpu_ms = 0;
};

// `binary COMMAND ARG --store DB`, its output thrown away; exits when it fails.
Timed Command(const std::string& binary, const char* command, const std::string& arg, const std::string& db) {
  std::fflush(stdout);  // the child's copy of what is buffered is not printed again
  int64_t cpu_before = ChildrenCpuNanos();
  auto t = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    execl(binary.c_str(), binary.c_str(), command, arg.c_str(), "--store", db.c_str(), nullptr);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Timed out{Ms(t), static_cast<double>(ChildrenCpuNanos() - cpu_before) / 1e6};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "%s %s failed (status %d)\n", binary.c_str(), command, status);
    std::exit(1);
  }
  return out;
}

// The statistics as `show` made them before: every point read whole, the values sorted.
SeriesSummary SortedWhole(Store& store, int64_t id) {
  std::vector<Point> points = ReadSeriesPoints(store, id).value();
  std::vector<double> values;
  for (const Point& p : points) {
    if (!std::isnan(p.value)) values.push_back(p.value);
  }
  std::sort(values.begin(), values.end());
  auto at = [&](double q) {
    double rank = q * static_cast<double>(values.size() - 1);
    auto lo = static_cast<size_t>(rank);
    return lo + 1 < values.size()
               ? values[lo] + (values[lo + 1] - values[lo]) * (rank - static_cast<double>(lo))
               : values[lo];
  };
  SeriesSummary s;
  s.count = static_cast<int64_t>(points.size());
  s.min = values.front();
  s.max = values.back();
  s.p50 = at(0.5);
  s.p95 = at(0.95);
  return s;
}

int Main(int argc, char** argv) {
  double hours = argc > 1 ? std::atof(argv[1]) : 24;
  int series = argc > 2 ? std::atoi(argv[2]) : 200;
  int hz = argc > 3 ? std::atoi(argv[3]) : 10;
  int rounds = argc > 4 ? std::atoi(argv[4]) : 3;
  const char* other = std::getenv("OTHER_TRAINBENCH");
  if (series < 27) {
    std::fprintf(stderr, "series: 27 or more (the analysed metrics of 8 GPUs and the process)\n");
    return 2;
  }
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tb-show-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string db = (dir / "long.db").string();
  auto store = Store::Open(db).value();
  RunRecord run;
  run.id = NewRunId();
  run.experiment = "bench";
  run.name = "long";
  run.command = "python3 train.py";
  run.start_ms = 1763777000000;
  Must(store->EnsureExperiment("bench"));
  Must(store->CreateRun(run));
  auto ticks = static_cast<int64_t>(hours * 3600 * hz);
  auto t = std::chrono::steady_clock::now();
  {
    SeriesWriter writer(*store, run.id);
    std::vector<std::pair<std::string, std::string>> names = TrainingSeriesNames(series);
    for (size_t s = 0; s < names.size(); ++s) {
      SeriesWriter::SeriesHandle h = writer.Handle(names[s].first, names[s].second);
      for (int64_t tick = 0; tick < ticks; ++tick) {
        writer.Append(
            h, Point{run.start_ms + tick * 1000 / hz, TrainingValue(static_cast<int>(s), tick, hz), kNoStep});
        if (tick % 1000000 == 999999 && !writer.Flush().ok()) return 1;
      }
    }
    if (!writer.Close().ok()) return 1;
  }
  Must(store->FinishRun(run.id, run.start_ms + ticks * 1000 / hz, kFinished, 0, std::nullopt, ""));
  run = store->FindRun(run.id).value();
  if (!KeepAnalysisJson(*store, run, AnalysisJson(AnalyzeStoredRun(*store, run).value())).ok()) return 1;
  std::printf(
      "a finished run of %.1f h at %d Hz: %d series of %lld points (%.1f s to write, store %.1f MiB)\n",
      hours, hz, series, static_cast<long long>(ticks), Ms(t) / 1000,
      static_cast<double>(std::filesystem::file_size(db)) / (1 << 20));

  std::vector<int64_t> ids;
  for (const SeriesInfo& s : store->ListSeries(run.id).value()) ids.push_back(s.id);
  std::vector<Timed> mine, others, my_reports, other_reports;
  std::vector<double> chunkwise, sorted;
  for (int r = 0; r < rounds; ++r) {
    mine.push_back(Command(TRAINBENCH_BINARY, "show", run.id, db));
    if (other) others.push_back(Command(other, "show", run.id, db));
    my_reports.push_back(Command(TRAINBENCH_BINARY, "report", run.experiment, db));
    if (other) other_reports.push_back(Command(other, "report", run.experiment, db));
    t = std::chrono::steady_clock::now();
    std::vector<SeriesSummary> made = SummarizeStoredSeries(*store, ids).value();
    chunkwise.push_back(Ms(t));
    t = std::chrono::steady_clock::now();
    for (size_t i = 0; i < ids.size(); ++i) {
      SeriesSummary before = SortedWhole(*store, ids[i]);
      if (before.count != made[i].count || before.p50 != made[i].p50 || before.p95 != made[i].p95 ||
          before.min != made[i].min || before.max != made[i].max) {
        std::fprintf(stderr, "series %lld: the two summaries differ\n", static_cast<long long>(ids[i]));
        return 1;
      }
    }
    sorted.push_back(Ms(t));
  }
  auto column = [](const std::vector<Timed>& v, double Timed::*field) {
    std::vector<double> x;
    for (const Timed& one : v) x.push_back(one.*field);
    return Median(x);
  };
  std::printf("median of %d rounds, alternating                                   wall ms     CPU ms\n",
              rounds);
  auto line = [&](const char* command, const std::vector<Timed>& v, const std::string& build) {
    std::string what = "`trainbench " + std::string(command) + "` (" + build + ")";
    std::printf("  %-62s %10.1f %10.1f\n", what.c_str(), column(v, &Timed::wall_ms),
                column(v, &Timed::cpu_ms));
  };
  line("show", mine, "this build");
  if (other) line("show", others, other);
  line("report", my_reports, "this build");
  if (other) line("report", other_reports, other);
  std::printf("  every series' statistics, chunk by chunk, selection, 2 threads %10.1f\n", Median(chunkwise));
  std::printf("  baseline: every series' points read whole and sorted           %10.1f   (%.2fx)\n",
              Median(sorted), Median(sorted) / Median(chunkwise));
  if (!std::getenv("KEEP")) std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace tb

int main(int argc, char** argv) { return tb::Main(argc, argv); }
