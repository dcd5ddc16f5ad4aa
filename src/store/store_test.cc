#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "store/chunk_summary.h"
#include "store/pg_connection.h"
#include "store/series_writer.h"
#include "store/sqlite_store.h"
#include "tests/helpers/counting_store.h"
#include "tests/helpers/forwarding_store.h"
#include "tests/helpers/postgres_cluster.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<Store> OpenOk(const std::string& name = "t.db") {
    Result<std::unique_ptr<Store>> s = Store::Open((dir_ / name).string());
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(s.value()) : nullptr;
  }

  ScratchDirectory scratch_{"tb-store"};
  const fs::path& dir_ = scratch_.path();
};

RunRecord NewRun(Store& store, const std::string& name = "train.py") {
  RunRecord r;
  r.id = NewRunId();
  r.experiment = "exp";
  r.name = name;
  r.command = "python3 train.py --batch-size 128";
  r.start_ms = 1763777000000;
  r.params = {{"batch-size", "128"}, {"lr", "0.1"}};
  r.tags = {{"model", "cnn"}};
  EXPECT_TRUE(store.EnsureExperiment("exp").ok());
  EXPECT_TRUE(store.CreateRun(r).ok());
  return r;
}

// A series' totals as a run's summary once computed them: every chunk's figures, one by one.
SeriesTotals TotalsFromChunks(Store& store, int64_t series_id) {
  SeriesTotals t;
  t.series_id = series_id;
  for (const ChunkRecord& c : store.ListChunkInfo(series_id).value()) t.Add(c.count, c.sum, c.min, c.max);
  return t;
}

// ListSeriesTotals gives, for every series of the run, what its chunks add up to.
void ExpectTotalsOfEveryChunk(Store& store, const std::string& run_id) {
  std::vector<SeriesInfo> series = store.ListSeries(run_id).value();
  std::vector<SeriesTotals> totals = store.ListSeriesTotals(run_id).value();
  ASSERT_EQ(totals.size(), series.size());
  for (size_t i = 0; i < series.size(); ++i) {
    SeriesTotals want = TotalsFromChunks(store, series[i].id);
    EXPECT_EQ(totals[i].series_id, series[i].id);
    EXPECT_EQ(totals[i].count, want.count) << series[i].metric;
    EXPECT_NEAR(totals[i].sum, want.sum, 1e-9 * std::abs(want.sum)) << series[i].metric;
    EXPECT_EQ(totals[i].min, want.min) << series[i].metric;
    EXPECT_EQ(totals[i].max, want.max) << series[i].metric;
  }
}

// One throw-away PostgreSQL server for the whole test program, started on first use
// (only: a test of the program that needs none, run alone as CTest runs each, starts none).
PostgresCluster*& ClusterSlot() {
  static PostgresCluster* cluster = nullptr;
  return cluster;
}
PostgresCluster& Cluster() {
  if (ClusterSlot() == nullptr) ClusterSlot() = new PostgresCluster();
  return *ClusterSlot();
}
struct StopCluster : ::testing::Environment {
  void TearDown() override {
    delete ClusterSlot();
    ClusterSlot() = nullptr;
  }
};

// The tests every backend must pass: "sqlite" (a file) and "postgresql" (a database of a
// local test server; each test gets a fresh one).
class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "sqlite") {
      uri_ = (dir_ / "t.db").string();
      return;
    }
    ASSERT_TRUE(Cluster().ok()) << Cluster().error();
    static int databases = 0;
    uri_ = Cluster().CreateDatabase("store_test_" + std::to_string(++databases));
    setenv("TRAINBENCH_ARTIFACT_DIR", (dir_ / "shared").c_str(), 1);
    setenv("TRAINBENCH_SPOOL_DIR", (dir_ / "spool").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("TRAINBENCH_ARTIFACT_DIR");
    unsetenv("TRAINBENCH_SPOOL_DIR");
  }
  bool sqlite() const { return GetParam() == "sqlite"; }

  std::unique_ptr<Store> OpenOk() {
    Result<std::unique_ptr<Store>> s = Store::Open(uri_);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(s.value()) : nullptr;
  }

  ScratchDirectory scratch_{"tb-store"};
  const fs::path& dir_ = scratch_.path();
  std::string uri_;
};

INSTANTIATE_TEST_SUITE_P(Backends, BackendTest, ::testing::Values("sqlite", "postgresql"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

TEST_P(BackendTest, RunsRoundTripAndAreFoundByPrefixOrName) {
  auto store = OpenOk();
  RunRecord a = NewRun(*store, "first");
  RunRecord b = NewRun(*store, "second");
  ASSERT_TRUE(store->FinishRun(a.id, a.start_ms + 5000, kFinished, 0, std::nullopt, "").ok());

  Result<RunRecord> got = store->FindRun(a.id.substr(0, 8));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->id, a.id);
  EXPECT_EQ(got->status, kFinished);
  EXPECT_EQ(got->exit_code, 0);
  EXPECT_EQ(got->params, a.params);
  EXPECT_EQ(got->tags, a.tags);
  EXPECT_EQ(store->FindRun("second")->id, b.id);
  EXPECT_EQ(store->FindRun(b.id)->status, kRunning);  // finishing a did not touch b
  EXPECT_EQ(store->FindRun("nope").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(store->ListRuns("exp")->size(), 2u);
  EXPECT_TRUE(store->ListRuns("other")->empty());
}

TEST_P(BackendTest, ManyRunsAreFoundByIdAtOnceEachWithItsOwnParamsAndTags) {
  auto store = OpenOk();
  std::vector<RunRecord> made;
  for (int i = 0; i < 5; ++i) {
    made.push_back(NewRun(*store, "run" + std::to_string(i)));
    // Each its own params and tags, logged in an order that is not the keys'.
    KeyValues params = {{"seed", std::to_string(i)}, {"arch", i % 2 ? "resnet" : "vit"}};
    ASSERT_TRUE(store->LogParams(made.back().id, params).ok());
    ASSERT_TRUE(store->SetTags(made.back().id, {{"quote \"and\\ back", std::to_string(10 * i)}}).ok());
    made.back().params.insert(made.back().params.end(), params.begin(), params.end());
    made.back().tags.emplace_back("quote \"and\\ back", std::to_string(10 * i));
  }
  std::string missing = NewRunId();
  // Asked out of creation order, one twice and one that is no run.
  std::vector<std::string> ids = {made[3].id, made[0].id, missing, made[4].id, made[0].id};
  Result<std::vector<RunRecord>> got = store->FindRunsById(ids);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), 3u);
  for (auto [k, i] : {std::pair{0, 3}, {1, 0}, {2, 4}}) {
    const RunRecord& r = (*got)[static_cast<size_t>(k)];
    EXPECT_EQ(r.id, made[static_cast<size_t>(i)].id);
    EXPECT_EQ(r.name, made[static_cast<size_t>(i)].name);
    EXPECT_EQ(r.params, made[static_cast<size_t>(i)].params) << r.name;
    EXPECT_EQ(r.tags, made[static_cast<size_t>(i)].tags) << r.name;
  }
  EXPECT_TRUE(store->FindRunsById({missing}).value().empty());
  EXPECT_TRUE(store->FindRunsById({}).value().empty());
  // Listing reads the params and tags of all runs together: each keeps its own, in order.
  std::vector<RunRecord> listed = store->ListRuns("exp").value();
  ASSERT_EQ(listed.size(), made.size());
  for (const RunRecord& r : listed) {
    auto same = std::find_if(made.begin(), made.end(), [&](const RunRecord& m) { return m.id == r.id; });
    ASSERT_NE(same, made.end());
    EXPECT_EQ(r.params, same->params) << r.name;
    EXPECT_EQ(r.tags, same->tags) << r.name;
  }
}

TEST_P(BackendTest, ReopensWithDataIntact) {
  std::string id;
  {
    auto store = OpenOk();
    id = NewRun(*store).id;
  }
  auto store = OpenOk();
  EXPECT_TRUE(store->FindRun(id).ok());
}

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
  std::vector<ChunkRecord> chunks = store->ListChunkInfo(id).value();
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

TEST_F(StoreTest, RefusesWhatIsNotATrainbenchStore) {
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "other.db").c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE metrics(key TEXT, value REAL)", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  Result<std::unique_ptr<Store>> s = Store::Open((dir_ / "other.db").string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("not a trainbench store"), std::string::npos);
  EXPECT_NE(s.status().message().find("--store"), std::string::npos);

  std::ofstream(dir_ / "notes.txt") << "these are my notes, not a database, and they are long enough\n";
  s = Store::Open((dir_ / "notes.txt").string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("not a trainbench store"), std::string::npos);
  std::ifstream back(dir_ / "notes.txt");
  std::string line;
  std::getline(back, line);
  EXPECT_EQ(line, "these are my notes, not a database, and they are long enough");  // untouched
}

TEST_F(StoreTest, RefusesNewerSchemaAndMissingDirectory) {
  OpenOk();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "t.db").c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "UPDATE trainbench_meta SET value='99' WHERE key='schema_version'", nullptr, nullptr,
               nullptr);
  sqlite3_close(db);
  Result<std::unique_ptr<Store>> s = Store::Open((dir_ / "t.db").string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("newer trainbench"), std::string::npos);

  s = Store::Open((dir_ / "missing" / "t.db").string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("does not exist"), std::string::npos);
  EXPECT_FALSE(Store::Open("mysql://host/db").ok());
}

TEST_F(StoreTest, AnOlderStoreIsMigratedWithItsRunsIntact) {
  std::string id;
  {
    auto store = OpenOk();
    id = NewRun(*store).id;
    // Two sealed chunks and a provisional one.
    SeriesWriter writer(*store, id, /*seal_points=*/10, /*checkpoint_flushes=*/1);
    for (int i = 0; i < 25; ++i) {
      writer.Append("gpu.power.draw_watts", "gpu=0", {1000 * i, 50.0 + i % 7, kNoStep});
      if (i % 10 == 9 || i == 24) {
        ASSERT_TRUE(writer.Flush().ok());
      }
    }
  }
  // Turn the file back into a schema-1 store, as an earlier trainbench left it.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "t.db").c_str(), &db), SQLITE_OK);
  for (const char* sql :
       {"ALTER TABLE runs DROP COLUMN devices", "CREATE INDEX journal_by_run ON journal(run_id, id)",
        "DROP TABLE experiment_tags", "ALTER TABLE chunks DROP COLUMN summary",
        "DROP INDEX chunks_provisional", "ALTER TABLE series DROP COLUMN sealed_count",
        "ALTER TABLE series DROP COLUMN sealed_sum", "ALTER TABLE series DROP COLUMN sealed_min",
        "ALTER TABLE series DROP COLUMN sealed_max", "DROP TABLE series_overview", "DROP TABLE chunk_times",
        "ALTER TABLE chunks DROP COLUMN times_series",
        "UPDATE trainbench_meta SET value='1' WHERE key='schema_version'"}) {
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  }
  sqlite3_close(db);
  auto store = OpenOk();
  Result<RunRecord> run = store->FindRun(id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->params.size(), 2u);
  EXPECT_EQ(run->devices, "");
  // The series' totals are those of the chunks written before.
  ASSERT_EQ(store->ListChunkInfo(store->ListSeries(id)->at(0).id)->size(), 3u);
  ExpectTotalsOfEveryChunk(*store, id);
  EXPECT_EQ(store->ListSeriesTotals(id)->at(0).count, 25);
  // Its sealed chunks have no overview: readers see that it lacks them.
  Result<SeriesOverview> overview = store->ReadSeriesOverview(store->ListSeries(id)->at(0).id);
  ASSERT_TRUE(overview.ok()) << overview.status().message();
  EXPECT_EQ(overview->sealed_points, 20);
  EXPECT_EQ(overview->covered_points, 0);
  // The migrated store takes the newer fields.
  RunRecord fresh;
  fresh.id = NewRunId();
  fresh.experiment = "exp";
  fresh.name = "after";
  fresh.devices = "0+1";
  ASSERT_TRUE(store->CreateRun(fresh).ok());
  EXPECT_EQ(store->FindRun("after")->devices, "0+1");
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
    std::vector<ChunkRecord> chunks = store->ReadChunks(si.id).value();
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

TEST_F(StoreTest, UriForms) {
  EXPECT_TRUE(Store::Open("sqlite://" + (dir_ / "a.db").string()).ok());
  EXPECT_TRUE(fs::exists(dir_ / "a.db"));
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

// `trainbench ls`, `serve` or another machine's `run` opening a store that someone else
// is writing into (a schedule, an import in one long transaction, a machine migrating the
// shared database) opens it at once and reads what was committed: opening a store at this
// build's schema takes no lock and writes nothing.
TEST_P(BackendTest, ACurrentStoreOpensAndReadsWhileAnotherWriterHoldsItsLocks) {
  std::string id = NewRun(*OpenOk()).id;
  const char* rename = "UPDATE runs SET name = 'renamed, not committed'";
  sqlite3* sqlite_writer = nullptr;
  std::unique_ptr<pg::Connection> pg_writer;
  std::string uri = uri_;
  if (sqlite()) {
    ASSERT_EQ(sqlite3_open(uri_.c_str(), &sqlite_writer), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(sqlite_writer, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(sqlite_writer, rename, nullptr, nullptr, nullptr), SQLITE_OK);
  } else {
    pg_writer = pg::Connection::Open(uri_).value();
    for (const char* sql : {"BEGIN", "SELECT pg_advisory_xact_lock(7465627)", rename})
      ASSERT_TRUE(pg_writer->Exec({sql, {}}, false).ok()) << sql;
    // Waiting for a lock fails after 3 s instead of for ever.
    uri += std::string(uri.find('?') == std::string::npos ? "?" : "&") + "options=-c%20lock_timeout%3D3000";
  }
  {
    Result<std::unique_ptr<Store>> reader = Store::Open(uri);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    Result<RunRecord> run = (*reader)->FindRun(id);
    ASSERT_TRUE(run.ok()) << run.status().message();
    EXPECT_EQ(run->name, "train.py");  // what was committed
  }
  if (sqlite()) {
    EXPECT_EQ(sqlite3_exec(sqlite_writer, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(sqlite_writer);
  } else {
    EXPECT_TRUE(pg_writer->Exec({"COMMIT", {}}, false).ok());
  }
  EXPECT_EQ(OpenOk()->FindRun(id)->name, "renamed, not committed");
}

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
  EXPECT_TRUE(store->ReadChunks(series_id())->empty());
  EXPECT_EQ(store->ReadJournal(series_id())->size(), 2u);
  EXPECT_EQ(ReadSeriesPoints(*store, series_id())->size(), 2u);

  add(2);
  ASSERT_TRUE(writer.Flush().ok());  // the third flush checkpoints
  EXPECT_TRUE(store->ReadJournal(series_id())->empty());
  std::vector<ChunkRecord> chunks = store->ReadChunks(series_id()).value();
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_FALSE(chunks[0].sealed);
  EXPECT_EQ(chunks[0].count, 3);
  add(3);
  ASSERT_TRUE(writer.Flush().ok());
  EXPECT_EQ(ReadSeriesPoints(*store, series_id())->size(), 4u);  // chunk + journal

  for (int i = 4; i < 12; ++i) add(i);
  ASSERT_TRUE(writer.Flush().ok());
  chunks = store->ReadChunks(series_id()).value();
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
  chunks = store->ReadChunks(series_id()).value();
  ASSERT_EQ(chunks.size(), 5u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(chunks[i].sealed) << i;
    EXPECT_EQ(chunks[i].count, 10) << i;
  }
  EXPECT_FALSE(chunks[4].sealed);
  EXPECT_EQ(chunks[4].count, 7);
  ASSERT_TRUE(writer.Close().ok());
  chunks = store->ReadChunks(series_id()).value();
  ASSERT_EQ(chunks.size(), 5u);
  EXPECT_TRUE(chunks[4].sealed);
  points = ReadSeriesPoints(*store, series_id()).value();
  ASSERT_EQ(points.size(), 47u);
  for (size_t i = 0; i < points.size(); ++i) EXPECT_EQ(points[i].time_ms, 1000 * static_cast<int64_t>(i));
  // The chunks beginning within a range, in one read, with their points: the 2nd to 4th.
  std::vector<ChunkRecord> range =
      store->ReadChunkRange(series_id(), chunks[1].first_ms, chunks[3].first_ms).value();
  ASSERT_EQ(range.size(), 3u);
  std::vector<Point> middle;
  for (const ChunkRecord& c : range) ASSERT_TRUE(DecodeChunk(c.data, middle).ok());
  ASSERT_EQ(middle.size(), 30u);
  EXPECT_EQ(middle.front().time_ms, 10000);
  EXPECT_EQ(middle.back().time_ms, 39000);
  EXPECT_TRUE(store->ReadChunkRange(series_id(), 47000, 90000)->empty());
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
    for (const ChunkRecord& c : store->ListChunkInfo(series).value()) {
      if (c.sealed) sealed.push_back(c);
    }
    int64_t points = 0;
    for (const ChunkRecord& c : sealed) points += c.count;
    EXPECT_EQ(overview.sealed_points, points) << when;
    EXPECT_EQ(overview.covered_points, points) << when;
    // Whether a chart must also read chunks the overview does not describe: the newest,
    // not sealed yet, while written; none once closed.
    EXPECT_EQ(overview.unsealed, sealed.size() < store->ListChunkInfo(series)->size()) << when;
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
  for (const ChunkRecord& c : store->ReadChunkSummaries(series).value()) EXPECT_TRUE(c.summary.empty());
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
      store->ReadChunksReaching({series[1], series[0], 987654321}, since).value();
  std::sort(series.begin(), series.end());
  size_t at = 0;
  for (int64_t id : series) {
    for (const ChunkRecord& c : store->ReadChunks(id).value()) {
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
    std::vector<ChunkRecord> chunks = store->ReadChunks(si.id).value();
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
        store->ReadChunkRange(si.id, chunks[1].first_ms, chunks[1].first_ms).value();
    ASSERT_EQ(middle.size(), 1u);
    std::vector<Point> points;
    ASSERT_TRUE(DecodeChunk(middle[0].data, points, middle[0].times).ok()) << name;
    EXPECT_EQ(points, std::vector<Point>(expected.begin() + chunks[0].count,
                                         expected.begin() + chunks[0].count + chunks[1].count));
    points.clear();
    ASSERT_TRUE(DecodeSeriesParts(*store, si.id, store->ListChunkInfo(si.id).value(), {}, points).ok());
    EXPECT_EQ(points, expected) << name;
  }
  // Three sets of times (one per sealed chunk of the three GPUs), each kept once.
  EXPECT_EQ(shared_sets.size(), 3u);
  // The chunks of several series in one read (a chart of many short runs): by series id,
  // each series' as read alone, shared times included; an id that is no series has none.
  std::vector<int64_t> ids;
  for (const SeriesInfo& si : store->ListSeries(run.id).value()) ids.insert(ids.begin(), si.id);
  ids.push_back(987654321);
  std::vector<ChunkRecord> several = store->ReadChunksOfSeries(ids).value();
  std::sort(ids.begin(), ids.end());
  size_t at = 0;
  for (int64_t id : ids) {
    for (const ChunkRecord& c : store->ReadChunks(id).value()) {
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

TEST_P(BackendTest, ArtifactsInlineAndBesideTheStore) {
  auto store = OpenOk();
  RunRecord run = NewRun(*store);
  std::string dir = store->ArtifactDirectory(run.id).value();
  std::ofstream(dir + "/stdout.log") << "epoch 1\n";
  ASSERT_TRUE(store->PutArtifact({run.id, "stdout.log", 8, "", dir + "/stdout.log"}).ok());
  ASSERT_TRUE(store->PutArtifact({run.id, "manifest.json", 2, "{}", ""}).ok());
  EXPECT_EQ(store->ListArtifacts(run.id)->size(), 2u);
  if (sqlite()) {
    // The path is kept relative to the store and resolved on the way out.
    EXPECT_EQ(store->ListArtifacts(run.id).value()[1].path, "t.db.artifacts/" + run.id + "/stdout.log");
    EXPECT_EQ(store->GetArtifact(run.id, "stdout.log")->path, dir + "/stdout.log");
  } else {
    // Every machine reads the database: a small file goes into it...
    EXPECT_EQ(store->GetArtifact(run.id, "stdout.log")->content, "epoch 1\n");
    EXPECT_EQ(store->GetArtifact(run.id, "stdout.log")->path, "");
    // ...a large one stays in the shared directory, recorded by its path.
    std::string big = dir + "/report.nsys-rep";
    std::ofstream(big) << std::string((9 << 20), 'x');
    ASSERT_TRUE(store->PutArtifact({run.id, "report.nsys-rep", 0, "", big}).ok());
    ArtifactRecord a = store->GetArtifact(run.id, "report.nsys-rep").value();
    EXPECT_EQ(a.path, big);
    EXPECT_EQ(a.size, 9 << 20);
    EXPECT_TRUE(a.content.empty());
  }
  EXPECT_EQ(store->GetArtifact(run.id, "manifest.json")->content, "{}");
}

TEST_P(BackendTest, ParamsAreWrittenOnceTagsReplacedAllOrNothing) {
  auto store = OpenOk();
  RunRecord run = NewRun(*store);
  EXPECT_TRUE(store->LogParams(run.id, {{"epochs", "5"}, {"lr", "0.1"}}).ok());  // lr: same value
  Status changed = store->LogParams(run.id, {{"optimizer", "adam"}, {"lr", "0.2"}});
  EXPECT_EQ(changed.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(changed.message().find("lr"), std::string::npos);
  EXPECT_TRUE(store->SetTags(run.id, {{"model", "resnet"}, {"phase", "1"}}).ok());
  EXPECT_TRUE(store->DeleteTag(run.id, "phase").ok());
  EXPECT_EQ(store->DeleteTag(run.id, "phase").code(), Status::Code::kNotFound);
  EXPECT_TRUE(store->RenameRun(run.id, "renamed").ok());

  RunRecord back = store->FindRun(run.id).value();
  EXPECT_EQ(back.name, "renamed");
  // The refused batch stored nothing, not even its valid first param.
  EXPECT_EQ(back.params, (KeyValues{{"batch-size", "128"}, {"lr", "0.1"}, {"epochs", "5"}}));
  EXPECT_EQ(back.tags, (KeyValues{{"model", "resnet"}}));
}

[[maybe_unused]] ::testing::Environment* const kStopCluster =
    ::testing::AddGlobalTestEnvironment(new StopCluster);

}  // namespace
}  // namespace tb
