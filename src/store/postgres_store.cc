#include "store/postgres_store.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"
#include "store/pg_connection.h"
#include "store/pg_spool.h"
#include "store/sqlite_store.h"
#include "store/store_rows.h"

namespace tb {
namespace {

namespace fs = std::filesystem;
using pg::Batch;
using pg::Bytes;
using pg::Int;
using pg::OptInt;
using pg::Real;
using pg::Redacted;
using pg::Stmt;
using pg::Text;

// Migrations, in step with the SQLite store's (its number 3 only dropped an SQLite index).
const char* const kMigrations[] = {
    R"sql(
CREATE TABLE experiments(
  id BIGINT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_ms BIGINT NOT NULL);
CREATE TABLE runs(
  id TEXT PRIMARY KEY,
  experiment_id BIGINT NOT NULL REFERENCES experiments(id),
  workload TEXT NOT NULL DEFAULT '',
  name TEXT NOT NULL,
  command TEXT NOT NULL,
  working_directory TEXT NOT NULL DEFAULT '',
  host TEXT NOT NULL DEFAULT '',
  supervisor_pid BIGINT NOT NULL DEFAULT 0,
  start_ms BIGINT NOT NULL,
  end_ms BIGINT NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  exit_code BIGINT,
  signal BIGINT,
  reason TEXT NOT NULL DEFAULT '',
  listeners TEXT NOT NULL DEFAULT '',
  interval_ms BIGINT NOT NULL DEFAULT 0);
CREATE INDEX runs_by_experiment ON runs(experiment_id, start_ms);
CREATE TABLE params(
  run_id TEXT NOT NULL REFERENCES runs(id),
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  seq BIGSERIAL,
  PRIMARY KEY(run_id, key));
CREATE TABLE tags(
  run_id TEXT NOT NULL REFERENCES runs(id),
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  seq BIGSERIAL,
  PRIMARY KEY(run_id, key));
CREATE TABLE series(
  id BIGINT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs(id),
  metric TEXT NOT NULL,
  labels TEXT NOT NULL,
  UNIQUE(run_id, metric, labels));
CREATE TABLE chunks(
  id BIGINT PRIMARY KEY,
  series_id BIGINT NOT NULL REFERENCES series(id),
  first_ms BIGINT NOT NULL,
  last_ms BIGINT NOT NULL,
  count BIGINT NOT NULL,
  min DOUBLE PRECISION,
  max DOUBLE PRECISION,
  sum DOUBLE PRECISION,
  sealed BIGINT NOT NULL,
  data BYTEA NOT NULL);
CREATE INDEX chunks_by_series ON chunks(series_id, first_ms);
CREATE TABLE events(
  id BIGINT PRIMARY KEY,
  seq BIGSERIAL,
  run_id TEXT NOT NULL REFERENCES runs(id),
  time_ms BIGINT NOT NULL,
  kind TEXT NOT NULL,
  label TEXT NOT NULL);
CREATE INDEX events_by_run ON events(run_id, time_ms);
CREATE TABLE journal(
  id BIGINT PRIMARY KEY,
  seq BIGSERIAL,
  run_id TEXT NOT NULL REFERENCES runs(id),
  data BYTEA NOT NULL);
CREATE INDEX journal_by_run ON journal(run_id, seq);
CREATE TABLE artifacts(
  run_id TEXT NOT NULL REFERENCES runs(id),
  name TEXT NOT NULL,
  size BIGINT NOT NULL,
  content BYTEA,
  path TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(run_id, name));
)sql",
    "ALTER TABLE runs ADD COLUMN devices TEXT NOT NULL DEFAULT '';",
    "SELECT 1;",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion);

constexpr int64_t kInlineArtifactBytes = int64_t{8} << 20;

// 63 bits of a hash (FNV-1a, then mixed): the id of what a name identifies.
int64_t HashId(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return static_cast<int64_t>(h >> 1);
}

int64_t RandomId() {
  uint64_t v = 0;
  while (getrandom(&v, sizeof v, 0) != sizeof v) {
  }
  return static_cast<int64_t>(v >> 1);
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
  PostgresStore(std::string uri, PostgresOptions options)
      : uri_(std::move(uri)),
        options_(std::move(options)),
        spool_(options_.spool_directory + "/" + DatabaseKey()) {}
  ~PostgresStore() override {
    {
      std::lock_guard lock(wake_mu_);
      stop_ = true;
    }
    wake_.notify_all();
    if (reconnector_.joinable()) reconnector_.join();
    std::lock_guard lock(mu_);
    if (spool_.active()) {
      LogWarning("the database " + Redacted(uri_) +
                 " is still unreachable: what this run recorded meanwhile is in " + spool_.path() +
                 ", written by the next trainbench command that reaches the database");
    }
  }

  Status Initialize() {
    std::lock_guard lock(mu_);
    Status connected = ConnectLocked();
    if (!connected.ok()) {
      // A run still starts: it spools until the database answers.
      GoOfflineLocked(connected.message());
      return Status::Ok();
    }
    TB_RETURN_IF_ERROR(MigrateLocked());
    ReplayOrphansLocked();
    return Status::Ok();
  }

  // Whether the database answered when the store was opened (reads need it).
  Status Reachable() {
    std::lock_guard lock(mu_);
    if (!conn_) return Unreachable();
    return Status::Ok();
  }

  std::string Describe() const override { return Redacted(uri_); }

  Result<std::string> ArtifactDirectory(const std::string& run_id) override {
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
    return id;
  }

  Status CreateRun(const RunRecord& run) override {
    std::vector<Stmt> batch = {
        {"INSERT INTO experiments(id, name, created_ms) VALUES($1, $2, $3) ON CONFLICT DO NOTHING",
         {Int(HashId("experiment\n" + run.experiment)), Text(run.experiment), Int(WallMillis())}},
        {"INSERT INTO runs(id, experiment_id, workload, name, command, working_directory, host, "
         "supervisor_pid, "
         "start_ms, end_ms, status, exit_code, signal, reason, listeners, interval_ms, devices) "
         "VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) ON CONFLICT DO "
         "NOTHING",
         {Text(run.id), Int(HashId("experiment\n" + run.experiment)), Text(run.workload), Text(run.name),
          Text(run.command), Text(run.working_directory), Text(run.host), Int(run.supervisor_pid),
          Int(run.start_ms), Int(run.end_ms), Text(run.status), OptInt(run.exit_code), OptInt(run.signal),
          Text(run.reason), Text(run.listeners), Int(run.interval_ms), Text(run.devices)}},
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
    for (ChunkRecord& c : batch.inserts) {
      if (c.id == 0) c.id = RandomId();  // a migration sets its own, repeatable ids
      stmts.push_back(
          {"INSERT INTO chunks(id, series_id, first_ms, last_ms, count, min, max, sum, sealed, data) "
           "VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING",
           {Int(c.id), Int(c.series_id), Int(c.first_ms), Int(c.last_ms), Int(c.count), Real(c.min),
            Real(c.max), Real(c.sum), Int(c.sealed ? 1 : 0), Bytes(c.data)}});
    }
    for (int64_t id : batch.deletes)
      stmts.push_back({"DELETE FROM chunks WHERE id = $1 AND sealed = 0", {Int(id)}});
    for (int64_t id : batch.journal_deletes)
      stmts.push_back({"DELETE FROM journal WHERE id = $1", {Int(id)}});
    return Write(stmts);
  }

  Status LogParams(const std::string& run_id, const KeyValues& params) override {
    // A value changed is refused when the database can say so; while spooling, the first wins.
    if (Reachable().ok()) {
      for (const auto& [k, v] : params) {
        Result<pg::Rows> rows =
            Query({"SELECT value FROM params WHERE run_id = $1 AND key = $2", {Text(run_id), Text(k)}});
        if (!rows.ok()) break;
        if (rows->size() > 0 && rows->Str(0, 0) != v) {
          return Status::InvalidArgument(
              Concat({"Changing param values is not allowed. Param with key='", k,
                      "' was already logged with value='", rows->Str(0, 0), "' for run ID='", run_id,
                      "'. Attempted logging new value '", v, "'."}));
        }
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
    return Collect<ExperimentInfo>(*rows, [&](int i) {
      return ExperimentInfo{rows->Int(i, 0), rows->Str(i, 1), rows->Int(i, 2)};
    });
  }

  Result<std::vector<RunRecord>> ListRuns(const std::string& experiment) override {
    if (experiment.empty()) return ReadRuns({std::string(kRunSelect) + " ORDER BY r.start_ms, r.id", {}});
    return ReadRuns(
        {std::string(kRunSelect) + " WHERE e.name = $1 ORDER BY r.start_ms, r.id", {Text(experiment)}});
  }

  Result<RunRecord> FindRun(const std::string& key) override {
    // A full id: one index lookup (the serve API asks this for every run of a chart).
    if (key.size() == 32 && key.find_first_not_of("0123456789abcdef") == std::string::npos) {
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

  Result<std::vector<SeriesInfo>> ListSeries(const std::string& run_id) override {
    Result<pg::Rows> rows =
        Query({"SELECT id, run_id, metric, labels FROM series WHERE run_id = $1 ORDER BY metric, labels",
               {Text(run_id)}});
    if (!rows.ok()) return rows.status();
    return Collect<SeriesInfo>(*rows, [&](int i) {
      return SeriesInfo{rows->Int(i, 0), rows->Str(i, 1), rows->Str(i, 2), rows->Str(i, 3)};
    });
  }

  Result<std::vector<ChunkRecord>> ReadChunks(int64_t series_id) override { return Chunks(series_id, true); }
  Result<std::vector<ChunkRecord>> ListChunkInfo(int64_t series_id) override {
    return Chunks(series_id, false);
  }

  Result<std::string> ReadChunkData(int64_t chunk_id) override {
    Result<pg::Rows> rows = Query({"SELECT data FROM chunks WHERE id = $1", {Int(chunk_id)}});
    if (!rows.ok()) return rows.status();
    if (rows->size() == 0) return Status::NotFound("no chunk " + std::to_string(chunk_id));
    return rows->Str(0, 0);
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

  Result<std::vector<ChunkRecord>> Chunks(int64_t series_id, bool with_data) {
    Result<pg::Rows> rows = Query({ChunkSelect(with_data, "$1"), {Int(series_id)}});
    if (!rows.ok()) return rows.status();
    std::vector<ChunkRecord> out;
    out.reserve(static_cast<size_t>(rows->size()));
    for (int i = 0; i < rows->size(); ++i)
      out.push_back(ChunkFromRow(pg::Row{*rows, i}, series_id, with_data));
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
    // Params and tags of all of them in two queries.
    std::string ids = "{";
    for (const RunRecord& r : runs) ids += (ids.size() > 1 ? "," : "") + r.id;
    ids += "}";
    // Params and tags of all of them in one query.
    Result<pg::Rows> kv =
        Query({"SELECT run_id, key, value, 0::bigint AS kind, seq FROM params WHERE run_id = ANY($1::text[]) "
               "UNION ALL SELECT run_id, key, value, 1::bigint, seq FROM tags WHERE run_id = ANY($1::text[]) "
               "ORDER BY kind, seq",
               {Text(ids)}});
    if (!kv.ok()) return kv.status();
    for (int i = 0; i < kv->size(); ++i) {
      RunRecord& r = runs[index[kv->Str(i, 0)]];
      (kv->Int(i, 3) == 0 ? r.params : r.tags).emplace_back(kv->Str(i, 1), kv->Str(i, 2));
    }
    return runs;
  }

  // --- the connection and the spool ------------------------------------------------------------

  Status ConnectLocked() {
    Result<std::unique_ptr<pg::Connection>> c = pg::Connection::Open(uri_);
    if (!c.ok()) return c.status();
    conn_ = std::move(*c);
    return Status::Ok();
  }

  Status Unreachable() const {
    return Status::Unavailable("the database " + Redacted(uri_) + " cannot be reached (" + offline_reason_ +
                               "); is the server running and the connection string right?");
  }

  Result<pg::Rows> Query(const Stmt& s) {
    std::lock_guard lock(mu_);
    if (!conn_) return Unreachable();
    Result<pg::Rows> rows = conn_->Query(s);
    if (!rows.ok() && rows.status().code() == Status::Code::kUnavailable)
      GoOfflineLocked(rows.status().message());
    return rows;
  }

  // Writes now, or into the spool while the database is away.
  Status Write(const Batch& batch, std::vector<int64_t>* changed = nullptr) {
    if (batch.empty()) return Status::Ok();
    std::lock_guard lock(mu_);
    if (conn_ && !spool_.active()) {
      Status s = conn_->ExecBatch(batch, changed);
      if (s.ok() || s.code() != Status::Code::kUnavailable) return s;
      GoOfflineLocked(s.message());
    }
    if (changed != nullptr) changed->clear();  // unknown while spooling
    bool starting = !spool_.active();
    TB_RETURN_IF_ERROR(spool_.Append(batch));
    if (starting) {
      LogWarning("the database " + Redacted(uri_) + " cannot be reached (" + offline_reason_ +
                 "); the run goes on and its samples are kept in " + spool_.path() + " until it answers");
    }
    return Status::Ok();
  }

  void GoOfflineLocked(const std::string& why) {
    offline_reason_ = why;
    conn_.reset();
    if (!reconnector_.joinable()) reconnector_ = std::thread([this] { Reconnect(); });
  }

  Status ApplyLocked(const Batch& batch) { return conn_->ExecBatch(batch, nullptr); }

  // The background thread while the database is away: reconnects every second, then
  // writes the spool in order and goes back to writing directly.
  void Reconnect() {
    while (true) {
      {
        std::unique_lock wait(wake_mu_);
        wake_.wait_for(wait, std::chrono::seconds(1), [this] { return stop_; });
        if (stop_) return;
      }
      bool need_connection;
      {
        std::lock_guard lock(mu_);
        if (conn_ && !spool_.active()) continue;
        need_connection = !conn_;
      }
      // Connecting may wait seconds: writers keep spooling meanwhile.
      std::unique_ptr<pg::Connection> fresh;
      if (need_connection) {
        Result<std::unique_ptr<pg::Connection>> c = pg::Connection::Open(uri_);
        if (!c.ok()) continue;
        fresh = std::move(*c);
      }
      std::lock_guard lock(mu_);
      if (fresh) conn_ = std::move(fresh);
      if (!schema_checked_ && !MigrateLocked().ok()) continue;
      if (spool_.active()) {
        int64_t batches = spool_.batches();
        if (!spool_.Replay([this](const Batch& b) { return ApplyLocked(b); }).ok()) {
          if (conn_ && !conn_->ok()) conn_.reset();
          continue;
        }
        LogInfo("the database " + Redacted(uri_) + " answers again: " + std::to_string(batches) +
                " spooled writes are in it");
      }
      ReplayOrphansLocked();
    }
  }

  // Spools of processes that ended while the database was away.
  void ReplayOrphansLocked() {
    for (const std::string& path : spool_.ReplayOrphans([this](const Batch& b) { return ApplyLocked(b); }))
      LogInfo("wrote what an earlier run spooled while the database was away (" + path + ")");
  }

  // Spools of one database share a directory: the URI hashed.
  std::string DatabaseKey() const {
    char buf[20];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(HashId(uri_)));
    return buf;
  }

  Status MigrateLocked() {
    TB_RETURN_IF_ERROR(conn_->Migrate(kMigrations));
    schema_checked_ = true;
    return Status::Ok();
  }

  std::string uri_;
  PostgresOptions options_;
  std::mutex mu_;  // the connection, the spool
  std::unique_ptr<pg::Connection> conn_;
  pg::Spool spool_;
  bool schema_checked_ = false;
  std::string offline_reason_;
  std::thread reconnector_;
  std::mutex wake_mu_;
  std::condition_variable wake_;
  bool stop_ = false;
};

}  // namespace

Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& uri, const PostgresOptions& options) {
  auto store = std::make_unique<PostgresStore>(uri, options);
  TB_RETURN_IF_ERROR(store->Initialize());
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace tb
