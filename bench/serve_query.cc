// `trainbench serve` query speed (issue goals: a 50-run x 100,000-point series request
// with a 2,000-point budget per run under 50 ms warm and cold, cold at least 5x faster
// than decoding the raw points from the same store; the first chart of a 10-million-point
// run under 100 ms cold; full-resolution CSV export at 5 million points/s or more).
//
//   build/bench/serve_query [runs=50] [points=100000] [rounds=5] [wrk_seconds=0] [big=10000000]
//                           [week_series=0]
//
// The store is built once (synthetic GPU utilization at 10 Hz with noise and spikes, as
// the sampler writes it: sealed chunks of 4,096 points with their summaries). Requests go
// over HTTP to the server in this process. "Cold" is a server just started (the store
// opened afresh, so SQLite's page cache is empty, and a new ServeApi: nothing decoded or
// cached; the file is in the OS cache, as on a machine that has served before) that has
// answered one request for the experiments (the connection is made), the median of
// `rounds` such starts; "warm" the median of the next requests. The baseline reads and
// decodes the same runs' raw points, with no HTTP and no JSON: cold from a store opened
// afresh each round (what the cold request is compared with), and warm. Each round
// measures the raw decode and then the cold requests, so that the host's slow minutes
// weigh on both sides; "cold budgeted vs raw decode" is the median of the rounds' own
// ratios. `big`: one run of that many
// points, its first chart cold. It then prints the URL list and command for the request-mix measurement with
// wrk. Beside it, the budget the web page asks for a 500-pixel-wide chart (1,000 points a
// run: 400 raw points a bucket, drawn from the 128-point summaries), cold. `week_series`
// (0: none; 300 is the issue's): a finished week-long run at 10 Hz with that many series,
// and what the page asks when it is opened on a server just started, cold.
// Beside these, the coldest case: the budgeted request and the raw decode each in a process
// just started (this program run again), whose memory is touched for the first time (the
// rounds above run in a process whose heap earlier rounds have faulted in already).
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "analyze/phases.h"
#include "base/strings.h"
#include "base/time.h"
#include "bench/bench_stats.h"
#include "bench/training_series.h"
#include "serve/serve_api.h"
#include "store/series_writer.h"
#include "store/store.h"

namespace {

// A field of /proc/self/status in MiB ("VmRSS", "VmHWM": resident now, its peak).
double StatusMiB(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atof(line.c_str() + field.size() + 1) / 1024;
  }
  return 0;
}

// Starts measuring this process's peak resident memory afresh (Linux 4.0 and later).
void ResetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

// A run of the experiment "bench" in `store`, recorded as started.
tb::RunRecord NewBenchRun(tb::Store& store, const std::string& name) {
  tb::RunRecord run;
  run.id = tb::NewRunId();
  run.experiment = "bench";
  run.name = name;
  run.start_ms = 1763777000000;
  if (!store.EnsureExperiment("bench").ok() || !store.CreateRun(run).ok()) std::exit(1);
  return run;
}

// A client of the server at `port` as a browser that has loaded the page is: one kept-alive
// connection without Nagle's delay, made (one request for the experiments) before anything
// is timed.
std::unique_ptr<httplib::Client> Connected(int port) {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", port);
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);
  c->set_read_timeout(600, 0);  // a long run's phases take more than the default 5 s
  if (auto hello = c->Get("/api/v1/experiments"); !hello || hello->status != 200) std::exit(1);
  return c;
}

// A GET on a new connection by a client that reads up to 1 MB a call, as a browser reads
// (cpp-httplib's client reads 4 KB a call and grows the body as it goes): milliseconds from
// the request's write to the answer's last byte, the connection made before. (Until the
// server's WorkerPool, a new connection went to a thread that had not answered yet, whose
// first touch of its memory took 4 ms more.)
double GetWithLargeReads(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
    std::exit(1);
  std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", head;
  std::vector<char> buffer(1 << 20);
  int64_t t0 = tb::MonotonicNanos();
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) std::exit(1);
  size_t got = 0, whole = 0;  // whole: the head's and the body's bytes, once the head is in
  while (whole == 0 || got < whole) {
    ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n <= 0) std::exit(1);
    got += static_cast<size_t>(n);
    if (whole != 0) continue;
    head.append(buffer.data(), static_cast<size_t>(n));
    size_t end = head.find("\r\n\r\n"), length = head.find("Content-Length: ");
    if (end != std::string::npos && length != std::string::npos && head.starts_with("HTTP/1.1 200"))
      whole = end + 4 + std::stoul(head.substr(length + 16));
    else if (end != std::string::npos)
      std::exit(1);
  }
  double ms = static_cast<double>(tb::MonotonicNanos() - t0) / 1e6;
  close(fd);
  return ms;
}

// In a process just started (`serve_query --fresh http|raw DB WHAT`): "http", the store
// opened, a server started and connected to (one request for the experiments), then the
// request WHAT timed; "raw", the store opened and the points of the series WHAT (ids,
// commas between) read and decoded. Prints the milliseconds.
int FreshProcess(const std::string& kind, const std::string& db, const std::string& what) {
  using namespace tb;
  std::unique_ptr<Store> store = Store::Open(db).value();
  double ms = 0;
  if (kind == "http") {
    ServeApi api(*store);
    HttpServer server({api.Handler()});
    if (!server.Start(HttpServerOptions{}).ok()) return 1;
    std::unique_ptr<httplib::Client> c = Connected(server.port());
    int64_t t0 = MonotonicNanos();
    auto r = c->Get(what);
    ms = static_cast<double>(MonotonicNanos() - t0) / 1e6;
    if (!r || r->status != 200) return 1;
  } else {
    int64_t t0 = MonotonicNanos();
    for (std::string_view id : Split(what, ',')) {
      if (!ReadSeriesPoints(*store, std::atoll(std::string(id).c_str())).ok()) return 1;
    }
    ms = static_cast<double>(MonotonicNanos() - t0) / 1e6;
  }
  std::printf("%.3f\n", ms);
  return 0;
}

// Runs FreshProcess in a new process of this program; its milliseconds.
double InFreshProcess(const std::string& kind, const std::string& db, const std::string& what) {
  std::string command =
      "/proc/" + std::to_string(getpid()) + "/exe --fresh " + kind + " " + db + " '" + what + "'";
  FILE* child = popen(command.c_str(), "r");
  double ms = -1;
  if (child == nullptr || std::fscanf(child, "%lf", &ms) != 1 || pclose(child) != 0 || ms < 0) {
    std::fprintf(stderr, "a fresh process failed: %s\n", command.substr(0, 160).c_str());
    std::exit(1);
  }
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tb;
  namespace fs = std::filesystem;
  if (argc == 5 && std::strcmp(argv[1], "--fresh") == 0) return FreshProcess(argv[2], argv[3], argv[4]);
  int runs = argc > 1 ? std::atoi(argv[1]) : 50;
  int points = argc > 2 ? std::atoi(argv[2]) : 100000;
  int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  fs::path dir = fs::temp_directory_path() / "tb-bench-serve";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string db = (dir / "serve.db").string();
  std::vector<std::string> ids;
  std::vector<int64_t> series_ids;
  {
    auto store = Store::Open(db).value();
    Must(store->EnsureExperiment("bench"));
    std::mt19937_64 rng(3);
    std::normal_distribution<double> noise(0, 2);
    for (int r = 0; r < runs; ++r) {
      RunRecord run;
      run.id = NewRunId();
      run.experiment = "bench";
      run.workload = std::to_string(r / 2);
      run.name = "run" + std::to_string(r);
      run.start_ms = 1763777000000;
      Must(store->CreateRun(run));
      SeriesWriter writer(*store, run.id);
      for (int i = 0; i < points; ++i) {
        double v = std::round((85 + noise(rng) + (i % 997 == 0 ? -80 : 0)) * 10) / 1000;  // 0.xxx, dips
        writer.Append("gpu.utilization.gpu_ratio", "gpu=0", Point{run.start_ms + i * 100, v});
      }
      Must(writer.Close());
      Must(store->FinishRun(run.id, run.start_ms + points * 100, kFinished, 0, std::nullopt, ""));
      ids.push_back(run.id);
      series_ids.push_back(store->ListSeries(run.id).value()[0].id);
    }
  }
  auto store = Store::Open(db).value();
  std::string all;
  for (const std::string& id : ids) all += (all.empty() ? "" : ",") + id;

  // As the web page asks: x as steps between the places of the grid the series share.
  std::string numbers = "/api/v1/series?runs=" + all + "&metric=gpu.utilization.gpu_ratio&budget=2000";
  std::string series = numbers + "&x_form=places";
  // Cold: the store opened and a server started afresh for each request.
  auto cold_get = [&](const std::string& from, const std::string& path,
                      const httplib::Headers& headers = {}) {
    std::unique_ptr<Store> opened = Store::Open(from).value();
    ServeApi fresh(*opened);
    HttpServer fresh_server({fresh.Handler()});
    if (!fresh_server.Start(HttpServerOptions{}).ok()) std::exit(1);
    // The connection made and the server's threads running (what a browser that loaded the
    // page has), nothing of the series read yet.
    std::unique_ptr<httplib::Client> c = Connected(fresh_server.port());
    int64_t t0 = MonotonicNanos();
    auto r = c->Get(path, headers);
    double ms = static_cast<double>(MonotonicNanos() - t0) / 1e6;
    if (!r || r->status != 200) std::exit(1);
    // Asked with gzip, an answer of 16 KB or more (the server's threshold) comes gzipped.
    if (!headers.empty() && r->body.size() >= 16384 && r->get_header_value("Content-Encoding") != "gzip")
      std::exit(1);
    return ms;
  };
  // The baseline: the raw points from the store, opened afresh (cold) and kept open (warm).
  auto raw_decode = [&](Store* kept) {
    std::unique_ptr<Store> fresh = kept == nullptr ? Store::Open(db).value() : nullptr;
    int64_t t0 = MonotonicNanos();
    size_t n = 0;
    for (int64_t s : series_ids) n += ReadSeriesPoints(kept == nullptr ? *fresh : *kept, s).value().size();
    double ms = static_cast<double>(MonotonicNanos() - t0) / 1e6;
    if (n != static_cast<size_t>(runs) * static_cast<size_t>(points)) std::exit(1);
    return ms;
  };
  // The budgeted request handled without HTTP, by a ServeApi on a store opened afresh.
  auto cold_handle = [&] {
    std::unique_ptr<Store> opened = Store::Open(db).value();
    ServeApi fresh(*opened);
    ApiRequest request{"GET", "/api/v1/series", {}, ""};
    request.query = {
        {"runs", all}, {"metric", "gpu.utilization.gpu_ratio"}, {"budget", "2000"}, {"x_form", "places"}};
    int64_t t0 = MonotonicNanos();
    if (fresh.Handle(request).status != 200) std::exit(1);
    return static_cast<double>(MonotonicNanos() - t0) / 1e6;
  };
  // Each round measures the raw decode and the cold requests one after another, so that
  // the host's slow minutes fall on both sides of each ratio; the ratios are the medians
  // of the rounds' own.
  std::vector<double> raw_ms, raw_warm_ms, cold_ms, cold_numbers, cold_direct, cold_screen, cold_gzip;
  std::vector<double> cold_ratio, direct_ratio, screen_ratio;
  // What the web page asks for a 500-pixel-wide chart: 1,000 points a run, 400 a bucket.
  std::string screen =
      "/api/v1/series?runs=" + all + "&metric=gpu.utilization.gpu_ratio&budget=1000&x_form=places";
  // The page's workload means (runs grouped by workload, two a workload here) on a chart
  // 800 pixels wide (a bucket per two pixels: 400) and on one 2,000 wide (1,000).
  std::string workloads;
  for (int w = 0; w < (runs + 1) / 2; ++w) workloads += (w == 0 ? "bench:" : ",bench:") + std::to_string(w);
  auto means_of = [&](int buckets) {
    return "/api/v1/aggregate?workloads=" + workloads +
           "&metric=gpu.utilization.gpu_ratio&x=relative&budget=" + std::to_string(buckets);
  };
  std::vector<double> cold_means_400, cold_means_1000, means_400_ratio, means_1000_ratio;
  // Figures as `trainbench plot` and the page's export draw them (one column of a paper, SVG):
  // the 50 runs' lines, and the 25 workloads' means.
  auto url_encoded = [](const std::string& text) {
    std::string out;
    for (unsigned char c : text) {
      if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.') {
        out += static_cast<char>(c);
      } else {
        char hex[4];
        std::snprintf(hex, sizeof hex, "%%%02X", c);
        out += hex;
      }
    }
    return out;
  };
  std::string run_list, workload_list;
  for (const std::string& id : ids) run_list += (run_list.empty() ? "\"" : ",\"") + id + "\"";
  for (int w = 0; w < (runs + 1) / 2; ++w)
    workload_list += (w == 0 ? "\"bench:" : ",\"bench:") + std::to_string(w) + "\"";
  auto figure_of = [&](const std::string& what) {
    return "/api/v1/figure?format=svg&spec=" +
           url_encoded("{\"metric\": \"gpu.utilization.gpu_ratio\", " + what + "}");
  };
  std::string runs_figure = figure_of("\"runs\": [" + run_list + "]");
  std::string means_figure = figure_of("\"workloads\": [" + workload_list + "]");
  std::vector<double> cold_runs_figure, cold_means_figure;
  for (int round = 0; round < rounds; ++round) {
    raw_ms.push_back(raw_decode(nullptr));
    cold_ms.push_back(cold_get(db, series));
    cold_direct.push_back(cold_handle());
    cold_screen.push_back(cold_get(db, screen));
    cold_ratio.push_back(raw_ms.back() / cold_ms.back());
    direct_ratio.push_back(raw_ms.back() / cold_direct.back());
    screen_ratio.push_back(raw_ms.back() / cold_screen.back());
    cold_means_400.push_back(cold_get(db, means_of(400)));
    cold_means_1000.push_back(cold_get(db, means_of(1000)));
    means_400_ratio.push_back(raw_ms.back() / cold_means_400.back());
    means_1000_ratio.push_back(raw_ms.back() / cold_means_1000.back());
    cold_runs_figure.push_back(cold_get(db, runs_figure));
    cold_means_figure.push_back(cold_get(db, means_figure));
    raw_warm_ms.push_back(raw_decode(store.get()));
    cold_numbers.push_back(cold_get(db, numbers));
    // As a browser asks (Chromium over http: gzip and deflate); the client inflates the answer.
    cold_gzip.push_back(cold_get(db, series, {{"Accept-Encoding", "gzip, deflate"}}));
  }

  ServeApi api(*store);
  HttpServer server({api.Handler()});
  if (!server.Start(HttpServerOptions{}).ok()) return 1;
  std::unique_ptr<httplib::Client> connected = Connected(server.port());
  httplib::Client& client = *connected;
  auto timed_get = [&](const std::string& path, size_t* bytes) {
    int64_t t0 = MonotonicNanos();
    auto r = client.Get(path);
    double ms = static_cast<double>(MonotonicNanos() - t0) / 1e6;
    if (!r || r->status != 200) {
      std::fprintf(stderr, "request failed: %s\n", path.substr(0, 120).c_str());
      std::exit(1);
    }
    if (bytes != nullptr) *bytes = r->body.size();
    return ms;
  };
  size_t series_bytes = 0, numbers_bytes = 0;
  timed_get(numbers, &numbers_bytes);
  timed_get(series, &series_bytes);  // the first: fills the caches
  std::vector<double> warm, warm_large_reads;
  for (int round = 0; round < rounds; ++round) {
    warm.push_back(timed_get(series, nullptr));
    warm_large_reads.push_back(GetWithLargeReads(server.port(), series));
  }
  std::vector<double> direct;
  for (int round = 0; round < rounds; ++round) {
    ApiRequest request{
        "GET",
        "/api/v1/series",
        {},
        "",
    };
    request.query = {
        {"runs", all}, {"metric", "gpu.utilization.gpu_ratio"}, {"budget", "2000"}, {"x_form", "places"}};
    int64_t t0 = MonotonicNanos();
    ApiResponse r = api.Handle(request);
    direct.push_back(static_cast<double>(MonotonicNanos() - t0) / 1e6);
    if (r.status != 200) return 1;
  }
  std::vector<double> full_ms;
  std::string full = "/api/v1/series?runs=" + all + "&metric=gpu.utilization.gpu_ratio";
  size_t full_bytes = 0;
  for (int round = 0; round < 3; ++round) full_ms.push_back(timed_get(full, &full_bytes));
  std::vector<double> export_rate;
  std::string csv = "/api/v1/export?runs=" + all + "&metric=gpu.utilization.gpu_ratio&format=csv";
  size_t csv_bytes = 0;
  for (int round = 0; round < 3;
       ++round) {  // the client counts the bytes and drops them, as curl > file would
    csv_bytes = 0;
    int64_t t0 = MonotonicNanos();
    auto r = client.Get(csv, [&](const char*, size_t n) {
      csv_bytes += n;
      return true;
    });
    double ms = static_cast<double>(MonotonicNanos() - t0) / 1e6;
    if (!r || r->status != 200) return 1;
    export_rate.push_back(static_cast<double>(runs) * points / (ms / 1000));
  }

  std::vector<double> direct_export;
  for (int round = 0; round < 3; ++round) {
    ApiRequest request{"GET", "/api/v1/export", {}, ""};
    request.query = {{"runs", all}, {"metric", "gpu.utilization.gpu_ratio"}, {"format", "csv"}};
    int64_t t0 = MonotonicNanos();
    ApiResponse r = api.Handle(request);
    size_t bytes = r.body.size();
    std::string piece;
    while (true) {
      piece.clear();
      bool more = r.stream(piece);
      bytes += piece.size();
      if (!more) break;
    }
    double seconds = static_cast<double>(MonotonicNanos() - t0) / 1e9;
    direct_export.push_back(static_cast<double>(runs) * points / seconds);
  }
  std::printf("serve queries: %d runs x %d points, median of %d rounds (the store: %.3f bytes a point)\n",
              runs, points, rounds,
              static_cast<double>(fs::file_size(db)) / (static_cast<double>(runs) * points));
  std::printf("  %-66s %10s\n", "", "ms");
  std::printf("  %-66s %10.1f\n", "series, budget 2,000 per run, x as places, cold (fresh server)",
              Median(cold_ms));
  std::printf("  %-66s %10.1f   (%zu KB)\n", "the same with x as numbers (x_form=numbers), cold",
              Median(cold_numbers), numbers_bytes / 1024);
  std::printf("  %-66s %10.1f\n", "series, budget 2,000 per run, cold, ServeApi::Handle without HTTP",
              Median(cold_direct));
  std::printf("  %-66s %10.1f   (%zu KB)\n", "series, budget 2,000 per run, warm", Median(warm),
              series_bytes / 1024);
  std::printf("  %-66s %10.1f\n", "the same on a new connection, read 1 MB at a time",
              Median(warm_large_reads));
  std::printf("  %-66s %10.1f\n", "series, budget 2,000 per run, warm, ServeApi::Handle without HTTP",
              Median(direct));
  std::printf("  %-66s %10.1f\n", "baseline: the same raw points read and decoded, store opened afresh",
              Median(raw_ms));
  std::printf("  %-66s %10.1f\n", "the same, store kept open (SQLite's page cache filled)",
              Median(raw_warm_ms));
  std::printf("  %-66s %10.1f   (%zu MB)\n", "series at full resolution (JSON, streamed), warm",
              Median(full_ms), full_bytes >> 20);
  std::printf("  %-66s %10.0f   (%zu MB)\n", "CSV export over HTTP, client discarding the bytes, points/s",
              Median(export_rate), csv_bytes >> 20);
  std::printf("  %-66s %10.0f\n", "CSV export as the server produces it (no socket), points/s",
              Median(direct_export));
  std::printf("  budgeted request vs the same runs at full resolution through the API: %.0fx faster warm\n",
              Median(full_ms) / Median(warm));
  std::printf("  budgeted request vs reading and decoding the raw points in-process, both warm: %.2fx\n",
              Median(raw_warm_ms) / Median(warm));
  std::printf("cold budgeted vs raw decode: %.2fx\n", Median(cold_ratio));
  std::printf("  the same in the server (ServeApi::Handle, no HTTP): %.2fx\n", Median(direct_ratio));
  std::printf("  %-66s %10.1f   (%.2fx raw decode)\n",
              "series, budget 1,000 per run (the page's 500-px chart), cold", Median(cold_screen),
              Median(screen_ratio));
  std::printf("  %-66s %10.1f   (%.2fx raw decode)\n",
              "workload means, 400 buckets (the page's 800-px chart), cold", Median(cold_means_400),
              Median(means_400_ratio));
  std::printf("  %-66s %10.1f   (%.2fx raw decode)\n",
              "workload means, 1,000 buckets (a 2,000-px chart), cold", Median(cold_means_1000),
              Median(means_1000_ratio));
  std::printf("  %-66s %10.1f\n", "figure (SVG, one column) of the 50 runs, cold", Median(cold_runs_figure));
  std::printf("  %-66s %10.1f\n", "figure (SVG, one column) of the 25 workloads' means, cold",
              Median(cold_means_figure));
  std::printf("  %-66s %10.1f\n", "series, budget 2,000 per run, cold, gzip as browsers ask",
              Median(cold_gzip));
  // The coldest: each side in a process just started, taking turns.
  std::vector<double> fresh_http, fresh_raw;
  std::string ids_text;
  for (int64_t s : series_ids) ids_text += (ids_text.empty() ? "" : ",") + std::to_string(s);
  for (int round = 0; round < rounds; ++round) {
    fresh_http.push_back(InFreshProcess("http", db, series));
    fresh_raw.push_back(InFreshProcess("raw", db, ids_text));
  }
  std::printf("  %-66s %10.1f\n", "series, budget 2,000 per run, over HTTP, in a process just started",
              Median(fresh_http));
  std::printf("  %-66s %10.1f\n", "baseline: the raw points read and decoded, in a process just started",
              Median(fresh_raw));
  std::printf("cold budgeted vs raw decode, each in a process just started: %.2fx\n",
              Median(fresh_raw) / Median(fresh_http));

  // One long run: its first chart on a server just started.
  int64_t big = argc > 5 ? std::atoll(argv[5]) : 10000000;
  if (big > 0) {
    std::string big_db = (dir / "big.db").string();
    auto big_store = Store::Open(big_db).value();
    RunRecord run = NewBenchRun(*big_store, "long");
    {
      SeriesWriter writer(*big_store, run.id);
      std::mt19937_64 rng(5);
      std::normal_distribution<double> noise(0, 2);
      for (int64_t i = 0; i < big; ++i) {
        double v = std::round((85 + noise(rng) + (i % 9973 == 0 ? -80 : 0)) * 10) / 1000;
        writer.Append("gpu.utilization.gpu_ratio", "gpu=0", Point{run.start_ms + i * 100, v});
        if (i % 1000000 == 999999 && !writer.Flush().ok()) return 1;
      }
      if (!writer.Close().ok()) return 1;
    }
    Must(big_store->FinishRun(run.id, run.start_ms + big * 100, kFinished, 0, std::nullopt, ""));
    int64_t big_series = big_store->ListSeries(run.id).value()[0].id;
    std::vector<double> big_raw, big_cold;
    for (int round = 0; round < 3; ++round) {
      std::unique_ptr<Store> opened = Store::Open(big_db).value();
      int64_t t0 = MonotonicNanos();
      if (static_cast<int64_t>(ReadSeriesPoints(*opened, big_series).value().size()) != big) return 1;
      big_raw.push_back(static_cast<double>(MonotonicNanos() - t0) / 1e6);
      big_cold.push_back(cold_get(
          big_db, "/api/v1/series?runs=" + run.id + "&metric=gpu.utilization.gpu_ratio&budget=2000"));
    }
    std::printf("one run of %lld points, budget 2,000, median of 3:\n", static_cast<long long>(big));
    std::printf("  %-66s %10.1f\n", "first chart, cold (a server just started)", Median(big_cold));
    std::printf("  %-66s %10.1f\n", "baseline: its raw points read and decoded, store opened afresh",
                Median(big_raw));
    std::printf("long run cold budgeted vs raw decode: %.2fx\n", Median(big_raw) / Median(big_cold));
  }

  // A week-long run at 10 Hz with `week_series` series, as the page opens it on a server
  // just started: the run selected (its summary and energy), its metrics, the first chart.
  int week_series = argc > 6 ? std::atoi(argv[6]) : 0;
  if (week_series > 0) {
    if (week_series < 27) {
      std::fprintf(stderr, "week_series: 27 or more (the analysed metrics of 8 GPUs and the process)\n");
      return 2;
    }
    constexpr int kHz = 10;
    constexpr int64_t kTicks = int64_t{7} * 24 * 3600 * kHz;
    std::string week_db = (dir / "week.db").string();
    auto week_store = Store::Open(week_db).value();
    RunRecord run = NewBenchRun(*week_store, "week");
    int64_t t0 = MonotonicNanos();
    {
      SeriesWriter writer(*week_store, run.id);
      std::vector<std::pair<std::string, std::string>> names = TrainingSeriesNames(week_series);
      for (size_t s = 0; s < names.size(); ++s) {
        SeriesWriter::SeriesHandle h = writer.Handle(names[s].first, names[s].second);
        for (int64_t tick = 0; tick < kTicks; ++tick) {
          writer.Append(h, Point{run.start_ms + tick * 1000 / kHz,
                                 TrainingValue(static_cast<int>(s), tick, kHz), kNoStep});
          if (tick % 1000000 == 999999 && !writer.Flush().ok()) return 1;
        }
      }
      if (!writer.Close().ok()) return 1;
    }
    Must(week_store->FinishRun(run.id, run.start_ms + kTicks * 1000 / kHz, kFinished, 0, std::nullopt, ""));
    double write_s = static_cast<double>(MonotonicNanos() - t0) / 1e9;
    std::string chart = "/api/v1/series?runs=" + run.id + "&metric=gpu.utilization.gpu_ratio&x=relative";
    std::vector<std::pair<std::string, std::string>> requests = {
        {"the run selected: runs/{id}, its summary and GPU energy", "/api/v1/runs/" + run.id},
        {"its metrics: metrics?runs={id}", "/api/v1/metrics?runs=" + run.id},
        {"first chart: GPU activity of its 8 GPUs, budget 1,000 a line", chart + "&budget=1000"},
        {"one GPU's activity, budget 2,000", chart + "&labels=gpu%3D0&budget=2000"},
        {"a figure (SVG, one column) of its 8 GPUs' activity", figure_of("\"runs\": [\"" + run.id + "\"]")}};
    std::printf(
        "a week-long run at 10 Hz: %d series of %lld points (%.0f s to write, store %.0f MiB), cold, "
        "median of 3:\n",
        week_series, static_cast<long long>(kTicks), write_s,
        static_cast<double>(fs::file_size(week_db)) / (1 << 20));
    for (const auto& [what, path] : requests) {
      std::vector<double> ms;
      for (int round = 0; round < 3; ++round) ms.push_back(cold_get(week_db, path));
      std::printf("  %-66s %10.1f\n", what.c_str(), Median(ms));
    }
    int64_t series0 = 0;
    for (const SeriesInfo& si : week_store->ListSeries(run.id).value()) {
      if (si.metric == "gpu.utilization.gpu_ratio" && si.labels == "gpu=0") series0 = si.id;
    }
    t0 = MonotonicNanos();
    if (static_cast<int64_t>(ReadSeriesPoints(*week_store, series0).value().size()) != kTicks) return 1;
    std::printf("  %-66s %10.1f\n", "baseline: one GPU's raw points read and decoded",
                static_cast<double>(MonotonicNanos() - t0) / 1e6);
    // The run's figures as they were computed before schema 6: every chunk row of every
    // series, and every point of each energy counter.
    t0 = MonotonicNanos();
    double check = 0;
    for (const SeriesInfo& si : week_store->ListSeries(run.id).value()) {
      for (const ChunkRecord& c : week_store->ListChunkInfo(si.id).value()) check += c.sum;
      if (si.metric == "gpu.energy.consumed_joules") {
        std::vector<Point> counter = ReadSeriesPoints(*week_store, si.id).value();
        check += counter.back().value - counter.front().value;
      }
    }
    std::printf("  %-66s %10.1f\n", "baseline: its figures from every chunk row and counter point",
                static_cast<double>(MonotonicNanos() - t0) / 1e6);
    if (check == 0) return 1;
    // The phase shading the page asks beside a chart: analysed once per server, then kept.
    // The server's peak memory across it, above what the process held before.
    std::string phases = "/api/v1/runs/" + run.id + "/phases";
    double rss_before = StatusMiB("VmRSS");
    ResetPeakRss();
    std::printf("  %-66s %10.1f\n", "its phases, analysed afresh (once a server; kept after)",
                cold_get(week_db, phases));
    std::printf("  %-66s %10.0f MiB\n", "  the server's peak memory above what it held before",
                StatusMiB("VmHWM") - rss_before);
    // As `trainbench run` leaves it: the analysis kept with the run when it ended.
    t0 = MonotonicNanos();
    std::string kept =
        AnalysisJson(AnalyzeStoredRun(*week_store, week_store->FindRun(run.id).value()).value());
    double analysis_ms = static_cast<double>(MonotonicNanos() - t0) / 1e6;
    Must(week_store->PutArtifact({run.id, "phases.json", static_cast<int64_t>(kept.size()), kept, ""}));
    std::vector<double> kept_ms;
    for (int round = 0; round < 3; ++round) kept_ms.push_back(cold_get(week_db, phases));
    std::printf("  %-66s %10.1f   (the analysis in-process: %.1f)\n",
                "its phases kept with it at its end (as `trainbench run` does)", Median(kept_ms),
                analysis_ms);
    // Baseline: the analysed series' points read and decoded whole, as the analysis held
    // them before it summed them chunk by chunk.
    t0 = MonotonicNanos();
    size_t held = 0;
    const std::vector<std::string_view>& analysed = AnalyzedMetrics();
    for (const SeriesInfo& si : week_store->ListSeries(run.id).value()) {
      if (std::find(analysed.begin(), analysed.end(), si.metric) != analysed.end())
        held += ReadSeriesPoints(*week_store, si.id).value().size();
    }
    std::printf("  %-66s %10.1f   (%zu points, %.0f MiB)\n",
                "baseline: the analysed series' points read whole",
                static_cast<double>(MonotonicNanos() - t0) / 1e6, held,
                static_cast<double>(held * sizeof(Point)) / (1 << 20));
  }

  if (argc > 4 && std::atoi(argv[4]) > 0) {  // request mix with wrk, 8 connections: paths for its Lua script
    std::ofstream paths(dir / "paths.txt");
    paths << "/api/v1/experiments\n/api/v1/runs?experiment=bench&summary=0\n";
    for (int i = 0; i < 8; ++i) {
      paths << "/api/v1/series?runs=" << ids[static_cast<size_t>(i)] << "," << ids[static_cast<size_t>(i + 1)]
            << "&metric=gpu.utilization.gpu_ratio&budget=2000\n";
      paths << "/api/v1/runs/" << ids[static_cast<size_t>(i)] << "\n";
    }
    paths << "/api/v1/metrics?runs=" << ids[0] << "\n";
    paths.close();
    std::string cmd = "cd " + dir.string() + " && wrk -t2 -c8 -d" + argv[4] + "s -s " + TRAINBENCH_BENCH_DIR +
                      "/request_mix.lua http://127.0.0.1:" + std::to_string(server.port());
    std::fflush(stdout);
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "wrk failed (is it installed?)\n");
  }
  server.Stop();
  fs::remove_all(dir);
  return 0;
}
