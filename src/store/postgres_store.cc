#include "store/postgres_store.h"

#include <sys/random.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "base/strings.h"
#include "base/time.h"
#include "store/pg_link.h"
#include "store/schema.h"
#include "store/store_rows.h"

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

constexpr int64_t kInlineArtifactBytes = int64_t{8} << 20;

int64_t RandomId() {
  uint64_t v = 0;
  while (getrandom(&v, sizeof v, 0) != sizeof v) {
  }
  return static_cast<int64_t>(v >> 1);
}

// A text[] literal of `items`, each quoted, a quote or backslash in one escaped: {"a","b\"c"}.
std::string TextArray(const std::vector<std::string>& items) {
  std::string out = "{";
  for (const std::string& item : items) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (char c : item) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

// A bigint[] literal of `ids`: {1,2,3}.
std::string BigintArray(const std::vector<int64_t>& ids) {
  std::string out = "{";
  for (int64_t id : ids) out += (out.size() > 1 ? "," : "") + std::to_string(id);
  return out + "}";
}

// Each row made into a T.
template <typename T, typename Make>
std::vector<T> Collect(const pg::Rows& rows, Make make) {
  std::vector<T> out;
  out.reserve(static_cast<size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) out.push_back(make(i));
  return out;
}

class PostgresStore : public Store {
 public:
  PostgresStore(const std::string& uri, PostgresOptions options)
      : options_(std::move(options)), link_(uri, options_.spool_directory, Migrations(Dialect::kPostgres)) {}

  Status Initialize() { return link_.Open(); }

  std::string Describe() const override { return link_.Describe(); }

  Result<std::string> ArtifactDirectory(const std::string& run_id) override {
    TB_RETURN_IF_ERROR(CheckRunId(run_id));
    std::error_code ec;
    fs::path dir = fs::path(options_.artifact_root) / run_id;
    fs::create_directories(dir, ec);
    if (ec) return Status::IoError("cannot create artifact directory " + dir.string() + ": " + ec.message());
    return dir.string();
  }

  Result<int64_t> EnsureExperiment(const std::string& name) override {
    TB_RETURN_IF_ERROR(CheckExperimentName(name));
    int64_t id = HashId("experiment\n" + name);
    TB_RETURN_IF_ERROR(
        Write({{"INSERT INTO experiments(id, name, created_ms) VALUES($1, $2, $3) ON CONFLICT DO NOTHING",
                {Int(id), Text(name), Int(WallMillis())}}}));
    // A renamed experiment keeps the id of its first name; while the server is away, the
    // name's own id (what the spooled insert gives it).
    Result<pg::Rows> rows = Query({"SELECT id FROM experiments WHERE name = $1", {Text(name)}});
    if (rows.ok() && rows->size() == 1) return rows->Int(0, 0);
    return id;
  }

  Status CreateRun(const RunRecord& run) override {
    TB_RETURN_IF_ERROR(CheckRunId(run.id));
    std::vector<Stmt> batch = {
        {"INSERT INTO experiments(id, name, created_ms) VALUES($1, $2, $3) ON CONFLICT DO NOTHING",
         {Int(HashId("experiment\n" + run.experiment)), Text(run.experiment), Int(WallMillis())}},
        {"INSERT INTO runs(id, experiment_id, workload, name, command, working_directory, host, "
         "supervisor_pid, "
         "start_ms, end_ms, status, exit_code, signal, reason, listeners, interval_ms, devices) "
         "VALUES($1, (SELECT id FROM experiments WHERE name = $2), $3, $4, $5, $6, $7, $8, $9, $10, $11, "
         "$12, "
         "$13, $14, $15, $16, $17) ON CONFLICT DO NOTHING",
         // By name: an experiment renamed keeps the id its first name gave it.
         {Text(run.id), Text(run.experiment), Text(run.workload), Text(run.name), Text(run.command),
          Text(run.working_directory), Text(run.host), Int(run.supervisor_pid), Int(run.start_ms),
          Int(run.end_ms), Text(run.status), OptInt(run.exit_code), OptInt(run.signal), Text(run.reason),
          Text(run.listeners), Int(run.interval_ms), Text(run.devices)}},
    };
    for (const auto& [k, v] : run.params) batch.push_back(InsertParam(run.id, k, v));
    for (const auto& [k, v] : run.tags) batch.push_back(UpsertTag(run.id, k, v));
    std::vector<int64_t> changed;
    TB_RETURN_IF_ERROR(Write(batch, &changed));
    if (changed.size() > 1 && changed[1] == 0)
      return Status::InvalidArgument("run " + run.id + " exists already");
    return Status::Ok();
  }

  Status FinishRun(const std::string& run_id, int64_t end_ms, const std::string& status,
                   std::optional<int> exit_code, std::optional<int> signal,
                   const std::string& reason) override {
    return Write(
        {{"UPDATE runs SET end_ms = $1, status = $2, exit_code = $3, signal = $4, reason = $5 WHERE id = $6",
          {Int(end_ms), Text(status), OptInt(exit_code), OptInt(signal), Text(reason), Text(run_id)}}});
  }

  Result<int64_t> EnsureSeries(const std::string& run_id, const std::string& metric,
                               const std::string& labels) override {
    int64_t id = HashId(run_id + "\n" + metric + "\n" + labels);
    TB_RETURN_IF_ERROR(Write(
        {{"INSERT INTO series(id, run_id, metric, labels) VALUES($1, $2, $3, $4) ON CONFLICT DO NOTHING",
          {Int(id), Text(run_id), Text(metric), Text(labels)}}}));
    return id;
  }

  Result<int64_t> AppendJournal(const std::string& run_id, const std::string& data) override {
    int64_t id = RandomId();
    TB_RETURN_IF_ERROR(
        Write({{"INSERT INTO journal(id, run_id, data) VALUES($1, $2, $3) ON CONFLICT DO NOTHING",
                {Int(id), Text(run_id), Bytes(data)}}}));
    return id;
  }

  Status WriteChunks(ChunkBatch& batch) override {
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
      stmts.push_back(
          {std::move(insert),
           {Int(c.id), Int(c.series_id), Int(c.first_ms), Int(c.last_ms), Int(c.count), Real(c.min),
            Real(c.max), Real(c.sum), Int(c.sealed ? 1 : 0), Bytes(c.data), OptBytes(""),
            OptInt(c.times_series != 0 ? std::optional(c.times_series) : std::nullopt)}});
      if (c.sealed) stmts.back().params.push_back(Bytes(OverviewSegment(c)));
    }
    for (int64_t id : batch.deletes)
      stmts.push_back({"DELETE FROM chunks WHERE id = $1 AND sealed = 0", {Int(id)}});
    for (int64_t id : batch.journal_deletes)
      stmts.push_back({"DELETE FROM journal WHERE id = $1", {Int(id)}});
    return Write(stmts);
  }

  Status LogParams(const std::string& run_id, const KeyValues& params) override {
    // A value changed is refused when the database can say so; while spooling, the first wins.
    if (link_.Reachable().ok()) {
      for (const auto& [k, v] : params) {
        Result<pg::Rows> rows =
            Query({"SELECT value FROM params WHERE run_id = $1 AND key = $2", {Text(run_id), Text(k)}});
        if (!rows.ok()) break;
        if (rows->size() > 0) TB_RETURN_IF_ERROR(CheckParamUnchanged(run_id, k, rows->Str(0, 0), v));
      }
    }
    std::vector<Stmt> batch;
    for (const auto& [k, v] : params) batch.push_back(InsertParam(run_id, k, v));
    return Write(batch);
  }

  Status SetTags(const std::string& run_id, const KeyValues& tags) override {
    std::vector<Stmt> batch;
    for (const auto& [k, v] : tags) batch.push_back(UpsertTag(run_id, k, v));
    return Write(batch);
  }

  Status DeleteTag(const std::string& run_id, const std::string& key) override {
    std::vector<int64_t> changed;
    TB_RETURN_IF_ERROR(
        Write({{"DELETE FROM tags WHERE run_id = $1 AND key = $2", {Text(run_id), Text(key)}}}, &changed));
    if (!changed.empty() && changed[0] == 0) {
      return Status::NotFound("No tag with name: " + key + " in run with id " + run_id);
    }
    return Status::Ok();
  }

  Status RenameRun(const std::string& run_id, const std::string& name) override {
    return Write({{"UPDATE runs SET name = $1 WHERE id = $2", {Text(name), Text(run_id)}}});
  }

  Status ChangeExperiment(int64_t id, const ExperimentChange& change) override {
    Batch batch;
    if (change.name) {
      TB_RETURN_IF_ERROR(CheckExperimentName(*change.name));
      Result<pg::Rows> taken =
          Query({"SELECT id FROM experiments WHERE name = $1 AND id <> $2", {Text(*change.name), Int(id)}});
      if (taken.ok() && taken->size() > 0)
        return Status::InvalidArgument("an experiment named " + *change.name + " exists");
      batch.push_back({"UPDATE experiments SET name = $1 WHERE id = $2", {Text(*change.name), Int(id)}});
    }
    for (const auto& [k, v] : change.set_tags) {
      batch.push_back(
          {"INSERT INTO experiment_tags(experiment_id, key, value) VALUES($1, $2, $3) "
           "ON CONFLICT (experiment_id, key) DO UPDATE SET value = EXCLUDED.value",
           {Int(id), Text(k), Text(v)}});
    }
    for (const std::string& k : change.delete_tags) {
      batch.push_back(
          {"DELETE FROM experiment_tags WHERE experiment_id = $1 AND key = $2", {Int(id), Text(k)}});
    }
    return batch.empty() ? Status::Ok() : Write(batch);
  }

  Status AddEvent(const EventRecord& e) override {
    return Write(
        {{"INSERT INTO events(id, run_id, time_ms, kind, label) VALUES($1, $2, $3, $4, $5) "
          "ON CONFLICT DO NOTHING",
          {Int(RandomId()), Text(e.run_id), Int(e.time_ms), Text(e.kind), Text(e.label)}}});
  }

  Status PutArtifact(const ArtifactRecord& a) override {
    std::string content = a.content;
    std::string path = a.path;
    int64_t size = a.size;
    // A small file goes into the database, so that every machine can read it; a large one
    // (an Nsight report) stays where it is, best in the shared TRAINBENCH_ARTIFACT_DIR.
    if (!path.empty()) {
      std::error_code ec;
      auto file_size = static_cast<int64_t>(fs::file_size(path, ec));
      if (!ec && file_size <= kInlineArtifactBytes) {
        std::ifstream in(path, std::ios::binary);
        content.assign(std::istreambuf_iterator<char>(in), {});
        size = static_cast<int64_t>(content.size());
        path.clear();
      } else if (!ec) {
        size = file_size;
      }
    }
    return Write(
        {{"INSERT INTO artifacts(run_id, name, size, content, path) VALUES($1, $2, $3, $4, $5) "
          "ON CONFLICT (run_id, name) DO UPDATE SET size = EXCLUDED.size, content = EXCLUDED.content, "
          "path = EXCLUDED.path",
          {Text(a.run_id), Text(a.name), Int(size), Bytes(content), Text(path)}}});
  }

  Result<std::vector<ExperimentInfo>> ListExperiments() override {
    Result<pg::Rows> rows =
        Query({"SELECT id, name, created_ms FROM experiments ORDER BY created_ms, id", {}});
    if (!rows.ok()) return rows.status();
    Result<std::vector<ExperimentInfo>> all = Collect<ExperimentInfo>(*rows, [&](int i) {
      return ExperimentInfo{rows->Int(i, 0), rows->Str(i, 1), rows->Int(i, 2), {}};
    });
    if (!all.ok()) return all;
    Result<pg::Rows> tags = Query({"SELECT experiment_id, key, value FROM experiment_tags ORDER BY seq", {}});
    if (!tags.ok()) return tags.status();
    for (int i = 0; i < tags->size(); ++i) {
      for (ExperimentInfo& e : *all) {
        if (e.id == tags->Int(i, 0)) e.tags.emplace_back(tags->Str(i, 1), tags->Str(i, 2));
      }
    }
    return all;
  }

  Result<std::vector<RunRecord>> ListRuns(const std::string& experiment) override {
    if (experiment.empty()) return ReadRuns({std::string(kRunSelect) + " ORDER BY r.start_ms, r.id", {}});
    return ReadRuns(
        {std::string(kRunSelect) + " WHERE e.name = $1 ORDER BY r.start_ms, r.id", {Text(experiment)}});
  }

  Result<RunRecord> FindRun(const std::string& key) override {
    if (IsWholeRunId(key)) {
      Result<std::vector<RunRecord>> exact =
          ReadRuns({std::string(kRunSelect) + " WHERE r.id = $1", {Text(key)}});
      if (!exact.ok()) return exact.status();
      if (!exact->empty()) return std::move(exact->front());
    }
    Result<std::vector<RunRecord>> runs =
        ReadRuns({std::string(kRunSelect) +
                      " WHERE r.id = $1 OR (length($1) >= 4 AND left(r.id, length($1)) = $1) OR r.name = $1 "
                      "ORDER BY r.start_ms DESC",
                  {Text(key)}});
    if (!runs.ok()) return runs.status();
    return ChooseRun(key, std::move(*runs), Describe());
  }

  Result<std::vector<RunRecord>> FindRunsById(const std::vector<std::string>& ids) override {
    Result<std::vector<RunRecord>> found =
        ReadRuns({std::string(kRunSelect) + " WHERE r.id = ANY($1::text[])", {Text(TextArray(ids))}});
    if (!found.ok()) return found.status();
    return InOrderOfIds(ids, std::move(*found));
  }

  Result<std::vector<SeriesInfo>> ListSeriesOfRuns(const std::vector<std::string>& run_ids) override {
    Result<pg::Rows> rows =
        Query({"SELECT id, run_id, metric, labels FROM series WHERE run_id = ANY($1::text[]) "
               "ORDER BY run_id, metric, labels",
               {Text(TextArray(run_ids))}});
    if (!rows.ok()) return rows.status();
    return Collect<SeriesInfo>(*rows, [&](int i) {
      return SeriesInfo{rows->Int(i, 0), rows->Str(i, 1), rows->Str(i, 2), rows->Str(i, 3)};
    });
  }

  Result<std::vector<SeriesTotals>> ListSeriesTotals(const std::string& run_id) override {
    Result<pg::Rows> rows = Query({SeriesTotalsSelect("$1"), {Text(run_id)}});
    if (!rows.ok()) return rows.status();
    return Collect<SeriesTotals>(*rows, [&](int i) { return SeriesTotalsFromRow(pg::Row{*rows, i}); });
  }

  Result<std::vector<ChunkRecord>> ReadChunksOfSeries(const std::vector<int64_t>& series_ids) override {
    if (series_ids.size() == 1) return Chunks(series_ids[0], ChunkBlobs::kData);
    Result<pg::Rows> rows =
        Query({ChunkSelect(ChunkBlobs::kData, "= ANY($1::bigint[])"), {Text(BigintArray(series_ids))}});
    if (!rows.ok()) return rows.status();
    return Collect<ChunkRecord>(*rows, [&](int i) {
      return ChunkFromRow(pg::Row{*rows, i}, ChunkBlobs::kData);
    });
  }
  Result<std::vector<ChunkRecord>> ReadChunksReaching(const std::vector<int64_t>& series_ids,
                                                      int64_t since_ms) override {
    Result<pg::Rows> rows =
        Query({ChunkSelect(ChunkBlobs::kData, "= ANY($1::bigint[])", {nullptr, nullptr}, "$2"),
               {Text(BigintArray(series_ids)), Int(since_ms)}});
    if (!rows.ok()) return rows.status();
    return Collect<ChunkRecord>(*rows, [&](int i) {
      return ChunkFromRow(pg::Row{*rows, i}, ChunkBlobs::kData);
    });
  }
  Result<std::vector<ChunkRecord>> ListChunkInfo(int64_t series_id) override {
    return Chunks(series_id, ChunkBlobs::kNone);
  }
  Result<std::vector<ChunkRecord>> ReadChunkSummaries(int64_t series_id) override {
    return Chunks(series_id, ChunkBlobs::kSummary);
  }

  Result<std::vector<ChunkRecord>> ReadChunkRange(int64_t series_id, int64_t first_ms_from,
                                                  int64_t first_ms_to) override {
    Result<pg::Rows> rows = Query({ChunkSelect(ChunkBlobs::kData, "= $1", {"$2", "$3"}),
                                   {Int(series_id), Int(first_ms_from), Int(first_ms_to)}});
    if (!rows.ok()) return rows.status();
    return Collect<ChunkRecord>(*rows, [&](int i) {
      return ChunkFromRow(pg::Row{*rows, i}, ChunkBlobs::kData);
    });
  }

  Result<std::vector<SeriesOverview>> ReadSeriesOverviews(const std::vector<int64_t>& series_ids,
                                                          int64_t min_points, int64_t max_points) override {
    Result<pg::Rows> rows = Query({OverviewSelect("= ANY($1::bigint[])", "$2", "$3"),
                                   {Text(BigintArray(series_ids)), Int(min_points), Int(max_points)}});
    if (!rows.ok()) return rows.status();
    OverviewRows overviews;
    for (int i = 0; i < rows->size(); ++i) overviews.Add(pg::Row{*rows, i});
    return overviews.Take(series_ids);
  }

  Result<ChunkRecord> ReadChunkData(int64_t chunk_id) override {
    Result<pg::Rows> rows = Query({ChunkDataSelect("$1"), {Int(chunk_id)}});
    if (!rows.ok()) return rows.status();
    if (rows->size() == 0) return Status::NotFound("no chunk " + std::to_string(chunk_id));
    ChunkRecord c;
    c.id = chunk_id;
    c.data = rows->Str(0, 0);
    if (!rows->IsNull(0, 1)) c.times = rows->Str(0, 1);
    return c;
  }

  Result<std::vector<JournalEntry>> ReadJournal(int64_t series_id) override {
    Result<pg::Rows> rows =
        Query({"SELECT j.id, j.data FROM journal j JOIN series s ON s.run_id = j.run_id "
               "WHERE s.id = $1 ORDER BY j.seq",
               {Int(series_id)}});
    if (!rows.ok()) return rows.status();
    return Collect<JournalEntry>(*rows, [&](int i) {
      return JournalEntry{rows->Int(i, 0), rows->Str(i, 1)};
    });
  }

  Result<std::vector<std::pair<std::string, JournalEntry>>> ReadJournalsOfRuns(
      const std::vector<std::string>& run_ids) override {
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

  Result<std::vector<EventRecord>> ListEvents(const std::string& run_id) override {
    Result<pg::Rows> rows = Query(
        {"SELECT time_ms, kind, label FROM events WHERE run_id = $1 ORDER BY time_ms, seq", {Text(run_id)}});
    if (!rows.ok()) return rows.status();
    return Collect<EventRecord>(*rows, [&](int i) {
      return EventRecord{run_id, rows->Int(i, 0), rows->Str(i, 1), rows->Str(i, 2)};
    });
  }

  Result<std::vector<ArtifactRecord>> ListArtifacts(const std::string& run_id) override {
    Result<pg::Rows> rows =
        Query({"SELECT name, size, path FROM artifacts WHERE run_id = $1 ORDER BY name", {Text(run_id)}});
    if (!rows.ok()) return rows.status();
    return Collect<ArtifactRecord>(*rows, [&](int i) {
      return ArtifactRecord{run_id, rows->Str(i, 0), rows->Int(i, 1), "", rows->Str(i, 2)};
    });
  }

  Result<ArtifactRecord> GetArtifact(const std::string& run_id, const std::string& name) override {
    Result<pg::Rows> rows =
        Query({"SELECT size, content, path FROM artifacts WHERE run_id = $1 AND name = $2",
               {Text(run_id), Text(name)}});
    if (!rows.ok()) return rows.status();
    if (rows->size() == 0) return Status::NotFound("run " + run_id + " has no artifact " + name);
    return ArtifactRecord{run_id, name, rows->Int(0, 0), rows->Str(0, 1), rows->Str(0, 2)};
  }

 private:
  static Stmt InsertParam(const std::string& run_id, const std::string& k, const std::string& v) {
    return {"INSERT INTO params(run_id, key, value) VALUES($1, $2, $3) ON CONFLICT DO NOTHING",
            {Text(run_id), Text(k), Text(v)}};
  }
  static Stmt UpsertTag(const std::string& run_id, const std::string& k, const std::string& v) {
    return {
        "INSERT INTO tags(run_id, key, value) VALUES($1, $2, $3) "
        "ON CONFLICT (run_id, key) DO UPDATE SET value = EXCLUDED.value",
        {Text(run_id), Text(k), Text(v)}};
  }

  Result<std::vector<ChunkRecord>> Chunks(int64_t series_id, ChunkBlobs blobs) {
    Result<pg::Rows> rows = Query({ChunkSelect(blobs, "= $1"), {Int(series_id)}});
    if (!rows.ok()) return rows.status();
    std::vector<ChunkRecord> out;
    out.reserve(static_cast<size_t>(rows->size()));
    for (int i = 0; i < rows->size(); ++i) out.push_back(ChunkFromRow(pg::Row{*rows, i}, blobs));
    return out;
  }

  Result<std::vector<RunRecord>> ReadRuns(const Stmt& select) {
    Result<pg::Rows> rows = Query(select);
    if (!rows.ok()) return rows.status();
    std::vector<RunRecord> runs;
    std::map<std::string, size_t> index;
    for (int i = 0; i < rows->size(); ++i) {
      RunRecord r = RunFromRow(pg::Row{*rows, i});
      index[r.id] = runs.size();
      runs.push_back(std::move(r));
    }
    if (runs.empty()) return runs;
    // Params and tags of all of them in one query.
    std::vector<std::string> ids;
    ids.reserve(runs.size());
    for (const RunRecord& r : runs) ids.push_back(r.id);
    Result<pg::Rows> kv =
        Query({"SELECT run_id, key, value, 0::bigint AS kind, seq FROM params WHERE run_id = ANY($1::text[]) "
               "UNION ALL SELECT run_id, key, value, 1::bigint, seq FROM tags WHERE run_id = ANY($1::text[]) "
               "ORDER BY kind, seq",
               {Text(TextArray(ids))}});
    if (!kv.ok()) return kv.status();
    for (int i = 0; i < kv->size(); ++i) {
      RunRecord& r = runs[index[kv->Str(i, 0)]];
      (kv->Int(i, 3) == 0 ? r.params : r.tags).emplace_back(kv->Str(i, 1), kv->Str(i, 2));
    }
    return runs;
  }

  Result<pg::Rows> Query(const Stmt& s) { return link_.Query(s); }
  Status Write(const Batch& batch, std::vector<int64_t>* changed = nullptr) {
    return link_.Write(batch, changed);
  }

  PostgresOptions options_;
  pg::Link link_;
};

}  // namespace

Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& uri, const PostgresOptions& options) {
  auto store = std::make_unique<PostgresStore>(uri, options);
  TB_RETURN_IF_ERROR(store->Initialize());
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace tb
