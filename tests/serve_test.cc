// `trainbench serve` as a real process over HTTP, on a store holding the recorded DCGM
// trace of testdata/ as a run and synthetic runs with planted features.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "base/strings.h"
#include "metrics/catalog.h"
#include "platform/process.h"
#include "store/series_writer.h"
#include "tests/helpers/as_user.h"
#include "tests/helpers/free_port.h"
#include "tests/helpers/recorded_trace.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {
namespace {

using json = nlohmann::json;
constexpr int64_t kStart = 1763777000000;

struct Served {
  int status = 0;
  json body;
  std::string raw;
};

class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = (scratch_.path() / "serve.db").string();
    auto store = Store::Open(db_).value();
    ImportTrace(*store);
    // Workloads 1 and 2 of experiment "synth", two runs each: run value = workload * 10 + run.
    for (int w = 1; w <= 2; ++w) {
      for (int r = 0; r < 2; ++r) synthetic_.push_back(SyntheticRun(*store, w, r));
    }
    ASSERT_TRUE(store->AddEvent({synthetic_[0].id, kStart + 5000, "epoch", "epoch 1"}).ok());
    ASSERT_TRUE(store->PutArtifact({synthetic_[0].id, "notes.txt", 5, "hello", ""}).ok());
  }
  void TearDown() override { StopServer(); }

  RunRecord NewRun(Store& store, const std::string& experiment, const std::string& workload,
                   const std::string& name) {
    RunRecord run;
    run.id = NewRunId();
    run.experiment = experiment;
    run.workload = workload;
    run.name = name;
    run.command = "python3 train.py";
    run.start_ms = kStart;
    run.params = {{"batch-size", workload == "1" ? "64" : "128"}};
    run.tags = {{"trainbench.letter", name}};
    EXPECT_TRUE(store.EnsureExperiment(experiment).ok());
    EXPECT_TRUE(store.CreateRun(run).ok());
    return run;
  }

  // The recorded trace as one run: each radT column under its catalog name.
  void ImportTrace(Store& store) {
    trace_ = NewRun(store, "traces", "", "recorded");
    SeriesWriter writer(store, trace_.id);
    RecordedTrace trace = WriteRecordedTrace(writer, kRecordedTrace);
    ASSERT_TRUE(writer.Close().ok());
    power_ = trace.power_watts;
    trace_start_ = trace.start_ms;
  }

  // 100,000 points at 10 ms: flat at workload*10+run, one spike to 1000 and one dip to -5.
  RunRecord SyntheticRun(Store& store, int workload, int r) {
    RunRecord run =
        NewRun(store, "synth", std::to_string(workload), std::string(1, static_cast<char>('A' + r)));
    SeriesWriter writer(store, run.id);
    double base = workload * 10 + r;
    for (int i = 0; i < 100000; ++i) {
      double v = i == 31415 ? 1000 : i == 71828 ? -5 : base;
      writer.Append("gpu.utilization.gpu_ratio", "gpu=0", Point{kStart + i * 10, v});
    }
    EXPECT_TRUE(writer.Close().ok());
    EXPECT_TRUE(store.FinishRun(run.id, kStart + 1000000, kFinished, 0, std::nullopt, "").ok());
    return run;
  }

  // Starts `trainbench serve` on a free port with `args`; returns its first output line.
  std::string StartServer(const std::string& args = "") {
    SpawnOptions spawn;
    spawn.argv = {"/bin/sh", "-c",
                  "exec " + std::string(TRAINBENCH_BINARY) + " serve --store " + db_ + " --port 0 " + args};
    spawn.stdout_mode = Stdio::kPipe;
    spawn.stderr_mode = Stdio::kPipe;
    server_ = std::make_unique<ChildProcess>(ChildProcess::Spawn(spawn).value());
    int out = server_->ReleaseStdout();
    std::string line;
    char c;
    while (read(out, &c, 1) == 1 && c != '\n') line += c;
    close(out);
    size_t at = line.find("http://127.0.0.1:");
    if (at != std::string::npos) {
      port_ = std::atoi(line.c_str() + at + 17);
      client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    }
    return line;
  }
  void StopServer() {
    if (!server_) return;
    EXPECT_TRUE(server_->Signal(SIGTERM).ok());
    EXPECT_TRUE(server_->Wait().ok());
    server_.reset();
  }

  Served Get(const std::string& path, const httplib::Headers& headers = {}) {
    auto r = client_->Get(path, headers);
    if (!r) return {};
    return {r->status, json::parse(r->body, nullptr, false), r->body};
  }

  std::string Ids(std::initializer_list<const RunRecord*> runs) {
    std::string out;
    for (const RunRecord* r : runs) out += (out.empty() ? "" : ",") + r->id;
    return out;
  }

  ScratchDirectory scratch_{"tb-serve"};
  std::string db_;
  RunRecord trace_;
  int64_t trace_start_ = 0;
  std::vector<double> power_;
  std::vector<RunRecord> synthetic_;
  std::unique_ptr<ChildProcess> server_;
  std::unique_ptr<httplib::Client> client_;
  int port_ = 0;
};

TEST_F(ServeTest, ExperimentsWorkloadsRunsAndTheirDetails) {
  ASSERT_NE(StartServer().find("serving"), std::string::npos);
  Served e = Get("/api/v1/experiments");
  ASSERT_EQ(e.status, 200);
  ASSERT_EQ(e.body["experiments"].size(), 2u);
  EXPECT_EQ(e.body["experiments"][1]["name"], "synth");
  EXPECT_EQ(e.body["experiments"][1]["runs"], 4);
  EXPECT_EQ(e.body["experiments"][1]["workloads"], 2);

  Served w = Get("/api/v1/experiments/synth/workloads");
  ASSERT_EQ(w.status, 200);
  ASSERT_EQ(w.body["workloads"].size(), 2u);
  EXPECT_EQ(w.body["workloads"][0]["runs"].size(), 2u);
  std::set<std::string> letters;
  for (const json& r : w.body["workloads"][0]["runs"]) letters.insert(r["letter"].get<std::string>());
  EXPECT_EQ(letters, (std::set<std::string>{"A", "B"}));
  EXPECT_EQ(w.body["workloads"][0]["duration_ms"], 1000000);

  EXPECT_EQ(Get("/api/v1/runs?experiment=synth&workload=2").body["runs"].size(), 2u);
  EXPECT_EQ(Get("/api/v1/runs?param.batch-size=128&experiment=synth").body["runs"].size(), 2u);
  EXPECT_EQ(Get("/api/v1/runs?tag.trainbench.letter=A&experiment=synth").body["runs"].size(), 2u);
  EXPECT_EQ(Get("/api/v1/runs?status=RUNNING").body["runs"].size(), 1u);  // the trace run never finished
  EXPECT_EQ(Get("/api/v1/runs?q=recorded").body["runs"].size(), 1u);

  // Summaries agree with a direct computation on the stored values.
  Served detail = Get("/api/v1/runs/" + trace_.id);
  ASSERT_EQ(detail.status, 200);
  double sum = 0;
  for (double v : power_) sum += v;
  bool found = false;
  for (const json& s : detail.body["summary"]) {
    if (s["metric"] != "gpu.power.draw_watts") continue;
    found = true;
    EXPECT_EQ(s["count"], power_.size());
    EXPECT_NEAR(s["mean"].get<double>(), sum / static_cast<double>(power_.size()), 1e-9);
    EXPECT_EQ(s["max"].get<double>(), *std::max_element(power_.begin(), power_.end()));
    EXPECT_EQ(s["unit"], "W");
  }
  EXPECT_TRUE(found);

  Served events = Get("/api/v1/runs/" + synthetic_[0].id + "/events");
  ASSERT_EQ(events.body["events"].size(), 1u);
  EXPECT_EQ(events.body["events"][0]["relative_s"], 5.0);
  EXPECT_EQ(Get("/api/v1/runs/" + synthetic_[0].id + "/artifacts").body["artifacts"][0]["name"], "notes.txt");
  EXPECT_EQ(Get("/api/v1/runs/" + synthetic_[0].id + "/artifacts/notes.txt").raw, "hello");

  Served metrics = Get("/api/v1/metrics?runs=" + Ids({&trace_, &synthetic_[0]}));
  ASSERT_EQ(metrics.status, 200);
  EXPECT_GT(metrics.body["metrics"].size(), 10u);

  // A script's metric named with its unit carries it, as the catalog's do: the chart's axis
  // reads "Throughput (samples/s)".
  auto store = Store::Open(db_).value();
  RunRecord script = NewRun(*store, "units", "1", "A");
  {
    SeriesWriter writer(*store, script.id);
    writer.Append("train.throughput_samples_per_second", "", Point{kStart, 512});
    writer.Append("train.step.compute_seconds", "", Point{kStart, 0.1});
    ASSERT_TRUE(writer.Close().ok());
  }
  std::map<std::string, std::pair<std::string, std::string>> shown;  // metric -> title, unit
  Served listed = Get("/api/v1/metrics?runs=" + script.id);
  for (const json& m : listed.body["metrics"]) shown[m["metric"]] = {m["title"], m["unit"]};
  EXPECT_EQ(shown["train.throughput_samples_per_second"],
            std::make_pair(std::string("Throughput"), std::string("samples/s")))
      << listed.raw;
  EXPECT_EQ(shown["train.step.compute_seconds"].second, "s");
}

TEST_F(ServeTest, DownsampledSeriesKeepEverySpikeAndZoomGivesFullDetail) {
  StartServer();
  std::string runs = Ids({&synthetic_[0], &synthetic_[1]});
  Served s = Get("/api/v1/series?runs=" + runs + "&metric=gpu.utilization.gpu_ratio&budget=2000");
  ASSERT_EQ(s.status, 200) << s.raw;
  ASSERT_EQ(s.body["series"].size(), 2u);
  // A browser's request: large answers come gzip-compressed (never with brotli's slowest
  // quality, which cpp-httplib would pick), and decompress to the same answer.
  std::string four =
      "/api/v1/series?runs=" + Ids({&synthetic_[0], &synthetic_[1], &synthetic_[2], &synthetic_[3]}) +
      "&metric=gpu.utilization.gpu_ratio&budget=2000";
  auto packed = client_->Get(four, {{"Accept-Encoding", "gzip, deflate, br"}});
  ASSERT_TRUE(packed);
  EXPECT_EQ(packed->get_header_value("Content-Encoding"), "gzip");
  EXPECT_EQ(json::parse(packed->body), Get(four).body);
  for (const json& series : s.body["series"]) {
    EXPECT_LE(series["x"].size(), 2000u);
    EXPECT_EQ(series["total_points"], 100000);
    std::vector<double> y = series["y"].get<std::vector<double>>();
    EXPECT_EQ(*std::max_element(y.begin(), y.end()), 1000.0);  // a one-sample spike
    EXPECT_EQ(*std::min_element(y.begin(), y.end()), -5.0);
  }
  // Zoomed on 2 seconds around the spike: every point, at full resolution.
  Served zoom = Get("/api/v1/series?runs=" + synthetic_[0].id +
                    "&metric=gpu.utilization.gpu_ratio&budget=2000&from=313.15&to=315.15");
  ASSERT_EQ(zoom.status, 200);
  EXPECT_EQ(zoom.body["series"][0]["x"].size(), 201u);
  // Without a budget: everything, streamed.
  Served full = Get("/api/v1/series?runs=" + synthetic_[0].id + "&metric=gpu.utilization.gpu_ratio&x=wall");
  ASSERT_EQ(full.status, 200);
  EXPECT_EQ(full.body["series"][0]["x"].size(), 100000u);
  EXPECT_EQ(full.body["series"][0]["x"][0], kStart);

  // The recorded trace: its largest power draw survives a 500-point budget.
  Served trace = Get("/api/v1/series?runs=" + trace_.id + "&metric=gpu.power.draw_watts&budget=500");
  ASSERT_EQ(trace.status, 200);
  std::vector<double> y = trace.body["series"][0]["y"].get<std::vector<double>>();
  EXPECT_LE(y.size(), 500u);
  EXPECT_EQ(*std::max_element(y.begin(), y.end()), *std::max_element(power_.begin(), power_.end()));
  EXPECT_EQ(*std::min_element(y.begin(), y.end()), *std::min_element(power_.begin(), power_.end()));
}

// Runs sampled at different moments and of different lengths come back on one grid of x
// values (a chart of 50 runs then walks hundreds of x values per line, not the union of
// every run's times), each point within a bucket of its time and every spike still there.
TEST_F(ServeTest, ManyRunsShareOneGridOfXValuesAndKeepTheirSpikes) {
  StartServer();
  auto store = Store::Open(db_).value();
  RunRecord offset = NewRun(*store, "synth", "3", "A");
  {
    SeriesWriter writer(*store, offset.id);
    // 25,000 points, 37 ms apart from 3 ms after the start: times no other run has.
    for (int i = 0; i < 25000; ++i)
      writer.Append("gpu.utilization.gpu_ratio", "gpu=0",
                    Point{kStart + 3 + i * 37, i == 12345 ? 500.0 : 30.0});
    ASSERT_TRUE(writer.Close().ok());
    ASSERT_TRUE(store->FinishRun(offset.id, kStart + 925000, kFinished, 0, std::nullopt, "").ok());
  }
  constexpr size_t kBudget = 400;
  for (std::string range : {"", "&from=300&to=330"}) {
    Served s = Get("/api/v1/series?runs=" + Ids({&synthetic_[0], &synthetic_[3], &offset}) +
                   "&metric=gpu.utilization.gpu_ratio&budget=" + std::to_string(kBudget) + range);
    ASSERT_EQ(s.status, 200) << s.raw;
    ASSERT_EQ(s.body["series"].size(), 3u);
    std::set<double> all_x;
    for (const json& series : s.body["series"]) {
      std::vector<double> x = series["x"].get<std::vector<double>>();
      EXPECT_TRUE(std::is_sorted(x.begin(), x.end()) && std::adjacent_find(x.begin(), x.end()) == x.end());
      all_x.insert(x.begin(), x.end());
    }
    EXPECT_LE(all_x.size(), kBudget) << range;
    double bucket = range.empty() ? 999.99 / (kBudget / 4) : 30.0 / (kBudget / 4);
    // The planted spikes, near their own times.
    auto spike_at = [&](size_t series, double value) {
      const json& one = s.body["series"][series];
      for (size_t i = 0; i < one["y"].size(); ++i) {
        if (one["y"][i] == value) return one["x"][i].get<double>();
      }
      return -1.0;
    };
    EXPECT_NEAR(spike_at(0, 1000), 314.15, bucket);
    EXPECT_NEAR(spike_at(1, 1000), 314.15, bucket);
    if (range.empty()) {
      EXPECT_NEAR(spike_at(2, 500), 0.003 + 12345 * 0.037, bucket);
    }

    // The same answer with x as steps between the grid's places (what the web page asks):
    // the same points, the same values, x the place each number names, in fewer bytes.
    Served places =
        Get("/api/v1/series?runs=" + Ids({&synthetic_[0], &synthetic_[3], &offset}) +
            "&metric=gpu.utilization.gpu_ratio&budget=" + std::to_string(kBudget) + range + "&x_form=places");
    ASSERT_EQ(places.status, 200) << places.raw;
    double origin = places.body["grid"]["origin"].get<double>();
    double place_width = places.body["grid"]["place_width"].get<double>();
    EXPECT_NEAR(place_width, bucket / 4, bucket / 400) << range;
    EXPECT_DOUBLE_EQ(s.body["grid"]["origin"].get<double>(), origin);
    ASSERT_EQ(places.body["series"].size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      const json& one = places.body["series"][i];
      const json& numbers = s.body["series"][i];
      EXPECT_FALSE(one.contains("x"));
      EXPECT_EQ(one["y"], numbers["y"]);
      std::vector<double> x = numbers["x"].get<std::vector<double>>();
      std::vector<int64_t> steps = one["x_place_steps"].get<std::vector<int64_t>>();
      ASSERT_EQ(steps.size(), x.size());
      int64_t place = 0;
      for (size_t k = 0; k < steps.size(); ++k) {
        if (k > 0) {
          EXPECT_GE(steps[k], 1);  // x strictly increasing
        }
        place += steps[k];
        EXPECT_NEAR(origin + static_cast<double>(place) * place_width, x[k], place_width / 100) << k;
      }
    }
    EXPECT_LT(places.raw.size(), s.raw.size() * 3 / 4) << range;
  }

  Served wrong = Get("/api/v1/series?runs=" + Ids({&synthetic_[0], &synthetic_[3]}) +
                     "&metric=gpu.utilization.gpu_ratio&budget=400&x_form=steps");
  EXPECT_EQ(wrong.status, 400);
  EXPECT_NE(wrong.raw.find("'x_form' must be numbers or places"), std::string::npos) << wrong.raw;
  // One run has no grid to share: its x comes as numbers whatever the form asked.
  Served one = Get("/api/v1/series?runs=" + Ids({&offset}) +
                   "&metric=gpu.utilization.gpu_ratio&budget=400&x_form=places");
  ASSERT_EQ(one.status, 200) << one.raw;
  EXPECT_FALSE(one.body.contains("grid"));
  EXPECT_EQ(one.body["series"][0]["x"].size(), one.body["series"][0]["y"].size());
}

TEST_F(ServeTest, WorkloadAggregatesMatchADirectComputation) {
  StartServer();
  Served a = Get("/api/v1/aggregate?workloads=synth:1,synth:2&metric=gpu.utilization.gpu_ratio&budget=100");
  ASSERT_EQ(a.status, 200) << a.raw;
  ASSERT_EQ(a.body["workloads"].size(), 2u);
  const json& w1 = a.body["workloads"][0];
  EXPECT_EQ(w1["runs"].size(), 2u);
  ASSERT_EQ(w1["x"].size(), 100u);
  // Bucket 0 (0..10 s): run A is 10, run B 11 everywhere.
  EXPECT_DOUBLE_EQ(w1["mean"][0].get<double>(), 10.5);
  EXPECT_DOUBLE_EQ(w1["min"][0].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(w1["max"][0].get<double>(), 11.0);
  // The bucket holding the spike at 314.15 s: each run's mean there, computed directly.
  // Its 1,000 points a run come from the chunks' 256-point group means, those at the
  // bucket's edges shared by time: exact to within a millionth here.
  double spiky = (999 * 10.0 + 1000) / 1000;  // run A: 1000 points, one of them 1000
  double spiky_b = (999 * 11.0 + 1000) / 1000;
  EXPECT_NEAR(w1["mean"][31].get<double>(), (spiky + spiky_b) / 2, 1e-6 * 11.5);
  EXPECT_DOUBLE_EQ(a.body["workloads"][1]["mean"][0].get<double>(), 20.5);
}

TEST_F(ServeTest, LiveRunsAnswerWhatArrivedSinceAGivenTime) {
  StartServer();
  auto store = Store::Open(db_).value();
  RunRecord live = NewRun(*store, "live", "1", "A");
  SeriesWriter writer(*store, live.id);
  for (int i = 0; i < 10; ++i) writer.Append("train.loss", "", Point{kStart + i * 1000, 1.0 / (i + 1)});
  ASSERT_TRUE(writer.Flush().ok());
  std::string q = "/api/v1/series?runs=" + live.id + "&metric=train.loss&x=wall&budget=1000";
  Served first = Get(q);
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(first.body["series"][0]["x"].size(), 10u);
  int64_t last = first.body["series"][0]["last_ms"];
  for (int i = 10; i < 15; ++i) writer.Append("train.loss", "", Point{kStart + i * 1000, 1.0 / (i + 1)});
  ASSERT_TRUE(writer.Flush().ok());
  Served more = Get(q + "&since=" + std::to_string(last));
  ASSERT_EQ(more.status, 200);
  ASSERT_EQ(more.body["series"][0]["x"].size(), 5u);
  EXPECT_EQ(more.body["series"][0]["x"][0], kStart + 10000);
  ASSERT_TRUE(writer.Close().ok());
}

// A running run's phases are analysed again only once it has grown by a fiftieth of its
// length (at least 30 s), so that many live charts refreshing every few seconds do not each
// re-read the whole run; once it finishes, its phases are analysed whole.
TEST_F(ServeTest, ARunningRunsPhasesAreReusedUntilItGrowsAndAnalysedWholeWhenItEnds) {
  StartServer();
  auto store = Store::Open(db_).value();
  RunRecord live = NewRun(*store, "live", "1", "A");
  SeriesWriter writer(*store, live.id);
  auto busy_then_idle = [&](int from_s, int to_s, int idle_from_s) {
    for (int i = from_s; i < to_s; ++i)
      writer.Append("gpu.utilization.gpu_ratio", "gpu=0",
                    Point{kStart + i * 1000, i >= idle_from_s ? 0.0 : 0.9});
    ASSERT_TRUE(writer.Flush().ok());
  };
  auto idle_phases = [&] {
    Served s = Get("/api/v1/runs/" + live.id + "/phases");
    EXPECT_EQ(s.status, 200) << s.raw;
    int idle = 0;
    for (const json& p : s.body["phases"]) idle += p["kind"] == "idle";
    return idle;
  };
  busy_then_idle(0, 300, 100000);
  EXPECT_EQ(idle_phases(), 0);
  // The GPU falls idle for a minute: the analysis made a moment ago still answers.
  busy_then_idle(300, 360, 300);
  busy_then_idle(360, 600, 100000);
  EXPECT_EQ(idle_phases(), 0);
  ASSERT_TRUE(writer.Close().ok());
  ASSERT_TRUE(store->FinishRun(live.id, kStart + 600000, kFinished, 0, std::nullopt, "").ok());
  EXPECT_EQ(idle_phases(), 1);
}

TEST_F(ServeTest, ExportStreamsEveryPointExactly) {
  StartServer();
  auto r = client_->Get("/api/v1/export?runs=" + trace_.id + "&metric=gpu.power.draw_watts&format=csv");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  std::istringstream lines(r->body);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "run_id,metric,labels,time_ms,step,value");
  size_t n = 0;
  while (std::getline(lines, line)) {
    double v = std::stod(line.substr(line.rfind(',') + 1));
    EXPECT_EQ(v, power_[n]) << line;
    ++n;
  }
  EXPECT_EQ(n, power_.size());
}

// `trainbench export` and the API's export are one format: a user's parser reads both.
TEST_F(ServeTest, ExportAgreesWithTheCommandLineByteForByte) {
  StartServer();
  for (std::string format : {"csv", "json"}) {
    auto served = client_->Get("/api/v1/export?runs=" + trace_.id + "&format=" + format);
    ASSERT_TRUE(served);
    ASSERT_EQ(served->status, 200);
    std::string file = (scratch_.path() / ("cli." + format)).string();
    std::string command = std::string(TRAINBENCH_BINARY) + " export --store " + db_ + " " + trace_.id +
                          " --format " + format + " -o " + file;
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    std::ifstream in(file);
    std::string cli((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_GT(cli.size(), 1000u);
    EXPECT_EQ(served->body, cli) << format;
    if (format == "json") {
      json parsed = json::parse(cli);
      ASSERT_FALSE(parsed["series"].empty());
      EXPECT_EQ(parsed["series"][0]["run_id"], trace_.id);
    }
  }
}

TEST_F(ServeTest, BadInputGetsClearErrorsAndNothingEscapes) {
  StartServer();
  std::string run = synthetic_[0].id;
  auto expect = [&](const std::string& path, int status) {
    Served s = Get(path);
    EXPECT_EQ(s.status, status) << path << " " << s.raw;
    if (status >= 400 && s.body.is_object()) {
      EXPECT_FALSE(s.body.value("message", "").empty()) << path;
    }
  };
  expect("/api/v1/runs/not-a-run", 400);
  expect("/api/v1/runs/0123456789abcdef0123456789abcdef", 404);
  expect("/api/v1/series?runs=" + run + "&metric=gpu.utilization.gpu_ratio&budget=3", 400);
  expect("/api/v1/series?runs=" + run + "&metric=gpu.utilization.gpu_ratio&budget=lots", 400);
  expect("/api/v1/series?runs=" + run + "&metric=gpu.utilization.gpu_ratio&from=10&to=5", 400);
  expect("/api/v1/series?runs=" + run + "&metric=gpu.utilization.gpu_ratio&from=soon", 400);
  expect("/api/v1/series?runs=" + run + "&metric=gpu.utilization.gpu_ratio&x=steps", 400);
  expect("/api/v1/series?runs=" + run + "&metric=no.such.metric", 404);
  expect("/api/v1/series?runs=" + run + "&metric=x';DROP TABLE runs;--", 400);
  expect("/api/v1/series?metric=gpu.utilization.gpu_ratio", 400);
  expect("/api/v1/aggregate?workloads=synth:9&metric=gpu.utilization.gpu_ratio", 404);
  expect("/api/v1/aggregate?workloads=synth:1&metric=gpu.utilization.gpu_ratio&from=10&to=5", 400);
  expect("/api/v1/aggregate?workloads=synth:1&metric=gpu.utilization.gpu_ratio&budget=1000000", 400);
  std::string many;
  for (int i = 0; i < 40; ++i) many += (many.empty() ? "" : ",") + std::string("synth:w") + std::to_string(i);
  expect("/api/v1/aggregate?workloads=" + many + "&metric=gpu.utilization.gpu_ratio", 400);
  // One workload named 200 times is one workload's work.
  std::string repeated;
  for (int i = 0; i < 200; ++i) repeated += (repeated.empty() ? "" : ",") + std::string("synth:1");
  Served once =
      Get("/api/v1/aggregate?workloads=" + repeated + "&metric=gpu.utilization.gpu_ratio&budget=100");
  EXPECT_EQ(once.status, 200) << once.raw.substr(0, 300);
  EXPECT_EQ(once.body["workloads"].size(), 1u);
  // A time after everything gives nothing new, not everything.
  Served later = Get("/api/v1/series?runs=" + run + "&metric=gpu.utilization.gpu_ratio&since=1e300");
  ASSERT_EQ(later.status, 200) << later.raw.substr(0, 300);
  EXPECT_EQ(later.body["series"][0]["in_range"], 0);
  expect("/api/v1/experiments/nope/workloads", 404);
  expect("/api/v1/nothing", 404);
  expect("/api/v1/runs/" + run + "/artifacts/..%2F..%2Fserve.db", 404);
  expect("/api/v1/runs?status=DONE", 400);
  auto post = client_->Post("/api/v1/runs", "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  // Static files stay inside the web directory.
  for (const char* path : {"/..%2F..%2F..%2Fetc%2Fpasswd", "/%2e%2e/%2e%2e/etc/passwd", "/../CMakeLists.txt",
                           "/%00", "/x%00.html"}) {
    auto r = client_->Get(path);
    ASSERT_TRUE(r);
    EXPECT_GE(r->status, 400) << path;
    EXPECT_EQ(r->body.find("root:"), std::string::npos);
  }
  auto index = client_->Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_NE(index->body.find("trainbench"), std::string::npos);
  // The store is still whole.
  EXPECT_EQ(Get("/api/v1/runs?experiment=synth").body["runs"].size(), 4u);
}

TEST_F(ServeTest, OtherAddressesNeedATokenAndEveryRequestCarriesIt) {
  SpawnOptions refuse;
  refuse.argv = {TRAINBENCH_BINARY, "serve", "--store", db_, "--host", "0.0.0.0", "--port", "0"};
  refuse.stderr_mode = Stdio::kPipe;
  ExitInfo exit = ChildProcess::Spawn(refuse).value().Wait().value();
  EXPECT_NE(exit.exit_code, 0);

  // A token for everyone (this test's requests come from the server's own user, who would
  // otherwise pass without one).
  StartServer("--host 127.0.0.1 --token s3cret --allow-other-users");
  EXPECT_EQ(Get("/api/v1/experiments").status, 401);
  EXPECT_EQ(Get("/api/v1/experiments", {{"Authorization", "Bearer wrong"}}).status, 401);
  EXPECT_EQ(Get("/api/v1/experiments", {{"Authorization", "Bearer s3cret"}}).status, 200);
  EXPECT_EQ(Get("/api/v1/experiments", {{"Authorization", "Bearer s3cret2"}}).status, 401);
  EXPECT_EQ(Get("/").status, 401);
  // Not in API URLs: there the header (or the page's cookie) works.
  EXPECT_EQ(Get("/api/v1/experiments?token=s3cret").status, 401);
  // The link a person opens: a cookie, and the same page without the token in its address.
  auto page = client_->Get("/?token=s3cret&experiment=synth");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 303);
  EXPECT_EQ(page->get_header_value("Location"), "/?experiment=synth");
  std::string cookie = page->get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos) << cookie;
  // The cookie is a session of its own, not the token: a browser's cookie store (or a
  // shared profile) never holds the server's secret.
  EXPECT_EQ(cookie.find("s3cret"), std::string::npos) << cookie;
  cookie = cookie.substr(0, cookie.find(';'));
  EXPECT_EQ(Get("/api/v1/experiments", {{"Cookie", cookie}}).status, 200);
  EXPECT_EQ(Get("/api/v1/experiments", {{"Cookie", "trainbench_session=nope"}}).status, 401);
  EXPECT_EQ(Get("/api/v1/experiments", {{"Cookie", "trainbench_token=s3cret"}}).status, 401);

  // The token from a file, out of every user's `ps`.
  StopServer();
  std::string file = (scratch_.path() / "token").string();
  std::ofstream(file) << "fr0m-a-file\n";
  StartServer("--host 127.0.0.1 --allow-other-users --token-file " + file);
  EXPECT_EQ(Get("/api/v1/experiments").status, 401);
  EXPECT_EQ(Get("/api/v1/experiments", {{"Authorization", "Bearer fr0m-a-file"}}).status, 200);
}

// `trainbench serve` as the README starts it: another local user (`nobody`) can neither read
// the store nor change it; the user's own processes pass without a token. A token lets
// others in who show it; --allow-other-users lets every local user in.
TEST_F(ServeTest, ByDefaultOnlyTheUsersOwnProcessesReachTheStore) {
  if (geteuid() != 0) GTEST_SKIP() << "another user is tried only as root";
  using testing::kNobody;
  using testing::StatusAs;
  EXPECT_NE(StartServer().find("your own processes only"), std::string::npos);
  std::string run = synthetic_[0].id;
  const std::string runs = "/api/v1/runs?experiment=synth", log = "/api/v1/runs/" + run + "/log";
  const std::string del = "/api/2.0/mlflow/runs/delete", body = "{\"run_id\": \"" + run + "\"}";
  EXPECT_EQ(Get(runs).status, 200);
  EXPECT_EQ(StatusAs(kNobody, port_, "GET", runs), 403);
  EXPECT_EQ(StatusAs(kNobody, port_, "GET", log), 403);
  EXPECT_EQ(StatusAs(kNobody, port_, "GET", "/api/2.0/mlflow/runs/get?run_id=" + run), 403);
  EXPECT_EQ(StatusAs(kNobody, port_, "POST", del, {}, body), 403);
  EXPECT_EQ(StatusAs(kNobody, port_, "GET", "/"), 403) << "the web UI too";
  EXPECT_EQ(Get(runs).body["runs"].size(), 4u) << "nothing deleted";

  StopServer();
  std::string file = (scratch_.path() / "token").string();
  std::ofstream(file) << "fr0m-a-file\n";
  EXPECT_NE(StartServer("--token-file " + file).find("others with its token"), std::string::npos);
  EXPECT_EQ(Get(runs).status, 200) << "the owner needs no token";
  EXPECT_EQ(StatusAs(kNobody, port_, "GET", runs), 401);
  EXPECT_EQ(StatusAs(kNobody, port_, "GET", runs, {{"Authorization", "Bearer fr0m-a-file"}}), 200);

  StopServer();
  EXPECT_NE(StartServer("--allow-other-users").find("every local user"), std::string::npos);
  EXPECT_EQ(StatusAs(kNobody, port_, "GET", runs), 200);
}

// A web page of another site, in the user's own browser (so the peer is the user): by a
// DNS name pointed at 127.0.0.1 it reads nothing, and its cross-site POSTs change nothing.
// (web/tests/ui.test.mjs makes the same attacks from a real browser.)
TEST_F(ServeTest, AnotherSitesPageNeitherReadsNorChangesTheStore) {
  StartServer("--allowed-host trainbench.lab");
  std::string run = synthetic_[0].id;
  const std::string runs = "/api/v1/runs?experiment=synth";
  const std::string host = "127.0.0.1:" + std::to_string(port_);
  Served rebound = Get(runs, {{"Host", "attacker.example:" + std::to_string(port_)}});
  EXPECT_EQ(rebound.status, 403);
  EXPECT_NE(rebound.raw.find("--allowed-host"), std::string::npos) << rebound.raw;
  EXPECT_EQ(Get(runs, {{"Host", "trainbench.lab"}}).status, 200) << "a name it was given";
  EXPECT_EQ(Get(runs, {{"Host", "localhost:" + std::to_string(port_)}}).status, 200);
  auto post = [&](const httplib::Headers& h) {
    auto r = client_->Post("/api/2.0/mlflow/runs/set-tag", h,
                           "{\"run_id\": \"" + run + "\", \"key\": \"k\", \"value\": \"v\"}", "text/plain");
    return r ? r->status : -1;
  };
  EXPECT_EQ(post({{"Origin", "http://attacker.example"}, {"Sec-Fetch-Site", "cross-site"}}), 403);
  EXPECT_EQ(post({{"Origin", "http://127.0.0.1:1"}}), 403) << "another port's page";
  EXPECT_EQ(post({{"Sec-Fetch-Site", "same-site"}}), 403);
  auto tagged = [&] {
    KeyValues tags = Store::Open(db_).value()->FindRun(run).value().tags;
    return std::any_of(tags.begin(), tags.end(), [](const auto& t) { return t.first == "k"; });
  };
  EXPECT_FALSE(tagged()) << "nothing changed";
  // The web UI's own page, and a client that is not a browser.
  EXPECT_EQ(post({{"Origin", "http://" + host}, {"Sec-Fetch-Site", "same-origin"}}), 200);
  EXPECT_EQ(post({}), 200);
  EXPECT_TRUE(tagged());
}

// What the server answers on a raw connection to `request` (status line and on).
std::string RawExchange(int port, const std::string& request) {
  int fd = ConnectLoopback(port);
  if (fd < 0) return "";
  (void)!write(fd, request.data(), request.size());
  std::string answer;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) {
    answer.append(buf, static_cast<size_t>(n));
    if (answer.find("\r\n\r\n") != std::string::npos) break;
  }
  close(fd);
  return answer;
}

// A stranger cannot make the server read (and hold) a large body, nor hold its workers with
// idle connections, nor crash it with a deeply nested document.
TEST_F(ServeTest, StrangersCannotExhaustTheServer) {
  StartServer("--host 127.0.0.1 --token s3cret --allow-other-users");  // a stranger: no token
  // 300 MB announced, not sent: refused on the headers, before any body is read.
  std::string announced =
      "POST /api/2.0/mlflow/runs/log-batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: 300000000\r\n\r\n";
  EXPECT_TRUE(StartsWith(RawExchange(port_, announced), "HTTP/1.1 401")) << RawExchange(port_, announced);
  // With the token, a JSON call still may not be that large.
  std::string with_token = announced;
  with_token.insert(with_token.find("Content-Length"), "Authorization: Bearer s3cret\r\n");
  EXPECT_TRUE(StartsWith(RawExchange(port_, with_token), "HTTP/1.1 413"));
  // Sixteen idle connections and eight that send half a request leave the server answering.
  std::vector<int> idle;
  for (int i = 0; i < 24; ++i) {
    int fd = ConnectLoopback(port_);
    ASSERT_GE(fd, 0);
    if (i >= 16) (void)!write(fd, "GET /api/v1/experiments HTTP/1.1\r\n", 34);
    idle.push_back(fd);
  }
  client_->set_read_timeout(15, 0);  // the old server kept each of them for 30 s
  EXPECT_EQ(Get("/api/v1/experiments", {{"Authorization", "Bearer s3cret"}}).status, 200);
  for (int fd : idle) close(fd);
  // 60,000 levels of nesting: a clear refusal, and the server goes on.
  std::string deep = std::string(60000, '[') + std::string(60000, ']');
  auto r = client_->Post("/api/2.0/mlflow/runs/log-batch", {{"Authorization", "Bearer s3cret"}}, deep,
                         "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(Get("/api/v1/experiments", {{"Authorization", "Bearer s3cret"}}).status, 200);
}

TEST_F(ServeTest, RunsOnOtherMachinesLogThroughTheTrackingApi) {
  StartServer();
  auto created =
      client_->Post("/api/2.0/mlflow/experiments/create", R"({"name": "remote"})", "application/json");
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 200);
  std::string exp_id = json::parse(created->body)["experiment_id"];
  auto run = client_->Post("/api/2.0/mlflow/runs/create",
                           json{{"experiment_id", exp_id}, {"run_name", "far"}}.dump(), "application/json");
  ASSERT_TRUE(run);
  std::string run_id = json::parse(run->body)["run"]["info"]["run_id"];
  auto logged =
      client_->Post("/api/2.0/mlflow/runs/log-metric",
                    json{{"run_id", run_id}, {"key", "loss"}, {"value", 0.5}, {"timestamp", kStart}}.dump(),
                    "application/json");
  ASSERT_TRUE(logged);
  EXPECT_EQ(logged->status, 200);
  Served s = Get("/api/v1/series?runs=" + run_id + "&metric=train.loss&x=wall&budget=10");
  ASSERT_EQ(s.status, 200) << s.raw;
  EXPECT_EQ(s.body["series"][0]["y"][0], 0.5);
}

}  // namespace
}  // namespace tb
