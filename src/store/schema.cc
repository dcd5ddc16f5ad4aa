#include "store/schema.h"

#include <array>
#include <utility>

namespace tb {
namespace {

// Written with placeholders for what the dialects spell differently:
//   {int}   a 64-bit integer (SQLite's INTEGER PRIMARY KEY is also the rowid)
//   {real}  a double
//   {blob}  bytes
//   {seq}   PostgreSQL's insertion order column (SQLite orders by rowid)
//   {norowid} SQLite's WITHOUT ROWID (a table that is its primary key)
constexpr const char* kMigrationText[] = {
    R"sql(
CREATE TABLE experiments(
  id {int} PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_ms {int} NOT NULL);
CREATE TABLE runs(
  id TEXT PRIMARY KEY,
  experiment_id {int} NOT NULL REFERENCES experiments(id),
  workload TEXT NOT NULL DEFAULT '',
  name TEXT NOT NULL,
  command TEXT NOT NULL,
  working_directory TEXT NOT NULL DEFAULT '',
  host TEXT NOT NULL DEFAULT '',
  supervisor_pid {int} NOT NULL DEFAULT 0,
  start_ms {int} NOT NULL,
  end_ms {int} NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  exit_code {int},
  signal {int},
  reason TEXT NOT NULL DEFAULT '',
  listeners TEXT NOT NULL DEFAULT '',
  interval_ms {int} NOT NULL DEFAULT 0);
CREATE INDEX runs_by_experiment ON runs(experiment_id, start_ms);
CREATE TABLE params(
  run_id TEXT NOT NULL REFERENCES runs(id),
  key TEXT NOT NULL,
  value TEXT NOT NULL,{seq}
  PRIMARY KEY(run_id, key));
CREATE TABLE tags(
  run_id TEXT NOT NULL REFERENCES runs(id),
  key TEXT NOT NULL,
  value TEXT NOT NULL,{seq}
  PRIMARY KEY(run_id, key));
CREATE TABLE series(
  id {int} PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs(id),
  metric TEXT NOT NULL,
  labels TEXT NOT NULL,
  UNIQUE(run_id, metric, labels));
CREATE TABLE chunks(
  id {int} PRIMARY KEY,
  series_id {int} NOT NULL REFERENCES series(id),
  first_ms {int} NOT NULL,
  last_ms {int} NOT NULL,
  count {int} NOT NULL,
  min {real},
  max {real},
  sum {real},
  sealed {int} NOT NULL,
  data {blob} NOT NULL);
CREATE INDEX chunks_by_series ON chunks(series_id, first_ms);
CREATE TABLE events(
  id {int} PRIMARY KEY,{seq}
  run_id TEXT NOT NULL REFERENCES runs(id),
  time_ms {int} NOT NULL,
  kind TEXT NOT NULL,
  label TEXT NOT NULL);
CREATE INDEX events_by_run ON events(run_id, time_ms);
CREATE TABLE journal(
  id {int} PRIMARY KEY,{seq}
  run_id TEXT NOT NULL REFERENCES runs(id),
  data {blob} NOT NULL);
CREATE INDEX journal_by_run ON journal(run_id, id);
CREATE TABLE artifacts(
  run_id TEXT NOT NULL REFERENCES runs(id),
  name TEXT NOT NULL,
  size {int} NOT NULL,
  content {blob},
  path TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(run_id, name));
)sql",
    // 2: the devices a run was given.
    "ALTER TABLE runs ADD COLUMN devices TEXT NOT NULL DEFAULT '';",
    // 3: the journal holds a few hundred rows per run at most (checkpoints delete them);
    // without an index each flush writes one b-tree page instead of two.
    "DROP INDEX journal_by_run;",
    // 4: experiments' tags (MLflow's set-experiment-tag; trainbench.deleted for one deleted).
    R"sql(
CREATE TABLE experiment_tags(
  experiment_id {int} NOT NULL REFERENCES experiments(id),
  key TEXT NOT NULL,
  value TEXT NOT NULL,{seq}
  PRIMARY KEY(experiment_id, key));
)sql",
    // 5: levels of detail beside each sealed chunk (store/format/chunk_summary.h); NULL for
    // chunks written before, which charts then read whole.
    "ALTER TABLE chunks ADD COLUMN summary {blob};",
    // 6: each series keeps the count, sum, lowest and highest of its sealed chunks, so that
    // a run's summary reads one row per series, not one per chunk; the provisional chunks
    // (one per series being written) are found through their own small index.
    R"sql(
ALTER TABLE series ADD COLUMN sealed_count {int} NOT NULL DEFAULT 0;
ALTER TABLE series ADD COLUMN sealed_sum {real} NOT NULL DEFAULT 0;
ALTER TABLE series ADD COLUMN sealed_min {real};
ALTER TABLE series ADD COLUMN sealed_max {real};
UPDATE series SET
  sealed_count = (SELECT coalesce(sum(count), 0) FROM chunks WHERE series_id = series.id AND sealed = 1),
  sealed_sum = (SELECT coalesce(sum(sum), 0) FROM chunks WHERE series_id = series.id AND sealed = 1),
  sealed_min = (SELECT min(min) FROM chunks WHERE series_id = series.id AND sealed = 1),
  sealed_max = (SELECT max(max) FROM chunks WHERE series_id = series.id AND sealed = 1);
CREATE INDEX chunks_provisional ON chunks(series_id) WHERE sealed = 0;
)sql",
    // 7: each series' overview: each sealed chunk's summary (store.h, OverviewSegment),
    // appended as it is sealed, in rows of about 65,536 points; the chunk's row no longer
    // keeps it. Series sealed before have none, and charts read their chunks' rows as before.
    R"sql(
CREATE TABLE series_overview(
  series_id {int} NOT NULL REFERENCES series(id),
  block {int} NOT NULL,
  points {int} NOT NULL,
  data {blob} NOT NULL,
  PRIMARY KEY(series_id, block));
)sql",
    // 8: series sampled on the same tick share their times: a sealed chunk encoded without
    // its times names the row of chunk_times that holds them (times_series, with its own
    // first_ms); NULL for chunks that hold their own.
    R"sql(
CREATE TABLE chunk_times(
  series_id {int} NOT NULL REFERENCES series(id),
  first_ms {int} NOT NULL,
  data {blob} NOT NULL,
  PRIMARY KEY(series_id, first_ms)){norowid};
ALTER TABLE chunks ADD COLUMN times_series {int};
)sql",
    // 9: a sealed chunk may keep its values as byte planes (store/format/chunk_codec.h), which
    // builds before cannot read; the version alone makes them refuse the store and say to
    // upgrade, where they would call those chunks corrupt. No table changes.
    "SELECT 9;",
    // 10: MLflow's model registry: each registered model one record (JSON: its description,
    // tags, aliases and versions; track/tracking_registry.cc), by its name.
    R"sql(
CREATE TABLE registered_models(
  name TEXT PRIMARY KEY,
  record TEXT NOT NULL);
)sql",
};
static_assert(std::size(kMigrationText) == kSchemaVersion);

std::string Spell(std::string sql, Dialect dialect) {
  bool pg = dialect == Dialect::kPostgres;
  const std::array<std::pair<std::string, std::string>, 5> words = {{
      {"{int}", pg ? "BIGINT" : "INTEGER"},
      {"{real}", pg ? "DOUBLE PRECISION" : "REAL"},
      {"{blob}", pg ? "BYTEA" : "BLOB"},
      {"{seq}", pg ? "\n  seq BIGSERIAL," : ""},
      {"{norowid}", pg ? "" : " WITHOUT ROWID"},  // SQLite: the key is the table, one b-tree
  }};
  for (const auto& [word, spelled] : words) {
    for (size_t at = sql.find(word); at != std::string::npos; at = sql.find(word, at + spelled.size()))
      sql.replace(at, word.size(), spelled);
  }
  return sql;
}

}  // namespace

std::vector<std::string> Migrations(Dialect dialect) {
  std::vector<std::string> out;
  for (const char* text : kMigrationText) out.push_back(Spell(text, dialect));
  return out;
}

Status CheckSchemaVersion(int version, const std::string& store) {
  if (version <= kSchemaVersion) return Status::Ok();
  return Status::InvalidArgument(store + " was written by a newer trainbench (schema " +
                                 std::to_string(version) + ", this build knows " +
                                 std::to_string(kSchemaVersion) + "); upgrade trainbench");
}

}  // namespace tb
