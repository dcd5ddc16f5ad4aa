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

#include "base/strings.h"
#include "base/time.h"
#include "bench/bench_stats.h"
#include "bench/serve_bench.h"
#include "serve/serve_api.h"
#include "store/series_writer.h"
#include "store/store.h"

using tb::Median;

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

namespace {

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

// The store of `runs` runs of `points` points each and what the requests name of them.
struct Bench {
  std::filesystem::path dir;
  std::string db;
  int runs = 0, points = 0, rounds = 0;
  std::vector<std::string> ids;
  std::vector<int64_t> series_ids;
  std::string all;  // the run ids, commas between
};

// Writes the runs: synthetic GPU utilization at 10 Hz with noise and a dip every 997 points.
void WriteRuns(Bench& b) {
  using namespace tb;
  auto store = Store::Open(b.db).value();
  Must(store->EnsureExperiment("bench"));
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 2);
  for (int r = 0; r < b.runs; ++r) {
    RunRecord run;
    run.id = NewRunId();
    run.experiment = "bench";
    run.workload = std::to_string(r / 2);
    run.name = "run" + std::to_string(r);
    run.start_ms = 1763777000000;
    Must(store->CreateRun(run));
    SeriesWriter writer(*store, run.id);
    for (int i = 0; i < b.points; ++i) {
      double v = std::round((85 + noise(rng) + (i % 997 == 0 ? -80 : 0)) * 10) / 1000;  // 0.xxx, dips
      writer.Append("gpu.utilization.gpu_ratio", "gpu=0", Point{run.start_ms + i * 100, v});
    }
    Must(writer.Close());
    Must(store->FinishRun(run.id, run.start_ms + b.points * 100, kFinished, 0, std::nullopt, ""));
    b.ids.push_back(run.id);
    b.series_ids.push_back(store->ListSeries(run.id).value()[0].id);
    b.all += (b.all.empty() ? "" : ",") + run.id;
  }
}

}  // namespace

double MillisSince(int64_t t0) { return static_cast<double>(tb::MonotonicNanos() - t0) / 1e6; }

// Cold: the store opened and a server started afresh for the request, the connection made
// and the server's threads running (what a browser that loaded the page has), nothing of
// the series read yet. Asked with gzip, an answer of 16 KB or more must come gzipped.
double ColdGet(const std::string& db, const std::string& path, const httplib::Headers& headers) {
  using namespace tb;
  std::unique_ptr<Store> opened = Store::Open(db).value();
  ServeApi fresh(*opened);
  HttpServer fresh_server({fresh.Handler()});
  if (!fresh_server.Start(HttpServerOptions{}).ok()) std::exit(1);
  std::unique_ptr<httplib::Client> c = Connected(fresh_server.port());
  int64_t t0 = MonotonicNanos();
  auto r = c->Get(path, headers);
  double ms = MillisSince(t0);
  if (!r || r->status != 200) std::exit(1);
  if (!headers.empty() && r->body.size() >= 16384 && r->get_header_value("Content-Encoding") != "gzip")
    std::exit(1);
  return ms;
}

namespace {

// The baseline: the raw points from the store, opened afresh (cold, `kept` null) or kept open.
double RawDecode(const Bench& b, tb::Store* kept) {
  std::unique_ptr<tb::Store> fresh = kept == nullptr ? tb::Store::Open(b.db).value() : nullptr;
  int64_t t0 = tb::MonotonicNanos();
  size_t n = 0;
  for (int64_t s : b.series_ids)
    n += tb::ReadSeriesPoints(kept == nullptr ? *fresh : *kept, s).value().size();
  double ms = MillisSince(t0);
  if (n != static_cast<size_t>(b.runs) * static_cast<size_t>(b.points)) std::exit(1);
  return ms;
}

// The budgeted series request as ServeApi::Handle takes it, without HTTP.
tb::ApiRequest SeriesRequest(const Bench& b) {
  tb::ApiRequest request{"GET", "/api/v1/series", {}, ""};
  request.query = {
      {"runs", b.all}, {"metric", "gpu.utilization.gpu_ratio"}, {"budget", "2000"}, {"x_form", "places"}};
  return request;
}

// The budgeted request handled without HTTP, by a ServeApi on a store opened afresh.
double ColdHandle(const Bench& b) {
  std::unique_ptr<tb::Store> opened = tb::Store::Open(b.db).value();
  tb::ServeApi fresh(*opened);
  int64_t t0 = tb::MonotonicNanos();
  if (fresh.Handle(SeriesRequest(b)).status != 200) std::exit(1);
  return MillisSince(t0);
}

}  // namespace

std::string UrlEncoded(const std::string& text) {
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
}

// A figure as `trainbench plot` and the page's export draw it (one column of a paper, SVG).
std::string FigureOf(const std::string& what) {
  return "/api/v1/figure?format=svg&spec=" +
         UrlEncoded("{\"metric\": \"gpu.utilization.gpu_ratio\", " + what + "}");
}

namespace {

// The paths the cold rounds ask, as the web page and `trainbench plot` ask them.
struct ColdPaths {
  std::string series, numbers, screen, means_400, means_1000, runs_figure, means_figure;
};

ColdPaths PathsOf(const Bench& b) {
  ColdPaths p;
  // As the web page asks: x as steps between the places of the grid the series share.
  p.numbers = "/api/v1/series?runs=" + b.all + "&metric=gpu.utilization.gpu_ratio&budget=2000";
  p.series = p.numbers + "&x_form=places";
  // What the web page asks for a 500-pixel-wide chart: 1,000 points a run, 400 a bucket.
  p.screen = "/api/v1/series?runs=" + b.all + "&metric=gpu.utilization.gpu_ratio&budget=1000&x_form=places";
  // The page's workload means (two runs a workload here) on a chart 800 pixels wide (a
  // bucket per two pixels: 400) and on one 2,000 wide (1,000).
  std::string workloads, run_list, workload_list;
  for (int w = 0; w < (b.runs + 1) / 2; ++w) {
    workloads += (w == 0 ? "bench:" : ",bench:") + std::to_string(w);
    workload_list += (w == 0 ? "\"bench:" : ",\"bench:") + std::to_string(w) + "\"";
  }
  auto means_of = [&](int buckets) {
    return "/api/v1/aggregate?workloads=" + workloads +
           "&metric=gpu.utilization.gpu_ratio&x=relative&budget=" + std::to_string(buckets);
  };
  p.means_400 = means_of(400);
  p.means_1000 = means_of(1000);
  for (const std::string& id : b.ids) run_list += (run_list.empty() ? "\"" : ",\"") + id + "\"";
  p.runs_figure = FigureOf("\"runs\": [" + run_list + "]");
  p.means_figure = FigureOf("\"workloads\": [" + workload_list + "]");
  return p;
}

// Each round measures the raw decode and the cold requests one after another, so that the
// host's slow minutes fall on both sides of each ratio; the ratios are the medians of the
// rounds' own.
double ColdRounds(const Bench& b, tb::Store& store) {
  ColdPaths p = PathsOf(b);
  std::vector<double> raw, raw_warm, cold, numbers, direct, screen, gzip, means_400, means_1000, runs_fig,
      means_fig;
  std::vector<double> cold_ratio, direct_ratio, screen_ratio, means_400_ratio, means_1000_ratio;
  for (int round = 0; round < b.rounds; ++round) {
    raw.push_back(RawDecode(b, nullptr));
    cold.push_back(ColdGet(b.db, p.series));
    direct.push_back(ColdHandle(b));
    screen.push_back(ColdGet(b.db, p.screen));
    cold_ratio.push_back(raw.back() / cold.back());
    direct_ratio.push_back(raw.back() / direct.back());
    screen_ratio.push_back(raw.back() / screen.back());
    means_400.push_back(ColdGet(b.db, p.means_400));
    means_1000.push_back(ColdGet(b.db, p.means_1000));
    means_400_ratio.push_back(raw.back() / means_400.back());
    means_1000_ratio.push_back(raw.back() / means_1000.back());
    runs_fig.push_back(ColdGet(b.db, p.runs_figure));
    means_fig.push_back(ColdGet(b.db, p.means_figure));
    raw_warm.push_back(RawDecode(b, &store));
    numbers.push_back(ColdGet(b.db, p.numbers));
    // As a browser asks (Chromium over http: gzip and deflate); the client inflates the answer.
    gzip.push_back(ColdGet(b.db, p.series, {{"Accept-Encoding", "gzip, deflate"}}));
  }
  std::printf(
      "serve queries: %d runs x %d points, median of %d rounds (the store: %.3f bytes a point)\n", b.runs,
      b.points, b.rounds,
      static_cast<double>(std::filesystem::file_size(b.db)) / (static_cast<double>(b.runs) * b.points));
  std::printf("  %-66s %10s\n", "", "ms");
  std::printf("  %-66s %10.1f\n", "series, budget 2,000 per run, x as places, cold (fresh server)",
              Median(cold));
  std::printf("  %-66s %10.1f\n", "the same with x as numbers (x_form=numbers), cold", Median(numbers));
  std::printf("  %-66s %10.1f\n", "series, budget 2,000 per run, cold, ServeApi::Handle without HTTP",
              Median(direct));
  std::printf("  %-66s %10.1f\n", "baseline: the same raw points read and decoded, store opened afresh",
              Median(raw));
  std::printf("  %-66s %10.1f\n", "the same, store kept open (SQLite's page cache filled)", Median(raw_warm));
  std::printf("cold budgeted vs raw decode: %.2fx\n", Median(cold_ratio));
  std::printf("  the same in the server (ServeApi::Handle, no HTTP): %.2fx\n", Median(direct_ratio));
  std::printf("  %-66s %10.1f   (%.2fx raw decode)\n",
              "series, budget 1,000 per run (the page's 500-px chart), cold", Median(screen),
              Median(screen_ratio));
  std::printf("  %-66s %10.1f   (%.2fx raw decode)\n",
              "workload means, 400 buckets (the page's 800-px chart), cold", Median(means_400),
              Median(means_400_ratio));
  std::printf("  %-66s %10.1f   (%.2fx raw decode)\n",
              "workload means, 1,000 buckets (a 2,000-px chart), cold", Median(means_1000),
              Median(means_1000_ratio));
  std::printf("  %-66s %10.1f\n", "figure (SVG, one column) of the 50 runs, cold", Median(runs_fig));
  std::printf("  %-66s %10.1f\n", "figure (SVG, one column) of the 25 workloads' means, cold",
              Median(means_fig));
  std::printf("  %-66s %10.1f\n", "series, budget 2,000 per run, cold, gzip as browsers ask", Median(gzip));
  return Median(raw_warm);
}

// A GET on the kept-alive client, timed; `bytes` gets the answer's size.
double TimedGet(httplib::Client& client, const std::string& path, size_t* bytes) {
  int64_t t0 = tb::MonotonicNanos();
  auto r = client.Get(path);
  double ms = MillisSince(t0);
  if (!r || r->status != 200) {
    std::fprintf(stderr, "request failed: %s\n", path.substr(0, 120).c_str());
    std::exit(1);
  }
  if (bytes != nullptr) *bytes = r->body.size();
  return ms;
}

// The warm requests to a server that has answered them before, over HTTP and without it,
// against the same runs at full resolution.
void WarmRounds(const Bench& b, tb::ServeApi& api, int port, httplib::Client& client, double raw_warm_ms) {
  ColdPaths p = PathsOf(b);
  size_t series_bytes = 0, full_bytes = 0;
  TimedGet(client, p.numbers, nullptr);
  TimedGet(client, p.series, &series_bytes);  // the first: fills the caches
  std::vector<double> warm, large_reads, direct, full;
  for (int round = 0; round < b.rounds; ++round) {
    warm.push_back(TimedGet(client, p.series, nullptr));
    large_reads.push_back(GetWithLargeReads(port, p.series));
    int64_t t0 = tb::MonotonicNanos();
    if (api.Handle(SeriesRequest(b)).status != 200) std::exit(1);
    direct.push_back(MillisSince(t0));
  }
  std::string whole = "/api/v1/series?runs=" + b.all + "&metric=gpu.utilization.gpu_ratio";
  for (int round = 0; round < 3; ++round) full.push_back(TimedGet(client, whole, &full_bytes));
  std::printf("  %-66s %10.1f   (%zu KB)\n", "series, budget 2,000 per run, warm", Median(warm),
              series_bytes / 1024);
  std::printf("  %-66s %10.1f\n", "the same on a new connection, read 1 MB at a time", Median(large_reads));
  std::printf("  %-66s %10.1f\n", "series, budget 2,000 per run, warm, ServeApi::Handle without HTTP",
              Median(direct));
  std::printf("  %-66s %10.1f   (%zu MB)\n", "series at full resolution (JSON, streamed), warm", Median(full),
              full_bytes >> 20);
  std::printf("  budgeted request vs the same runs at full resolution through the API: %.0fx faster warm\n",
              Median(full) / Median(warm));
  std::printf("  budgeted request vs reading and decoding the raw points in-process, both warm: %.2fx\n",
              raw_warm_ms / Median(warm));
}

// The CSV export of every point, over HTTP (the client counting the bytes and dropping them,
// as curl > file would) and as the server produces it.
void ExportRounds(const Bench& b, tb::ServeApi& api, httplib::Client& client) {
  std::string csv = "/api/v1/export?runs=" + b.all + "&metric=gpu.utilization.gpu_ratio&format=csv";
  double points = static_cast<double>(b.runs) * b.points;
  std::vector<double> over_http, direct;
  size_t csv_bytes = 0;
  for (int round = 0; round < 3; ++round) {
    csv_bytes = 0;
    int64_t t0 = tb::MonotonicNanos();
    auto r = client.Get(csv, [&](const char*, size_t n) {
      csv_bytes += n;
      return true;
    });
    if (!r || r->status != 200) std::exit(1);
    over_http.push_back(points / (MillisSince(t0) / 1000));
  }
  for (int round = 0; round < 3; ++round) {
    tb::ApiRequest request{"GET", "/api/v1/export", {}, ""};
    request.query = {{"runs", b.all}, {"metric", "gpu.utilization.gpu_ratio"}, {"format", "csv"}};
    int64_t t0 = tb::MonotonicNanos();
    tb::ApiResponse r = api.Handle(request);
    std::string piece;
    while (r.stream) {
      piece.clear();
      if (!r.stream(piece)) break;
    }
    direct.push_back(points / (MillisSince(t0) / 1000));
  }
  std::printf("  %-66s %10.0f   (%zu MB)\n", "CSV export over HTTP, client discarding the bytes, points/s",
              Median(over_http), csv_bytes >> 20);
  std::printf("  %-66s %10.0f\n", "CSV export as the server produces it (no socket), points/s",
              Median(direct));
}

// The coldest: each side in a process just started, taking turns.
void FreshProcessRounds(const Bench& b) {
  std::vector<double> http, raw;
  std::string ids_text;
  for (int64_t s : b.series_ids) ids_text += (ids_text.empty() ? "" : ",") + std::to_string(s);
  for (int round = 0; round < b.rounds; ++round) {
    http.push_back(InFreshProcess("http", b.db, PathsOf(b).series));
    raw.push_back(InFreshProcess("raw", b.db, ids_text));
  }
  std::printf("  %-66s %10.1f\n", "series, budget 2,000 per run, over HTTP, in a process just started",
              Median(http));
  std::printf("  %-66s %10.1f\n", "baseline: the raw points read and decoded, in a process just started",
              Median(raw));
  std::printf("cold budgeted vs raw decode, each in a process just started: %.2fx\n",
              Median(raw) / Median(http));
}

// One long run of `big` points: its first chart on a server just started.
void LongRun(const Bench& b, int64_t big) {
  using namespace tb;
  std::string big_db = (b.dir / "big.db").string();
  auto big_store = Store::Open(big_db).value();
  RunRecord run = NewBenchRun(*big_store, "long");
  {
    SeriesWriter writer(*big_store, run.id);
    std::mt19937_64 rng(5);
    std::normal_distribution<double> noise(0, 2);
    for (int64_t i = 0; i < big; ++i) {
      double v = std::round((85 + noise(rng) + (i % 9973 == 0 ? -80 : 0)) * 10) / 1000;
      writer.Append("gpu.utilization.gpu_ratio", "gpu=0", Point{run.start_ms + i * 100, v});
      if (i % 1000000 == 999999) Must(writer.Flush());
    }
    Must(writer.Close());
  }
  Must(big_store->FinishRun(run.id, run.start_ms + big * 100, kFinished, 0, std::nullopt, ""));
  int64_t big_series = big_store->ListSeries(run.id).value()[0].id;
  std::vector<double> raw, cold;
  for (int round = 0; round < 3; ++round) {
    std::unique_ptr<Store> opened = Store::Open(big_db).value();
    int64_t t0 = MonotonicNanos();
    if (static_cast<int64_t>(ReadSeriesPoints(*opened, big_series).value().size()) != big) std::exit(1);
    raw.push_back(MillisSince(t0));
    cold.push_back(
        ColdGet(big_db, "/api/v1/series?runs=" + run.id + "&metric=gpu.utilization.gpu_ratio&budget=2000"));
  }
  std::printf("one run of %lld points, budget 2,000, median of 3:\n", static_cast<long long>(big));
  std::printf("  %-66s %10.1f\n", "first chart, cold (a server just started)", Median(cold));
  std::printf("  %-66s %10.1f\n", "baseline: its raw points read and decoded, store opened afresh",
              Median(raw));
  std::printf("long run cold budgeted vs raw decode: %.2fx\n", Median(raw) / Median(cold));
}

// The request mix with wrk, 8 connections for `seconds`: paths for its Lua script.
void RequestMix(const Bench& b, const char* seconds, int port) {
  std::ofstream paths(b.dir / "paths.txt");
  paths << "/api/v1/experiments\n/api/v1/runs?experiment=bench&summary=0\n";
  for (size_t i = 0; i < 8 && i + 1 < b.ids.size(); ++i) {
    paths << "/api/v1/series?runs=" << b.ids[i] << "," << b.ids[i + 1]
          << "&metric=gpu.utilization.gpu_ratio&budget=2000\n";
    paths << "/api/v1/runs/" << b.ids[i] << "\n";
  }
  paths << "/api/v1/metrics?runs=" << b.ids[0] << "\n";
  paths.close();
  std::string cmd = "cd " + b.dir.string() + " && wrk -t2 -c8 -d" + seconds + "s -s " + TRAINBENCH_BENCH_DIR +
                    "/request_mix.lua http://127.0.0.1:" + std::to_string(port);
  std::fflush(stdout);
  if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "wrk failed (is it installed?)\n");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tb;
  if (argc == 5 && std::strcmp(argv[1], "--fresh") == 0) return FreshProcess(argv[2], argv[3], argv[4]);
  Bench b;
  b.runs = argc > 1 ? std::atoi(argv[1]) : 50;
  b.points = argc > 2 ? std::atoi(argv[2]) : 100000;
  b.rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  int64_t big = argc > 5 ? std::atoll(argv[5]) : 10000000;
  int week_series = argc > 6 ? std::atoi(argv[6]) : 0;
  if (week_series > 0 && week_series < 27) {
    std::fprintf(stderr, "week_series: 27 or more (the analysed metrics of 8 GPUs and the process)\n");
    return 2;
  }
  b.dir = std::filesystem::temp_directory_path() / "tb-bench-serve";
  std::filesystem::remove_all(b.dir);
  std::filesystem::create_directories(b.dir);
  b.db = (b.dir / "serve.db").string();
  WriteRuns(b);
  auto store = Store::Open(b.db).value();
  double raw_warm_ms = ColdRounds(b, *store);
  ServeApi api(*store);
  HttpServer server({api.Handler()});
  if (!server.Start(HttpServerOptions{}).ok()) return 1;
  std::unique_ptr<httplib::Client> client = Connected(server.port());
  WarmRounds(b, api, server.port(), *client, raw_warm_ms);
  ExportRounds(b, api, *client);
  FreshProcessRounds(b);
  if (big > 0) LongRun(b, big);
  if (week_series > 0) WeekRun(b.dir, week_series);
  if (argc > 4 && std::atoi(argv[4]) > 0) RequestMix(b, argv[4], server.port());
  server.Stop();
  std::filesystem::remove_all(b.dir);
  return 0;
}
