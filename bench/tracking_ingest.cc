// Points per second the tracking API stores through runs/log-batch (issue goal: at least
// 200,000 on one core).
//
//   build/bench/tracking_ingest [batches=300] [rounds=3]
//
// Each batch is what a training script's client sends: 1,000 metrics (10 keys, 100 steps,
// values printed with few digits), as MLflow's JSON. Measured three ways, same batches:
//  - api:  TrackingApi::Handle() called directly: parsing, validation and storing, on one
//          thread (the endpoint's own cost on one core);
//  - http: the same over HTTP from one keep-alive client connection in this process
//          (client and server threads share the machine's 2 cores);
//  - the baseline MLflow's client would need: one runs/log-metric request per point, over
//    HTTP, for a 2,000-point sample (how `mlflow.log_metric` sends without batching).
#include <httplib.h>
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/time.h"
#include "bench/bench_stats.h"
#include "store/store.h"
#include "track/tracking_api.h"

namespace tb {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::vector<std::string> MakeBatches(const std::string& run_id, int batches) {
  std::vector<std::string> out;
  int64_t t = 1763777000000;
  int step = 0;
  for (int b = 0; b < batches; ++b) {
    json metrics = json::array();
    for (int s = 0; s < 100; ++s, ++step, t += 50) {
      for (int k = 0; k < 10; ++k) {
        double v = static_cast<double>((step * 37 + k * 101) % 10000) / 1000.0;  // 0.000 .. 9.999
        metrics.push_back(
            {{"key", "metric_" + std::to_string(k)}, {"value", v}, {"timestamp", t}, {"step", step}});
      }
    }
    out.push_back(json{{"run_id", run_id}, {"metrics", metrics}}.dump());
  }
  return out;
}

struct Setup {
  std::unique_ptr<Store> store;
  std::string run_id;
};

Setup NewStore(const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  Setup s;
  s.store = Store::Open((dir / "bench.db").string()).value();
  RunRecord run;
  run.id = NewRunId();
  run.experiment = "bench";
  run.name = "ingest";
  run.start_ms = WallMillis();
  Must(s.store->EnsureExperiment("bench"));
  Must(s.store->CreateRun(run));
  s.run_id = run.id;
  return s;
}

}  // namespace
}  // namespace tb

int main(int argc, char** argv) {
  using namespace tb;
  int batches = argc > 1 ? std::atoi(argv[1]) : 300;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  fs::path dir = fs::temp_directory_path() / "tb-bench-tracking";
  std::vector<double> api_rate, http_rate, http_cpu_us, single_rate;
  for (int round = 0; round < rounds; ++round) {
    {  // api: no HTTP
      Setup s = NewStore(dir);
      std::vector<std::string> bodies = MakeBatches(s.run_id, batches);
      TrackingApi api(*s.store);
      int64_t t0 = MonotonicNanos();
      for (const std::string& body : bodies) {
        ApiResponse r = api.Handle({"POST", "/api/2.0/mlflow/runs/log-batch", {}, body});
        if (r.status != 200) {
          std::fprintf(stderr, "log-batch failed: %s\n", r.body.c_str());
          return 1;
        }
      }
      int64_t elapsed = MonotonicNanos() - t0;
      api_rate.push_back(batches * 1000.0 / (static_cast<double>(elapsed) / 1e9));
    }
    {  // http, batched
      Setup s = NewStore(dir);
      std::vector<std::string> bodies = MakeBatches(s.run_id, batches);
      TrackingApi api(*s.store);
      HttpServer server({api.Handler()});
      if (!server.Start(HttpServerOptions{}).ok()) return 1;
      httplib::Client client("127.0.0.1", server.port());
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      int64_t t0 = MonotonicNanos();
      int64_t c0 = ProcessCpuNanos();
      for (const std::string& body : bodies) {
        auto r = client.Post("/api/2.0/mlflow/runs/log-batch", body, "application/json");
        if (!r || r->status != 200) return 1;
      }
      int64_t elapsed = MonotonicNanos() - t0;
      int64_t cpu = ProcessCpuNanos() - c0;
      http_rate.push_back(batches * 1000.0 / (static_cast<double>(elapsed) / 1e9));
      http_cpu_us.push_back(static_cast<double>(cpu) / 1e3 / (batches * 1000.0));
    }
    {  // baseline: one log-metric request per point
      Setup s = NewStore(dir);
      TrackingApi api(*s.store);
      HttpServer server({api.Handler()});
      if (!server.Start(HttpServerOptions{}).ok()) return 1;
      httplib::Client client("127.0.0.1", server.port());
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      const int n = 2000;
      int64_t t0 = MonotonicNanos();
      for (int i = 0; i < n; ++i) {
        std::string body = json{
            {"run_id", s.run_id},
            {"key", "loss"},
            {"value", i / 1000.0},
            {"timestamp", 1763777000000 + i},
            {"step", i}}.dump();
        auto r = client.Post("/api/2.0/mlflow/runs/log-metric", body, "application/json");
        if (!r || r->status != 200) return 1;
      }
      int64_t elapsed = MonotonicNanos() - t0;
      single_rate.push_back(n / (static_cast<double>(elapsed) / 1e9));
    }
  }
  fs::remove_all(dir);
  std::printf("tracking API ingest, %d batches of 1,000 points, median of %d rounds\n", batches, rounds);
  std::printf("  %-52s %14s\n", "", "points/s");
  std::printf("  %-52s %14.0f\n", "log-batch, API on one thread (no HTTP)", Median(api_rate));
  std::printf("  %-52s %14.0f   (%.2f us CPU/point, client+server)\n", "log-batch over HTTP, one connection",
              Median(http_rate), Median(http_cpu_us));
  std::printf("  %-52s %14.0f\n", "baseline: log-metric, one request per point", Median(single_rate));
  std::printf("  goal: 200,000 points/s on one core\n");
  return 0;
}
