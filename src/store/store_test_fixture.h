// The fixtures of the store's tests: StoreTest (an SQLite file in a scratch directory) and
// BackendTest, the tests every backend must pass, run on "sqlite" and "postgresql" (a
// throw-away PostgreSQL server for the whole program, a fresh database per test).
// store_test.cc instantiates BackendTest and stops the server at the program's end.
#pragma once

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

#include "store/format/chunk_summary.h"
#include "store/postgres/pg_connection.h"
#include "store/series_writer.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/helpers/counting_store.h"
#include "tests/helpers/forwarding_store.h"
#include "tests/helpers/postgres_cluster.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {

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

inline RunRecord NewRun(Store& store, const std::string& name = "train.py") {
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
inline SeriesTotals TotalsFromChunks(Store& store, int64_t series_id) {
  SeriesTotals t;
  t.series.id = series_id;
  for (const ChunkRecord& c : store.ReadChunks({.series = {series_id}, .part = ChunkPart::kInfo}).value())
    t.Add(c.count, c.sum, c.min, c.max);
  return t;
}

// ListSeriesTotals gives, for every series of the run, what its chunks add up to.
inline void ExpectTotalsOfEveryChunk(Store& store, const std::string& run_id) {
  std::vector<SeriesInfo> series = store.ListSeries(run_id).value();
  std::vector<SeriesTotals> totals = store.ListSeriesTotals(run_id).value();
  ASSERT_EQ(totals.size(), series.size());
  for (size_t i = 0; i < series.size(); ++i) {
    SeriesTotals want = TotalsFromChunks(store, series[i].id);
    EXPECT_EQ(totals[i].series.id, series[i].id);
    EXPECT_EQ(totals[i].series.metric, series[i].metric);
    EXPECT_EQ(totals[i].series.labels, series[i].labels);
    EXPECT_EQ(totals[i].count, want.count) << series[i].metric;
    EXPECT_NEAR(totals[i].sum, want.sum, 1e-9 * std::abs(want.sum)) << series[i].metric;
    EXPECT_EQ(totals[i].min, want.min) << series[i].metric;
    EXPECT_EQ(totals[i].max, want.max) << series[i].metric;
  }
}

// One throw-away PostgreSQL server for the whole test program, started on first use
// (only: a test of the program that needs none, run alone as CTest runs each, starts none).
inline PostgresCluster*& ClusterSlot() {
  static PostgresCluster* cluster = nullptr;
  return cluster;
}
inline PostgresCluster& Cluster() {
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

}  // namespace tb
