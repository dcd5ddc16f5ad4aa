// SqliteStore: the Store in one SQLite file (WAL, one connection, statements cached),
// internal to store/. Its runs, experiments and schema are in sqlite_store.cc, its series,
// chunks, journal and overviews in sqlite_series.cc. Thread-safe: every call holds mu_.
#pragma once

#include <sqlite3.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/sqlite/sqlite_statement.h"
#include "store/store.h"
#include "store/store_rows.h"

namespace tb {

class SqliteStore : public Store {
 public:
  SqliteStore(sqlite3* db, std::string path)
      : db_(db), path_(std::move(path)), statements_(std::make_unique<StatementCache>(db)) {}
  ~SqliteStore() override {
    statements_.reset();  // finalized before the connection closes
    sqlite3_close_v2(db_);
  }

  Status Initialize();

  // The schema version trainbench_meta records (0 when none is).
  int StoredSchemaVersion();

  std::string Describe() const override { return "sqlite://" + path_; }

  Result<std::string> ArtifactDirectory(const std::string& run_id) override;
  Result<int64_t> EnsureExperiment(const std::string& name) override;
  Status CreateExperimentWithId(int64_t id, const std::string& name) override;
  Status CreateRun(const RunRecord& run) override;

  Status FinishRun(const std::string& run_id, int64_t end_ms, const std::string& status,
                   std::optional<int> exit_code, std::optional<int> signal,
                   const std::string& reason) override;

  // A finished run's overview rows that fit on a page, rewritten at the table's end in an
  // order that fills their pages: each grew by a sealed chunk's summary at a time, and a
  // row grown in place splits its page in two half-empty ones. Larger rows (a block of
  // 65,536 points) fill whole overflow pages and stay. At most one row a series is
  // rewritten (the blocks before its last are larger), and the pages freed go back to the
  // file system with the run's other free pages.
  Status RepackOverview(const std::string& run_id);

  // The first block of a series' overview, made from its sealed chunks that begin before
  // `before_ms` (kOverviewMinPoints: a series shorter than that has none): each one's
  // segment as it would have been written when it was sealed. Replaces a first block
  // written already (by a build that began every series' overview at once: the same bytes).
  // Chunks out of time order (a script's own timestamps) may be left out; the overview then
  // covers fewer points than the series' totals, and charts read its chunks instead.
  Status BeginOverview(int64_t series_id, int64_t before_ms);

  Result<int64_t> AppendJournal(const std::string& run_id, const std::string& data) override;
  Result<std::vector<JournalEntry>> ReadJournal(int64_t series_id) override;

  Result<std::vector<std::pair<std::string, JournalEntry>>> ReadJournalsOfRuns(
      const std::vector<std::string>& run_ids) override;

  Result<int64_t> EnsureSeries(const std::string& run_id, const std::string& metric,
                               const std::string& labels) override;
  Status WriteChunks(ChunkBatch& batch) override;
  Status LogParams(const std::string& run_id, const KeyValues& params) override;
  Status SetTags(const std::string& run_id, const KeyValues& tags) override;
  Status DeleteTag(const std::string& run_id, const std::string& key) override;
  Status RenameRun(const std::string& run_id, const std::string& name) override;
  Status MoveRun(const std::string& run_id, int64_t experiment_id) override;
  Status ChangeExperiment(int64_t id, const ExperimentChange& change) override;
  Status AddEvent(const EventRecord& e) override;
  Status PutArtifact(const ArtifactRecord& a) override;
  Status PutRegisteredModel(const std::string& name, const std::optional<std::string>& record) override;
  Result<std::vector<std::pair<std::string, std::string>>> ListRegisteredModels() override;
  Result<std::vector<ExperimentInfo>> ListExperiments() override;
  Result<std::vector<RunRecord>> ListRuns(const std::string& experiment) override;
  Result<RunRecord> FindRun(const std::string& key) override;
  Result<std::vector<RunRecord>> FindRunsById(const std::vector<std::string>& ids) override;
  Result<std::vector<SeriesInfo>> ListSeriesOfRuns(const std::vector<std::string>& run_ids) override;
  Result<std::vector<SeriesTotals>> ListSeriesTotalsOfRuns(const std::vector<std::string>& run_ids) override;
  Result<std::vector<ChunkRecord>> ReadChunks(const ChunkQuery& query) override;
  Result<std::vector<SeriesOverview>> ReadSeriesOverviews(const std::vector<int64_t>& series_ids,
                                                          int64_t min_points, int64_t max_points) override;
  Result<std::vector<EventRecord>> ListEvents(const std::string& run_id) override;
  Result<std::vector<ArtifactRecord>> ListArtifacts(const std::string& run_id) override;
  Result<ArtifactRecord> GetArtifact(const std::string& run_id, const std::string& name) override;
  Result<std::vector<ArtifactRecord>> GetArtifactOfRuns(const std::vector<std::string>& run_ids,
                                                        const std::string& name) override;
  Result<std::vector<std::pair<std::string, int64_t>>> CountEventsOfRuns(
      const std::vector<std::string>& run_ids) override;

 private:
  // One chunk by id: its data and times (ChunkQuery::chunk).
  Result<std::vector<ChunkRecord>> ChunkById(int64_t chunk_id);

  Result<std::vector<RunRecord>> ReadRuns(Statement& st);

  // Steps `st` to the end, turning each row into a T with `make`.
  template <typename T, typename MakeFn>
  Result<std::vector<T>> Rows(Statement& st, const std::string& what, MakeFn make) {
    std::vector<T> out;
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) out.push_back(make(st));
    if (rc != SQLITE_DONE) return Error(what);
    return out;
  }

  // Runs `body` in a transaction: committed when it returns OK, rolled back otherwise.
  template <typename Body>
  Status InTransaction(Body body) {
    TB_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
    Status s = body();
    if (!s.ok()) {
      (void)Exec("ROLLBACK");  // the error that made it roll back is the one returned
      return s;
    }
    return Exec("COMMIT");
  }

  Status InsertParams(const std::string& run_id, const KeyValues& params);

  Status InsertRun(const RunRecord& run);
  // EnsureExperiment with mu_ held.
  Result<int64_t> EnsureExperimentLocked(const std::string& name);

  Status Migrate();

  Status MigrateLocked();

  Status Exec(const char* sql);

  Status Error(const std::string& what) const;

  Status NotAStore(const std::string& why) const;

  std::mutex mu_;
  sqlite3* db_;
  std::string path_;
  std::unique_ptr<StatementCache> statements_;  // of db_
  size_t page_size_ = 4096;
};

}  // namespace tb
