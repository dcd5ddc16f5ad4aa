// The serve API called in-process (no socket): a run written while it is read, through
// the journal, provisional chunks and sealed ones, and answers pulled as a server would;
// figures, exports, errors, many runs' rows and events, phases.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "base/read_file.h"
#include "serve/serve_api_fixture.h"

namespace tb {
namespace {

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

// docs/API.md's table of resources names exactly the routes the server dispatches by.
TEST(ServeRoutesTest, TheDocsListEveryRouteAndNoOther) {
  std::string doc;
  ASSERT_TRUE(ReadWholeFile(std::string(TRAINBENCH_TESTDATA) + "/../docs/API.md", &doc, nullptr));
  std::set<std::string> documented, routed;
  std::regex row(R"(\n\| `([a-z][a-z/{} ]*)(\?[^`]*)?` \|)");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator(); ++it)
    documented.insert((*it)[1]);
  for (const Route& r : ServeRoutes()) {
    EXPECT_EQ(r.method, "GET");
    EXPECT_EQ(r.scope, "read");
    routed.insert(std::string(r.pattern));
  }
  EXPECT_EQ(documented, routed);
  EXPECT_GE(routed.size(), 16u);
}

// Routes by the table: an artifact's name keeps its folders; an unknown path is named.
TEST_F(ServeApiTest, AnArtifactsNameKeepsItsFoldersAndAnUnknownPathIsNamed) {
  ApiResponse none = Call("runs/" + run_.id + "/artifacts/logs/none.txt", {});
  EXPECT_EQ(none.status, 404) << none.body;
  EXPECT_NE(none.body.find("logs/none.txt"), std::string::npos) << none.body;
  ApiResponse unknown = Call("runs/" + run_.id + "/nothing", {});
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(json::parse(unknown.body)["error_code"], "ENDPOINT_NOT_FOUND") << unknown.body;
}

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
  ASSERT_GE(store_->ReadChunks({.series = {series}, .part = ChunkPart::kInfo})->size(), 15u);
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
  Result<std::vector<ChunkRecord>> ReadChunks(const ChunkQuery& q) override {
    if (q.first_ms && chunk_reads++ == 0) gate_.wait();
    return inner_.ReadChunks(q);
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

}  // namespace
}  // namespace tb

namespace tb {
namespace {

// A notebook's thinning (exact=1): the kept points of several runs each at its own time and
// with every digit, where a chart's are moved onto shared places and cut to 6 digits.
TEST_F(ServeApiTest, AnExactThinningKeepsEachPointsOwnTimeAndEveryDigit) {
  RunRecord other = SecondRun(370);
  std::map<std::pair<std::string, int64_t>, double> stored;
  for (const RunRecord* r : {&run_, &other}) {
    SeriesWriter writer(*store_, r->id);
    for (int i = 0; i < 400; ++i) {
      Point p{r->start_ms + i * 1000 + (i % 7) * 13, 100.0 / 3.0 + std::sin(i * 0.7) / 7.0, kNoStep};
      writer.Append("gpu.power.draw_watts", "gpu=0", p);
      stored[{r->id, p.time_ms}] = p.value;
    }
    ASSERT_TRUE(writer.Close().ok());
  }
  auto answer = [&](bool exact) {
    std::multimap<std::string, std::string> q = {{"runs", run_.id + "," + other.id},
                                                 {"metric", "gpu.power.draw_watts"},
                                                 {"x", "wall"},
                                                 {"budget", "40"}};
    if (exact) q.emplace("exact", "1");
    ApiResponse r = Call("series", q);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body);
  };
  json chart = answer(false), exact = answer(true);
  EXPECT_TRUE(chart.contains("grid")) << "a chart's points share places";
  EXPECT_FALSE(exact.contains("grid"));
  int off_place = 0, cut = 0;
  for (const json& s : chart["series"]) {
    for (size_t i = 0; i < s["x"].size(); ++i) {
      auto t = static_cast<int64_t>(s["x"][i].get<double>());
      auto it = stored.find({s["run"], t});
      off_place += it == stored.end();
      cut += it != stored.end() && it->second != s["y"][i].get<double>();
    }
  }
  EXPECT_GT(off_place + cut, 0)
      << "the chart's answer is not the stored points (else this test shows nothing)";
  for (const json& s : exact["series"]) {
    ASSERT_GT(s["x"].size(), 10u);
    ASSERT_LE(s["x"].size(), 40u);
    for (size_t i = 0; i < s["x"].size(); ++i) {
      auto it = stored.find({s["run"], static_cast<int64_t>(s["x"][i].get<double>())});
      ASSERT_NE(it, stored.end()) << "a point at its own time";
      EXPECT_EQ(s["y"][i].get<double>(), it->second) << "every digit";
    }
  }
  EXPECT_EQ(Call("series", {{"runs", run_.id}, {"metric", "gpu.power.draw_watts"}, {"exact", "yes"}}).status,
            400);
}

}  // namespace
}  // namespace tb
