// Many kept-alive clients of one tracking server: what a run's server meets when a node's
// ranks, DataLoader workers and MLflow clients all log to it, and a shared `trainbench
// serve` when a cluster's scripts do.
//
//   build/bench/tracking_clients [clients=48] [seconds=10] [workers=16]
//
// Each client is a thread with its own connection that posts a log-batch of 70 values
// every 0.5 s (the digits example's client sends about 140 values a second), for
// `seconds`; the clients start 10 ms apart. The server is the tracking API on an
// HttpServer with `workers` threads (a run's has 16), storing into SQLite. Two ways:
//  - kept-alive: one connection each, kept between requests (MLflow's client keeps its
//    connections in a requests.Session; trainbench's Python client keeps one);
//  - a connection per request (trainbench's Python client before 2026-11-26).
// For each: requests answered, failed (no answer within 10 s), the answers' latency
// (median, 99th percentile, largest), requests that waited over 1 s, and the CPU per
// request of the whole process (clients and server) and of the server's workers.
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/time.h"
#include "bench/bench_stats.h"
#include "store/store.h"
#include "track/tracking_api.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Outcome {
  std::vector<double> latency_ms;  // of the answered requests
  int failed = 0;
  double process_cpu_ms = 0;
  double worker_cpu_ms = 0;
};

Outcome RunClients(int clients, int seconds, size_t workers, bool kept_alive) {
  using namespace tb;
  fs::path dir = fs::temp_directory_path() / "tb-bench-tracking-clients";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::unique_ptr<Store> store = Store::Open((dir / "bench.db").string()).value();
  RunRecord run;
  run.id = NewRunId();
  run.experiment = "bench";
  run.name = "clients";
  run.start_ms = WallMillis();
  if (!store->EnsureExperiment("bench").ok() || !store->CreateRun(run).ok()) std::exit(1);
  TrackingApi api(*store);
  HttpServer server({api.Handler()});
  HttpServerOptions options = TrackingApi::ServerOptions();
  options.workers = workers;
  if (!server.Start(options).ok()) std::exit(1);

  Outcome out;
  std::mutex mu;
  int64_t cpu0 = ProcessCpuNanos();
  int64_t start = MonotonicNanos();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(clients));
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      int64_t first = start + int64_t{c} * 10'000'000;
      std::unique_ptr<httplib::Client> client;
      std::vector<double> mine;
      int failed = 0;
      int step = 0;
      for (int64_t due = first; due < start + int64_t{seconds} * 1'000'000'000; due += 500'000'000) {
        int64_t now = MonotonicNanos();
        if (due > now) std::this_thread::sleep_for(std::chrono::nanoseconds(due - now));
        json metrics = json::array();
        for (int s = 0; s < 10; ++s, ++step) {
          for (int k = 0; k < 7; ++k) {
            metrics.push_back({{"key", "client" + std::to_string(c) + "_m" + std::to_string(k)},
                               {"value", static_cast<double>((step * 37 + k) % 1000) / 1000.0},
                               {"timestamp", WallMillis()},
                               {"step", step}});
          }
        }
        std::string body = json{{"run_id", run.id}, {"metrics", metrics}}.dump();
        if (!client) {
          client = std::make_unique<httplib::Client>("127.0.0.1", server.port());
          client->set_keep_alive(kept_alive);
          client->set_tcp_nodelay(true);
          client->set_connection_timeout(10);
          client->set_read_timeout(10);
        }
        int64_t t0 = MonotonicNanos();
        auto r = client->Post("/api/2.0/mlflow/runs/log-batch", body, "application/json");
        double ms = static_cast<double>(MonotonicNanos() - t0) / 1e6;
        if (r && r->status == 200) {
          mine.push_back(ms);
        } else {
          ++failed;
          client.reset();  // a new connection for the next
        }
        if (!kept_alive) client.reset();
      }
      std::lock_guard lock(mu);
      out.latency_ms.insert(out.latency_ms.end(), mine.begin(), mine.end());
      out.failed += failed;
    });
  }
  for (std::thread& t : threads) t.join();
  out.process_cpu_ms = static_cast<double>(ProcessCpuNanos() - cpu0) / 1e6;
  out.worker_cpu_ms = static_cast<double>(server.worker_cpu_ns()) / 1e6;
  server.Stop();
  fs::remove_all(dir);
  return out;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  int clients = argc > 1 ? std::atoi(argv[1]) : 48;
  int seconds = argc > 2 ? std::atoi(argv[2]) : 10;
  size_t workers = argc > 3 ? static_cast<size_t>(std::atoi(argv[3])) : 16;
  std::printf("%d clients, a log-batch of 70 values every 0.5 s each, %d s, a server of %zu workers\n",
              clients, seconds, workers);
  std::printf("  %-32s %8s %7s %9s %9s %9s %8s %12s %12s\n", "", "answered", "failed", "median ms", "p99 ms",
              "max ms", "over 1 s", "CPU/req us", "server us");
  for (bool kept_alive : {true, false}) {
    Outcome o = RunClients(clients, seconds, workers, kept_alive);
    size_t answered = o.latency_ms.size();
    auto slow = static_cast<size_t>(
        std::count_if(o.latency_ms.begin(), o.latency_ms.end(), [](double ms) { return ms > 1000; }));
    double requests = static_cast<double>(std::max<size_t>(1, answered + static_cast<size_t>(o.failed)));
    std::printf("  %-32s %8zu %7d %9.2f %9.2f %9.1f %8zu %12.0f %12.0f\n",
                kept_alive ? "kept-alive connections" : "a connection per request", answered, o.failed,
                tb::Median(o.latency_ms.empty() ? std::vector<double>{0} : o.latency_ms),
                Percentile(o.latency_ms, 0.99), Percentile(o.latency_ms, 1.0), slow,
                o.process_cpu_ms * 1e3 / requests, o.worker_cpu_ms * 1e3 / requests);
  }
  return 0;
}
