// The fixtures of the serve API's tests: a store with a run being written, the API called
// in-process (no socket), answers pulled as a server would (ServeApiTest); a store with
// long finished series whose reads are counted (LongSeriesTest).
#pragma once

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
#include "serve/serve_api.h"
#include "store/format/chunk_summary.h"
#include "store/format/varint.h"
#include "store/series_writer.h"
#include "tests/helpers/bucket_slack.h"
#include "tests/helpers/counting_store.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {

using json = nlohmann::json;
constexpr int64_t kStart = 1763777000000;

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
    std::vector<ChunkRecord> chunks =
        store_->ReadChunks({.series = {store_->ListSeries(run_.id)->at(0).id}}).value();
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
    std::vector<ChunkRecord> chunks =
        store_->ReadChunks({.series = {store_->ListSeries(run_.id)->at(0).id}}).value();
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

}  // namespace tb
