#include "store/sqlite/sqlite_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "base/strings.h"
#include "base/time.h"
#include "store/schema.h"
#include "store/sqlite/sqlite_store_impl.h"
#include "store/store_rows.h"

namespace tb {

Status SqliteStore::Initialize() {
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

int SqliteStore::StoredSchemaVersion() {
  Statement get(*statements_, "SELECT value FROM trainbench_meta WHERE key = 'schema_version'");
  if (get.Step() != SQLITE_ROW) return 0;
  return static_cast<int>(ParseInt(get.Text(0)).value_or(0));
}

Result<std::string> SqliteStore::ArtifactDirectory(const std::string& run_id) {
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

Result<int64_t> SqliteStore::EnsureExperiment(const std::string& name) {
  TB_RETURN_IF_ERROR(CheckExperimentName(name));
  std::lock_guard lock(mu_);
  return EnsureExperimentLocked(name);
}

Result<int64_t> SqliteStore::EnsureExperimentLocked(const std::string& name) {
  // Default is MLflow's experiment 0, so that every experiment's id is MLflow's (radT's
  // experiment numbers; a store made before keeps the id its Default has).
  Statement insert(*statements_,
                   name == kDefaultExperiment
                       ? "INSERT OR IGNORE INTO experiments(id, name, created_ms) VALUES(0, ?, ?)"
                       : "INSERT OR IGNORE INTO experiments(name, created_ms) VALUES(?, ?)");
  insert.Bind(1, name).Bind(2, WallMillis());
  if (insert.Step() != SQLITE_DONE) return Error("cannot create experiment " + name);
  Statement get(*statements_, "SELECT id FROM experiments WHERE name = ?");
  get.Bind(1, name);
  if (get.Step() != SQLITE_ROW) return Error("cannot read experiment " + name);
  return get.Int(0);
}

Status SqliteStore::CreateExperimentWithId(int64_t id, const std::string& name) {
  TB_RETURN_IF_ERROR(CheckExperimentName(name));
  std::lock_guard lock(mu_);
  Statement insert(*statements_, "INSERT OR IGNORE INTO experiments(id, name, created_ms) VALUES(?, ?, ?)");
  insert.Bind(1, id).Bind(2, name).Bind(3, WallMillis());
  if (insert.Step() != SQLITE_DONE) return Error("cannot create experiment " + name);
  if (sqlite3_changes(db_) == 0) {
    return Status::InvalidArgument(
        Concat({"an experiment has id ", std::to_string(id), " or the name '", name, "' already"}));
  }
  return Status::Ok();
}

Status SqliteStore::CreateRun(const RunRecord& run) {
  TB_RETURN_IF_ERROR(CheckRunId(run.id));
  std::lock_guard lock(mu_);
  return InTransaction([&] { return InsertRun(run); });
}

Status SqliteStore::FinishRun(const std::string& run_id, int64_t end_ms, const std::string& status,
                              std::optional<int> exit_code, std::optional<int> signal,
                              const std::string& reason) {
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

Status SqliteStore::LogParams(const std::string& run_id, const KeyValues& params) {
  std::lock_guard lock(mu_);
  return InTransaction([&] { return InsertParams(run_id, params); });
}

Status SqliteStore::SetTags(const std::string& run_id, const KeyValues& tags) {
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

Status SqliteStore::DeleteTag(const std::string& run_id, const std::string& key) {
  std::lock_guard lock(mu_);
  Statement st(*statements_, "DELETE FROM tags WHERE run_id = ? AND key = ?");
  st.Bind(1, run_id).Bind(2, key);
  if (st.Step() != SQLITE_DONE) return Error("cannot delete tag " + key);
  if (sqlite3_changes(db_) == 0) {
    return Status::NotFound("No tag with name: " + key + " in run with id " + run_id);
  }
  return Status::Ok();
}

Status SqliteStore::RenameRun(const std::string& run_id, const std::string& name) {
  std::lock_guard lock(mu_);
  Statement st(*statements_, "UPDATE runs SET name = ? WHERE id = ?");
  st.Bind(1, name).Bind(2, run_id);
  if (st.Step() != SQLITE_DONE) return Error("cannot rename run " + run_id);
  return Status::Ok();
}

Status SqliteStore::MoveRun(const std::string& run_id, int64_t experiment_id) {
  std::lock_guard lock(mu_);
  Statement st(*statements_, "UPDATE runs SET experiment_id = ? WHERE id = ?");
  st.Bind(1, experiment_id).Bind(2, run_id);
  if (st.Step() != SQLITE_DONE) return Error("cannot move run " + run_id);
  if (sqlite3_changes(db_) == 0) return Status::NotFound("no run " + run_id);
  return Status::Ok();
}

Status SqliteStore::ChangeExperiment(int64_t id, const ExperimentChange& change) {
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

Status SqliteStore::AddEvent(const EventRecord& e) {
  std::lock_guard lock(mu_);
  Statement st(*statements_, "INSERT INTO events(run_id, time_ms, kind, label) VALUES(?, ?, ?, ?)");
  st.Bind(1, e.run_id).Bind(2, e.time_ms).Bind(3, e.kind).Bind(4, e.label);
  if (st.Step() != SQLITE_DONE) return Error("cannot record event");
  return Status::Ok();
}

Status SqliteStore::PutArtifact(const ArtifactRecord& a) {
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

Status SqliteStore::PutRegisteredModel(const std::string& name, const std::optional<std::string>& record) {
  std::lock_guard lock(mu_);
  Statement st(*statements_, record ? "INSERT OR REPLACE INTO registered_models(name, record) VALUES(?, ?)"
                                    : "DELETE FROM registered_models WHERE name = ?");
  st.Bind(1, name);
  if (record) st.Bind(2, *record);
  if (st.Step() != SQLITE_DONE) return Error("cannot write registered model " + name);
  if (!record && sqlite3_changes(db_) == 0) return Status::NotFound("no registered model " + name);
  return Status::Ok();
}

Result<std::vector<std::pair<std::string, std::string>>> SqliteStore::ListRegisteredModels() {
  std::lock_guard lock(mu_);
  Statement st(*statements_, "SELECT name, record FROM registered_models ORDER BY name");
  return Rows<std::pair<std::string, std::string>>(st, "cannot list registered models", [&](Statement& row) {
    return std::pair{row.Text(0), row.Text(1)};
  });
}

Result<std::vector<ExperimentInfo>> SqliteStore::ListExperiments() {
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

Result<std::vector<RunRecord>> SqliteStore::ListRuns(const std::string& experiment) {
  std::lock_guard lock(mu_);
  std::string sql = std::string(kRunSelect) + (experiment.empty() ? "" : " WHERE e.name = ?") +
                    " ORDER BY r.start_ms, r.id";
  Statement st(*statements_, sql);
  if (!experiment.empty()) st.Bind(1, experiment);
  return ReadRuns(st);
}

Result<RunRecord> SqliteStore::FindRun(const std::string& key) {
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

Result<std::vector<RunRecord>> SqliteStore::FindRunsById(const std::vector<std::string>& ids) {
  std::lock_guard lock(mu_);
  Statement st(*statements_, std::string(kRunSelect) + " WHERE r.id IN (SELECT value FROM json_each(?1))");
  st.Bind(1, nlohmann::json(ids).dump());
  Result<std::vector<RunRecord>> found = ReadRuns(st);
  if (!found.ok()) return found.status();
  return InOrderOfIds(ids, std::move(*found));
}

Result<std::vector<EventRecord>> SqliteStore::ListEvents(const std::string& run_id) {
  std::lock_guard lock(mu_);
  Statement st(*statements_, "SELECT time_ms, kind, label FROM events WHERE run_id = ? ORDER BY time_ms, id");
  st.Bind(1, run_id);
  return Rows<EventRecord>(st, "cannot list events", [&](Statement& row) {
    return EventRecord{run_id, row.Int(0), row.Text(1), row.Text(2)};
  });
}

Result<std::vector<ArtifactRecord>> SqliteStore::ListArtifacts(const std::string& run_id) {
  std::lock_guard lock(mu_);
  Statement st(*statements_, "SELECT name, size, path FROM artifacts WHERE run_id = ? ORDER BY name");
  st.Bind(1, run_id);
  return Rows<ArtifactRecord>(st, "cannot list artifacts", [&](Statement& row) {
    return ArtifactRecord{run_id, row.Text(0), row.Int(1), "", row.Text(2)};
  });
}

Result<ArtifactRecord> SqliteStore::GetArtifact(const std::string& run_id, const std::string& name) {
  std::lock_guard lock(mu_);
  Statement st(*statements_, "SELECT size, content, path FROM artifacts WHERE run_id = ? AND name = ?");
  st.Bind(1, run_id).Bind(2, name);
  if (st.Step() != SQLITE_ROW) return Status::NotFound("run " + run_id + " has no artifact " + name);
  ArtifactRecord a{run_id, name, st.Int(0), st.Text(1), st.Text(2)};
  if (!a.path.empty() && a.path[0] != '/') a.path = DirName(path_) + "/" + a.path;
  return a;
}

Result<std::vector<ArtifactRecord>> SqliteStore::GetArtifactOfRuns(const std::vector<std::string>& run_ids,
                                                                   const std::string& name) {
  std::lock_guard lock(mu_);
  Statement st(*statements_,
               "SELECT run_id, size, content, path FROM artifacts "
               "WHERE run_id IN (SELECT value FROM json_each(?1)) AND name = ?2");
  st.Bind(1, nlohmann::json(run_ids).dump()).Bind(2, name);
  return Rows<ArtifactRecord>(st, "cannot read artifacts", [&](Statement& row) {
    ArtifactRecord a{row.Text(0), name, row.Int(1), row.Text(2), row.Text(3)};
    if (!a.path.empty() && a.path[0] != '/') a.path = DirName(path_) + "/" + a.path;
    return a;
  });
}

Result<std::vector<std::pair<std::string, int64_t>>> SqliteStore::CountEventsOfRuns(
    const std::vector<std::string>& run_ids) {
  std::lock_guard lock(mu_);
  Statement st(*statements_,
               "SELECT run_id, count(*) FROM events WHERE run_id IN (SELECT value FROM json_each(?1)) "
               "GROUP BY run_id");
  st.Bind(1, nlohmann::json(run_ids).dump());
  return Rows<std::pair<std::string, int64_t>>(st, "cannot count events", [](Statement& row) {
    return std::pair{row.Text(0), row.Int(1)};
  });
}

Result<std::vector<RunRecord>> SqliteStore::ReadRuns(Statement& st) {
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

Status SqliteStore::InsertParams(const std::string& run_id, const KeyValues& params) {
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

Status SqliteStore::InsertRun(const RunRecord& run) {
  TB_RETURN_IF_ERROR(CheckExperimentName(run.experiment));
  Result<int64_t> experiment = EnsureExperimentLocked(run.experiment);  // as PostgreSQL does
  if (!experiment.ok()) return experiment.status();
  Statement st(*statements_,
               "INSERT INTO runs(id, experiment_id, workload, name, command, working_directory, host, "
               "supervisor_pid, start_ms, end_ms, status, exit_code, signal, reason, listeners, "
               "interval_ms, devices) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  st.Bind(1, run.id).Bind(2, *experiment).Bind(3, run.workload).Bind(4, run.name);
  st.Bind(5, run.command).Bind(6, run.working_directory).Bind(7, run.host);
  st.Bind(8, run.supervisor_pid).Bind(9, run.start_ms).Bind(10, run.end_ms).Bind(11, run.status);
  st.Bind(12, run.exit_code).Bind(13, run.signal).Bind(14, run.reason).Bind(15, run.listeners);
  st.Bind(16, run.interval_ms).Bind(17, run.devices);
  if (st.Step() != SQLITE_DONE) {
    if (sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_PRIMARYKEY)
      return Status::InvalidArgument("run " + run.id + " exists already");
    return Error("cannot record run " + run.id);
  }
  for (auto [table, kvs] : {std::pair{"params", &run.params}, std::pair{"tags", &run.tags}}) {
    std::string sql = std::string("INSERT OR REPLACE INTO ") + table + "(run_id, key, value) VALUES(?, ?, ?)";
    Statement kv(*statements_, sql);
    for (const auto& [k, v] : *kvs) {
      kv.Bind(1, run.id).Bind(2, k).Bind(3, v);
      if (kv.Step() != SQLITE_DONE) return Error(std::string("cannot record ") + table);
      kv.Reset();
    }
  }
  return Status::Ok();
}

Status SqliteStore::Migrate() {
  TB_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Status s = MigrateLocked();
  if (!s.ok()) {
    (void)Exec("ROLLBACK");  // the error that made it roll back is the one returned
    return s;
  }
  return Exec("COMMIT");
}

Status SqliteStore::MigrateLocked() {
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

Status SqliteStore::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    return Status::IoError(path_ + ": " + msg);
  }
  return Status::Ok();
}

Status SqliteStore::Error(const std::string& what) const {
  return Status::IoError(what + " in " + path_ + ": " + sqlite3_errmsg(db_));
}

Status SqliteStore::NotAStore(const std::string& why) const {
  return Status::InvalidArgument(path_ + " is not a trainbench store (" + why +
                                 "); pass another file with --store or TRAINBENCH_STORE");
}

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
  // Every use of the connection is under the store's mutex (its statement cache needs that
  // anyway), so SQLite's own lock around each call is left out: a listing of 300,000
  // series took 3.6 million of them.
  int rc = sqlite3_open_v2(absolute.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
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
