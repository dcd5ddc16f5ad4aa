#include "store/sqlite_store.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "base/strings.h"
#include "base/time.h"
#include "store/chunk_summary.h"
#include "store/page_packing.h"
#include "store/schema.h"
#include "store/sqlite_statement.h"
#include "store/store_rows.h"

namespace tb {
namespace {

// A sealed chunk's figures added to its series' totals (schema 6): count, sum, min, max
// (NULL when the chunk has no non-NaN value), series id.
constexpr const char* kAddSealedTotals =
    "UPDATE series SET sealed_count = sealed_count + ?1, sealed_sum = sealed_sum + ?2, "
    "sealed_min = CASE WHEN ?3 IS NULL THEN sealed_min WHEN sealed_min IS NULL OR ?3 < sealed_min THEN ?3 "
    "ELSE sealed_min END, "
    "sealed_max = CASE WHEN ?4 IS NULL THEN sealed_max WHEN sealed_max IS NULL OR ?4 > sealed_max THEN ?4 "
    "ELSE sealed_max END WHERE id = ?5";

// A sealed chunk's segment (?2, of ?3 points) appended to its series' (?1) overview, in
// block ?4: the one its first point falls in by the series' points sealed before it
// (schema 7; blocks of kOverviewBlockPoints).
constexpr const char* kAddToOverview =
    "INSERT INTO series_overview(series_id, block, points, data) VALUES(?1, ?4, ?3, ?2) "
    "ON CONFLICT(series_id, block) DO UPDATE SET points = points + excluded.points, "
    "data = CAST(data || excluded.data AS BLOB)";

class SqliteStore : public Store {
 public:
  SqliteStore(sqlite3* db, std::string path)
      : db_(db), path_(std::move(path)), statements_(std::make_unique<StatementCache>(db)) {}
  ~SqliteStore() override {
    statements_.reset();  // finalized before the connection closes
    sqlite3_close_v2(db_);
  }

  Status Initialize() {
    std::lock_guard lock(mu_);
    TB_RETURN_IF_ERROR(Exec("PRAGMA busy_timeout=10000"));
    // Reading the schema fails here when the file is not an SQLite database at all.
    Statement tables(*statements_, "SELECT name FROM sqlite_master WHERE type='table'");
    if (!tables.ok()) return NotAStore(sqlite3_errmsg(db_));
    bool has_meta = false, has_other = false;
    int rc;
    while ((rc = tables.Step()) == SQLITE_ROW) {
      (tables.Text(0) == "trainbench_meta" ? has_meta : has_other) = true;
    }
    if (rc != SQLITE_DONE) return NotAStore(sqlite3_errmsg(db_));
    if (!has_meta && has_other) {
      return NotAStore("it is an SQLite database, but it holds no trainbench_meta table");
    }
    // Chunks replace journal entries all the time; with incremental auto-vacuum the pages
    // they free are given back to the file system at the end of each run. It can only be
    // chosen before the first table exists.
    if (!has_meta) TB_RETURN_IF_ERROR(Exec("PRAGMA auto_vacuum=INCREMENTAL"));
    TB_RETURN_IF_ERROR(Exec("PRAGMA journal_mode=WAL"));
    TB_RETURN_IF_ERROR(Exec("PRAGMA synchronous=NORMAL"));
    TB_RETURN_IF_ERROR(Exec("PRAGMA foreign_keys=ON"));
    Statement page_size(*statements_, "PRAGMA page_size");
    if (page_size.Step() == SQLITE_ROW) page_size_ = static_cast<size_t>(page_size.Int(0));
    // A store already at this build's schema is opened without writing to it: no write
    // lock to wait for behind another process's transaction, no sync (a read-only command
    // such as `ls` used to write and sync the store twice).
    if (has_meta && StoredSchemaVersion() == kSchemaVersion) return Status::Ok();
    return Migrate();
  }

  // The schema version trainbench_meta records (0 when none is).
  int StoredSchemaVersion() {
    Statement get(*statements_, "SELECT value FROM trainbench_meta WHERE key = 'schema_version'");
    if (get.Step() != SQLITE_ROW) return 0;
    return static_cast<int>(ParseInt(get.Text(0)).value_or(0));
  }

  std::string Describe() const override { return "sqlite://" + path_; }

  Result<std::string> ArtifactDirectory(const std::string& run_id) override {
    TB_RETURN_IF_ERROR(CheckRunId(run_id));
    std::string top = path_ + ".artifacts";
    std::string dir = top + "/" + run_id;
    for (const std::string& d : {top, dir}) {
      if (mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) {
        return Status::FromErrno("cannot create artifact directory " + d, errno);
      }
    }
    return dir;
  }

  Result<int64_t> EnsureExperiment(const std::string& name) override {
    TB_RETURN_IF_ERROR(CheckExperimentName(name));
    std::lock_guard lock(mu_);
    Statement insert(*statements_, "INSERT OR IGNORE INTO experiments(name, created_ms) VALUES(?, ?)");
    insert.Bind(1, name).Bind(2, WallMillis());
    if (insert.Step() != SQLITE_DONE) return Error("cannot create experiment " + name);
    Statement get(*statements_, "SELECT id FROM experiments WHERE name = ?");
    get.Bind(1, name);
    if (get.Step() != SQLITE_ROW) return Error("cannot read experiment " + name);
    return get.Int(0);
  }

  Status CreateRun(const RunRecord& run) override {
    TB_RETURN_IF_ERROR(CheckRunId(run.id));
    std::lock_guard lock(mu_);
    return InTransaction([&] { return InsertRun(run); });
  }

  Status FinishRun(const std::string& run_id, int64_t end_ms, const std::string& status,
                   std::optional<int> exit_code, std::optional<int> signal,
                   const std::string& reason) override {
    std::lock_guard lock(mu_);
    Statement st(*statements_,
                 "UPDATE runs SET end_ms = ?, status = ?, exit_code = ?, signal = ?, reason = ? "
                 "WHERE id = ?");
    st.Bind(1, end_ms).Bind(2, status).Bind(3, exit_code).Bind(4, signal).Bind(5, reason).Bind(6, run_id);
    TB_RETURN_IF_ERROR(InTransaction([&] {
      if (st.Step() != SQLITE_DONE) return Error("cannot finish run " + run_id);
      return RepackOverview(run_id);
    }));
    return Exec("PRAGMA incremental_vacuum");
  }

  // A finished run's overview rows that fit on a page, rewritten at the table's end in an
  // order that fills their pages: each grew by a sealed chunk's summary at a time, and a
  // row grown in place splits its page in two half-empty ones. Larger rows (a block of
  // 65,536 points) fill whole overflow pages and stay. At most one row a series is
  // rewritten (the blocks before its last are larger), and the pages freed go back to the
  // file system with the run's other free pages.
  Status RepackOverview(const std::string& run_id) {
    constexpr size_t kLeast = 8, kMost = 32;  // a record's bytes beside the data
    Statement rows(*statements_,
                   "SELECT o.rowid, o.series_id, o.block, o.points, o.data FROM series_overview o "
                   "JOIN series s ON s.id = o.series_id WHERE s.run_id = ? AND length(o.data) <= ?");
    rows.Bind(1, run_id).Bind(2, static_cast<int64_t>(page_size_ - 35 - kMost));
    struct Row {
      int64_t rowid, series_id, block, points;
      std::string data;
    };
    std::vector<Row> found;
    std::vector<size_t> bytes;
    int rc;
    while ((rc = rows.Step()) == SQLITE_ROW) {
      found.push_back({rows.Int(0), rows.Int(1), rows.Int(2), rows.Int(3), rows.Text(4)});
      bytes.push_back(LeafBytes(found.back().data.size(), kLeast, kMost, page_size_));
    }
    if (rc != SQLITE_DONE) return Error("cannot read the overview of run " + run_id);
    if (found.size() < 2) return Status::Ok();
    Statement erase(*statements_, "DELETE FROM series_overview WHERE rowid = ?");
    Statement insert(*statements_,
                     "INSERT INTO series_overview(series_id, block, points, data) VALUES(?, ?, ?, ?)");
    for (const Row& r : found) {
      erase.Bind(1, r.rowid);
      if (erase.Step() != SQLITE_DONE) return Error("cannot rewrite the overview of run " + run_id);
      erase.Reset();
    }
    for (size_t i : PackedOrder(bytes, page_size_)) {
      const Row& r = found[i];
      insert.Bind(1, r.series_id).Bind(2, r.block).Bind(3, r.points).BindBlob(4, r.data);
      if (insert.Step() != SQLITE_DONE) return Error("cannot rewrite the overview of run " + run_id);
      insert.Reset();
    }
    return Status::Ok();
  }

  // The first block of a series' overview, made from its sealed chunks that begin before
  // `before_ms` (kOverviewMinPoints: a series shorter than that has none): each one's
  // segment as it would have been written when it was sealed. Replaces a first block
  // written already (by a build that began every series' overview at once: the same bytes).
  // Chunks out of time order (a script's own timestamps) may be left out; the overview then
  // covers fewer points than the series' totals, and charts read its chunks instead.
  Status BeginOverview(int64_t series_id, int64_t before_ms) {
    Statement rows(*statements_, ChunkSelect(ChunkBlobs::kData, "= ?", {"?", "?"}));
    rows.Bind(1, series_id).Bind(2, std::numeric_limits<int64_t>::min()).Bind(3, before_ms - 1);
    std::string block;
    int64_t points = 0;
    std::vector<Point> decoded;
    int rc;
    while ((rc = rows.Step()) == SQLITE_ROW) {
      ChunkRecord c = ChunkFromRow(rows, ChunkBlobs::kData);
      if (!c.sealed) continue;
      decoded.clear();
      // A chunk that does not decode leaves the overview short (never the points unwritten).
      if (!DecodeChunk(c.data, decoded, c.times).ok()) return Status::Ok();
      c.summary = EncodeSummary(decoded);
      block += OverviewSegment(c);
      points += c.count;
    }
    if (rc != SQLITE_DONE) return Error("cannot read the chunks of series " + std::to_string(series_id));
    if (points == 0) return Status::Ok();
    Statement put(
        *statements_,
        "INSERT INTO series_overview(series_id, block, points, data) VALUES(?, 0, ?, ?) "
        "ON CONFLICT(series_id, block) DO UPDATE SET points = excluded.points, data = excluded.data");
    put.Bind(1, series_id).Bind(2, points).BindBlob(3, block);
    if (put.Step() != SQLITE_DONE)
      return Error("cannot write the overview of series " + std::to_string(series_id));
    return Status::Ok();
  }

  Result<int64_t> AppendJournal(const std::string& run_id, const std::string& data) override {
    std::lock_guard lock(mu_);
    Statement st(*statements_, "INSERT INTO journal(run_id, data) VALUES(?, ?)");
    st.Bind(1, run_id).BindBlob(2, data);
    if (st.Step() != SQLITE_DONE) return Error("cannot write samples");
    return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
  }

  Result<std::vector<JournalEntry>> ReadJournal(int64_t series_id) override {
    std::lock_guard lock(mu_);
    Statement st(*statements_,
                 "SELECT j.id, j.data FROM journal j JOIN series s ON s.run_id = j.run_id "
                 "WHERE s.id = ? ORDER BY j.id");
    st.Bind(1, series_id);
    return Rows<JournalEntry>(st, "cannot read samples", [&](Statement& row) {
      return JournalEntry{row.Int(0), row.Text(1)};
    });
  }

  Result<std::vector<std::pair<std::string, JournalEntry>>> ReadJournalsOfRuns(
      const std::vector<std::string>& run_ids) override {
    std::lock_guard lock(mu_);
    Statement st(*statements_,
                 "SELECT run_id, id, data FROM journal WHERE run_id IN (SELECT value FROM json_each(?)) "
                 "ORDER BY run_id, id");
    st.Bind(1, nlohmann::json(run_ids).dump());
    return Rows<std::pair<std::string, JournalEntry>>(st, "cannot read samples", [&](Statement& row) {
      return std::pair<std::string, JournalEntry>(row.Text(0), JournalEntry{row.Int(1), row.Text(2)});
    });
  }

  Result<int64_t> EnsureSeries(const std::string& run_id, const std::string& metric,
                               const std::string& labels) override {
    std::lock_guard lock(mu_);
    Statement insert(*statements_, "INSERT OR IGNORE INTO series(run_id, metric, labels) VALUES(?, ?, ?)");
    insert.Bind(1, run_id).Bind(2, metric).Bind(3, labels);
    if (insert.Step() != SQLITE_DONE) return Error("cannot create series " + metric);
    Statement get(*statements_, "SELECT id FROM series WHERE run_id = ? AND metric = ? AND labels = ?");
    get.Bind(1, run_id).Bind(2, metric).Bind(3, labels);
    if (get.Step() != SQLITE_ROW) return Error("cannot read series " + metric);
    return get.Int(0);
  }

  Status WriteChunks(ChunkBatch& batch) override {
    std::lock_guard lock(mu_);
    TB_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
    Statement insert(*statements_,
                     "INSERT INTO chunks(series_id, first_ms, last_ms, count, min, max, sum, sealed, data, "
                     "summary, times_series) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    Statement times(*statements_,
                    "INSERT OR IGNORE INTO chunk_times(series_id, first_ms, data) VALUES(?, ?, ?)");
    Statement erase(*statements_, "DELETE FROM chunks WHERE id = ? AND sealed = 0");
    Statement erase_journal(*statements_, "DELETE FROM journal WHERE id = ?");
    Statement overview(*statements_, kAddToOverview);
    Statement add(*statements_, kAddSealedTotals);
    Statement sealed(*statements_, "SELECT sealed_count FROM series WHERE id = ?");
    bool ok = insert.ok() && times.ok() && erase.ok() && erase_journal.ok() && overview.ok() && add.ok() &&
              sealed.ok();
    for (const SharedTimes& t : batch.times) {
      if (!ok) break;
      times.Bind(1, t.series_id).Bind(2, t.first_ms).BindBlob(3, t.data);
      ok = times.Step() == SQLITE_DONE;
      times.Reset();
    }
    for (size_t i : ChunkInsertOrder(batch.inserts, page_size_)) {
      if (!ok) break;
      ChunkRecord& c = batch.inserts[i];
      insert.Bind(1, c.series_id).Bind(2, c.first_ms).Bind(3, c.last_ms).Bind(4, c.count);
      insert.Bind(5, c.min).Bind(6, c.max).Bind(7, std::optional<double>(c.sum));
      // The summary goes into the series' overview, not the chunk's row.
      insert.Bind(8, int64_t{c.sealed}).BindBlob(9, c.data).Bind(10, std::optional<double>());
      insert.Bind(11, c.times_series != 0 ? std::optional(c.times_series) : std::nullopt);
      ok = insert.Step() == SQLITE_DONE;
      c.id = sqlite3_last_insert_rowid(db_);
      insert.Reset();
    }
    // A series' sealed chunks join its overview in time order, from when it is long enough
    // (kOverviewMinPoints) to be drawn from one.
    for (const ChunkRecord& c : batch.inserts) {
      if (!ok) break;
      if (!c.sealed) continue;
      sealed.Bind(1, c.series_id);
      ok = sealed.Step() == SQLITE_ROW;
      int64_t before = ok ? sealed.Int(0) : 0;
      sealed.Reset();
      if (ok && before < kOverviewMinPoints && before + c.count >= kOverviewMinPoints)
        ok = BeginOverview(c.series_id, c.first_ms).ok();
      if (ok && before + c.count >= kOverviewMinPoints) {
        std::string segment = OverviewSegment(c);  // bound without a copy: alive until the step
        overview.Bind(1, c.series_id)
            .BindBlob(2, segment)
            .Bind(3, c.count)
            .Bind(4, before / kOverviewBlockPoints);
        ok = overview.Step() == SQLITE_DONE;
        overview.Reset();
      }
      if (!ok) break;
      add.Bind(1, c.count).Bind(2, c.sum).Bind(3, c.min).Bind(4, c.max).Bind(5, c.series_id);
      ok = add.Step() == SQLITE_DONE;
      add.Reset();
    }
    // The rows superseded go last: deleted first, the journal's pages would be reused by
    // the chunks, a third more CPU for a bulk import's checkpoint (bench/store_ingest) for
    // a page in a hundred.
    for (auto [statement, ids] :
         {std::pair{&erase, &batch.deletes}, std::pair{&erase_journal, &batch.journal_deletes}}) {
      for (int64_t id : *ids) {
        if (!ok) break;
        statement->Bind(1, id);
        ok = statement->Step() == SQLITE_DONE;
        statement->Reset();
      }
    }
    if (!ok) {
      Status s = Error("cannot write samples");
      (void)Exec("ROLLBACK");  // the error that made it roll back is the one returned
      return s;
    }
    return Exec("COMMIT");
  }

  Status LogParams(const std::string& run_id, const KeyValues& params) override {
    std::lock_guard lock(mu_);
    return InTransaction([&] { return InsertParams(run_id, params); });
  }

  Status SetTags(const std::string& run_id, const KeyValues& tags) override {
    std::lock_guard lock(mu_);
    return InTransaction([&] {
      Statement st(*statements_, "INSERT OR REPLACE INTO tags(run_id, key, value) VALUES(?, ?, ?)");
      for (const auto& [k, v] : tags) {
        st.Bind(1, run_id).Bind(2, k).Bind(3, v);
        if (st.Step() != SQLITE_DONE) return Error("cannot set tags of run " + run_id);
        st.Reset();
      }
      return Status::Ok();
    });
  }

  Status DeleteTag(const std::string& run_id, const std::string& key) override {
    std::lock_guard lock(mu_);
    Statement st(*statements_, "DELETE FROM tags WHERE run_id = ? AND key = ?");
    st.Bind(1, run_id).Bind(2, key);
    if (st.Step() != SQLITE_DONE) return Error("cannot delete tag " + key);
    if (sqlite3_changes(db_) == 0) {
      return Status::NotFound("No tag with name: " + key + " in run with id " + run_id);
    }
    return Status::Ok();
  }

  Status RenameRun(const std::string& run_id, const std::string& name) override {
    std::lock_guard lock(mu_);
    Statement st(*statements_, "UPDATE runs SET name = ? WHERE id = ?");
    st.Bind(1, name).Bind(2, run_id);
    if (st.Step() != SQLITE_DONE) return Error("cannot rename run " + run_id);
    return Status::Ok();
  }

  Status ChangeExperiment(int64_t id, const ExperimentChange& change) override {
    std::lock_guard lock(mu_);
    return InTransaction([&]() -> Status {
      if (change.name) {
        TB_RETURN_IF_ERROR(CheckExperimentName(*change.name));
        Statement st(*statements_, "UPDATE experiments SET name = ? WHERE id = ?");
        st.Bind(1, *change.name).Bind(2, id);
        if (st.Step() != SQLITE_DONE) {
          if (sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_UNIQUE)
            return Status::InvalidArgument("an experiment named " + *change.name + " exists");
          return Error("cannot rename experiment " + std::to_string(id));
        }
      }
      for (const auto& [k, v] : change.set_tags) {
        Statement st(*statements_,
                     "INSERT OR REPLACE INTO experiment_tags(experiment_id, key, value) VALUES(?, ?, ?)");
        st.Bind(1, id).Bind(2, k).Bind(3, v);
        if (st.Step() != SQLITE_DONE) return Error("cannot tag experiment " + std::to_string(id));
      }
      for (const std::string& k : change.delete_tags) {
        Statement st(*statements_, "DELETE FROM experiment_tags WHERE experiment_id = ? AND key = ?");
        st.Bind(1, id).Bind(2, k);
        if (st.Step() != SQLITE_DONE) return Error("cannot untag experiment " + std::to_string(id));
      }
      return Status::Ok();
    });
  }

  Status AddEvent(const EventRecord& e) override {
    std::lock_guard lock(mu_);
    Statement st(*statements_, "INSERT INTO events(run_id, time_ms, kind, label) VALUES(?, ?, ?, ?)");
    st.Bind(1, e.run_id).Bind(2, e.time_ms).Bind(3, e.kind).Bind(4, e.label);
    if (st.Step() != SQLITE_DONE) return Error("cannot record event");
    return Status::Ok();
  }

  Status PutArtifact(const ArtifactRecord& a) override {
    std::lock_guard lock(mu_);
    Statement st(*statements_,
                 "INSERT OR REPLACE INTO artifacts(run_id, name, size, content, path) VALUES(?, ?, ?, ?, ?)");
    // Files beside the store are recorded relative to it, so the store can be moved.
    std::string path = a.path;
    std::string base = DirName(path_) + "/";
    if (StartsWith(path, base)) path = path.substr(base.size());
    st.Bind(1, a.run_id).Bind(2, a.name).Bind(3, a.size).BindBlob(4, a.content).Bind(5, path);
    if (st.Step() != SQLITE_DONE) return Error("cannot store artifact " + a.name);
    return Status::Ok();
  }

  Result<std::vector<ExperimentInfo>> ListExperiments() override {
    std::lock_guard lock(mu_);
    Statement st(*statements_, "SELECT id, name, created_ms FROM experiments ORDER BY id");
    Result<std::vector<ExperimentInfo>> all =
        Rows<ExperimentInfo>(st, "cannot list experiments", [&](Statement& row) {
          return ExperimentInfo{row.Int(0), row.Text(1), row.Int(2), {}};
        });
    if (!all.ok()) return all;
    Statement tags(*statements_, "SELECT experiment_id, key, value FROM experiment_tags ORDER BY rowid");
    while (tags.Step() == SQLITE_ROW) {
      for (ExperimentInfo& e : *all) {
        if (e.id == tags.Int(0)) e.tags.emplace_back(tags.Text(1), tags.Text(2));
      }
    }
    return all;
  }

  Result<std::vector<RunRecord>> ListRuns(const std::string& experiment) override {
    std::lock_guard lock(mu_);
    std::string sql = std::string(kRunSelect) + (experiment.empty() ? "" : " WHERE e.name = ?") +
                      " ORDER BY r.start_ms, r.id";
    Statement st(*statements_, sql);
    if (!experiment.empty()) st.Bind(1, experiment);
    return ReadRuns(st);
  }

  Result<RunRecord> FindRun(const std::string& key) override {
    std::lock_guard lock(mu_);
    if (IsWholeRunId(key)) {
      Statement exact(*statements_, std::string(kRunSelect) + " WHERE r.id = ?1");
      exact.Bind(1, key);
      Result<std::vector<RunRecord>> found = ReadRuns(exact);
      if (!found.ok()) return found.status();
      if (!found->empty()) return std::move(found->front());
    }
    std::string sql = std::string(kRunSelect) +
                      " WHERE r.id = ?1 OR (length(?1) >= 4 AND "
                      "substr(r.id, 1, length(?1)) = ?1) OR r.name = ?1 ORDER BY r.start_ms DESC";
    Statement st(*statements_, sql);
    st.Bind(1, key);
    Result<std::vector<RunRecord>> runs = ReadRuns(st);
    if (!runs.ok()) return runs.status();
    return ChooseRun(key, std::move(*runs), Describe());
  }

  Result<std::vector<RunRecord>> FindRunsById(const std::vector<std::string>& ids) override {
    std::lock_guard lock(mu_);
    Statement st(*statements_, std::string(kRunSelect) + " WHERE r.id IN (SELECT value FROM json_each(?1))");
    st.Bind(1, nlohmann::json(ids).dump());
    Result<std::vector<RunRecord>> found = ReadRuns(st);
    if (!found.ok()) return found.status();
    return InOrderOfIds(ids, std::move(*found));
  }

  Result<std::vector<SeriesInfo>> ListSeriesOfRuns(const std::vector<std::string>& run_ids) override {
    std::lock_guard lock(mu_);
    // One run's by the index on (run_id, metric, labels); several with json_each.
    Statement st(*statements_, run_ids.size() == 1 ? "SELECT id, run_id, metric, labels FROM series "
                                                     "WHERE run_id = ?1 ORDER BY metric, labels"
                                                   : "SELECT id, run_id, metric, labels FROM series WHERE "
                                                     "run_id IN (SELECT value FROM json_each(?1)) "
                                                     "ORDER BY run_id, metric, labels");
    st.Bind(1, run_ids.size() == 1 ? run_ids[0] : nlohmann::json(run_ids).dump());
    return Rows<SeriesInfo>(st, "cannot list series", [&](Statement& row) {
      return SeriesInfo{row.Int(0), row.Text(1), row.Text(2), row.Text(3)};
    });
  }

  Result<std::vector<SeriesTotals>> ListSeriesTotals(const std::string& run_id) override {
    std::lock_guard lock(mu_);
    std::string sql = SeriesTotalsSelect("?1");
    Statement st(*statements_, sql);
    st.Bind(1, run_id);
    return Rows<SeriesTotals>(st, "cannot read series totals",
                              [](Statement& row) { return SeriesTotalsFromRow(row); });
  }

  Result<std::vector<ChunkRecord>> ReadChunksOfSeries(const std::vector<int64_t>& series_ids) override {
    if (series_ids.size() == 1) return Chunks(series_ids[0], ChunkBlobs::kData);
    std::lock_guard lock(mu_);
    Statement st(*statements_, ChunkSelect(ChunkBlobs::kData, "IN (SELECT value FROM json_each(?))"));
    st.Bind(1, nlohmann::json(series_ids).dump());
    return Rows<ChunkRecord>(st, "cannot read samples",
                             [&](Statement& row) { return ChunkFromRow(row, ChunkBlobs::kData); });
  }

  Result<std::vector<ChunkRecord>> ReadChunksReaching(const std::vector<int64_t>& series_ids,
                                                      int64_t since_ms) override {
    std::lock_guard lock(mu_);
    Statement st(*statements_, ChunkSelect(ChunkBlobs::kData, "IN (SELECT value FROM json_each(?1))",
                                           {nullptr, nullptr}, "?2"));
    st.Bind(1, nlohmann::json(series_ids).dump());
    st.Bind(2, since_ms);
    return Rows<ChunkRecord>(st, "cannot read samples",
                             [&](Statement& row) { return ChunkFromRow(row, ChunkBlobs::kData); });
  }

  Result<std::vector<ChunkRecord>> ListChunkInfo(int64_t series_id) override {
    return Chunks(series_id, ChunkBlobs::kNone);
  }

  Result<std::vector<ChunkRecord>> ReadChunkSummaries(int64_t series_id) override {
    return Chunks(series_id, ChunkBlobs::kSummary);
  }

  Result<std::vector<ChunkRecord>> ReadChunkRange(int64_t series_id, int64_t first_ms_from,
                                                  int64_t first_ms_to) override {
    std::lock_guard lock(mu_);
    std::string sql = ChunkSelect(ChunkBlobs::kData, "= ?", {"?", "?"});
    Statement st(*statements_, sql);
    st.Bind(1, series_id);
    st.Bind(2, first_ms_from);
    st.Bind(3, first_ms_to);
    return Rows<ChunkRecord>(st, "cannot read samples",
                             [&](Statement& row) { return ChunkFromRow(row, ChunkBlobs::kData); });
  }

  Result<std::vector<SeriesOverview>> ReadSeriesOverviews(const std::vector<int64_t>& series_ids,
                                                          int64_t min_points, int64_t max_points) override {
    std::lock_guard lock(mu_);
    std::string sql =
        OverviewSelect(series_ids.size() == 1 ? "= ?1" : "IN (SELECT value FROM json_each(?1))", "?2", "?3");
    Statement st(*statements_, sql);
    if (series_ids.size() == 1) {
      st.Bind(1, series_ids[0]);
    } else {
      st.Bind(1, nlohmann::json(series_ids).dump());
    }
    st.Bind(2, min_points);
    st.Bind(3, max_points);
    OverviewRows rows;
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) rows.Add(st);
    if (rc != SQLITE_DONE) return Error("cannot read the overviews of series");
    return rows.Take(series_ids);
  }

  Result<ChunkRecord> ReadChunkData(int64_t chunk_id) override {
    std::lock_guard lock(mu_);
    Statement st(*statements_, ChunkDataSelect("?"));
    st.Bind(1, chunk_id);
    if (st.Step() != SQLITE_ROW) return Status::NotFound("no chunk " + std::to_string(chunk_id));
    ChunkRecord c;
    c.id = chunk_id;
    c.data = st.Text(0);
    if (!st.IsNull(1)) c.times = st.Text(1);
    return c;
  }

  Result<std::vector<EventRecord>> ListEvents(const std::string& run_id) override {
    std::lock_guard lock(mu_);
    Statement st(*statements_,
                 "SELECT time_ms, kind, label FROM events WHERE run_id = ? ORDER BY time_ms, id");
    st.Bind(1, run_id);
    return Rows<EventRecord>(st, "cannot list events", [&](Statement& row) {
      return EventRecord{run_id, row.Int(0), row.Text(1), row.Text(2)};
    });
  }

  Result<std::vector<ArtifactRecord>> ListArtifacts(const std::string& run_id) override {
    std::lock_guard lock(mu_);
    Statement st(*statements_, "SELECT name, size, path FROM artifacts WHERE run_id = ? ORDER BY name");
    st.Bind(1, run_id);
    return Rows<ArtifactRecord>(st, "cannot list artifacts", [&](Statement& row) {
      return ArtifactRecord{run_id, row.Text(0), row.Int(1), "", row.Text(2)};
    });
  }

  Result<ArtifactRecord> GetArtifact(const std::string& run_id, const std::string& name) override {
    std::lock_guard lock(mu_);
    Statement st(*statements_, "SELECT size, content, path FROM artifacts WHERE run_id = ? AND name = ?");
    st.Bind(1, run_id).Bind(2, name);
    if (st.Step() != SQLITE_ROW) return Status::NotFound("run " + run_id + " has no artifact " + name);
    ArtifactRecord a{run_id, name, st.Int(0), st.Text(1), st.Text(2)};
    if (!a.path.empty() && a.path[0] != '/') a.path = DirName(path_) + "/" + a.path;
    return a;
  }

 private:
  Result<std::vector<ChunkRecord>> Chunks(int64_t series_id, ChunkBlobs blobs) {
    std::lock_guard lock(mu_);
    std::string sql = ChunkSelect(blobs, "= ?");
    Statement st(*statements_, sql);
    st.Bind(1, series_id);
    return Rows<ChunkRecord>(st, "cannot read samples",
                             [&](Statement& row) { return ChunkFromRow(row, blobs); });
  }

  Result<std::vector<RunRecord>> ReadRuns(Statement& st) {
    Result<std::vector<RunRecord>> runs =
        Rows<RunRecord>(st, "cannot list runs", [](Statement& row) { return RunFromRow(row); });
    if (!runs.ok() || runs->empty()) return runs;
    // Params and tags of all of them in one query (two a run were most of a chart's lookup).
    std::unordered_map<std::string, size_t> index;
    nlohmann::json ids = nlohmann::json::array();
    for (size_t i = 0; i < runs->size(); ++i) {
      index.emplace((*runs)[i].id, i);
      ids.push_back((*runs)[i].id);
    }
    Statement kv(
        *statements_,
        "SELECT run_id, key, value, 0 AS kind, rowid FROM params "
        "WHERE run_id IN (SELECT value FROM json_each(?1)) UNION ALL "
        "SELECT run_id, key, value, 1, rowid FROM tags WHERE run_id IN (SELECT value FROM json_each(?1)) "
        "ORDER BY 4, 5");
    kv.Bind(1, ids.dump());
    int rc;
    while ((rc = kv.Step()) == SQLITE_ROW) {
      auto it = index.find(kv.Text(0));
      if (it == index.end()) continue;
      RunRecord& r = (*runs)[it->second];
      (kv.Int(3) == 0 ? r.params : r.tags).emplace_back(kv.Text(1), kv.Text(2));
    }
    if (rc != SQLITE_DONE) return Error("cannot read params and tags");
    return std::move(*runs);
  }

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

  Status InsertParams(const std::string& run_id, const KeyValues& params) {
    Statement get(*statements_, "SELECT value FROM params WHERE run_id = ? AND key = ?");
    Statement put(*statements_, "INSERT INTO params(run_id, key, value) VALUES(?, ?, ?)");
    for (const auto& [k, v] : params) {
      get.Bind(1, run_id).Bind(2, k);
      int rc = get.Step();
      std::string existing = rc == SQLITE_ROW ? get.Text(0) : "";
      get.Reset();
      if (rc == SQLITE_ROW) {
        TB_RETURN_IF_ERROR(CheckParamUnchanged(run_id, k, existing, v));
        continue;
      }
      if (rc != SQLITE_DONE) return Error("cannot read params");
      put.Bind(1, run_id).Bind(2, k).Bind(3, v);
      if (put.Step() != SQLITE_DONE) return Error("cannot record param " + k);
      put.Reset();
    }
    return Status::Ok();
  }

  Status InsertRun(const RunRecord& run) {
    Statement exp(*statements_, "SELECT id FROM experiments WHERE name = ?");
    exp.Bind(1, run.experiment);
    if (exp.Step() != SQLITE_ROW) return Status::NotFound("no experiment " + run.experiment);
    Statement st(*statements_,
                 "INSERT INTO runs(id, experiment_id, workload, name, command, working_directory, host, "
                 "supervisor_pid, start_ms, end_ms, status, exit_code, signal, reason, listeners, "
                 "interval_ms, devices) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    st.Bind(1, run.id).Bind(2, exp.Int(0)).Bind(3, run.workload).Bind(4, run.name);
    st.Bind(5, run.command).Bind(6, run.working_directory).Bind(7, run.host);
    st.Bind(8, run.supervisor_pid).Bind(9, run.start_ms).Bind(10, run.end_ms).Bind(11, run.status);
    st.Bind(12, run.exit_code).Bind(13, run.signal).Bind(14, run.reason).Bind(15, run.listeners);
    st.Bind(16, run.interval_ms).Bind(17, run.devices);
    if (st.Step() != SQLITE_DONE) return Error("cannot record run " + run.id);
    for (auto [table, kvs] : {std::pair{"params", &run.params}, std::pair{"tags", &run.tags}}) {
      std::string sql =
          std::string("INSERT OR REPLACE INTO ") + table + "(run_id, key, value) VALUES(?, ?, ?)";
      Statement kv(*statements_, sql);
      for (const auto& [k, v] : *kvs) {
        kv.Bind(1, run.id).Bind(2, k).Bind(3, v);
        if (kv.Step() != SQLITE_DONE) return Error(std::string("cannot record ") + table);
        kv.Reset();
      }
    }
    return Status::Ok();
  }

  Status Migrate() {
    TB_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
    Status s = MigrateLocked();
    if (!s.ok()) {
      (void)Exec("ROLLBACK");  // the error that made it roll back is the one returned
      return s;
    }
    return Exec("COMMIT");
  }

  Status MigrateLocked() {
    TB_RETURN_IF_ERROR(
        Exec("CREATE TABLE IF NOT EXISTS trainbench_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)"));
    // Read again under the lock: another process may have migrated the store meanwhile.
    int version = StoredSchemaVersion();  // its statement is given back before DROP runs
    TB_RETURN_IF_ERROR(CheckSchemaVersion(version, path_));
    std::vector<std::string> migrations = Migrations(Dialect::kSqlite);
    for (int v = version; v < kSchemaVersion; ++v)
      TB_RETURN_IF_ERROR(Exec(migrations[static_cast<size_t>(v)].c_str()));
    Statement set(*statements_,
                  "INSERT OR REPLACE INTO trainbench_meta(key, value) VALUES('schema_version', ?)");
    set.Bind(1, std::to_string(kSchemaVersion));
    if (set.Step() != SQLITE_DONE) return Error("cannot record schema version");
    return Status::Ok();
  }

  Status Exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err != nullptr ? err : "unknown error";
      sqlite3_free(err);
      return Status::IoError(path_ + ": " + msg);
    }
    return Status::Ok();
  }

  Status Error(const std::string& what) const {
    return Status::IoError(what + " in " + path_ + ": " + sqlite3_errmsg(db_));
  }

  Status NotAStore(const std::string& why) const {
    return Status::InvalidArgument(path_ + " is not a trainbench store (" + why +
                                   "); pass another file with --store or TRAINBENCH_STORE");
  }

  std::mutex mu_;
  sqlite3* db_;
  std::string path_;
  std::unique_ptr<StatementCache> statements_;  // of db_
  size_t page_size_ = 4096;
};

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path) {
  std::string absolute = path;
  if (!absolute.empty() && absolute[0] != '/') {
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) != nullptr) absolute = std::string(cwd) + "/" + path;
  }
  std::string dir = DirName(absolute);
  if (access(dir.c_str(), W_OK) != 0) {
    return Status::InvalidArgument("cannot write the store " + absolute + ": directory " + dir +
                                   (errno == ENOENT ? " does not exist" : " is not writable") +
                                   "; pass a writable location with --store or TRAINBENCH_STORE");
  }
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(absolute.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close_v2(db);
    return Status::IoError("cannot open the store " + absolute + ": " + msg +
                           "; pass a writable location with --store or TRAINBENCH_STORE");
  }
  auto store = std::make_unique<SqliteStore>(db, absolute);
  TB_RETURN_IF_ERROR(store->Initialize());
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace tb
