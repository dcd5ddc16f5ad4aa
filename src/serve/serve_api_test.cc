// The serve API called in-process (no socket): a run written while it is read, through
// the journal, provisional chunks and sealed ones, and answers pulled as a server would.
#include "serve/serve_api.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <cmath>
#include <future>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <thread>

#include "analyze/phases.h"
#include "query/chart_series.h"
#include "query/downsample.h"
#include "store/chunk_summary.h"
#include "store/series_writer.h"
#include "store/varint.h"
#include "tests/helpers/bucket_slack.h"
#include "tests/helpers/counting_store.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {
namespace {

using json = nlohmann::json;
constexpr int64_t kStart = 1763777000000;

// A chart's JSON writes each value's text once and looks repeats up, and the x of a
// shared grid from texts made once per answer: what it writes is still every value exactly
// (at full resolution) and the same text a series makes for itself.
TEST(ChartSeriesJsonTest, ValuesReadBackExactlyAndSharedPlacesAreTheSeriesOwnText) {
  RunRecord run;
  run.id = "r";
  run.start_ms = kStart;
  SeriesInfo series{1, "r", "gpu.power.draw_watts", "gpu=0"};
  std::vector<Point> points;
  for (int i = 0; i < 20000; ++i) {
    // Distinct values (more than the table of recent ones holds) between repeated ones.
    double v = i % 3 == 0 ? 100.0 + i % 7 : std::sqrt(static_cast<double>(i)) * 1e-3 + i;
    // Now and then the longest texts a double has (24 characters), and an infinity.
    if (i % 11 == 5) v = -std::numeric_limits<double>::min() * (1 + i * 1e-9);
    if (i % 11 == 6) v = -std::numeric_limits<double>::max() / (1 + i * 1e-9);
    points.push_back({kStart + i * 100, i == 777 ? std::nan("") : i == 778 ? HUGE_VAL : v, kNoStep});
  }
  json full = json::parse(ChartSeriesJson(run, series, points, ChartWindow{}));
  ASSERT_EQ(full["y"].size(), points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    if (i == 777 || i == 778) {
      EXPECT_TRUE(full["y"][i].is_null());
    } else {
      ASSERT_EQ(full["y"][i].get<double>(), points[i].value) << i;
    }
  }
  ChartWindow own;
  own.budget = 400;
  own.grid = Buckets{0, 20.0};
  ChartWindow shared = own;
  shared.grid_texts = GridPlaceTexts(*own.grid, own.budget);
  std::string mine = ChartSeriesJson(run, series, points, own);
  EXPECT_EQ(ChartSeriesJson(run, series, points, shared), mine);
  EXPECT_GT(json::parse(mine)["x"].size(), 300u);
}

class ServeApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = Store::Open((scratch_.path() / "s.db").string()).value();
    run_.id = NewRunId();
    run_.experiment = "live";
    run_.workload = "1";
    run_.name = "A";
    run_.command = "python3 train.py";
    run_.start_ms = kStart;
    ASSERT_TRUE(store_->EnsureExperiment(run_.experiment).ok());
    ASSERT_TRUE(store_->CreateRun(run_).ok());
    api_ = std::make_unique<ServeApi>(*store_);
  }

  ApiResponse Call(const std::string& path, std::multimap<std::string, std::string> query) {
    return api_->Handle({"GET", "/api/v1/" + path, std::move(query), ""});
  }
  // The values of the run's loss series at full resolution.
  std::vector<double> Loss(const std::string& since = "") {
    std::multimap<std::string, std::string> q = {{"runs", run_.id}, {"metric", "train.loss"}, {"x", "wall"}};
    if (!since.empty()) q.emplace("since", since);
    ApiResponse r = Call("series", q);
    EXPECT_EQ(r.status, 200) << r.body;
    std::string body = r.body;
    // Without a budget the answer is streamed: pulled piece by piece, as the server does.
    while (r.stream && r.stream(body)) {
    }
    return json::parse(body)["series"][0]["y"].get<std::vector<double>>();
  }

  // A second run of the same workload, started `later_ms` after the first.
  RunRecord SecondRun(int64_t later_ms) {
    RunRecord other = run_;
    other.id = NewRunId();
    other.name = "B";
    other.start_ms = kStart + later_ms;
    EXPECT_TRUE(store_->CreateRun(other).ok());
    return other;
  }

  ScratchDirectory scratch_{"tb-serve-api"};
  std::unique_ptr<Store> store_;
  RunRecord run_;
  std::unique_ptr<ServeApi> api_;
};

// A figure request cannot ask for gigabytes: a PNG beyond 50 million pixels is refused
// saying the dpi that would fit; the same size as SVG (no pixels) is drawn.
TEST_F(ServeApiTest, AFigureOfTooManyPixelsIsRefusedSayingWhatFits) {
  SeriesWriter writer(*store_, run_.id);
  for (int i = 0; i < 10; ++i) writer.Append("train.loss", "", Point{kStart + i * 1000, 1.0 / (i + 1)});
  ASSERT_TRUE(writer.Close().ok());
  std::string spec = R"({"runs": [")" + run_.id +
                     R"("], "metric": "train.loss", "width": "24in", "height": "24in", "dpi": 1000})";
  ApiResponse png = Call("figure", {{"spec", spec}, {"format", "png"}});
  EXPECT_EQ(png.status, 400) << png.body.substr(0, 200);
  EXPECT_NE(png.body.find("576 million pixels"), std::string::npos) << png.body;
  EXPECT_NE(png.body.find("dpi 294 or less"), std::string::npos) << png.body;
  EXPECT_EQ(Call("figure", {{"spec", spec}, {"format", "svg"}}).status, 200);
  std::string wide = R"({"runs": [")" + run_.id + R"("], "metric": "train.loss", "width": "400in"})";
  ApiResponse refused = Call("figure", {{"spec", wide}, {"format", "svg"}});
  EXPECT_EQ(refused.status, 400);
  EXPECT_NE(refused.body.find("0.5in to 40in"), std::string::npos) << refused.body;
}

TEST_F(ServeApiTest, APointIsAnsweredOnceWhetherInTheJournalAProvisionalOrASealedChunk) {
  // Chunks seal at 64 points: the run's points move while the cache keeps what it decoded.
  SeriesWriter writer(*store_, run_.id, /*seal_points=*/64, /*checkpoint_flushes=*/2);
  std::vector<double> written;
  for (int flush = 0; flush < 12; ++flush) {
    for (int i = 0; i < 25; ++i) {
      double v = static_cast<double>(written.size());
      writer.Append("train.loss", "", Point{kStart + static_cast<int64_t>(written.size()) * 100, v});
      written.push_back(v);
    }
    ASSERT_TRUE(writer.Flush().ok());
    EXPECT_EQ(Loss(), written) << "after flush " << flush;
    // What a live chart asks next: the points after the last 30 it has.
    if (written.size() <= 30) continue;
    size_t have = written.size() - 30;
    EXPECT_EQ(Loss(std::to_string(kStart + static_cast<int64_t>(have - 1) * 100)),
              std::vector<double>(written.begin() + static_cast<std::ptrdiff_t>(have), written.end()))
        << "after flush " << flush;
  }
  ASSERT_TRUE(writer.Close().ok());
  EXPECT_EQ(Loss(), written);
  // Only what came after a time, for a live chart.
  std::vector<double> tail = Loss(std::to_string(kStart + 199 * 100));
  EXPECT_EQ(tail, std::vector<double>(written.begin() + 200, written.end()));
}

TEST_F(ServeApiTest, TheExportIsStreamedAndCarriesEveryPoint) {
  SeriesWriter writer(*store_, run_.id);
  for (int i = 0; i < 5000; ++i) writer.Append("train.loss", "", Point{kStart + i, 1.0 / (i + 1)});
  ASSERT_TRUE(writer.Close().ok());
  ApiResponse r = Call("export", {{"runs", run_.id}, {"format", "csv"}});
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.content_type.find("text/csv"), std::string::npos);
  ASSERT_TRUE(r.stream);
  std::string body = r.body;
  while (r.stream(body)) {
  }
  std::istringstream lines(body);
  std::string line;
  size_t n = 0;
  while (std::getline(lines, line)) ++n;
  EXPECT_EQ(n, 5001u);  // the header and every point
}

TEST_F(ServeApiTest, WrongRequestsGetMlflowStyleErrorsAndOtherPathsAreLeftAlone) {
  ApiResponse bad = Call("series", {{"runs", run_.id}, {"metric", "train.loss"}, {"budget", "lots"}});
  EXPECT_EQ(bad.status, 400);
  json error = json::parse(bad.body);
  EXPECT_EQ(error["error_code"], "INVALID_PARAMETER_VALUE");
  EXPECT_NE(error["message"].get<std::string>().find("budget"), std::string::npos) << bad.body;
  ApiResponse missing = Call("runs/0123456789abcdef0123456789abcdef", {});
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(json::parse(missing.body)["error_code"], "RESOURCE_DOES_NOT_EXIST");
  // A chart of several runs, one of which is no run: the answer names that one.
  std::string gone = "0123456789abcdef0123456789abcdef";
  ApiResponse some =
      Call("series", {{"runs", run_.id + "," + gone}, {"metric", "train.loss"}, {"budget", "100"}});
  EXPECT_EQ(some.status, 404);
  EXPECT_NE(json::parse(some.body)["message"].get<std::string>().find(gone), std::string::npos) << some.body;
  ApiResponse typo =
      Call("series", {{"runs", run_.id + ",0123"}, {"metric", "train.loss"}, {"budget", "100"}});
  EXPECT_EQ(typo.status, 400);
  EXPECT_NE(json::parse(typo.body)["message"].get<std::string>().find("'0123' is not a run id"),
            std::string::npos)
      << typo.body;
  // The handler answers /api/v1/ only: the web UI's files are someone else's.
  ApiHandler handler = api_->Handler();
  EXPECT_FALSE(handler({"GET", "/index.html", {}, ""}).has_value());
  EXPECT_TRUE(handler({"GET", "/api/v1/experiments", {}, ""}).has_value());
}

}  // namespace
}  // namespace tb

namespace tb {
namespace {

TEST_F(ServeApiTest, ARunsFiguresCostOneRowPerSeriesAndTwoChunksPerEnergyCounter) {
  // A running run's two energy counters: sealed chunks of 120 points, a provisional chunk,
  // and the newest 10 points in the journal only.
  SeriesWriter writer(*store_, run_.id, /*seal_points=*/100, /*checkpoint_flushes=*/4);
  auto joules = [](int gpu, int i) { return 1000.0 * (gpu + 1) + i * (250.5 + gpu) + (i % 3) * 0.25; };
  constexpr int kTicks = 2050;
  for (int i = 0; i < kTicks; ++i) {
    for (int g = 0; g < 2; ++g)
      writer.Append("gpu.energy.consumed_joules", "gpu=" + std::to_string(g),
                    {kStart + i * 100, joules(g, i), kNoStep});
    if (i % 10 == 9) {
      ASSERT_TRUE(writer.Flush().ok());
    }
  }
  int64_t series = store_->ListSeries(run_.id)->at(0).id;
  ASSERT_GE(store_->ListChunkInfo(series)->size(), 15u);
  ASSERT_EQ(ReadSeriesPoints(*store_, series)->size(), static_cast<size_t>(kTicks));
  CountingStore counting(*store_);
  ServeApi api(counting);
  ApiResponse r = api.Handle({"GET", "/api/v1/runs/" + run_.id, {}, ""});
  ASSERT_EQ(r.status, 200) << r.body;
  json run = json::parse(r.body);
  // The energy: each counter's last value (in the journal) less its first.
  double want = joules(0, kTicks - 1) - joules(0, 0) + joules(1, kTicks - 1) - joules(1, 0);
  EXPECT_NEAR(run["energy"]["gpu_joules"].get<double>(), want, 1e-6);
  EXPECT_EQ(run["energy"]["gpus"], 2);
  EXPECT_FALSE(run["energy"]["integrated"].get<bool>());
  EXPECT_LE(counting.chunk_data_reads, 4) << "the first and last chunk of each counter";
  EXPECT_EQ(counting.whole_series_reads, 0);
  // The summary: what the chunks hold (the journal's newest 10 points not yet).
  ASSERT_EQ(run["summary"].size(), 2u);
  for (int g = 0; g < 2; ++g) {
    const json& s = run["summary"][g];
    EXPECT_EQ(s["labels"], "gpu=" + std::to_string(g));
    EXPECT_EQ(s["count"], kTicks - 10);
    EXPECT_EQ(s["min"].get<double>(), joules(g, 0));
    EXPECT_EQ(s["max"].get<double>(), joules(g, kTicks - 11));
  }
}

TEST_F(ServeApiTest, TheRowsOfManyRunsComeInOneAnswerInTheOrderAsked) {
  {
    SeriesWriter writer(*store_, run_.id);
    for (int i = 0; i < 3; ++i)
      writer.Append("gpu.energy.consumed_joules", "gpu=0", {kStart + i * 1000, 100.0 + 40 * i, kNoStep});
    ASSERT_TRUE(writer.Close().ok());
  }
  RunRecord b = SecondRun(5000);
  RunRecord c = b;
  c.id = NewRunId();
  c.experiment = "other";
  ASSERT_TRUE(store_->EnsureExperiment(c.experiment).ok());
  ASSERT_TRUE(store_->CreateRun(c).ok());
  std::string unknown(32, 'a');
  ApiResponse r = Call("runs", {{"ids", c.id + "," + run_.id + "," + unknown + "," + b.id}, {"energy", "1"}});
  ASSERT_EQ(r.status, 200) << r.body;
  json runs = json::parse(r.body)["runs"];
  ASSERT_EQ(runs.size(), 3u) << "the unknown id is left out";
  EXPECT_EQ(runs[0]["id"], c.id);
  EXPECT_EQ(runs[1]["id"], run_.id);
  EXPECT_EQ(runs[2]["id"], b.id);
  // Each row as runs/{id} gives it: the summary and the energy.
  ApiResponse one = Call("runs/" + run_.id, {});
  ASSERT_EQ(one.status, 200);
  json alone = json::parse(one.body);
  alone.erase("duration_ms");  // a running run's: up to now
  runs[1].erase("duration_ms");
  EXPECT_EQ(runs[1], alone);
  EXPECT_DOUBLE_EQ(runs[1]["energy"]["gpu_joules"].get<double>(), 80.0);
  EXPECT_TRUE(runs[0]["energy"].is_null());
  // Without energy=1 the rows have none; summary=0 leaves the summaries out; the other
  // filters still apply.
  json plain = json::parse(Call("runs", {{"ids", run_.id + "," + c.id}, {"summary", "0"}}).body)["runs"];
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_FALSE(plain[0].contains("energy"));
  EXPECT_FALSE(plain[0].contains("summary"));
  json live = json::parse(Call("runs", {{"ids", run_.id + "," + c.id}, {"experiment", "live"}}).body)["runs"];
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0]["id"], run_.id);
  // Bad input: an id that is not one, a flag that is not 0 or 1.
  ApiResponse bad = Call("runs", {{"ids", run_.id + ",xyz"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("'xyz' is not a run id"), std::string::npos) << bad.body;
  EXPECT_EQ(Call("runs", {{"ids", run_.id}, {"energy", "yes"}}).status, 400);
}

TEST_F(ServeApiTest, ManyRunsEventsComeInOneAnswerAsEachRunsOwn) {
  RunRecord b = SecondRun(5000);
  ASSERT_TRUE(store_->AddEvent({run_.id, kStart + 2000, "signal", "SIGUSR1"}).ok());
  ASSERT_TRUE(store_->AddEvent({b.id, kStart + 9000, "phase", "epoch 2"}).ok());
  ASSERT_TRUE(store_->AddEvent({b.id, kStart + 7000, "phase", "epoch 1"}).ok());
  ApiResponse r = Call("events", {{"runs", b.id + "," + run_.id}});
  ASSERT_EQ(r.status, 200) << r.body;
  json runs = json::parse(r.body)["runs"];
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], json::parse(Call("runs/" + b.id + "/events", {}).body));
  EXPECT_EQ(runs[1], json::parse(Call("runs/" + run_.id + "/events", {}).body));
  ASSERT_EQ(runs[0]["events"].size(), 2u);
  EXPECT_EQ(runs[0]["events"][0]["label"], "epoch 1");
  EXPECT_DOUBLE_EQ(runs[0]["events"][0]["relative_s"].get<double>(), 2.0);  // b started 5 s later
  // A run the store does not hold is an error here, as it is for runs/{id}/events.
  ApiResponse missing = Call("events", {{"runs", run_.id + "," + std::string(32, 'b')}});
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(Call("events", {}).status, 400);
}

// Holds the first whole-series read until released, counting them all.
class GateStore : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  std::atomic<int> chunk_reads{0};  // the reads of a series' chunks with their points
  std::promise<void> release;
  Result<std::vector<ChunkRecord>> ReadChunkRange(int64_t s, int64_t from, int64_t to) override {
    if (chunk_reads++ == 0) gate_.wait();
    return inner_.ReadChunkRange(s, from, to);
  }

 private:
  std::shared_future<void> gate_ = release.get_future().share();
};

TEST_F(ServeApiTest, ChartsAskingForARunsPhasesAtOnceShareOneAnalysis) {
  SeriesWriter writer(*store_, run_.id);
  for (int i = 0; i < 600; ++i) {
    writer.Append("gpu.utilization.gpu_ratio", "gpu=0",
                  {kStart + i * 100, i % 100 < 70 ? 0.9 : 0.0, kNoStep});
  }
  ASSERT_TRUE(writer.Close().ok());
  ASSERT_TRUE(store_->FinishRun(run_.id, kStart + 60000, kFinished, 0, std::nullopt, "").ok());
  GateStore gated(*store_);
  ServeApi api(gated);
  auto phases = [&] { return api.Handle({"GET", "/api/v1/runs/" + run_.id + "/phases", {}, ""}); };
  std::future<ApiResponse> first = std::async(std::launch::async, phases);
  // The first is analysing (it reads the series' chunks), held at the gate.
  for (int i = 0; i < 5000 && gated.chunk_reads == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (gated.chunk_reads == 0) {
    gated.release.set_value();
    FAIL() << "the analysis did not read the series' chunks";
  }
  std::future<ApiResponse> second = std::async(std::launch::async, phases);
  // Were the second to analyse the run too, it would read the series within this time.
  for (int i = 0; i < 50 && gated.chunk_reads < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  gated.release.set_value();
  ApiResponse a = first.get(), b = second.get();
  ASSERT_EQ(a.status, 200) << a.body;
  ASSERT_EQ(b.status, 200) << b.body;
  EXPECT_EQ(a.body, b.body);
  EXPECT_EQ(gated.chunk_reads, 1) << "one analysis for both";
}

// A finished run's phases come from the copy the launcher kept when it ended, when this
// trainbench's method made it: a week-long run's are then one row, not every point again.
// A copy by an older trainbench (no version) is analysed afresh.
TEST_F(ServeApiTest, AFinishedRunsKeptAnalysisIsServedWithoutReadingItsPoints) {
  SeriesWriter writer(*store_, run_.id);
  for (int i = 0; i < 600; ++i)
    writer.Append("gpu.utilization.gpu_ratio", "gpu=0", {kStart + i * 100, i < 300 ? 0.9 : 0.0, kNoStep});
  ASSERT_TRUE(writer.Close().ok());
  ASSERT_TRUE(store_->FinishRun(run_.id, kStart + 60000, kFinished, 0, std::nullopt, "").ok());
  RunRecord finished = store_->FindRun(run_.id).value();
  std::string made = AnalysisJson(AnalyzeStoredRun(*store_, finished).value());
  EXPECT_EQ(json::parse(made)["version"], kAnalysisVersion);
  auto keep = [&](const std::string& content) {
    ASSERT_TRUE(
        store_->PutArtifact({run_.id, "phases.json", static_cast<int64_t>(content.size()), content, ""})
            .ok());
  };
  auto served = [&](CountingStore& counting) {
    ServeApi api(counting);
    ApiResponse r = api.Handle({"GET", "/api/v1/runs/" + run_.id + "/phases", {}, ""});
    EXPECT_EQ(r.status, 200) << r.body;
    return r.body;
  };
  json kept = json::parse(made);
  kept["phases"][0]["detail"] = "as kept";
  keep(kept.dump());
  CountingStore reads(*store_);
  EXPECT_EQ(json::parse(served(reads))["phases"][0]["detail"], "as kept");
  EXPECT_EQ(reads.data_queries, 0) << "no chunk read";
  // By an older trainbench: made again, from the points.
  kept.erase("version");
  keep(kept.dump());
  CountingStore again(*store_);
  EXPECT_EQ(served(again), made);
  EXPECT_GT(again.data_queries, 0);
  // ... and kept in the older copy's place: the next server reads it, not the points.
  CountingStore next(*store_);
  EXPECT_EQ(served(next), made);
  EXPECT_EQ(next.data_queries, 0) << "no chunk read";
  // Samples logged to the run after it ended (an MLflow client may): the copy is made again.
  kept = json::parse(made);
  kept["phases"][0]["detail"] = "as kept";
  keep(kept.dump());
  SeriesWriter later(*store_, run_.id);
  for (int i = 0; i < 10; ++i)
    later.Append("gpu.utilization.gpu_ratio", "gpu=0", {kStart + 60000 + i * 100, 0.0, kNoStep});
  ASSERT_TRUE(later.Close().ok());
  CountingStore grown(*store_);
  EXPECT_NE(json::parse(served(grown))["phases"][0]["detail"], "as kept");
  EXPECT_GT(grown.data_queries, 0);
  // A phases.json of the run's own (its script logged one) is not the analysis, and stays.
  const std::string own = R"({"note": "the script's own file"})";
  keep(own);
  CountingStore theirs(*store_);
  EXPECT_NE(served(theirs).find("\"steady\""), std::string::npos);
  EXPECT_EQ(store_->GetArtifact(run_.id, "phases.json")->content, own);
}

// A finished run of 100,000 points at 10 Hz (25 sealed chunks: 24 of 4,096 points and the
// rest, written by flushes of 5,000) with one spike.
class LongSeriesTest : public ServeApiTest {
 protected:
  void SetUp() override {
    ServeApiTest::SetUp();
    SeriesWriter writer(*store_, run_.id);
    for (int i = 0; i < kPoints; ++i) {
      double v = i == kSpike ? 400.0 : 100.0 + (i % 50);
      writer.Append("gpu.power.draw_watts", "gpu=0", {kStart + i * 100, v, kNoStep});
      if (i % 5000 == 4999) {
        ASSERT_TRUE(writer.Flush().ok());
      }
    }
    ASSERT_TRUE(writer.Close().ok());
    ASSERT_TRUE(store_->FinishRun(run_.id, kStart + kPoints * 100, kFinished, 0, std::nullopt, "").ok());
    counting_ = std::make_unique<CountingStore>(*store_);
    api_ = std::make_unique<ServeApi>(*counting_);
  }
  // A chart `budget` points wide (a quarter of it buckets).
  json Chart(std::multimap<std::string, std::string> extra, const std::string& budget = "20") {
    std::multimap<std::string, std::string> q = {
        {"runs", run_.id}, {"metric", "gpu.power.draw_watts"}, {"budget", budget}, {"x", "relative"}};
    q.insert(extra.begin(), extra.end());
    ApiResponse r = Call("series", q);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body)["series"][0];
  }
  // Runs `sql` on the store's file once per row, binding its blob and integer, each
  // changing one row; then `then`.
  void UpdateRows(const char* sql, const std::vector<std::pair<std::string, int64_t>>& rows,
                  const char* then = nullptr) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((scratch_.path() / "s.db").c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK);
    for (const auto& [blob, id] : rows) {
      sqlite3_bind_blob(st, 1, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
      sqlite3_bind_int64(st, 2, id);
      EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
      EXPECT_EQ(sqlite3_changes(db), 1);
      sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (then != nullptr) {
      EXPECT_EQ(sqlite3_exec(db, then, nullptr, nullptr, nullptr), SQLITE_OK);
    }
    sqlite3_close(db);
  }
  // Makes the store as one written before schema 7: each chunk's summary in its row, but for
  // the chunks at `without` (as before schema 5), and no overview.
  void AsBeforeOverviews(const std::vector<size_t>& without) {
    std::vector<ChunkRecord> chunks = store_->ReadChunks(store_->ListSeries(run_.id)->at(0).id).value();
    std::vector<std::pair<std::string, int64_t>> rows;
    for (size_t i = 0; i < chunks.size(); ++i) {
      if (std::find(without.begin(), without.end(), i) != without.end()) continue;
      std::vector<Point> points;
      ASSERT_TRUE(DecodeChunk(chunks[i].data, points).ok());
      rows.emplace_back(EncodeSummary(points), chunks[i].id);
    }
    UpdateRows("UPDATE chunks SET summary = ? WHERE id = ?", rows, "DELETE FROM series_overview");
  }
  // Makes the series' overview as a trainbench that summarized chunks at `groups` (and no
  // group means) wrote it.
  void WithOverviewLevels(const std::vector<int64_t>& groups) {
    std::vector<ChunkRecord> chunks = store_->ReadChunks(store_->ListSeries(run_.id)->at(0).id).value();
    std::vector<std::pair<std::string, int64_t>> blocks;
    int64_t sealed = 0;
    for (ChunkRecord& c : chunks) {
      std::vector<Point> points;
      ASSERT_TRUE(DecodeChunk(c.data, points).ok());
      c.summary.clear();
      PutVarint(c.summary, groups.size());
      for (int64_t g : groups) {
        std::string level = EncodeChunk(SummarizeGroups(points, g));
        PutVarint(c.summary, static_cast<uint64_t>(g));
        PutVarint(c.summary, level.size());
        c.summary += level;
      }
      int64_t block = sealed / kOverviewBlockPoints;
      if (blocks.empty() || blocks.back().second != block) blocks.emplace_back("", block);
      blocks.back().first += OverviewSegment(c);
      sealed += c.count;
    }
    UpdateRows("UPDATE series_overview SET data = ? WHERE block = ?", blocks);
  }
  // The chart's points hold the spike at its own time, and none below the series' lowest.
  static void ExpectSpikeAndFloor(const std::vector<double>& x, const std::vector<double>& y) {
    bool spike = false;
    for (size_t i = 0; i < y.size(); ++i) spike |= y[i] == 400.0 && std::abs(x[i] - kSpike * 0.1) < 1e-6;
    EXPECT_TRUE(spike);
    EXPECT_EQ(*std::min_element(y.begin(), y.end()), 100.0);
  }
  static constexpr int kPoints = 100000, kSpike = 61234;
  std::unique_ptr<CountingStore> counting_;
};

// A running run's wide chart is drawn from its series' overview and, beside it, its newest
// chunk, not sealed yet: the points logged since the last seal are on it, spike included.
TEST_F(ServeApiTest, ARunningRunsWideChartHoldsItsNewestPointsBesideTheOverview) {
  SeriesWriter writer(*store_, run_.id, SeriesWriter::kDefaultSealPoints, /*checkpoint_flushes=*/1);
  constexpr int kPoints = 30000, kSpike = kPoints - 500;  // 7 chunks sealed, 1,328 points after
  for (int i = 0; i < kPoints; ++i) {
    writer.Append("gpu.power.draw_watts", "gpu=0",
                  {kStart + i * 100, i == kSpike ? 400.0 : 100.0 + i % 50, kNoStep});
    if (i % 1000 == 999) {
      ASSERT_TRUE(writer.Flush().ok());
    }
  }
  int64_t series = store_->ListSeries(run_.id).value()[0].id;
  int provisional = 0;
  for (const ChunkRecord& c : store_->ListChunkInfo(series).value()) provisional += c.sealed ? 0 : 1;
  ASSERT_EQ(provisional, 1);
  ApiResponse r = Call("series", {{"runs", run_.id}, {"metric", "gpu.power.draw_watts"}, {"budget", "400"}});
  ASSERT_EQ(r.status, 200) << r.body;
  json s = json::parse(r.body)["series"][0];
  EXPECT_EQ(s["total_points"], kPoints);
  std::vector<double> x = s["x"].get<std::vector<double>>(), y = s["y"].get<std::vector<double>>();
  ASSERT_FALSE(x.empty());
  EXPECT_NEAR(x.back(), (kPoints - 1) * 0.1, 1e-6);
  auto spike = std::find(y.begin(), y.end(), 400.0);
  ASSERT_NE(spike, y.end()) << "the newest chunk's spike";
  EXPECT_NEAR(x[static_cast<size_t>(spike - y.begin())], kSpike * 0.1, 1e-6);
  // Finished, every chunk sealed (the newest now summarized too): the chart from the
  // overview alone, spike kept.
  ASSERT_TRUE(writer.Close().ok());
  ASSERT_TRUE(store_->FinishRun(run_.id, kStart + kPoints * 100, kFinished, 0, std::nullopt, "").ok());
  CountingStore counting(*store_);
  ServeApi fresh(counting);
  ApiResponse done = fresh.Handle({"GET",
                                   "/api/v1/series",
                                   {{"runs", run_.id}, {"metric", "gpu.power.draw_watts"}, {"budget", "400"}},
                                   ""});
  ASSERT_EQ(done.status, 200) << done.body;
  json closed = json::parse(done.body)["series"][0];
  EXPECT_EQ(closed["total_points"], kPoints);
  y = closed["y"].get<std::vector<double>>();
  EXPECT_NE(std::find(y.begin(), y.end(), 400.0), y.end());
  EXPECT_EQ(counting.data_queries, 0) << "no chunk row read";
}

TEST_F(LongSeriesTest, AFinishedRunsChartAskedAgainReadsNothingFromTheStore) {
  json first = Chart({}, "2000");
  EXPECT_EQ(counting_->overview_reads, 1);
  int queries = counting_->data_queries;
  json again = Chart({}, "2000");
  EXPECT_EQ(again, first);
  EXPECT_EQ(counting_->overview_reads, 1);  // none more
  EXPECT_EQ(counting_->data_queries, queries);
  // Another width, or a range wide enough for a level, is drawn from the overview kept:
  // still nothing read, and right.
  json narrow = Chart({}, "400");
  ExpectSpikeAndFloor(narrow["x"].get<std::vector<double>>(), narrow["y"].get<std::vector<double>>());
  EXPECT_LE(narrow["x"].size(), 400u);
  json half = Chart({{"from", "0"}, {"to", std::to_string(kSpike * 0.1 + 1)}}, "400");
  std::vector<double> hx = half["x"].get<std::vector<double>>(), hy = half["y"].get<std::vector<double>>();
  ASSERT_FALSE(hx.empty());
  EXPECT_LE(hx.back(), kSpike * 0.1 + 1);
  ExpectSpikeAndFloor(hx, hy);
  EXPECT_EQ(counting_->overview_reads, 1);
  EXPECT_EQ(counting_->data_queries, queries);
}

TEST_F(LongSeriesTest, AChartOfManyFinishedRunsReadsTheirSeriesAndOverviewsInOneQueryEach) {
  // Two more finished runs like the first, their spikes elsewhere.
  std::vector<std::string> ids = {run_.id};
  for (int k = 1; k <= 2; ++k) {
    RunRecord other = run_;
    other.id = NewRunId();
    other.name = "other" + std::to_string(k);
    ASSERT_TRUE(store_->CreateRun(other).ok());
    SeriesWriter writer(*store_, other.id);
    for (int i = 0; i < kPoints; ++i) {
      double v = i == kSpike - k * 20000 ? 400.0 : 100.0 + (i % 50);
      writer.Append("gpu.power.draw_watts", "gpu=0", {kStart + i * 100, v, kNoStep});
    }
    ASSERT_TRUE(writer.Close().ok());
    ASSERT_TRUE(store_->FinishRun(other.id, kStart + kPoints * 100, kFinished, 0, std::nullopt, "").ok());
    ids.push_back(other.id);
  }
  auto chart = [&](Store& store, const std::vector<std::string>& runs) {
    ServeApi fresh(store);
    std::string list;
    for (const std::string& id : runs) list += (list.empty() ? "" : ",") + id;
    ApiResponse r = fresh.Handle({"GET",
                                  "/api/v1/series",
                                  {{"runs", list}, {"metric", "gpu.power.draw_watts"}, {"budget", "2000"}},
                                  ""});
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body)["series"];
  };
  CountingStore counting(*store_);
  json all = chart(counting, ids);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(counting.series_lists, 1) << "the three runs' series in one read";
  EXPECT_EQ(counting.overview_reads, 1) << "the three series' overviews in one read";
  EXPECT_EQ(counting.data_queries, 0) << "no chunk read";
  // Each series' values as drawn when asked for alone, its spike in its own bucket (several
  // runs share a grid of 500 buckets of 20 s, x at their places).
  for (size_t k = 0; k < ids.size(); ++k) {
    EXPECT_EQ(all[k]["run"], ids[k]);
    json alone = chart(*store_, {ids[k]})[0];
    EXPECT_EQ(all[k]["y"], alone["y"]);
    std::vector<double> x = all[k]["x"].get<std::vector<double>>(),
                        y = all[k]["y"].get<std::vector<double>>();
    auto spike = std::find(y.begin(), y.end(), 400.0);
    ASSERT_NE(spike, y.end());
    EXPECT_NEAR(x[static_cast<size_t>(spike - y.begin())], (kSpike - static_cast<int>(k) * 20000) * 0.1,
                20.0);
  }
}

// A workload's mean of several finished long runs reads their overviews in one query, and
// no chunk; in buckets too narrow for the overviews' means, their chunks in one query. Each
// bucket still what every point gives.
TEST_F(LongSeriesTest, AWorkloadMeanOfManyFinishedRunsReadsTheirOverviewsOrChunksInOneQuery) {
  for (int k = 1; k <= 2; ++k) {
    RunRecord other = SecondRun(k * 1000);
    SeriesWriter writer(*store_, other.id);
    for (int i = 0; i < kPoints; ++i) {
      double v = i == kSpike - k * 20000 ? 400.0 : 100.0 + ((i + 7 * k) % 50);
      writer.Append("gpu.power.draw_watts", "gpu=0", {other.start_ms + i * 100, v, kNoStep});
    }
    ASSERT_TRUE(writer.Close().ok());
    ASSERT_TRUE(
        store_->FinishRun(other.id, other.start_ms + kPoints * 100, kFinished, 0, std::nullopt, "").ok());
  }
  std::vector<XYSeries> every;
  for (const RunRecord& r : store_->ListRuns("live").value()) {
    int64_t id = store_->ListSeries(r.id).value()[0].id;
    every.push_back(AlignedRun(ReadSeriesPoints(*store_, id).value(), r.start_ms, XAxis::kRelative));
  }
  ASSERT_EQ(every.size(), 3u);
  auto expect_exact = [&](size_t buckets) {
    Band exact = Aggregate(every, 0, every[0].x.back(), buckets);
    ApiResponse r = api_->Handle(
        {"GET",
         "/api/v1/aggregate",
         {{"workloads", "live:1"}, {"metric", "gpu.power.draw_watts"}, {"budget", std::to_string(buckets)}},
         ""});
    ASSERT_EQ(r.status, 200) << r.body;
    json mean = json::parse(r.body)["workloads"][0];
    ASSERT_EQ(mean["x"].size(), exact.x.size());
    for (size_t b = 0; b < exact.x.size(); ++b) {
      EXPECT_NEAR(mean["mean"][b].get<double>(), exact.mean[b], 0.005 * 300) << buckets << " " << b;
      EXPECT_EQ(mean["n"][b], exact.runs[b]) << b;
    }
  };
  expect_exact(100);  // 1,000 points a bucket: two groups of means or more
  EXPECT_EQ(counting_->overview_reads, 1) << "the three series' overviews in one read";
  EXPECT_EQ(counting_->data_queries + counting_->whole_series_reads + counting_->summary_reads, 0);
  EXPECT_EQ(counting_->chunk_lists, 0);
  expect_exact(1000);  // 100 points a bucket: means made from every chunk
  EXPECT_EQ(counting_->overview_reads, 1) << "the overviews kept";
  EXPECT_EQ(counting_->whole_reads_queries, 1) << "the three series' chunks in one read";
  EXPECT_EQ(counting_->whole_series_reads, 3);
  EXPECT_EQ(counting_->data_queries + counting_->summary_reads + counting_->chunk_lists, 0);
}

TEST_F(LongSeriesTest, AWideChartIsDrawnFromSummariesWithItsSpike) {
  json s = Chart({});
  // 5 buckets of 20,000 points each: the level of 2,048-point groups.
  EXPECT_EQ(s["total_points"], kPoints);
  std::vector<double> x = s["x"].get<std::vector<double>>(), y = s["y"].get<std::vector<double>>();
  ASSERT_LE(y.size(), 20u);
  EXPECT_GE(y.size(), 10u);
  EXPECT_EQ(counting_->chunk_data_reads + counting_->whole_series_reads, 0) << "no chunk read point by point";
  // The spike, at its own time, and the envelope of every other point.
  ExpectSpikeAndFloor(x, y);
  EXPECT_EQ(x.front(), 0.0);
  EXPECT_NEAR(x.back(), (kPoints - 1) * 0.1, 1e-6);
  // The same again comes from memory: still no chunk read whole.
  json again = Chart({});
  EXPECT_EQ(again["y"], s["y"]);
  EXPECT_EQ(counting_->chunk_data_reads + counting_->whole_series_reads, 0);
}

TEST_F(LongSeriesTest, AWideChartReadsTheSeriesOverviewNotARowPerChunk) {
  json s = Chart({}, "1000");
  EXPECT_EQ(counting_->summary_reads, 0) << "the overview's rows, not each chunk's summary";
  EXPECT_EQ(counting_->chunk_data_reads + counting_->whole_series_reads, 0);
  // Without the overview (a store written before there were any) the chart is the same,
  // from each chunk's summary in its row.
  AsBeforeOverviews({});
  ServeApi fresh(*counting_);
  ApiResponse r = fresh.Handle({"GET",
                                "/api/v1/series",
                                {{"runs", run_.id}, {"metric", "gpu.power.draw_watts"}, {"budget", "1000"}},
                                ""});
  ASSERT_EQ(r.status, 200) << r.body;
  json before = json::parse(r.body)["series"][0];
  EXPECT_EQ(counting_->summary_reads, 1);
  EXPECT_EQ(before["x"], s["x"]);
  EXPECT_EQ(before["y"], s["y"]);
  EXPECT_EQ(before["total_points"], s["total_points"]);
}

TEST_F(LongSeriesTest, AChartOfAboutAThousandPointsIsDrawnFromTheFinerLevel) {
  // 250 buckets of 400 points, as a 500-pixel-wide chart asks: 128-point groups, whose
  // extremes keep the spike where it was; no chunk read point by point.
  json s = Chart({}, "1000");
  std::vector<double> x = s["x"].get<std::vector<double>>(), y = s["y"].get<std::vector<double>>();
  EXPECT_LE(y.size(), 1000u);
  EXPECT_GE(y.size(), 500u);
  EXPECT_EQ(counting_->chunk_data_reads + counting_->whole_series_reads, 0) << "no chunk read point by point";
  ExpectSpikeAndFloor(x, y);
}

TEST_F(LongSeriesTest, AStoreSummarizedInCoarserGroupsIsDrawnFromTheLevelsItHas) {
  // Written when the finest level was of 256 points: a chart of 400 points a bucket is drawn
  // from it; one of 200 points a bucket (finer than any level it has) from every point.
  WithOverviewLevels({256, 2048});
  json wide = Chart({}, "1000");
  std::vector<double> x = wide["x"].get<std::vector<double>>(), y = wide["y"].get<std::vector<double>>();
  EXPECT_GE(y.size(), 500u);
  EXPECT_EQ(counting_->chunk_data_reads + counting_->whole_series_reads + counting_->summary_reads, 0);
  ExpectSpikeAndFloor(x, y);
  std::vector<double> envelope = x;
  int queries = counting_->data_queries;
  json fine = Chart({}, "2000");
  x = fine["x"].get<std::vector<double>>();
  y = fine["y"].get<std::vector<double>>();
  EXPECT_LE(y.size(), 2000u);
  EXPECT_GT(y.size(), envelope.size());
  EXPECT_EQ(counting_->chunk_data_reads, 25) << "every chunk read whole";
  // In one read; none for chunks begun after the overview's last: every chunk is sealed.
  EXPECT_EQ(counting_->data_queries - queries, 1) << "in one read";
  ExpectSpikeAndFloor(x, y);
  EXPECT_EQ(fine["total_points"], kPoints);
}

TEST_F(LongSeriesTest, WhatIsNewSinceATimeIsReadFromTheChunksAfterIt) {
  // A live chart's refresh: the last 99 points, from the one chunk that holds them.
  json s = Chart({{"since", std::to_string(kStart + int64_t{99900} * 100)}}, "1000");
  std::vector<double> x = s["x"].get<std::vector<double>>();
  ASSERT_EQ(x.size(), 99u);
  EXPECT_NEAR(x.front(), 99901 * 0.1, 1e-6);
  EXPECT_NEAR(x.back(), (kPoints - 1) * 0.1, 1e-6);
  EXPECT_EQ(s["total_points"], kPoints);
  EXPECT_EQ(counting_->chunk_data_reads, 1) << "of 25 chunks";
  EXPECT_EQ(counting_->whole_series_reads, 0);
}

TEST_F(LongSeriesTest, ZoomingInReadsOnlyTheChunksInRange) {
  // 30 seconds around the spike: 300 points, all of them, from the one or two chunks there.
  double at = kSpike * 0.1;
  json s = Chart({{"from", std::to_string(at - 15)}, {"to", std::to_string(at + 15)}}, "2000");
  std::vector<double> y = s["y"].get<std::vector<double>>();
  EXPECT_NEAR(static_cast<double>(y.size()), 301, 1) << "every point of the 30 seconds";
  EXPECT_NE(std::find(y.begin(), y.end(), 400.0), y.end());
  EXPECT_GE(counting_->chunk_data_reads, 1);
  EXPECT_LE(counting_->chunk_data_reads, 2) << "of 25 chunks";
  EXPECT_EQ(counting_->whole_series_reads, 0);
}

TEST_F(LongSeriesTest, ChunksWrittenBeforeSummariesAreReadWhole) {
  // As a store written by an earlier trainbench: no summaries, no overview.
  std::vector<size_t> every(store_->ListChunkInfo(store_->ListSeries(run_.id)->at(0).id)->size());
  std::iota(every.begin(), every.end(), size_t{0});
  AsBeforeOverviews(every);
  json s = Chart({});
  std::vector<double> y = s["y"].get<std::vector<double>>();
  EXPECT_LE(y.size(), 20u);
  EXPECT_NE(std::find(y.begin(), y.end(), 400.0), y.end());
  size_t chunks = store_->ListChunkInfo(store_->ListSeries(run_.id)->at(0).id)->size();
  EXPECT_EQ(counting_->chunk_data_reads, static_cast<int>(chunks)) << "each chunk read whole, once";
  EXPECT_EQ(counting_->data_queries, 1) << "all " << chunks << " chunks in one read";
}

TEST_F(LongSeriesTest, OnlyChunksWithoutSummariesAreReadWholeAStretchAtATime) {
  // Two stretches of chunks without summaries (the 3rd to 5th and the 11th to 12th), the
  // others with theirs: five chunks read whole, in two reads, none of the summarized ones.
  ASSERT_EQ(store_->ListChunkInfo(store_->ListSeries(run_.id)->at(0).id)->size(), 25u);
  AsBeforeOverviews({2, 3, 4, 10, 11});
  json s = Chart({});
  std::vector<double> y = s["y"].get<std::vector<double>>();
  EXPECT_LE(y.size(), 20u);
  EXPECT_NE(std::find(y.begin(), y.end(), 400.0), y.end());
  EXPECT_EQ(counting_->chunk_data_reads, 5);
  EXPECT_EQ(counting_->data_queries, 2);
}

}  // namespace
}  // namespace tb

namespace tb {
namespace {

// A live chart of a workload's mean asks only for its newest buckets, on the grid of the
// whole chart: the runs' chunks before them are not read, and the buckets are those a
// whole answer on that grid has.
TEST_F(ServeApiTest, AWorkloadMeansNewestBucketsReadOnlyTheChunksThatReachThem) {
  RunRecord other = SecondRun(1000);  // aligned on the time since each run's start
  // Two running runs of 2,000 points at 10 Hz, sealed every 64 points; the newest flushed
  // into the journal.
  for (const RunRecord* r : {&run_, &other}) {
    SeriesWriter writer(*store_, r->id, /*seal_points=*/64, /*checkpoint_flushes=*/4);
    for (int i = 0; i < 2000; ++i) {
      double v = r == &run_ ? 0.5 + 0.4 * std::sin(i / 30.0) : (i % 100) / 100.0;
      writer.Append("gpu.utilization.gpu_ratio", "gpu=0", {r->start_ms + i * 100, v, kNoStep});
      if (i % 25 == 24) {
        ASSERT_TRUE(writer.Flush().ok());
      }
    }
    ASSERT_TRUE(writer.Flush().ok());
  }
  CountingStore counting(*store_);
  auto mean = [&](std::multimap<std::string, std::string> range) {
    ServeApi api(counting);  // nothing cached
    range.emplace("workloads", "live:1");
    range.emplace("metric", "gpu.utilization.gpu_ratio");
    ApiResponse r = api.Handle({"GET", "/api/v1/aggregate", range, ""});
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body)["workloads"][0];
  };
  // The whole chart, 40 buckets of 5 s.
  json whole = mean({{"from", "0"}, {"to", "200"}, {"budget", "40"}});
  int whole_reads = counting.chunk_data_reads + counting.whole_series_reads;
  EXPECT_DOUBLE_EQ(whole["bucket_width"].get<double>(), 5.0);
  ASSERT_EQ(whole["x"].size(), 40u);
  // Its last four buckets, asked as a live chart does.
  counting.chunk_data_reads = counting.whole_series_reads = 0;
  json tail = mean({{"from", "180"}, {"to", "200"}, {"budget", "4"}});
  EXPECT_DOUBLE_EQ(tail["bucket_width"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(tail["from"].get<double>(), 180.0);
  ASSERT_EQ(tail["x"].size(), 4u);
  for (size_t b = 0; b < 4; ++b) {
    EXPECT_DOUBLE_EQ(tail["x"][b].get<double>(), whole["x"][36 + b].get<double>());
    EXPECT_NEAR(tail["mean"][b].get<double>(), whole["mean"][36 + b].get<double>(), 1e-12) << b;
    EXPECT_NEAR(tail["min"][b].get<double>(), whole["min"][36 + b].get<double>(), 1e-12) << b;
    EXPECT_NEAR(tail["max"][b].get<double>(), whole["max"][36 + b].get<double>(), 1e-12) << b;
    EXPECT_EQ(tail["n"][b], 2);
  }
  // Each run: 31 sealed chunks of 64 points and a provisional one. The newest buckets
  // (from 175 s, point 1,750) reach into the last 4 sealed chunks and the provisional one.
  EXPECT_GE(whole_reads, 2 * 31) << "the whole chart reads every chunk of both runs";
  EXPECT_EQ(counting.whole_series_reads, 0);
  EXPECT_LE(counting.chunk_data_reads, 2 * 5) << "the chunks from 175 s on";
  // Both runs' journals in one read for each of the two requests, not one a run.
  EXPECT_EQ(counting.journals_of_runs, 2);
  EXPECT_EQ(counting.journal_reads, 0);
}

// A finished run of 9,000 points (three sealed chunks: too short for an overview in
// SQLite, kOverviewMinPoints) is drawn from its points however few buckets its chart asks
// for: its spike at its own time, its lowest value, and a workload mean that is the mean
// of its points.
TEST_F(ServeApiTest, AShortRunIsDrawnFromItsPointsAtAnyBudget) {
  constexpr int kPoints = 9000, kSpike = 4321;
  {
    SeriesWriter writer(*store_, run_.id);
    for (int i = 0; i < kPoints; ++i) {
      double v = i == kSpike ? 400.0 : 100.0 + (i % 50);
      writer.Append("gpu.power.draw_watts", "gpu=0", {kStart + i * 100, v, kNoStep});
    }
    ASSERT_TRUE(writer.Close().ok());
  }
  ASSERT_TRUE(store_->FinishRun(run_.id, kStart + kPoints * 100, kFinished, 0, std::nullopt, "").ok());
  int64_t series = store_->ListSeries(run_.id).value()[0].id;
  EXPECT_EQ(store_->ReadSeriesOverview(series, 0).value().covered_points, 0);
  for (std::string budget : {"4", "8", "40", "400"}) {
    ServeApi api(*store_);
    ApiResponse r = api.Handle({"GET",
                                "/api/v1/series",
                                {{"runs", run_.id}, {"metric", "gpu.power.draw_watts"}, {"budget", budget}},
                                ""});
    ASSERT_EQ(r.status, 200) << r.body;
    json s = json::parse(r.body)["series"][0];
    EXPECT_EQ(s["total_points"], kPoints);
    std::vector<double> x = s["x"].get<std::vector<double>>(), y = s["y"].get<std::vector<double>>();
    EXPECT_LE(y.size(), static_cast<size_t>(std::stoi(budget))) << budget;
    auto spike = std::find(y.begin(), y.end(), 400.0);
    ASSERT_NE(spike, y.end()) << budget;
    EXPECT_NEAR(x[static_cast<size_t>(spike - y.begin())], kSpike * 0.1, 1e-6) << budget;
    EXPECT_EQ(*std::min_element(y.begin(), y.end()), 100.0) << budget;
  }
  // The workload's mean in 4 buckets of 2,250 points: each the mean of its points.
  ServeApi api(*store_);
  ApiResponse r = api.Handle({"GET",
                              "/api/v1/aggregate",
                              {{"workloads", "live:1"}, {"metric", "gpu.power.draw_watts"}, {"budget", "4"}},
                              ""});
  ASSERT_EQ(r.status, 200) << r.body;
  json mean = json::parse(r.body)["workloads"][0];
  ASSERT_EQ(mean["mean"].size(), 4u);
  double width = mean["bucket_width"].get<double>();
  for (size_t b = 0; b < 4; ++b) {
    double in = 0, n = 0;
    for (int i = 0; i < kPoints; ++i) {
      if (std::min<size_t>(3, static_cast<size_t>(i * 0.1 / width)) != b) continue;
      in += i == kSpike ? 400.0 : 100.0 + (i % 50);
      ++n;
    }
    EXPECT_NEAR(mean["mean"][b].get<double>(), in / n, 1e-9) << b;
  }
}

// A chart of several finished runs too short for an overview (9,000 points, three chunks
// each) reads their points in one query after the overviews' counts, not one or more a
// series; each drawn as when each is read on its own. A zoomed chart reads only its range.
TEST_F(ServeApiTest, AChartOfManyShortFinishedRunsReadsTheirPointsInOneQuery) {
  constexpr int kPoints = 9000;
  std::vector<std::string> ids;
  for (int k = 0; k < 3; ++k) {
    RunRecord r = k == 0 ? run_ : SecondRun(0);  // on one grid with the first: drawn as alone
    SeriesWriter writer(*store_, r.id);
    for (int i = 0; i < kPoints; ++i) {
      double v = i == 1000 + k * 3000 ? 400.0 : 100.0 + ((i + k) % 50);
      writer.Append("gpu.power.draw_watts", "gpu=0", {r.start_ms + i * 100, v, kNoStep});
    }
    ASSERT_TRUE(writer.Close().ok());
    ASSERT_TRUE(store_->FinishRun(r.id, r.start_ms + kPoints * 100, kFinished, 0, std::nullopt, "").ok());
    ids.push_back(r.id);
  }
  auto chart = [&](ServeApi& api, const std::vector<std::string>& runs,
                   std::multimap<std::string, std::string> extra = {}) {
    std::string list;
    for (const std::string& id : runs) list += (list.empty() ? "" : ",") + id;
    extra.insert({{"runs", list}, {"metric", "gpu.power.draw_watts"}, {"budget", "2000"}});
    ApiResponse r = api.Handle({"GET", "/api/v1/series", extra, ""});
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body)["series"];
  };
  CountingStore counting(*store_);
  ServeApi api(counting);
  json all = chart(api, ids);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(counting.series_lists, 1);
  EXPECT_EQ(counting.overview_reads, 1) << "the three series' counts in one read";
  EXPECT_EQ(counting.whole_reads_queries, 1) << "their chunks in one read";
  EXPECT_EQ(counting.whole_series_reads, 3);
  EXPECT_EQ(counting.data_queries + counting.chunk_lists + counting.summary_reads, 0);
  // The same chart drawn as before, each series read on its own (a range, though it spans
  // the runs, reads no run whole): the same points.
  ServeApi each(*store_);
  json ranged = chart(each, ids, {{"from", "0"}, {"to", std::to_string(kPoints / 10)}});
  ASSERT_EQ(ranged.size(), 3u);
  for (size_t k = 0; k < ids.size(); ++k) {
    EXPECT_EQ(all[k]["run"], ids[k]);
    EXPECT_EQ(all[k]["total_points"], kPoints);
    EXPECT_TRUE(all[k]["x"] == ranged[k]["x"]) << k;
    EXPECT_TRUE(all[k]["y"] == ranged[k]["y"]) << k;
    std::vector<double> y = all[k]["y"].get<std::vector<double>>();
    EXPECT_NE(std::find(y.begin(), y.end(), 400.0), y.end()) << k;
  }
  // Asked again: the same two reads and no more (points are not kept decoded: a server
  // just started pays most for memory touched the first time).
  EXPECT_EQ(chart(api, ids), all);
  EXPECT_EQ(counting.overview_reads, 2);
  EXPECT_EQ(counting.whole_reads_queries, 2);
  EXPECT_EQ(counting.data_queries + counting.chunk_lists + counting.summary_reads, 0);
  // Zoomed into a minute of each run: no run read whole.
  int whole_before = counting.whole_series_reads;
  ServeApi fresh(counting);
  json zoomed = chart(fresh, ids, {{"x", "relative"}, {"from", "300"}, {"to", "360"}});
  ASSERT_EQ(zoomed.size(), 3u);
  EXPECT_EQ(counting.whole_series_reads, whole_before);
  for (size_t k = 0; k < ids.size(); ++k) {
    std::vector<double> x = zoomed[k]["x"].get<std::vector<double>>();
    ASSERT_FALSE(x.empty());
    EXPECT_GE(x.front(), 299.9);
    EXPECT_LE(x.back(), 360.1);
  }
}

// A live chart's refresh of several runs (three running, with sealed chunks, a provisional
// one and points in their journals; one finished) reads what is new in every series in
// three queries for all of them, and gives each series what it gives asked alone.
TEST_F(ServeApiTest, ALiveRefreshOfManyRunsReadsWhatIsNewInThreeQueries) {
  constexpr int kPoints = 3030;  // the last flushes after the last checkpoint: in the journal
  std::vector<RunRecord> runs = {run_, SecondRun(0), SecondRun(0), SecondRun(0)};
  std::map<std::pair<std::string, std::string>, std::vector<Point>> written;
  std::vector<std::unique_ptr<SeriesWriter>> writers;
  for (size_t r = 0; r < runs.size(); ++r) {
    auto& writer = writers.emplace_back(
        std::make_unique<SeriesWriter>(*store_, runs[r].id, /*seal_points=*/500, /*checkpoint_flushes=*/7));
    for (int i = 0; i < kPoints; ++i) {
      for (const char* gpu : {"gpu=0", "gpu=1"}) {
        Point p{kStart + i * 100, 0.01 * static_cast<double>((i * (r + 3) + gpu[4]) % 97), kNoStep};
        writer->Append("gpu.utilization.gpu_ratio", gpu, p);
        written[{runs[r].id, gpu}].push_back(p);
      }
      if (i % 10 == 9) {
        ASSERT_TRUE(writer->Flush().ok());
      }
    }
  }
  ASSERT_TRUE(writers[3]->Close().ok());
  ASSERT_TRUE(store_->FinishRun(runs[3].id, kStart + kPoints * 100, kFinished, 0, std::nullopt, "").ok());
  ASSERT_FALSE(store_->ReadJournal(store_->ListSeries(runs[0].id)->at(0).id)->empty());
  int64_t since = kStart + (kPoints - 45) * int64_t{100};  // the newest 44 points
  auto refresh = [&](Store& store, const std::vector<std::string>& ids, const std::string& labels = "") {
    ServeApi api(store);
    std::string list;
    for (const std::string& id : ids) list += (list.empty() ? "" : ",") + id;
    std::multimap<std::string, std::string> q = {{"runs", list},
                                                 {"metric", "gpu.utilization.gpu_ratio"},
                                                 {"budget", "1000"},
                                                 {"x", "wall"},
                                                 {"since", std::to_string(since)}};
    if (!labels.empty()) q.emplace("labels", labels);
    ApiResponse r = api.Handle({"GET", "/api/v1/series", q, ""});
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body)["series"];
  };
  CountingStore counting(*store_);
  std::vector<std::string> ids;
  for (const RunRecord& r : runs) ids.push_back(r.id);
  json all = refresh(counting, ids);
  ASSERT_EQ(all.size(), 8u);
  EXPECT_EQ(counting.overview_reads, 1) << "the series' counts";
  EXPECT_EQ(counting.reaching_reads, 1) << "the chunks that reach past the time";
  EXPECT_EQ(counting.journals_of_runs, 1) << "the running runs' journals";
  EXPECT_EQ(
      counting.chunk_lists + counting.journal_reads + counting.data_queries + counting.whole_series_reads, 0);
  for (const json& s : all) {
    std::string run = s["run"], labels = s["labels"];
    // What each series gives asked alone (read by itself), and what was written after the time.
    json alone = refresh(*store_, {run}, labels)[0];
    EXPECT_EQ(s["x"], alone["x"]) << run << labels;
    EXPECT_EQ(s["y"], alone["y"]) << run << labels;
    EXPECT_EQ(s["total_points"], alone["total_points"]) << run << labels;
    EXPECT_EQ(s["total_points"], kPoints) << run << labels;
    std::vector<double> want;
    for (const Point& p : written[{run, labels}]) {
      if (p.time_ms > since) want.push_back(p.value);
    }
    EXPECT_EQ(s["y"].get<std::vector<double>>(), want) << run << labels;
  }
}

// A workload's mean over the whole of long runs is made from their chunks' group means:
// no sealed chunk's points are read, and each bucket's mean is what every point gives, to
// within half a percent of the values' range (the groups that straddle its edges are shared
// by time; counted whole in the bucket of their middle they were off by 3%).
TEST_F(ServeApiTest, AWorkloadsMeanOfLongRunsIsMadeFromTheirChunksGroupMeans) {
  RunRecord other = SecondRun(2500);
  constexpr int kPoints = 28900;  // 7 sealed chunks of 4,096 and 228 points, too few for means
  for (const RunRecord* r : {&run_, &other}) {
    SeriesWriter writer(*store_, r->id);
    for (int i = 0; i < kPoints; ++i) {
      double v = r == &run_ ? 0.5 + 0.4 * std::sin(i / 1000.0) : static_cast<double>(i) / kPoints;
      if (i % 7000 == 3000) v = std::nan("");  // gaps: no part in a mean
      writer.Append("gpu.utilization.gpu_ratio", "gpu=0", {r->start_ms + i * 100, v, kNoStep});
      if (i % 1000 == 999) {
        ASSERT_TRUE(writer.Flush().ok());
      }
    }
    if (r == &run_) {  // one finished, one still running
      ASSERT_TRUE(writer.Close().ok());
    } else {
      ASSERT_TRUE(writer.Flush().ok());
    }
  }
  ASSERT_TRUE(store_->FinishRun(run_.id, kStart + kPoints * 100, kFinished, 0, std::nullopt, "").ok());
  // What every point gives.
  std::vector<XYSeries> every;
  for (const RunRecord* r : {&run_, &other}) {
    int64_t id = store_->ListSeries(r->id).value()[0].id;
    every.push_back(AlignedRun(ReadSeriesPoints(*store_, id).value(), r->start_ms, XAxis::kRelative));
  }
  double longest = std::max(every[0].x.back(), every[1].x.back());
  CountingStore counting(*store_);
  ServeApi api(counting);
  // The mean, lowest and highest run of each bucket as every point gives them: to 0.005, or
  // (`within_a_bucket`, where a bucket covers about one stored group) no further from it
  // than what every point gives in a bucket on either side, as a chart's envelope is exact
  // to within a bucket.
  auto expect_exact = [&](const char* when, size_t buckets = 20, bool within_a_bucket = false) {
    Band exact = Aggregate(every, 0, longest, buckets);
    ApiResponse r = api.Handle({"GET",
                                "/api/v1/aggregate",
                                {{"workloads", "live:1"},
                                 {"metric", "gpu.utilization.gpu_ratio"},
                                 {"budget", std::to_string(buckets)}},
                                ""});
    ASSERT_EQ(r.status, 200) << r.body;
    json mean = json::parse(r.body)["workloads"][0];
    ASSERT_EQ(mean["x"].size(), exact.x.size()) << when;
    auto expect_near = [&](const char* what, const std::vector<double>& wanted, size_t b) {
      double got = mean[what][b].get<double>();
      if (!within_a_bucket) {
        EXPECT_NEAR(got, wanted[b], 0.005) << when << what << " " << b;
        return;
      }
      EXPECT_LE(std::abs(got - wanted[b]), BucketSlack(wanted, b) + 1e-9) << when << what << " " << b;
    };
    for (size_t b = 0; b < exact.x.size(); ++b) {
      EXPECT_DOUBLE_EQ(mean["x"][b].get<double>(), exact.x[b]) << when << b;
      expect_near("mean", exact.mean, b);
      expect_near("min", exact.min, b);
      expect_near("max", exact.max, b);
      EXPECT_EQ(mean["n"][b], exact.runs[b]) << when << b;
    }
  };
  expect_exact("from the chunks: ");
  EXPECT_EQ(counting.whole_series_reads, 0);
  EXPECT_LE(counting.chunk_data_reads, 2) << "of 15 chunks: the running run's newest only";
  EXPECT_EQ(counting.summary_reads, 0) << "the runs' overviews, not each chunk's summary";
  // At 145 points a bucket, about one stored group of 128 a bucket: still from the chunks'
  // means.
  int before = counting.chunk_data_reads;
  expect_exact("a group a bucket: ", 200, /*within_a_bucket=*/true);
  EXPECT_LE(counting.chunk_data_reads - before, 2) << "of 15 chunks: the running run's newest only";
  EXPECT_EQ(counting.whole_reads_queries, 0) << "no run's chunks read whole";
  // At 72 points a bucket, fewer than a stored group: the means of 9 points, made from each
  // chunk as it is read, are as close to what every point gives.
  expect_exact("chunk by chunk: ", 400);
  EXPECT_GT(counting.whole_reads_queries, 0);
  // Once the finished run's every point is in the server's cache (its chart at full
  // resolution was drawn), its part of the mean comes from there.
  ApiResponse full =
      api.Handle({"GET",
                  "/api/v1/series",
                  {{"runs", run_.id}, {"metric", "gpu.utilization.gpu_ratio"}, {"x", "relative"}},
                  ""});
  ASSERT_EQ(full.status, 200);
  std::string body = full.body;
  while (full.stream && full.stream(body)) {
  }
  expect_exact("with a run cached: ");
}

}  // namespace
}  // namespace tb
