// What a chart of long series costs the store: drawn from the series' overviews and
// summaries, a finished run's chart asked again read from nothing, a zoom reading only the
// chunks in range, chunks without summaries read a stretch at a time.
#include <gtest/gtest.h>

#include "serve/serve_api_fixture.h"

namespace tb {
namespace {

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
  for (const ChunkRecord& c : store_->ReadChunks({.series = {series}, .part = ChunkPart::kInfo}).value())
    provisional += c.sealed ? 0 : 1;
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
  std::vector<size_t> every(
      store_->ReadChunks({.series = {store_->ListSeries(run_.id)->at(0).id}, .part = ChunkPart::kInfo})
          ->size());
  std::iota(every.begin(), every.end(), size_t{0});
  AsBeforeOverviews(every);
  json s = Chart({});
  std::vector<double> y = s["y"].get<std::vector<double>>();
  EXPECT_LE(y.size(), 20u);
  EXPECT_NE(std::find(y.begin(), y.end(), 400.0), y.end());
  size_t chunks =
      store_->ReadChunks({.series = {store_->ListSeries(run_.id)->at(0).id}, .part = ChunkPart::kInfo})
          ->size();
  EXPECT_EQ(counting_->chunk_data_reads, static_cast<int>(chunks)) << "each chunk read whole, once";
  EXPECT_EQ(counting_->data_queries, 1) << "all " << chunks << " chunks in one read";
}

TEST_F(LongSeriesTest, OnlyChunksWithoutSummariesAreReadWholeAStretchAtATime) {
  // Two stretches of chunks without summaries (the 3rd to 5th and the 11th to 12th), the
  // others with theirs: five chunks read whole, in two reads, none of the summarized ones.
  ASSERT_EQ(store_->ReadChunks({.series = {store_->ListSeries(run_.id)->at(0).id}, .part = ChunkPart::kInfo})
                ->size(),
            25u);
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
