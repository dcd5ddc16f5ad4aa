// What a live chart and a workload's mean cost the store: the newest buckets read from the
// chunks that reach them, many short runs' points in one query, a live refresh of many runs
// in three queries, a mean of long runs from their chunks' group means.
#include <gtest/gtest.h>

#include "serve/serve_api_fixture.h"

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
