// PostgresStore's series: chunks, their summaries, the journal.
#include <filesystem>
#include <map>

#include "base/strings.h"
#include "store/postgres/postgres_store_impl.h"

namespace tb {
namespace {

namespace fs = std::filesystem;
using pg::Batch;
using pg::Bytes;
using pg::HashId;
using pg::Int;
using pg::OptBytes;
using pg::OptInt;
using pg::Real;
using pg::Stmt;
using pg::Text;

}  // namespace

Result<int64_t> PostgresStore::EnsureSeries(const std::string& run_id, const std::string& metric,
                                            const std::string& labels) {
  int64_t id = HashId(run_id + "\n" + metric + "\n" + labels);
  TB_RETURN_IF_ERROR(
      Write({{"INSERT INTO series(id, run_id, metric, labels) VALUES($1, $2, $3, $4) ON CONFLICT DO NOTHING",
              {Int(id), Text(run_id), Text(metric), Text(labels)}}}));
  return id;
}

Result<int64_t> PostgresStore::AppendJournal(const std::string& run_id, const std::string& data) {
  int64_t id = RandomId();
  TB_RETURN_IF_ERROR(
      Write({{"INSERT INTO journal(id, run_id, data) VALUES($1, $2, $3) ON CONFLICT DO NOTHING",
              {Int(id), Text(run_id), Bytes(data)}}}));
  return id;
}

Status PostgresStore::WriteChunks(ChunkBatch& batch) {
  std::vector<Stmt> stmts;
  for (const SharedTimes& t : batch.times) {
    stmts.push_back(
        {"INSERT INTO chunk_times(series_id, first_ms, data) VALUES($1, $2, $3) ON CONFLICT DO NOTHING",
         {Int(t.series_id), Int(t.first_ms), Bytes(t.data)}});
  }
  for (ChunkRecord& c : batch.inserts) {
    if (c.id == 0) c.id = RandomId();  // a migration sets its own, repeatable ids
    std::string insert =
        "INSERT INTO chunks(id, series_id, first_ms, last_ms, count, min, max, sum, sealed, data, summary, "
        "times_series) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING";
    // A sealed chunk adds to its series' totals (schema 6) only when it was inserted, so
    // a batch replayed from the spool after a lost answer counts it once.
    // Its summary goes into its series' overview (schema 7), not its row, in the block of the
    // points sealed before it: the statement's snapshot, before the update beside it.
    if (c.sealed) {
      insert.insert(0, "WITH added AS (");
      insert +=
          " RETURNING series_id, count, sum, min, max), overview AS (INSERT INTO "
          "series_overview(series_id, "
          "block, points, data) SELECT s.id, s.sealed_count / 65536, added.count, $13 FROM added JOIN "
          "series s "
          "ON s.id = added.series_id ON CONFLICT (series_id, block) DO UPDATE SET points = "
          "series_overview.points + EXCLUDED.points, data = series_overview.data || EXCLUDED.data)"
          " UPDATE series SET sealed_count = "
          "series.sealed_count + added.count, sealed_sum = series.sealed_sum + coalesce(added.sum, 0), "
          "sealed_min = LEAST(series.sealed_min, added.min), sealed_max = GREATEST(series.sealed_max, "
          "added.max) FROM added WHERE series.id = added.series_id";
    }
    stmts.push_back({std::move(insert),
                     {Int(c.id), Int(c.series_id), Int(c.first_ms), Int(c.last_ms), Int(c.count), Real(c.min),
                      Real(c.max), Real(c.sum), Int(c.sealed ? 1 : 0), Bytes(c.data), OptBytes(""),
                      OptInt(c.times_series != 0 ? std::optional(c.times_series) : std::nullopt)}});
    if (c.sealed) stmts.back().params.push_back(Bytes(OverviewSegment(c)));
  }
  for (int64_t id : batch.deletes)
    stmts.push_back({"DELETE FROM chunks WHERE id = $1 AND sealed = 0", {Int(id)}});
  for (int64_t id : batch.journal_deletes) stmts.push_back({"DELETE FROM journal WHERE id = $1", {Int(id)}});
  return Write(stmts);
}

Result<std::vector<SeriesInfo>> PostgresStore::ListSeriesOfRuns(const std::vector<std::string>& run_ids) {
  Result<pg::Rows> rows =
      Query({"SELECT id, run_id, metric, labels FROM series WHERE run_id = ANY($1::text[]) "
             "ORDER BY run_id, metric, labels",
             {Text(TextArray(run_ids))}});
  if (!rows.ok()) return rows.status();
  return Collect<SeriesInfo>(*rows, [&](int i) {
    return SeriesInfo{rows->Int(i, 0), rows->Str(i, 1), rows->Str(i, 2), rows->Str(i, 3)};
  });
}

Result<std::vector<SeriesTotals>> PostgresStore::ListSeriesTotalsOfRuns(
    const std::vector<std::string>& run_ids) {
  Result<pg::Rows> rows = Query({SeriesTotalsSelect(" = ANY($1::text[])"), {Text(TextArray(run_ids))}});
  if (!rows.ok()) return rows.status();
  return Collect<SeriesTotals>(*rows, [&](int i) { return SeriesTotalsFromRow(pg::Row{*rows, i}); });
}

Result<std::vector<ChunkRecord>> PostgresStore::ReadChunks(const ChunkQuery& q) {
  if (q.chunk) return ChunkById(*q.chunk);
  if (q.first_ms && q.reaching_ms)
    return Status::InvalidArgument("a chunk read narrows by first_ms or reaching_ms");
  bool one = q.series.size() == 1;
  pg::Stmt select{ChunkSelect(q.part, one ? "= $1" : "= ANY($1::bigint[])",
                              q.first_ms ? std::pair<const char*, const char*>{"$2", "$3"}
                                         : std::pair<const char*, const char*>{nullptr, nullptr},
                              q.reaching_ms ? "$2" : nullptr),
                  {one ? Int(q.series[0]) : Text(BigintArray(q.series))}};
  if (q.first_ms) {
    select.params.push_back(Int(q.first_ms->first));
    select.params.push_back(Int(q.first_ms->second));
  }
  if (q.reaching_ms) select.params.push_back(Int(*q.reaching_ms));
  Result<pg::Rows> rows = Query(select);
  if (!rows.ok()) return rows.status();
  return SoundChunks(Collect<ChunkRecord>(*rows, [&](int i) {
    return ChunkFromRow(pg::Row{*rows, i}, q.part);
  }));
}

Result<std::vector<SeriesOverview>> PostgresStore::ReadSeriesOverviews(const std::vector<int64_t>& series_ids,
                                                                       int64_t min_points,
                                                                       int64_t max_points) {
  Result<pg::Rows> rows = Query({OverviewSelect("= ANY($1::bigint[])", "$2", "$3"),
                                 {Text(BigintArray(series_ids)), Int(min_points), Int(max_points)}});
  if (!rows.ok()) return rows.status();
  OverviewRows overviews;
  for (int i = 0; i < rows->size(); ++i) overviews.Add(pg::Row{*rows, i});
  return overviews.Take(series_ids);
}

Result<std::vector<ChunkRecord>> PostgresStore::ChunkById(int64_t chunk_id) {
  Result<pg::Rows> rows = Query({ChunkDataSelect("$1"), {Int(chunk_id)}});
  if (!rows.ok()) return rows.status();
  if (rows->size() == 0) return Status::NotFound("no chunk " + std::to_string(chunk_id));
  ChunkRecord c;
  c.id = chunk_id;
  c.data = rows->Str(0, 0);
  if (!rows->IsNull(0, 1)) c.times = rows->Str(0, 1);
  return std::vector<ChunkRecord>{std::move(c)};
}

Result<std::vector<JournalEntry>> PostgresStore::ReadJournal(int64_t series_id) {
  Result<pg::Rows> rows =
      Query({"SELECT j.id, j.data FROM journal j JOIN series s ON s.run_id = j.run_id "
             "WHERE s.id = $1 ORDER BY j.seq",
             {Int(series_id)}});
  if (!rows.ok()) return rows.status();
  return Collect<JournalEntry>(*rows, [&](int i) { return JournalEntry{rows->Int(i, 0), rows->Str(i, 1)}; });
}

Result<std::vector<std::pair<std::string, JournalEntry>>> PostgresStore::ReadJournalsOfRuns(
    const std::vector<std::string>& run_ids) {
  Result<pg::Rows> rows =
      Query({"SELECT run_id, id, data FROM journal WHERE run_id = ANY($1::text[]) "
             "ORDER BY run_id, seq",
             {Text(TextArray(run_ids))}});
  if (!rows.ok()) return rows.status();
  return Collect<std::pair<std::string, JournalEntry>>(*rows, [&](int i) {
    return std::pair<std::string, JournalEntry>(rows->Str(i, 0),
                                                JournalEntry{rows->Int(i, 1), rows->Str(i, 2)});
  });
}

}  // namespace tb
