// The shared PostgreSQL store against MLflow's metrics table in the same server, and its
// series query against the SQLite store's.
//   build/bench/pg_store [runs=20] [points=100000]
// Starts a throw-away PostgreSQL server (as tests do). (1) Ingest: `runs` runs of
// `points` points of one metric through trainbench's SeriesWriter into the PostgreSQL
// store; the same points as rows of MLflow's `metrics` table (its columns and primary
// key), written with COPY (the fastest way rows get in) and with multi-row INSERTs of 1,000
// (what a log-batch of MLflow's amounts to). Points per second and bytes per point
// (pg_total_relation_size of the tables, indexes included). (2) The serve benchmark's query
// (50 runs x 100,000 points at a 2,000-point budget, through ServeApi in-process) on
// PostgreSQL and on SQLite, cold (a new ServeApi) and warm; the same for 50 runs of 10,000
// points (too short for summaries: drawn from every point), the means of their workloads
// (five of ten runs), and a live chart's refresh of 50 running runs.
#include <libpq-fe.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_stats.h"
#include "serve/serve_api.h"
#include "store/series_writer.h"
#include "store/store.h"
#include "tests/helpers/postgres_cluster.h"

namespace tb {
namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double Value(int64_t i, int r) {
  return 50 + r + 10 * std::sin(static_cast<double>(i) / 300.0) + (i % 7) * 0.01;
}

// `runs` finished runs of `points` points at 1 Hz in `experiment`, ten runs a workload
// ("w0", "w1", ...).
std::vector<std::string> WriteRuns(Store& store, int runs, int64_t points,
                                   const std::string& experiment = "bench") {
  std::vector<std::string> ids;
  store.EnsureExperiment(experiment).value();
  for (int r = 0; r < runs; ++r) {
    RunRecord run;
    run.id = NewRunId();
    run.experiment = experiment;
    run.workload = "w" + std::to_string(r / 10);
    run.name = "r" + std::to_string(r);
    run.command = "bench";
    run.start_ms = 1763777000000;
    Must(store.CreateRun(run));
    SeriesWriter writer(store, run.id);
    for (int64_t i = 0; i < points; ++i)
      writer.Append("gpu.utilization.gpu_ratio", "gpu=0", Point{run.start_ms + i * 1000, Value(i, r)});
    Must(writer.Close());
    Must(store.FinishRun(run.id, run.start_ms + points * 1000, kFinished, 0, std::nullopt, ""));
    ids.push_back(run.id);
  }
  return ids;
}

int64_t Exec(PGconn* c, const std::string& sql) {
  PGresult* r = PQexec(c, sql.c_str());
  int64_t v = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 ? std::atoll(PQgetvalue(r, 0, 0)) : 0;
  if (PQresultStatus(r) != PGRES_TUPLES_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
    std::fprintf(stderr, "%s: %s", sql.substr(0, 60).c_str(), PQerrorMessage(c));
  PQclear(r);
  return v;
}

constexpr const char* kMlflowMetrics =
    "CREATE TABLE metrics(key VARCHAR(250) NOT NULL, value DOUBLE PRECISION NOT NULL, timestamp BIGINT NOT "
    "NULL, "
    "run_uuid VARCHAR(32) NOT NULL, step BIGINT NOT NULL DEFAULT 0, is_nan BOOLEAN NOT NULL DEFAULT false, "
    "PRIMARY KEY(key, timestamp, step, run_uuid, value, is_nan))";

// MLflow's rows by COPY; seconds.
double MlflowCopy(PGconn* c, const std::vector<std::string>& ids, int64_t points) {
  auto t = std::chrono::steady_clock::now();
  PQclear(PQexec(c, "COPY metrics(key, value, timestamp, run_uuid, step, is_nan) FROM STDIN"));
  std::string buf;
  for (size_t r = 0; r < ids.size(); ++r) {
    for (int64_t i = 0; i < points; ++i) {
      char line[200];
      int n = std::snprintf(line, sizeof line, "gpu.utilization.gpu_ratio\t%.17g\t%lld\t%s\t%lld\tf\n",
                            Value(i, static_cast<int>(r)), 1763777000000LL + i * 1000, ids[r].c_str(),
                            static_cast<long long>(i));
      buf.append(line, static_cast<size_t>(n));
      if (buf.size() > (1 << 20)) {
        PQputCopyData(c, buf.data(), static_cast<int>(buf.size()));
        buf.clear();
      }
    }
  }
  PQputCopyData(c, buf.data(), static_cast<int>(buf.size()));
  PQputCopyEnd(c, nullptr);
  PQclear(PQgetResult(c));
  return Seconds(t);
}

// MLflow's rows by INSERTs of 1,000 rows each (one log-batch); seconds.
double MlflowInserts(PGconn* c, const std::vector<std::string>& ids, int64_t points) {
  auto t = std::chrono::steady_clock::now();
  for (size_t r = 0; r < ids.size(); ++r) {
    for (int64_t i = 0; i < points; i += 1000) {
      std::string sql = "INSERT INTO metrics(key, value, timestamp, run_uuid, step, is_nan) VALUES ";
      for (int64_t j = i; j < std::min(points, i + 1000); ++j) {
        char row[200];
        std::snprintf(row, sizeof row, "%s('gpu.utilization.gpu_ratio', %.17g, %lld, '%s', %lld, false)",
                      j > i ? "," : "", Value(j, static_cast<int>(r)), 1763777000000LL + j * 1000,
                      ids[r].c_str(), static_cast<long long>(j));
        sql += row;
      }
      PQclear(PQexec(c, sql.c_str()));
    }
  }
  return Seconds(t);
}

// `runs` running runs of one series at 10 Hz, `points` each, flushed every second as a
// run's writer does, the newest at `end_ms`; their writers stay open (`writers`).
std::vector<std::string> WriteRunningRuns(Store& store, int runs, int64_t points, int64_t end_ms,
                                          std::vector<std::unique_ptr<SeriesWriter>>& writers) {
  std::vector<std::string> ids;
  store.EnsureExperiment("live").value();
  for (int r = 0; r < runs; ++r) {
    RunRecord run;
    run.id = NewRunId();
    run.experiment = "live";
    run.name = "r" + std::to_string(r);
    run.command = "bench";
    run.start_ms = end_ms - (points - 1) * 100;
    Must(store.CreateRun(run));
    auto& writer = writers.emplace_back(std::make_unique<SeriesWriter>(store, run.id));
    for (int64_t i = 0; i < points; ++i) {
      writer->Append("gpu.utilization.gpu_ratio", "gpu=0", Point{run.start_ms + i * 100, Value(i, r)});
      if (i % 10 == 9) Must(writer->Flush());
    }
    Must(writer->Flush());
    ids.push_back(run.id);
  }
  return ids;
}

// A request handled by a ServeApi made for it (cold: nothing of the store read yet), or
// by one that answered it once before (warm).
double HandleMs(Store& store, const ApiRequest& req, bool warm_first) {
  ServeApi api(store);
  if (warm_first) api.Handle(req);
  auto t = std::chrono::steady_clock::now();
  ApiResponse r = api.Handle(req);
  double ms = Seconds(t) * 1000;
  if (r.status != 200) std::fprintf(stderr, "query failed: %s\n", r.body.c_str());
  return ms;
}

// The chart of `ids` at a budget of 2,000 points a run.
ApiRequest SeriesRequest(const std::vector<std::string>& ids) {
  std::string runs;
  for (const std::string& id : ids) runs += (runs.empty() ? "" : ",") + id;
  return {"GET",
          "/api/v1/series",
          {{"runs", runs}, {"metric", "gpu.utilization.gpu_ratio"}, {"budget", "2000"}},
          ""};
}

// The means of the five workloads of 50 runs WriteRuns made in `experiment`, in `buckets`.
ApiRequest MeansRequest(const std::string& experiment, int buckets) {
  std::string workloads;
  for (int w = 0; w < 5; ++w) workloads += (w > 0 ? "," : "") + experiment + ":w" + std::to_string(w);
  return {"GET",
          "/api/v1/aggregate",
          {{"workloads", workloads},
           {"metric", "gpu.utilization.gpu_ratio"},
           {"budget", std::to_string(buckets)}},
          ""};
}

// Each request cold and warm on both stores, alternating, median of 5; one line each.
void Compare(const char* what, Store& pg, const ApiRequest& on_pg, Store& sqlite,
             const ApiRequest& on_sqlite) {
  std::vector<double> pg_cold, pg_warm, sq_cold, sq_warm;
  for (int i = 0; i < 5; ++i) {
    pg_cold.push_back(HandleMs(pg, on_pg, false));
    sq_cold.push_back(HandleMs(sqlite, on_sqlite, false));
    pg_warm.push_back(HandleMs(pg, on_pg, true));
    sq_warm.push_back(HandleMs(sqlite, on_sqlite, true));
  }
  std::printf("%s (ServeApi in-process, median of 5, ms)\n", what);
  std::printf("  %-20s cold %8.1f   warm %8.1f\n", "PostgreSQL", Median(pg_cold), Median(pg_warm));
  std::printf("  %-20s cold %8.1f   warm %8.1f\n", "SQLite", Median(sq_cold), Median(sq_warm));
  std::printf("  PostgreSQL / SQLite: cold %.2fx, warm %.2fx\n", Median(pg_cold) / Median(sq_cold),
              Median(pg_warm) / Median(sq_warm));
}

int Main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 20;
  int64_t points = argc > 2 ? std::atoll(argv[2]) : 100000;
  PostgresCluster cluster;
  if (!cluster.ok()) {
    std::fprintf(stderr, "%s\n", cluster.error().c_str());
    return 1;
  }
  std::string uri = cluster.CreateDatabase("bench");
  PGconn* c = PQconnectdb(uri.c_str());
  auto store = Store::Open(uri).value();
  double total = static_cast<double>(runs) * static_cast<double>(points);

  auto t = std::chrono::steady_clock::now();
  std::vector<std::string> ids = WriteRuns(*store, runs, points);
  double ours_s = Seconds(t);
  int64_t ours_bytes = Exec(c,
                            "SELECT pg_total_relation_size('chunks') + pg_total_relation_size('journal') + "
                            "pg_total_relation_size('series')");

  Exec(c, kMlflowMetrics);
  double copy_s = MlflowCopy(c, ids, points);
  int64_t mlflow_bytes = Exec(c, "SELECT pg_total_relation_size('metrics')");
  Exec(c, "DROP TABLE metrics");
  Exec(c, kMlflowMetrics);
  double insert_s = MlflowInserts(c, ids, points);

  std::printf("PostgreSQL 15, %d runs x %lld points (%.0f points)\n", runs, static_cast<long long>(points),
              total);
  std::printf("  %-58s %12s %14s\n", "", "points/s", "bytes/point");
  std::printf("  %-58s %12.0f %14.2f\n", "trainbench store (SeriesWriter: chunks)", total / ours_s,
              static_cast<double>(ours_bytes) / total);
  std::printf("  %-58s %12.0f %14.2f\n", "MLflow's metrics table, COPY", total / copy_s,
              static_cast<double>(mlflow_bytes) / total);
  std::printf("  %-58s %12.0f %14s\n", "MLflow's metrics table, INSERTs of 1,000 rows", total / insert_s,
              "(same)");
  std::printf(
      "  trainbench vs MLflow's table: %.1fx fewer bytes; %.1fx the ingest rate of COPY, %.1fx of INSERTs\n",
      static_cast<double>(mlflow_bytes) / static_cast<double>(ours_bytes), copy_s / ours_s,
      insert_s / ours_s);

  // The serve query on both stores: 50 runs of 100,000 points.
  std::string sqlite_path = "/tmp/tb-pg-bench-" + std::to_string(getpid()) + ".db";
  auto sqlite = Store::Open(sqlite_path).value();
  std::string q_uri = cluster.CreateDatabase("query");
  auto pg = Store::Open(q_uri).value();
  std::vector<std::string> pg_ids = WriteRuns(*pg, 50, 100000);
  std::vector<std::string> sqlite_ids = WriteRuns(*sqlite, 50, 100000);
  Compare("series query, 50 runs x 100,000 points, budget 2,000", *pg, SeriesRequest(pg_ids), *sqlite,
          SeriesRequest(sqlite_ids));
  // Runs too short for a summary level at that budget, drawn from every point.
  std::vector<std::string> pg_short = WriteRuns(*pg, 50, 10000, "short");
  std::vector<std::string> sqlite_short = WriteRuns(*sqlite, 50, 10000, "short");
  Compare("series query, 50 runs x 10,000 points, budget 2,000", *pg, SeriesRequest(pg_short), *sqlite,
          SeriesRequest(sqlite_short));
  // A workload's mean: of 100 buckets (from the runs' overviews), and of 1,000 (100 points
  // a bucket: from every chunk).
  for (int buckets : {100, 1000}) {
    std::string what =
        "means of 5 workloads x 10 runs x 100,000 points, " + std::to_string(buckets) + " buckets";
    Compare(what.c_str(), *pg, MeansRequest("bench", buckets), *sqlite, MeansRequest("bench", buckets));
  }
  Compare("means of 5 workloads x 10 runs x 10,000 points, 1,000 buckets", *pg, MeansRequest("short", 1000),
          *sqlite, MeansRequest("short", 1000));
  // A live chart of 50 running runs (10 minutes at 10 Hz, a minute and a half of it in
  // their journals): the page's refresh every 3 s, the points after the newest it has.
  int64_t end_ms = 1763777000000;
  std::vector<std::unique_ptr<SeriesWriter>> pg_writers, sqlite_writers;
  std::vector<std::string> pg_live = WriteRunningRuns(*pg, 50, 6000, end_ms, pg_writers);
  std::vector<std::string> sqlite_live = WriteRunningRuns(*sqlite, 50, 6000, end_ms, sqlite_writers);
  auto refresh = [&](const std::vector<std::string>& live) {
    ApiRequest req = SeriesRequest(live);
    req.query.emplace("x", "wall");
    req.query.emplace("since", std::to_string(end_ms - 3000));
    return req;
  };
  Compare("live refresh of 50 running runs (since 3 s before the newest point)", *pg, refresh(pg_live),
          *sqlite, refresh(sqlite_live));
  std::filesystem::remove(sqlite_path);
  std::filesystem::remove(sqlite_path + "-wal");
  std::filesystem::remove(sqlite_path + "-shm");
  PQfinish(c);
  return 0;
}

}  // namespace
}  // namespace tb

int main(int argc, char** argv) { return tb::Main(argc, argv); }
