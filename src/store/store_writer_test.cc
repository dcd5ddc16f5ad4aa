// What the series writer leaves in either store: journal, checkpoints and sealed chunks,
// the series' totals, what a live refresh reads of many series at once, shared tick times
// kept once, nothing lost when a flush fails.
#include <gtest/gtest.h>

#include "store/store_test_fixture.h"

namespace tb {
namespace {

TEST_P(BackendTest, WriterJournalsThenCheckpointsThenSeals) {
  auto store = OpenOk();
  RunRecord run = NewRun(*store);
  SeriesWriter writer(*store, run.id, /*seal_points=*/10, /*checkpoint_flushes=*/3);
  auto series_id = [&] { return store->EnsureSeries(run.id, "gpu.power.draw_watts", "gpu=0").value(); };
  auto add = [&](int i) {
    writer.Append("gpu.power.draw_watts", "gpu=0", {1000 * i, 50.5 + i, kNoStep});
    writer.Append("host.load.average_1m", "", {1000 * i, 0.25 * i, kNoStep});
  };
  for (int i = 0; i < 2; ++i) {
    add(i);
    ASSERT_TRUE(writer.Flush().ok());
  }
  // Two flushes: no chunk yet, both journal entries readable right away.
  EXPECT_TRUE(store->ReadChunks({.series = {series_id()}})->empty());
  EXPECT_EQ(store->ReadJournal(series_id())->size(), 2u);
  EXPECT_EQ(ReadSeriesPoints(*store, series_id())->size(), 2u);

  add(2);
  ASSERT_TRUE(writer.Flush().ok());  // the third flush checkpoints
  EXPECT_TRUE(store->ReadJournal(series_id())->empty());
  std::vector<ChunkRecord> chunks = store->ReadChunks({.series = {series_id()}}).value();
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_FALSE(chunks[0].sealed);
  EXPECT_EQ(chunks[0].count, 3);
  add(3);
  ASSERT_TRUE(writer.Flush().ok());
  EXPECT_EQ(ReadSeriesPoints(*store, series_id())->size(), 4u);  // chunk + journal

  for (int i = 4; i < 12; ++i) add(i);
  ASSERT_TRUE(writer.Flush().ok());
  chunks = store->ReadChunks({.series = {series_id()}}).value();
  // A sealed chunk of 10 points replacing the provisional one, the other 2 provisional.
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_TRUE(chunks[0].sealed);
  EXPECT_EQ(chunks[0].count, 10);
  EXPECT_DOUBLE_EQ(*chunks[0].min, 50.5);
  EXPECT_DOUBLE_EQ(*chunks[0].max, 59.5);
  EXPECT_FALSE(chunks[1].sealed);
  EXPECT_EQ(chunks[1].count, 2);
  std::vector<Point> points = ReadSeriesPoints(*store, series_id()).value();
  ASSERT_EQ(points.size(), 12u);
  EXPECT_EQ(points[11].value, 61.5);

  // A flush of 35 more: three sealed chunks of 10, the rest provisional; Close seals it.
  for (int i = 12; i < 47; ++i) add(i);
  ASSERT_TRUE(writer.Flush().ok());
  chunks = store->ReadChunks({.series = {series_id()}}).value();
  ASSERT_EQ(chunks.size(), 5u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(chunks[i].sealed) << i;
    EXPECT_EQ(chunks[i].count, 10) << i;
  }
  EXPECT_FALSE(chunks[4].sealed);
  EXPECT_EQ(chunks[4].count, 7);
  ASSERT_TRUE(writer.Close().ok());
  chunks = store->ReadChunks({.series = {series_id()}}).value();
  ASSERT_EQ(chunks.size(), 5u);
  EXPECT_TRUE(chunks[4].sealed);
  points = ReadSeriesPoints(*store, series_id()).value();
  ASSERT_EQ(points.size(), 47u);
  for (size_t i = 0; i < points.size(); ++i) EXPECT_EQ(points[i].time_ms, 1000 * static_cast<int64_t>(i));
  // The chunks beginning within a range, in one read, with their points: the 2nd to 4th.
  std::vector<ChunkRecord> range =
      store
          ->ReadChunks({.series = {series_id()},
                        .first_ms = std::pair<int64_t, int64_t>(chunks[1].first_ms, chunks[3].first_ms)})
          .value();
  ASSERT_EQ(range.size(), 3u);
  std::vector<Point> middle;
  for (const ChunkRecord& c : range) ASSERT_TRUE(DecodeChunk(c.data, middle).ok());
  ASSERT_EQ(middle.size(), 30u);
  EXPECT_EQ(middle.front().time_ms, 10000);
  EXPECT_EQ(middle.back().time_ms, 39000);
  EXPECT_TRUE(
      store->ReadChunks({.series = {series_id()}, .first_ms = std::pair<int64_t, int64_t>(47000, 90000)})
          ->empty());
}

TEST_P(BackendTest, SeriesTotalsCountEveryChunkOnceAsTheWriterSealsAndReplaces) {
  auto store = OpenOk();
  RunRecord run = NewRun(*store);
  SeriesWriter writer(*store, run.id, /*seal_points=*/10, /*checkpoint_flushes=*/2);
  double nan = std::nan("");
  for (int i = 0; i < 57; ++i) {
    writer.Append("gpu.power.draw_watts", "gpu=0", {1000 * i, i == 23 ? 400.0 : 50.0 + i % 7, kNoStep});
    // The loss's first chunks hold no number at all.
    writer.Append("train.loss", "", {1000 * i, i < 30 ? nan : 1.0 / (i + 1), i});
    if (i % 3 == 2) {
      ASSERT_TRUE(writer.Flush().ok());
      ExpectTotalsOfEveryChunk(*store, run.id);
    }
  }
  ASSERT_TRUE(writer.Close().ok());
  ExpectTotalsOfEveryChunk(*store, run.id);
  std::vector<SeriesTotals> totals = store->ListSeriesTotals(run.id).value();
  ASSERT_EQ(totals.size(), 2u);  // power, then loss
  EXPECT_EQ(totals[0].count, 57);
  EXPECT_EQ(totals[0].min, 50.0);
  EXPECT_EQ(totals[0].max, 400.0);
  EXPECT_EQ(totals[1].count, 57);
  EXPECT_DOUBLE_EQ(*totals[1].min, 1.0 / 57);
  EXPECT_DOUBLE_EQ(*totals[1].max, 1.0 / 31);
  // Another run's series are not counted in.
  EXPECT_TRUE(store->ListSeriesTotals(NewRun(*store, "other").id)->empty());
}

TEST_P(BackendTest, TheSeriesOfManyRunsAreListedAtOnce) {
  auto store = OpenOk();
  RunRecord a = NewRun(*store), b = NewRun(*store), none = NewRun(*store);
  for (const char* metric : {"train.loss", "gpu.power.draw_watts"}) {
    ASSERT_TRUE(store->EnsureSeries(a.id, metric, "").ok());
    ASSERT_TRUE(store->EnsureSeries(b.id, metric, "gpu=1").ok());
  }
  ASSERT_TRUE(store->EnsureSeries(b.id, "gpu.power.draw_watts", "gpu=0").ok());
  std::vector<SeriesInfo> both = store->ListSeriesOfRuns({b.id, none.id, a.id}).value();
  ASSERT_EQ(both.size(), 5u);
  // Each run's as ListSeries lists them (by metric, labels), the runs by id.
  std::vector<SeriesInfo> expected = store->ListSeries(std::min(a.id, b.id)).value();
  for (const SeriesInfo& s : store->ListSeries(std::max(a.id, b.id)).value()) expected.push_back(s);
  ASSERT_EQ(expected.size(), 5u);
  for (size_t i = 0; i < both.size(); ++i) {
    EXPECT_EQ(both[i].id, expected[i].id) << i;
    EXPECT_EQ(both[i].run_id, expected[i].run_id) << i;
    EXPECT_EQ(both[i].metric, expected[i].metric) << i;
    EXPECT_EQ(both[i].labels, expected[i].labels) << i;
  }
  EXPECT_EQ(store->ListSeries(b.id)->at(0).labels, "gpu=0");  // gpu.power.draw_watts, gpu=0 first
  EXPECT_TRUE(store->ListSeriesOfRuns({none.id}).value().empty());
}

// The totals of several runs' series in one read are each run's, in ListSeriesOfRuns' order.
TEST_P(BackendTest, TheTotalsOfManyRunsAreReadAtOnce) {
  auto store = OpenOk();
  RunRecord a = NewRun(*store), b = NewRun(*store), none = NewRun(*store);
  for (const RunRecord* r : {&a, &b}) {
    SeriesWriter writer(*store, r->id, /*seal_points=*/10, /*checkpoint_flushes=*/1);
    for (int i = 0; i < 25; ++i) {
      writer.Append("gpu.power.draw_watts", "gpu=0", {1000 * i, (r == &a ? 50.0 : 90.0) + i % 7, kNoStep});
      writer.Append("train.loss", "", {1000 * i, 1.0 / (i + 1), i});
      if (i % 10 == 9) {
        ASSERT_TRUE(writer.Flush().ok());
      }
    }
    ASSERT_TRUE(writer.Flush().ok());  // two sealed chunks and a provisional one each
  }
  std::vector<SeriesTotals> both = store->ListSeriesTotalsOfRuns({b.id, none.id, a.id}).value();
  std::vector<SeriesInfo> series = store->ListSeriesOfRuns({b.id, none.id, a.id}).value();
  ASSERT_EQ(both.size(), 4u);
  ASSERT_EQ(series.size(), 4u);
  for (size_t i = 0; i < both.size(); ++i) {
    SeriesTotals alone = TotalsFromChunks(*store, series[i].id);
    EXPECT_EQ(both[i].series.id, series[i].id) << i;
    EXPECT_EQ(both[i].series.run_id, series[i].run_id) << i;
    EXPECT_EQ(both[i].count, alone.count) << i;
    EXPECT_EQ(both[i].min, alone.min) << i;
    EXPECT_EQ(both[i].max, alone.max) << i;
    EXPECT_NEAR(both[i].sum, alone.sum, 1e-9 * std::abs(alone.sum)) << i;
  }
  EXPECT_EQ(both[0].count, 25);
  EXPECT_TRUE(store->ListSeriesTotalsOfRuns({none.id}).value().empty());
}

// What a live chart's refresh reads of several running runs at once: the chunks not sealed
// and those reaching past a time, and the runs' journals, each as read one by one.
TEST_P(BackendTest, WhatALiveRefreshNeedsOfManySeriesIsReadAtOnce) {
  auto store = OpenOk();
  RunRecord a = NewRun(*store), b = NewRun(*store), idle = NewRun(*store);
  std::vector<std::unique_ptr<SeriesWriter>> writers;
  std::vector<int64_t> series;
  for (const RunRecord* r : {&a, &b}) {
    auto& writer = writers.emplace_back(std::make_unique<SeriesWriter>(*store, r->id, 100, 3));
    for (int i = 0; i < 265; ++i) {  // the last flush after the last checkpoint: in the journal
      writer->Append("gpu.power.draw_watts", "", {r->start_ms + i * 1000, 10.0 + i % 9, kNoStep});
      if (i % 10 == 9) {
        ASSERT_TRUE(writer->Flush().ok());
      }
    }
    ASSERT_TRUE(writer->Flush().ok());
    series.push_back(store->ListSeries(r->id)->at(0).id);
  }
  int64_t since = a.start_ms + 150 * 1000;
  std::vector<ChunkRecord> reaching =
      store->ReadChunks({.series = {series[1], series[0], 987654321}, .reaching_ms = since}).value();
  std::sort(series.begin(), series.end());
  size_t at = 0;
  for (int64_t id : series) {
    for (const ChunkRecord& c : store->ReadChunks({.series = {id}}).value()) {
      if (c.sealed && std::max(c.first_ms, c.last_ms) <= since) continue;
      ASSERT_LT(at, reaching.size());
      EXPECT_EQ(reaching[at].series_id, id);
      EXPECT_EQ(reaching[at].id, c.id);
      EXPECT_EQ(reaching[at].data, c.data);
      ++at;
    }
  }
  EXPECT_EQ(at, reaching.size());
  EXPECT_GE(reaching.size(), 4u) << "sealed chunks past the time and a provisional one a run";
  std::vector<std::pair<std::string, JournalEntry>> journals =
      store->ReadJournalsOfRuns({b.id, idle.id, a.id}).value();
  at = 0;
  const RunRecord& first = a.id < b.id ? a : b;  // by run id
  const RunRecord& second = a.id < b.id ? b : a;
  for (const RunRecord* r : {&first, &second}) {
    std::vector<JournalEntry> alone = store->ReadJournal(store->ListSeries(r->id)->at(0).id).value();
    ASSERT_FALSE(alone.empty());
    for (const JournalEntry& e : alone) {
      ASSERT_LT(at, journals.size());
      EXPECT_EQ(journals[at].first, r->id);
      EXPECT_EQ(journals[at].second.id, e.id);
      EXPECT_EQ(journals[at].second.data, e.data);
      ++at;
    }
  }
  EXPECT_EQ(at, journals.size());
}

// Series sampled on the same ticks (one listener's fields) keep their sealed chunks' times
// once; a series on other ticks, or whose chunks begin elsewhere, keeps its own. Every
// read (whole series, a range of chunks, a chunk listed without its data, the chunks of
// several series at once) gives back exactly what was written.
TEST_P(BackendTest, SeriesSampledOnTheSameTicksKeepTheirTimesOnce) {
  auto store = OpenOk();
  RunRecord run = NewRun(*store);
  constexpr int kPoints = 10000;  // two sealed chunks of 4,096 and one of 1,808 at the end
  const char* kSame[] = {"gpu=0", "gpu=1", "gpu=2"};
  std::map<std::string, std::vector<Point>> written;
  {
    SeriesWriter writer(*store, run.id, SeriesWriter::kDefaultSealPoints, /*checkpoint_flushes=*/3);
    for (int i = 0; i < kPoints; ++i) {
      int64_t tick = run.start_ms + int64_t{1000} * i + (i * 7919) % 5;
      for (int g = 0; g < 3; ++g) {
        Point p{tick, 30.0 + g + (i * (g + 3)) % 11, kNoStep};
        writer.Append("gpu.utilization.gpu_ratio", kSame[g], p);
        written[kSame[g]].push_back(p);
      }
      Point other{tick + 500, 1.0 * (i % 4), kNoStep};  // another listener's ticks
      writer.Append("host.cpu.utilization_ratio", "", other);
      written["host"].push_back(other);
      if (i >= 100) {  // sampled on the same ticks, from later on: its chunks begin elsewhere
        Point late{tick, 2.0 * (i % 3), kNoStep};
        writer.Append("gpu.memory.used_bytes", "gpu=0", late);
        written["late"].push_back(late);
      }
      if (i % 1000 == 999) {
        ASSERT_TRUE(writer.Flush().ok());
      }
    }
    ASSERT_TRUE(writer.Close().ok());
  }
  std::set<std::pair<int64_t, int64_t>> shared_sets;
  for (const SeriesInfo& si : store->ListSeries(run.id).value()) {
    std::string name = si.metric == "host.cpu.utilization_ratio" ? "host"
                       : si.metric == "gpu.memory.used_bytes"    ? "late"
                                                                 : si.labels;
    const std::vector<Point>& expected = written[name];
    EXPECT_EQ(ReadSeriesPoints(*store, si.id).value(), expected) << name;
    std::vector<ChunkRecord> chunks = store->ReadChunks({.series = {si.id}}).value();
    ASSERT_EQ(chunks.size(), 3u) << name;
    size_t at = 0;
    for (const ChunkRecord& c : chunks) {
      bool same_ticks = name.starts_with("gpu=");
      EXPECT_EQ(!c.times.empty(), same_ticks) << name << " chunk at " << c.first_ms;
      EXPECT_EQ(c.times_series != 0, same_ticks) << name;
      if (same_ticks) {
        shared_sets.insert({c.times_series, c.first_ms});
        // Smaller than the chunk would be with its own times.
        std::span<const Point> own(expected.data() + at, static_cast<size_t>(c.count));
        EXPECT_LT(c.data.size(), EncodeChunk(own).size()) << name;
      }
      at += static_cast<size_t>(c.count);
    }
    // A range of chunks (a zoomed chart), and chunks listed without their data (read one
    // by one), decode to the same points.
    std::vector<ChunkRecord> middle =
        store
            ->ReadChunks({.series = {si.id},
                          .first_ms = std::pair<int64_t, int64_t>(chunks[1].first_ms, chunks[1].first_ms)})
            .value();
    ASSERT_EQ(middle.size(), 1u);
    std::vector<Point> points;
    ASSERT_TRUE(DecodeChunk(middle[0].data, points, middle[0].times).ok()) << name;
    EXPECT_EQ(points, std::vector<Point>(expected.begin() + chunks[0].count,
                                         expected.begin() + chunks[0].count + chunks[1].count));
    points.clear();
    ASSERT_TRUE(DecodeSeriesParts(*store, si.id,
                                  store->ReadChunks({.series = {si.id}, .part = ChunkPart::kInfo}).value(),
                                  {}, points)
                    .ok());
    EXPECT_EQ(points, expected) << name;
  }
  // Three sets of times (one per sealed chunk of the three GPUs), each kept once.
  EXPECT_EQ(shared_sets.size(), 3u);
  // The chunks of several series in one read (a chart of many short runs): by series id,
  // each series' as read alone, shared times included; an id that is no series has none.
  std::vector<int64_t> ids;
  for (const SeriesInfo& si : store->ListSeries(run.id).value()) ids.insert(ids.begin(), si.id);
  ids.push_back(987654321);
  std::vector<ChunkRecord> several = store->ReadChunks({.series = ids}).value();
  std::sort(ids.begin(), ids.end());
  size_t at = 0;
  for (int64_t id : ids) {
    for (const ChunkRecord& c : store->ReadChunks({.series = {id}}).value()) {
      ASSERT_LT(at, several.size());
      const ChunkRecord& got = several[at++];
      EXPECT_EQ(got.series_id, id);
      EXPECT_EQ(got.id, c.id);
      EXPECT_EQ(got.first_ms, c.first_ms);
      EXPECT_EQ(got.count, c.count);
      EXPECT_EQ(got.sealed, c.sealed);
      EXPECT_EQ(got.data, c.data);
      EXPECT_EQ(got.times, c.times);
    }
  }
  EXPECT_EQ(at, several.size());
  EXPECT_EQ(several.size(), 15u);  // five series of three chunks
}

// Wraps a store and fails chunk writes on demand, like a full disk would.
class FlakyStore : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  bool fail_writes = false;
  Status WriteChunks(ChunkBatch& b) override {
    if (fail_writes) return Status::IoError("database or disk is full");
    return inner_.WriteChunks(b);
  }
  Result<int64_t> AppendJournal(const std::string& r, const std::string& d) override {
    if (fail_writes) return Status::IoError("database or disk is full");
    return inner_.AppendJournal(r, d);
  }
};

TEST_P(BackendTest, FailedFlushLosesNothing) {
  auto real = OpenOk();
  FlakyStore store(*real);
  RunRecord run = NewRun(store);
  SeriesWriter writer(store, run.id, 100);
  writer.Append("train.loss", "", {1, 2.5, 1});
  ASSERT_TRUE(writer.Flush().ok());
  store.fail_writes = true;
  writer.Append("train.loss", "", {2, 2.25, 2});
  writer.Append("train.loss", "", {3, std::nan(""), 3});
  EXPECT_FALSE(writer.Flush().ok());
  EXPECT_EQ(writer.pending_points(), 2u);
  store.fail_writes = false;
  ASSERT_TRUE(writer.Close().ok());
  int64_t id = real->EnsureSeries(run.id, "train.loss", "").value();
  std::vector<Point> points = ReadSeriesPoints(*real, id).value();
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[1].value, 2.25);
  EXPECT_TRUE(std::isnan(points[2].value));
  EXPECT_EQ(points[2].step, 3);
}

}  // namespace
}  // namespace tb
