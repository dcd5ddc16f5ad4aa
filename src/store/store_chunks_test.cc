// The stores' chunks and overviews: a page of a series decoding only its chunks, each
// sealed chunk's summary in its series' overview, in blocks, and rows that fill their pages.
#include <gtest/gtest.h>

#include "store/store_test_fixture.h"

namespace tb {
namespace {

// A paged history (MLflow's get-history) decodes the chunks that hold its page and no
// other, and gives the same points as every point read whole, across chunks and journal.
TEST_P(BackendTest, APageOfASeriesDecodesOnlyTheChunksThatHoldIt) {
  auto store = OpenOk();
  RunRecord run = NewRun(*store);
  SeriesWriter writer(*store, run.id, /*seal_points=*/300, /*checkpoint_flushes=*/4);
  for (int i = 0; i < 5000; ++i) {
    writer.Append("train.loss", "", {run.start_ms + i * 100, 1.0 / (i + 1), i});
    if (i % 100 == 99) {
      ASSERT_TRUE(writer.Flush().ok());
    }
  }
  ASSERT_TRUE(writer.Flush().ok());
  int64_t id = store->EnsureSeries(run.id, "train.loss", "").value();
  std::vector<Point> all = ReadSeriesPoints(*store, id).value();
  ASSERT_EQ(all.size(), 5000u);
  std::vector<ChunkRecord> chunks = store->ReadChunks({.series = {id}, .part = ChunkPart::kInfo}).value();
  ASSERT_GT(chunks.size(), 10u);
  int64_t in_chunks = 0;
  for (const ChunkRecord& c : chunks) in_chunks += c.count;
  ASSERT_LT(in_chunks, 5000) << "the newest points only in the journal";
  for (auto [offset, limit] : std::vector<std::pair<int64_t, int64_t>>{{0, 25},
                                                                       {1234, 700},
                                                                       {in_chunks - 10, 20},
                                                                       {in_chunks, 5},
                                                                       {4990, 100},
                                                                       {5000, 10},
                                                                       {9999, 1},
                                                                       {0, 0}}) {
    CountingStore counting(*store);
    int64_t total = -1;
    std::vector<Point> page = ReadSeriesPage(counting, id, offset, limit, total).value();
    EXPECT_EQ(total, 5000);
    int64_t from = std::min<int64_t>(offset, 5000), to = std::min<int64_t>(from + limit, 5000);
    EXPECT_EQ(page, std::vector<Point>(all.begin() + from, all.begin() + to)) << offset << " " << limit;
    // The chunks holding [from, to): no more are decoded.
    int64_t at = 0, holding = 0;
    for (const ChunkRecord& c : chunks) {
      holding += at + c.count > from && at < to;
      at += c.count;
    }
    EXPECT_LE(counting.chunk_data_reads, holding) << offset << " " << limit;
    EXPECT_EQ(counting.whole_series_reads, 0);
  }
  ASSERT_TRUE(writer.Close().ok());
}

// What each sealed chunk keeps in its series' overview: its summary (levels of detail and
// group means), or its points when it is too short for any level.
TEST(OverviewTest, EachSealedChunkKeepsItsSummaryOrItsPoints) {
  auto wave = [](int64_t start, size_t n) {
    std::vector<Point> points;
    for (size_t i = 0; i < n; ++i)
      points.push_back(
          {start + static_cast<int64_t>(i) * 100, 50 + 10 * std::sin(static_cast<double>(i) / 30), kNoStep});
    return points;
  };
  std::vector<std::vector<Point>> parts = {wave(1763777000000, 4096), wave(1763777500000, 3000),
                                           wave(1763777900000, 200)};
  parts[0][1234].value = 1e6;  // a spike
  std::string block;
  for (const auto& p : parts) block += OverviewSegment(MakeChunk(7, p, /*sealed=*/true));
  std::vector<ChunkRecord> described;
  ASSERT_TRUE(DecodeOverview(block, 7, described).ok());
  ASSERT_EQ(described.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(described[i].series_id, 7);
    EXPECT_TRUE(described[i].sealed);
    EXPECT_EQ(described[i].first_ms, parts[i].front().time_ms);
    EXPECT_EQ(described[i].last_ms, parts[i].back().time_ms);
    EXPECT_EQ(described[i].count, static_cast<int64_t>(parts[i].size()));
  }
  std::vector<Point> level, means;
  ASSERT_TRUE(DecodeSummaryUpTo(described[0].summary, 2048, level).ok());
  EXPECT_EQ(level, SummarizeGroups(parts[0], 2048));
  EXPECT_NE(std::find(level.begin(), level.end(), parts[0][1234]), level.end()) << "the spike is kept";
  ASSERT_EQ(DecodeSummaryMeans(described[0].summary, 128, means).value(), 128);
  EXPECT_EQ(means, GroupMeans(parts[0], 128));
  EXPECT_EQ(SummaryLevels(described[0].summary), (std::vector<int64_t>{128, 2048}));
  level.clear();
  ASSERT_TRUE(DecodeSummaryUpTo(described[1].summary, 256, level).ok());
  EXPECT_EQ(level, SummarizeGroups(parts[1], 128));
  level.clear();
  ASSERT_TRUE(DecodeSummaryUpTo(described[2].summary, 2048, level).ok());
  EXPECT_EQ(level, parts[2]) << "too short for any level: its points";
  // A block cut short is said to be one.
  std::vector<ChunkRecord> cut;
  EXPECT_EQ(DecodeOverview(block.substr(0, block.size() - 5), 7, cut).code(), Status::Code::kCorrupt);
}

// The leaf pages of a table of an SQLite store and the bytes unused on them (SQLite's dbstat).
std::pair<int64_t, int64_t> LeafPages(const fs::path& db_path, const std::string& table) {
  sqlite3* db = nullptr;
  std::pair<int64_t, int64_t> out{-1, -1};
  sqlite3_stmt* st = nullptr;
  if (sqlite3_open(db_path.c_str(), &db) == SQLITE_OK &&
      sqlite3_prepare_v2(db, "SELECT count(*), sum(unused) FROM dbstat WHERE name = ? AND pagetype = 'leaf'",
                         -1, &st, nullptr) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, table.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW) out = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1)};
  }
  EXPECT_GE(out.first, 0) << sqlite3_errmsg(db);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

// Chunk rows of one to four kilobytes each take a page of their own when written in the
// order they come; the store writes a checkpoint's rows in an order that fills its pages,
// and every chunk still reads back whole.
TEST_F(StoreTest, ChunkRowsOfACheckpointFillTheirPages) {
  auto store = OpenOk();
  RunRecord run = NewRun(*store);
  std::mt19937_64 rng(11);
  std::map<std::string, std::vector<Point>> written;
  {
    SeriesWriter writer(*store, run.id, /*seal_points=*/1000);
    // Six series of about 2.6 KB a chunk (18 random bits a value), then six of about 1 KB
    // (7 bits): two of the first never share a page, one of each does.
    for (int s = 0; s < 12; ++s) {
      std::string labels = "gpu=" + std::to_string(s);
      for (int i = 0; i < 1000; ++i) {
        double value = static_cast<double>(rng() % (s < 6 ? 1u << 18 : 1u << 7));
        Point p{run.start_ms + int64_t{1000} * i, value, kNoStep};
        writer.Append("gpu.utilization.gpu_ratio", labels, p);
        written[labels].push_back(p);
      }
    }
    ASSERT_TRUE(writer.Close().ok());
  }
  for (const SeriesInfo& si : store->ListSeries(run.id).value()) {
    EXPECT_EQ(ReadSeriesPoints(*store, si.id).value(), written[si.labels]) << si.labels;
  }
  store.reset();
  auto [pages, unused] = LeafPages(dir_ / "t.db", "chunks");
  // As they came: 8 pages, a third of them unused; packed: 6, a seventh at most.
  EXPECT_EQ(pages, 6);
  EXPECT_LT(static_cast<double>(unused), static_cast<double>(pages * 4096) / 7) << unused;
}

// A series too short to be drawn from levels of detail keeps no overview (its chart reads
// its points); one that grows past kOverviewMinPoints gets its overview then, holding every
// chunk sealed before, as if each had joined it when sealed: the same first and last
// times, counts and summaries, whether the chunk keeps its own times or shares them.
TEST_F(StoreTest, ASeriesOverviewBeginsWhenItIsLongEnoughToBeDrawnFromOne) {
  auto store = OpenOk();
  RunRecord run = NewRun(*store);
  std::mt19937_64 rng(3);
  std::map<std::string, std::vector<Point>> written;
  {
    // Checkpoints every 4 flushes of 1,000 ticks; both series on the same ticks share the
    // times of the chunks they seal together.
    SeriesWriter writer(*store, run.id, SeriesWriter::kDefaultSealPoints, /*checkpoint_flushes=*/4);
    for (int i = 0; i < 30000; ++i) {
      int64_t t = run.start_ms + int64_t{1000} * i + static_cast<int64_t>(rng() % 3);
      for (std::string labels : {"gpu=0", "gpu=1"}) {
        if (labels == "gpu=0" && i >= 12000) continue;
        Point p{t, static_cast<double>(rng() % 100), kNoStep};
        writer.Append("gpu.utilization.gpu_ratio", labels, p);
        written[labels].push_back(p);
      }
      if (i % 1000 == 999) {
        ASSERT_TRUE(writer.Flush().ok());
      }
    }
    ASSERT_TRUE(writer.Close().ok());
  }
  for (const SeriesInfo& si : store->ListSeries(run.id).value()) {
    const std::vector<Point>& points = written[si.labels];
    EXPECT_EQ(ReadSeriesPoints(*store, si.id).value(), points) << si.labels;
    SeriesOverview overview = store->ReadSeriesOverview(si.id, 0).value();
    EXPECT_EQ(overview.sealed_points, static_cast<int64_t>(points.size())) << si.labels;
    if (si.labels == "gpu=0") {
      EXPECT_EQ(overview.covered_points, 0);
      EXPECT_TRUE(overview.blocks.empty());
      continue;
    }
    // Its first two chunks share their times with the other series'.
    std::vector<ChunkRecord> chunks = store->ReadChunks({.series = {si.id}}).value();
    EXPECT_EQ(
        std::count_if(chunks.begin(), chunks.end(), [](const ChunkRecord& c) { return c.times_series != 0; }),
        2);
    // Sealed 4,096 points at a time, and the rest when the writer closed.
    std::string expected;
    for (size_t at = 0; at < points.size(); at += 4096) {
      size_t n = std::min<size_t>(4096, points.size() - at);
      expected += OverviewSegment(MakeChunk(si.id, std::span(points).subspan(at, n), true));
    }
    EXPECT_EQ(overview.covered_points, static_cast<int64_t>(points.size()));
    ASSERT_EQ(overview.blocks.size(), 1u);
    EXPECT_EQ(overview.blocks[0], expected);
  }
}

// A series' overview row grows by a sealed chunk's summary at a time, splitting its page
// as it grows; when the run finishes its rows are rewritten to fill their pages, and they
// describe the same chunks.
TEST_F(StoreTest, AFinishedRunsOverviewFillsItsPages) {
  auto store = OpenOk();
  RunRecord run = NewRun(*store);
  std::mt19937_64 rng(5);
  {
    // Checkpoints every 4 flushes of 1,000 ticks: the overview begins at kOverviewMinPoints,
    // then a sealed chunk a series and the last, when the writer closes, grow its row.
    SeriesWriter writer(*store, run.id, SeriesWriter::kDefaultSealPoints, /*checkpoint_flushes=*/4);
    for (int i = 0; i < 24000; ++i) {
      for (int s = 0; s < 16; ++s) {
        // From a constant to 3 random bits a value: overview rows of about 1.5 to 3.9 KB.
        double value = s == 0 ? 1.0 : static_cast<double>(rng() % (uint64_t{1} << (s / 4)));
        writer.Append("gpu.utilization.gpu_ratio", "gpu=" + std::to_string(s),
                      Point{run.start_ms + int64_t{1000} * i, value, kNoStep});
      }
      if (i % 1000 == 999) {
        ASSERT_TRUE(writer.Flush().ok());
      }
    }
    ASSERT_TRUE(writer.Close().ok());
  }
  std::vector<SeriesInfo> series = store->ListSeries(run.id).value();
  std::vector<std::vector<std::string>> before;
  before.reserve(series.size());
  for (const SeriesInfo& si : series) before.push_back(store->ReadSeriesOverview(si.id, 0).value().blocks);
  auto grown = LeafPages(dir_ / "t.db", "series_overview");
  ASSERT_TRUE(store->FinishRun(run.id, run.start_ms + 10000000, kFinished, 0, std::nullopt, "").ok());
  for (size_t i = 0; i < series.size(); ++i) {
    EXPECT_EQ(store->ReadSeriesOverview(series[i].id, 0).value().blocks, before[i]) << series[i].labels;
  }
  store.reset();
  auto [pages, unused] = LeafPages(dir_ / "t.db", "series_overview");
  EXPECT_LT(pages, grown.first);
  EXPECT_LT(static_cast<double>(unused), static_cast<double>(pages * 4096) / 7) << unused;
}

// Each sealed chunk is described once in its series' overview, in blocks of about 65,536
// points, in the order the chunks were sealed; provisional chunks are not.
TEST_P(BackendTest, TheOverviewDescribesEachSealedChunkOnceInBlocks) {
  auto store = OpenOk();
  RunRecord run = NewRun(*store);
  SeriesWriter writer(*store, run.id, SeriesWriter::kDefaultSealPoints, /*checkpoint_flushes=*/2);
  constexpr int kPoints = 140000;
  int64_t series = store->EnsureSeries(run.id, "gpu.power.draw_watts", "gpu=0").value();
  auto expect_every_sealed_chunk = [&](const char* when) {
    SeriesOverview overview = store->ReadSeriesOverview(series).value();
    std::vector<ChunkRecord> described, sealed;
    for (const std::string& block : overview.blocks)
      ASSERT_TRUE(DecodeOverview(block, series, described).ok());
    for (const ChunkRecord& c : store->ReadChunks({.series = {series}, .part = ChunkPart::kInfo}).value()) {
      if (c.sealed) sealed.push_back(c);
    }
    int64_t points = 0;
    for (const ChunkRecord& c : sealed) points += c.count;
    EXPECT_EQ(overview.sealed_points, points) << when;
    EXPECT_EQ(overview.covered_points, points) << when;
    // Whether a chart must also read chunks the overview does not describe: the newest,
    // not sealed yet, while written; none once closed.
    EXPECT_EQ(overview.unsealed,
              sealed.size() < store->ReadChunks({.series = {series}, .part = ChunkPart::kInfo})->size())
        << when;
    ASSERT_EQ(described.size(), sealed.size()) << when;
    for (size_t i = 0; i < sealed.size(); ++i) {
      std::vector<Point> means;
      EXPECT_TRUE(DecodeSummaryMeans(described[i].summary, 128, means).ok()) << when << i;
      EXPECT_EQ(described[i].first_ms, sealed[i].first_ms) << when << i;
      EXPECT_EQ(described[i].last_ms, sealed[i].last_ms) << when << i;
      EXPECT_EQ(described[i].count, sealed[i].count) << when << i;
    }
    EXPECT_EQ(overview.blocks.size(),
              static_cast<size_t>((points + kOverviewBlockPoints - 1) / kOverviewBlockPoints))
        << when;
  };
  SeriesWriter::SeriesHandle handle = writer.Handle("gpu.power.draw_watts", "gpu=0");
  for (int i = 0; i < kPoints; ++i) {
    writer.Append(handle, {1763777000000 + int64_t{100} * i, 50.0 + i % 7, kNoStep});
    if (i % 5000 == 4999) {
      ASSERT_TRUE(writer.Flush().ok());
    }
    if (i == 70000) {
      expect_every_sealed_chunk("while written: ");
      EXPECT_TRUE(store->ReadSeriesOverview(series)->unsealed);
    }
  }
  ASSERT_TRUE(writer.Close().ok());
  expect_every_sealed_chunk("closed: ");
  EXPECT_FALSE(store->ReadSeriesOverview(series)->unsealed);
  // A summary is kept once: in the overview, not also in the chunk's row.
  for (const ChunkRecord& c : store->ReadChunks({.series = {series}, .part = ChunkPart::kSummaries}).value())
    EXPECT_TRUE(c.summary.empty());
  EXPECT_EQ(store->ReadSeriesOverview(series)->sealed_points, kPoints);
  // Asked for a series of more points than it holds: the counts without the blocks.
  SeriesOverview counts = store->ReadSeriesOverview(series, kPoints + 1).value();
  EXPECT_EQ(counts.sealed_points, kPoints);
  EXPECT_EQ(counts.covered_points, kPoints);
  EXPECT_TRUE(counts.blocks.empty());
  EXPECT_EQ(store->ReadSeriesOverview(series, kPoints)->blocks.size(), 3u);
  // A series without sealed chunks has an empty overview, which covers them all.
  int64_t empty = store->EnsureSeries(run.id, "train.loss", "").value();
  SeriesOverview none = store->ReadSeriesOverview(empty).value();
  EXPECT_EQ(none.sealed_points, 0);
  EXPECT_EQ(none.covered_points, 0);
  EXPECT_TRUE(none.blocks.empty());
  // Several at once (a chart of many runs), in the order asked, each as read alone; an id
  // that is no series has an empty one.
  std::vector<SeriesOverview> several =
      store->ReadSeriesOverviews({empty, series, 987654321, series}, kPoints).value();
  ASSERT_EQ(several.size(), 4u);
  EXPECT_EQ(several[0].sealed_points, 0);
  EXPECT_TRUE(several[0].blocks.empty());
  SeriesOverview alone = store->ReadSeriesOverview(series, kPoints).value();
  for (size_t i : {1, 3}) {
    EXPECT_EQ(several[i].sealed_points, alone.sealed_points);
    EXPECT_EQ(several[i].covered_points, alone.covered_points);
    EXPECT_EQ(several[i].blocks, alone.blocks);
    EXPECT_FALSE(several[i].unsealed);
  }
  EXPECT_EQ(several[2].sealed_points, 0);
  EXPECT_TRUE(several[2].blocks.empty());
  // Blocks only below `max_points` (a reader reads the longest apart); the counts always.
  SeriesOverview longest = store->ReadSeriesOverviews({series}, 0, kPoints).value()[0];
  EXPECT_EQ(longest.sealed_points, kPoints);
  EXPECT_EQ(longest.covered_points, kPoints);
  EXPECT_TRUE(longest.blocks.empty());
  EXPECT_EQ(store->ReadSeriesOverviews({series}, 0, kPoints + 1).value()[0].blocks, alone.blocks);
}

}  // namespace
}  // namespace tb
