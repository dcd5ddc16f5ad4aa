// Store ingest rate (points per CPU-second) and bytes per stored point: trainbench's
// chunked store against the same points stored one SQL row per point in MLflow's
// `metrics` table layout (key, value, timestamp, run_uuid, step, is_nan, with MLflow's
// six-column primary key), in the same SQLite build with the same pragmas. Both sides
// commit once per sampled second, as a live run does (trainbench's writer flushes every
// second; an MLflow client logging a tick's metrics with log_batch is one transaction).
// MLflow's extra latest_metrics upkeep is left out, which flatters the baseline.
//
//   build/bench/store_ingest [synthetic-hours=3] [rounds=3]
//
// First, where the bytes of the recorded trace go (the file, an empty store, chunk data,
// summaries, each table's pages) beside whole columns under general compression.
//
// Data: testdata/radt-dcgm-trace-1hz.json.zst (a real 9,345 s DCGM trace) and a
// synthetic 3-hour run of 30 metrics at 1 Hz printed with typical tool precision, and a
// 1-hour run of 210 metrics (a wide node: many GPUs and threads).
#include <sqlite3.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "base/time.h"
#include "bench/bench_stats.h"
#include "store/series_writer.h"
#include "store/store.h"
#include "tests/helpers/recorded_trace.h"

namespace tb {
namespace {

namespace fs = std::filesystem;

struct Dataset {
  std::string name;
  std::vector<std::string> metrics;
  std::vector<int64_t> times;
  std::vector<std::vector<double>> columns;  // columns[m][tick]
  size_t points() const { return metrics.size() * times.size(); }
};

Dataset LoadTrace() {
  nlohmann::json trace = ReadRecordedTrace(kRecordedTrace);
  Dataset d{"recorded DCGM trace", {}, {}, {}};
  for (const auto& t : trace["Timestamp"]) d.times.push_back(t.get<int64_t>());
  for (auto& [name, column] : trace.items()) {
    if (name == "Timestamp" || name == "MSPast") continue;
    std::vector<double> values;
    for (const auto& v : column) values.push_back(v.is_number() ? v.get<double>() : std::nan(""));
    d.metrics.push_back(name);
    d.columns.push_back(std::move(values));
  }
  return d;
}

double RoundTo(double v, int decimals) {
  double s = std::pow(10.0, decimals);
  return std::round(v * s) / s;
}

// `replicas` copies of a 30-metric set: 1 is a one-GPU run, 7 (210 series) is closer to
// an 8-GPU node with DCGM's profiling fields and per-thread host metrics.
Dataset Synthetic(double hours, int replicas) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 1);
  Dataset d{"synthetic " + std::to_string(30 * replicas) + " metrics", {}, {}, {}};
  size_t ticks = static_cast<size_t>(hours * 3600);
  int64_t t = 1763777000000;
  for (size_t i = 0; i < ticks; ++i) {
    t += 1000 + static_cast<int64_t>(rng() % 7) - 3;
    d.times.push_back(t);
  }
  // (name, decimals, level, noise, kind) — kind 0 gauge, 1 counter
  struct Spec {
    const char* name;
    int decimals;
    double level, jitter;
    bool counter;
  };
  std::vector<Spec> specs;
  for (int r = 0; r < replicas; ++r) {
    for (int g = 0; g < 8; ++g) specs.push_back({"gpu.sm.active_ratio", 3, 0.6, 0.05, false});
    for (int g = 0; g < 6; ++g) specs.push_back({"gpu.utilization_percent", 0, 80, 8, false});
    for (int g = 0; g < 4; ++g) specs.push_back({"gpu.power.draw_watts", 3, 250, 20, false});
    for (int g = 0; g < 2; ++g) specs.push_back({"gpu.energy.consumed_joules", 3, 250, 20, true});
    for (int g = 0; g < 4; ++g) specs.push_back({"disk.read_bytes_per_second", 0, 5e7, 1e7, false});
    for (int g = 0; g < 4; ++g) specs.push_back({"proc.memory.rss_bytes", 0, 8e9, 1e6, false});
    for (int g = 0; g < 2; ++g) specs.push_back({"gpu.temperature_celsius", 0, 65, 1, false});
  }
  for (size_t m = 0; m < specs.size(); ++m) {
    const Spec& s = specs[m];
    d.metrics.push_back(std::string(s.name) + "#" + std::to_string(m));
    std::vector<double> values;
    double level = s.level, total = 0;
    for (size_t i = 0; i < ticks; ++i) {
      level = 0.99 * level + 0.01 * s.level + s.jitter * 0.1 * noise(rng);
      double v = std::max(0.0, level + s.jitter * noise(rng));
      if (s.counter) {
        total += v;
        values.push_back(RoundTo(total, s.decimals));
      } else {
        values.push_back(RoundTo(v, s.decimals));
      }
    }
    d.columns.push_back(std::move(values));
  }
  return d;
}

struct Outcome {
  double cpu_seconds = 0;
  double bytes = 0;
};

// Ticks per transaction: 1 is a live run committing every second; more is bulk loading
// in batches of about 1,000 points, MLflow's log_batch limit.
size_t g_ticks_per_commit = 1;

// `runs` runs of the same points, one after another, into one store.
Outcome IngestTrainbench(const Dataset& d, const fs::path& path, int runs = 1) {
  fs::remove(path);
  Outcome o;
  {
    auto store = Store::Open(path.string()).value();
    (void)store->EnsureExperiment("bench");
    int64_t start = ProcessCpuNanos();
    for (int r = 0; r < runs; ++r) {
      RunRecord run;
      run.id = NewRunId();
      run.experiment = "bench";
      run.name = "ingest";
      (void)store->CreateRun(run);
      SeriesWriter writer(*store, run.id);
      std::vector<SeriesWriter::SeriesHandle> handles;
      for (const std::string& metric : d.metrics) handles.push_back(writer.Handle(metric, ""));
      for (size_t i = 0; i < d.times.size(); ++i) {
        for (size_t m = 0; m < d.metrics.size(); ++m) {
          writer.Append(handles[m], Point{d.times[i], d.columns[m][i], kNoStep});
        }
        if ((i + 1) % g_ticks_per_commit == 0 && !writer.Flush().ok()) std::abort();
      }
      if (!writer.Close().ok()) std::abort();
      if (!store->FinishRun(run.id, d.times.back(), kFinished, 0, std::nullopt, "").ok()) std::abort();
    }
    o.cpu_seconds = static_cast<double>(ProcessCpuNanos() - start) / 1e9;
  }
  o.bytes = static_cast<double>(fs::file_size(path));
  return o;
}

Outcome IngestMlflowRows(const Dataset& d, const fs::path& path) {
  fs::remove(path);
  Outcome o;
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db,
               "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
               "CREATE TABLE metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL,"
               " timestamp BIGINT NOT NULL, run_uuid VARCHAR(32) NOT NULL,"
               " step BIGINT DEFAULT '0' NOT NULL, is_nan BOOLEAN DEFAULT '0' NOT NULL,"
               " CONSTRAINT metric_pk PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));",
               nullptr, nullptr, nullptr);
  sqlite3_stmt* insert = nullptr;
  sqlite3_prepare_v2(db,
                     "INSERT OR IGNORE INTO metrics(key, value, timestamp, run_uuid, step, is_nan) "
                     "VALUES(?, ?, ?, ?, 0, ?)",
                     -1, &insert, nullptr);
  std::string run_uuid = NewRunId();
  int64_t start = ProcessCpuNanos();
  for (size_t i = 0; i < d.times.size(); ++i) {
    if (i % g_ticks_per_commit == 0) sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
    for (size_t m = 0; m < d.metrics.size(); ++m) {
      double v = d.columns[m][i];
      bool nan = std::isnan(v);
      sqlite3_bind_text(insert, 1, d.metrics[m].c_str(), -1, SQLITE_STATIC);
      sqlite3_bind_double(insert, 2, nan ? 0 : v);  // MLflow stores NaN as 0 with is_nan
      sqlite3_bind_int64(insert, 3, d.times[i]);
      sqlite3_bind_text(insert, 4, run_uuid.c_str(), -1, SQLITE_STATIC);
      sqlite3_bind_int(insert, 5, nan ? 1 : 0);
      if (sqlite3_step(insert) != SQLITE_DONE) std::abort();
      sqlite3_reset(insert);
    }
    if ((i + 1) % g_ticks_per_commit == 0 || i + 1 == d.times.size()) {
      sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    }
  }
  o.cpu_seconds = static_cast<double>(ProcessCpuNanos() - start) / 1e9;
  sqlite3_finalize(insert);
  sqlite3_close(db);  // checkpoints the WAL into the file
  o.bytes = static_cast<double>(fs::file_size(path));
  return o;
}

int g_rounds = 3;

void Compare(const Dataset& d, const fs::path& dir, bool bulk) {
  g_ticks_per_commit = bulk ? std::max<size_t>(1, 1000 / d.metrics.size()) : 1;
  std::vector<double> ours_rate, rows_rate, ours_bytes, rows_bytes;
  for (int round = 0; round < g_rounds; ++round) {
    Outcome a = IngestTrainbench(d, dir / "trainbench.db");
    Outcome b = IngestMlflowRows(d, dir / "mlflow-rows.db");
    ours_rate.push_back(static_cast<double>(d.points()) / a.cpu_seconds);
    rows_rate.push_back(static_cast<double>(d.points()) / b.cpu_seconds);
    ours_bytes.push_back(a.bytes / static_cast<double>(d.points()));
    rows_bytes.push_back(b.bytes / static_cast<double>(d.points()));
  }
  double r1 = Median(ours_rate), r2 = Median(rows_rate), b1 = Median(ours_bytes), b2 = Median(rows_bytes);
  std::printf("%s, %s: %zu metrics x %zu ticks = %zu points (median of %d, alternating)\n", d.name.c_str(),
              bulk ? "bulk, ~1000 points a commit" : "live, one commit a second", d.metrics.size(),
              d.times.size(), d.points(), g_rounds);
  std::printf("  %-34s %12s %14s\n", "", "points/cpu-s", "bytes/point");
  std::printf("  %-34s %12.0f %14.2f\n", "trainbench chunks", r1, b1);
  std::printf("  %-34s %12.0f %14.2f\n", "MLflow metrics rows (same SQLite)", r2, b2);
  std::printf("  %-34s %11.1fx %13.1fx\n", "trainbench advantage", r1 / r2, b2 / b1);
}

// Zigzag LEB128 of `v` appended to `out`.
void PutZigzag(std::string& out, int64_t v) {
  uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  while (z >= 0x80) {
    out.push_back(static_cast<char>((z & 0x7f) | 0x80));
    z >>= 7;
  }
  out.push_back(static_cast<char>(z));
}

size_t ZstdStrongest(const std::string& in) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), ZSTD_maxCLevel());
  return ZSTD_isError(n) ? in.size() : n;
}

// Where the bytes of a store go (issue 20, goal 2 asks for 1.2 a point on the recorded
// trace): the file, the pages every store has before its first point, the file of a
// store of ten runs of the same points (where those pages weigh a tenth), the chunks' data
// (the codec) and summaries, and each table's and index's pages; beside what general
// compression makes of the same data without chunks or pages: one shared time column and
// each value column whole (not in chunks of 4,096), as exact scaled decimals, delta-coded
// varints, compressed by zstd at its strongest level (the codec's varint form, which
// chunks used before byte planes; taken until then for the least this data needs).
void WhereTheBytesGo(const Dataset& d, const fs::path& dir) {
  g_ticks_per_commit = 1;
  fs::path empty_path = dir / "empty.db", path = dir / "trainbench.db";
  fs::remove(empty_path);
  {
    auto store = Store::Open(empty_path.string()).value();
    RunRecord run;
    run.id = NewRunId();
    run.experiment = "bench";
    (void)store->EnsureExperiment("bench");
    (void)store->CreateRun(run);
  }
  double empty = static_cast<double>(fs::file_size(empty_path));
  double file = IngestTrainbench(d, path).bytes;
  constexpr int kRuns = 10;
  double many = IngestTrainbench(d, dir / "runs.db", kRuns).bytes;
  double data = 0, summaries = 0;
  std::string pages_report;
  {
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_stmt* q = nullptr;
    // Summaries live in each series' overview (schema 7); a store made before keeps them
    // in the chunks' rows.
    sqlite3_prepare_v2(db,
                       "SELECT (SELECT SUM(LENGTH(data)) FROM chunks) + (SELECT IFNULL(SUM(LENGTH(data)), 0) "
                       "FROM chunk_times), "
                       "(SELECT IFNULL(SUM(LENGTH(summary)), 0) "
                       "FROM chunks) + (SELECT IFNULL(SUM(LENGTH(data)), 0) FROM series_overview)",
                       -1, &q, nullptr);
    if (sqlite3_step(q) == SQLITE_ROW) {
      data = sqlite3_column_double(q, 0);
      summaries = sqlite3_column_double(q, 1);
    }
    sqlite3_finalize(q);
    // Each b-tree's pages: what its rows hold and what its pages leave unused.
    sqlite3_prepare_v2(db,
                       "SELECT name, COUNT(*), SUM(pgsize), SUM(payload), SUM(unused) FROM dbstat "
                       "GROUP BY name ORDER BY SUM(pgsize) DESC",
                       -1, &q, nullptr);
    pages_report += "  each table and index: pages, bytes, of them payload, unused\n";
    while (sqlite3_step(q) == SQLITE_ROW) {
      char line[200];
      std::snprintf(line, sizeof line, "    %-28s %5lld %9lld %9lld %9lld\n",
                    reinterpret_cast<const char*>(sqlite3_column_text(q, 0)), sqlite3_column_int64(q, 1),
                    sqlite3_column_int64(q, 2), sqlite3_column_int64(q, 3), sqlite3_column_int64(q, 4));
      pages_report += line;
    }
    sqlite3_finalize(q);
    sqlite3_prepare_v2(db, "PRAGMA freelist_count", -1, &q, nullptr);
    if (sqlite3_step(q) == SQLITE_ROW) {
      pages_report += "    free pages: " + std::to_string(sqlite3_column_int64(q, 0)) + "\n";
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
  }
  std::string times;
  int64_t previous = 0, previous_delta = 0;
  for (int64_t t : d.times) {
    PutZigzag(times, (t - previous) - previous_delta);
    previous_delta = t - previous;
    previous = t;
  }
  double floor = static_cast<double>(ZstdStrongest(times));
  for (const std::vector<double>& column : d.columns) {
    // The fewest decimals that give every value exactly (NaN as a marker of its own).
    int decimals = 0;
    for (; decimals < 6; ++decimals) {
      double scale = std::pow(10.0, decimals);
      bool exact = std::all_of(column.begin(), column.end(), [&](double v) {
        return std::isnan(v) || static_cast<double>(std::llround(v * scale)) / scale == v;
      });
      if (exact) break;
    }
    std::string packed;
    int64_t last = 0;
    double scale = std::pow(10.0, decimals);
    for (double v : column) {
      int64_t n = std::isnan(v) ? last : std::llround(v * scale);
      PutZigzag(packed, n - last);
      packed.push_back(std::isnan(v) ? '\1' : '\0');
      last = n;
    }
    floor += static_cast<double>(ZstdStrongest(packed));
  }
  double points = static_cast<double>(d.points());
  std::printf("where the bytes of %s go (live), bytes a point:\n", d.name.c_str());
  std::printf("  %-66s %6.2f\n", "the SQLite file", file / points);
  std::printf("  %-66s %6.2f\n", "the file beyond an empty store (its tables' first pages)",
              (file - empty) / points);
  std::printf("  %-66s %6.2f\n", "the file of a store of 10 runs of it", many / points / kRuns);
  std::printf("  %-66s %6.2f\n", "chunk data (the codec, chunks of 4,096 points, times of a tick once)",
              data / points);
  std::printf("  %-66s %6.2f\n", "series overviews (chunk summaries and spans)", summaries / points);
  std::printf("  %-66s %6.2f\n", "whole columns as varint deltas, one time column, zstd -19", floor / points);
  std::fputs(pages_report.c_str(), stdout);
}

}  // namespace
}  // namespace tb

int main(int argc, char** argv) {
  using namespace tb;
  double hours = argc > 1 ? std::atof(argv[1]) : 3;
  if (argc > 2) g_rounds = std::atoi(argv[2]);
  fs::path dir = fs::temp_directory_path() / ("tb-store-bench-" + std::to_string(getpid()));
  fs::create_directories(dir);
  Dataset trace = LoadTrace(), synthetic = Synthetic(hours, 1), wide = Synthetic(hours / 3, 7);
  WhereTheBytesGo(trace, dir);
  for (bool bulk : {false, true}) {
    Compare(trace, dir, bulk);
    Compare(synthetic, dir, bulk);
    Compare(wide, dir, bulk);
  }
  fs::remove_all(dir);
  return 0;
}
