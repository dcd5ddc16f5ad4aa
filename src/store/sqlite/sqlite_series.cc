// SqliteStore's series: chunks, their summaries and overviews, the journal.
#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "base/strings.h"
#include "store/format/chunk_summary.h"
#include "store/sqlite/page_packing.h"
#include "store/sqlite/sqlite_store_impl.h"
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

}  // namespace

Status SqliteStore::RepackOverview(const std::string& run_id) {
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

Status SqliteStore::BeginOverview(int64_t series_id, int64_t before_ms) {
  Statement rows(*statements_, ChunkSelect(ChunkPart::kData, "= ?", {"?", "?"}));
  rows.Bind(1, series_id).Bind(2, std::numeric_limits<int64_t>::min()).Bind(3, before_ms - 1);
  std::string block;
  int64_t points = 0;
  std::vector<Point> decoded;
  int rc;
  while ((rc = rows.Step()) == SQLITE_ROW) {
    ChunkRecord c = ChunkFromRow(rows, ChunkPart::kData);
    if (!c.sealed || !SoundChunk(c)) continue;
    decoded.clear();
    // A chunk that does not decode leaves the overview short (never the points unwritten).
    if (!DecodeChunk(c.data, decoded, c.times).ok()) return Status::Ok();
    c.summary = EncodeSummary(decoded);
    block += OverviewSegment(c);
    points += c.count;
  }
  if (rc != SQLITE_DONE) return Error("cannot read the chunks of series " + std::to_string(series_id));
  if (points == 0) return Status::Ok();
  Statement put(*statements_,
                "INSERT INTO series_overview(series_id, block, points, data) VALUES(?, 0, ?, ?) "
                "ON CONFLICT(series_id, block) DO UPDATE SET points = excluded.points, data = excluded.data");
  put.Bind(1, series_id).Bind(2, points).BindBlob(3, block);
  if (put.Step() != SQLITE_DONE)
    return Error("cannot write the overview of series " + std::to_string(series_id));
  return Status::Ok();
}

Result<int64_t> SqliteStore::AppendJournal(const std::string& run_id, const std::string& data) {
  std::lock_guard lock(mu_);
  Statement st(*statements_, "INSERT INTO journal(run_id, data) VALUES(?, ?)");
  st.Bind(1, run_id).BindBlob(2, data);
  if (st.Step() != SQLITE_DONE) return Error("cannot write samples");
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

Result<std::vector<JournalEntry>> SqliteStore::ReadJournal(int64_t series_id) {
  std::lock_guard lock(mu_);
  Statement st(*statements_,
               "SELECT j.id, j.data FROM journal j JOIN series s ON s.run_id = j.run_id "
               "WHERE s.id = ? ORDER BY j.id");
  st.Bind(1, series_id);
  return Rows<JournalEntry>(st, "cannot read samples", [&](Statement& row) {
    return JournalEntry{row.Int(0), row.Text(1)};
  });
}

Result<std::vector<std::pair<std::string, JournalEntry>>> SqliteStore::ReadJournalsOfRuns(
    const std::vector<std::string>& run_ids) {
  std::lock_guard lock(mu_);
  Statement st(*statements_,
               "SELECT run_id, id, data FROM journal WHERE run_id IN (SELECT value FROM json_each(?)) "
               "ORDER BY run_id, id");
  st.Bind(1, nlohmann::json(run_ids).dump());
  return Rows<std::pair<std::string, JournalEntry>>(st, "cannot read samples", [&](Statement& row) {
    return std::pair<std::string, JournalEntry>(row.Text(0), JournalEntry{row.Int(1), row.Text(2)});
  });
}

Result<int64_t> SqliteStore::EnsureSeries(const std::string& run_id, const std::string& metric,
                                          const std::string& labels) {
  std::lock_guard lock(mu_);
  Statement insert(*statements_, "INSERT OR IGNORE INTO series(run_id, metric, labels) VALUES(?, ?, ?)");
  insert.Bind(1, run_id).Bind(2, metric).Bind(3, labels);
  if (insert.Step() != SQLITE_DONE) return Error("cannot create series " + metric);
  Statement get(*statements_, "SELECT id FROM series WHERE run_id = ? AND metric = ? AND labels = ?");
  get.Bind(1, run_id).Bind(2, metric).Bind(3, labels);
  if (get.Step() != SQLITE_ROW) return Error("cannot read series " + metric);
  return get.Int(0);
}

Status SqliteStore::WriteChunks(ChunkBatch& batch) {
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

Result<std::vector<SeriesInfo>> SqliteStore::ListSeriesOfRuns(const std::vector<std::string>& run_ids) {
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

Result<std::vector<SeriesTotals>> SqliteStore::ListSeriesTotalsOfRuns(
    const std::vector<std::string>& run_ids) {
  std::lock_guard lock(mu_);
  if (run_ids.size() == 1) {
    Statement st(*statements_, SeriesTotalsSelect(" = ?1"));
    st.Bind(1, run_ids[0]);
    return Rows<SeriesTotals>(st, "cannot read series totals",
                              [](Statement& row) { return SeriesTotalsFromRow(row); });
  }
  // Many runs: their series' sealed figures, then the provisional chunks of the whole store
  // (a running run's newest, few) added here: matching those to 300,000 series in SQL took
  // longer than reading the series.
  Statement st(*statements_, SeriesTotalsSelect(" IN (SELECT value FROM json_each(?1))", false));
  st.Bind(1, nlohmann::json(run_ids).dump());
  Result<std::vector<SeriesTotals>> totals = Rows<SeriesTotals>(
      st, "cannot read series totals", [](Statement& row) { return SeriesTotalsFromRow(row); });
  if (!totals.ok()) return totals;
  std::unordered_map<int64_t, SeriesTotals*> by_id;
  for (SeriesTotals& t : *totals) by_id.emplace(t.series.id, &t);
  Statement provisional(*statements_,
                        "SELECT series_id, sum(count), sum(sum), min(min), max(max) FROM chunks "
                        "WHERE sealed = 0 GROUP BY series_id");
  int rc;
  while ((rc = provisional.Step()) == SQLITE_ROW) {
    auto it = by_id.find(provisional.Int(0));
    if (it == by_id.end()) continue;
    auto optional = [&](int col) {
      return provisional.IsNull(col) ? std::nullopt : std::optional(provisional.Double(col));
    };
    it->second->Add(provisional.Int(1), provisional.IsNull(2) ? 0 : provisional.Double(2), optional(3),
                    optional(4));
  }
  if (rc != SQLITE_DONE) return Error("cannot read series totals");
  return totals;
}

Result<std::vector<ChunkRecord>> SqliteStore::ReadChunks(const ChunkQuery& q) {
  if (q.chunk) return ChunkById(*q.chunk);
  if (q.first_ms && q.reaching_ms)
    return Status::InvalidArgument("a chunk read narrows by first_ms or reaching_ms");
  std::lock_guard lock(mu_);
  bool one = q.series.size() == 1;
  Statement st(*statements_, ChunkSelect(q.part, one ? "= ?1" : "IN (SELECT value FROM json_each(?1))",
                                         q.first_ms ? std::pair<const char*, const char*>{"?2", "?3"}
                                                    : std::pair<const char*, const char*>{nullptr, nullptr},
                                         q.reaching_ms ? "?2" : nullptr));
  if (one) {
    st.Bind(1, q.series[0]);
  } else {
    st.Bind(1, nlohmann::json(q.series).dump());
  }
  if (q.first_ms) {
    st.Bind(2, q.first_ms->first);
    st.Bind(3, q.first_ms->second);
  }
  if (q.reaching_ms) st.Bind(2, *q.reaching_ms);
  return SoundChunks(Rows<ChunkRecord>(st, "cannot read samples",
                                       [&](Statement& row) { return ChunkFromRow(row, q.part); }));
}

Result<std::vector<SeriesOverview>> SqliteStore::ReadSeriesOverviews(const std::vector<int64_t>& series_ids,
                                                                     int64_t min_points, int64_t max_points) {
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

Result<std::vector<ChunkRecord>> SqliteStore::ChunkById(int64_t chunk_id) {
  std::lock_guard lock(mu_);
  Statement st(*statements_, ChunkDataSelect("?"));
  st.Bind(1, chunk_id);
  if (st.Step() != SQLITE_ROW) return Status::NotFound("no chunk " + std::to_string(chunk_id));
  ChunkRecord c;
  c.id = chunk_id;
  c.data = st.Text(0);
  if (!st.IsNull(1)) c.times = st.Text(1);
  return std::vector<ChunkRecord>{std::move(c)};
}

}  // namespace tb
