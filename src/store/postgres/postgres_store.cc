#include <filesystem>
#include <fstream>
#include <map>

#include "base/strings.h"
#include "base/time.h"
#include "store/postgres/postgres_store_impl.h"
#include "store/schema.h"

namespace tb {
namespace {

namespace fs = std::filesystem;
using pg::Batch;
using pg::Bytes;
using pg::HashId;
using pg::Int;
using pg::OptInt;
using pg::Stmt;
using pg::Text;

}  // namespace

Result<std::string> PostgresStore::ArtifactDirectory(const std::string& run_id) {
  TB_RETURN_IF_ERROR(CheckRunId(run_id));
  std::error_code ec;
  fs::path dir = fs::path(options_.artifact_root) / run_id;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError("cannot create artifact directory " + dir.string() + ": " + ec.message());
  return dir.string();
}

namespace {

// A new experiment's id: its name's hash (stores on many machines agree without asking),
// 0 for Default, MLflow's id of it.
int64_t ExperimentIdFor(const std::string& name) {
  return name == kDefaultExperiment ? 0 : HashId("experiment\n" + name);
}

}  // namespace

Result<int64_t> PostgresStore::EnsureExperiment(const std::string& name) {
  TB_RETURN_IF_ERROR(CheckExperimentName(name));
  int64_t id = ExperimentIdFor(name);
  TB_RETURN_IF_ERROR(
      Write({{"INSERT INTO experiments(id, name, created_ms) VALUES($1, $2, $3) ON CONFLICT DO NOTHING",
              {Int(id), Text(name), Int(WallMillis())}}}));
  // A renamed experiment keeps the id of its first name; while the server is away, the
  // name's own id (what the spooled insert gives it).
  Result<pg::Rows> rows = Query({"SELECT id FROM experiments WHERE name = $1", {Text(name)}});
  if (rows.ok() && rows->size() == 1) return rows->Int(0, 0);
  return id;
}

Status PostgresStore::CreateExperimentWithId(int64_t id, const std::string& name) {
  TB_RETURN_IF_ERROR(CheckExperimentName(name));
  std::vector<int64_t> changed;
  TB_RETURN_IF_ERROR(
      Write({{"INSERT INTO experiments(id, name, created_ms) VALUES($1, $2, $3) ON CONFLICT DO NOTHING",
              {Int(id), Text(name), Int(WallMillis())}}},
            &changed));
  if (!changed.empty() && changed[0] == 0) {
    return Status::InvalidArgument(
        Concat({"an experiment has id ", std::to_string(id), " or the name '", name, "' already"}));
  }
  return Status::Ok();
}

Status PostgresStore::CreateRun(const RunRecord& run) {
  TB_RETURN_IF_ERROR(CheckRunId(run.id));
  std::vector<Stmt> batch = {
      {"INSERT INTO experiments(id, name, created_ms) VALUES($1, $2, $3) ON CONFLICT DO NOTHING",
       {Int(ExperimentIdFor(run.experiment)), Text(run.experiment), Int(WallMillis())}},
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

Status PostgresStore::FinishRun(const std::string& run_id, int64_t end_ms, const std::string& status,
                                std::optional<int> exit_code, std::optional<int> signal,
                                const std::string& reason) {
  return Write(
      {{"UPDATE runs SET end_ms = $1, status = $2, exit_code = $3, signal = $4, reason = $5 WHERE id = $6",
        {Int(end_ms), Text(status), OptInt(exit_code), OptInt(signal), Text(reason), Text(run_id)}}});
}

Status PostgresStore::LogParams(const std::string& run_id, const KeyValues& params) {
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

Status PostgresStore::SetTags(const std::string& run_id, const KeyValues& tags) {
  std::vector<Stmt> batch;
  for (const auto& [k, v] : tags) batch.push_back(UpsertTag(run_id, k, v));
  return Write(batch);
}

Status PostgresStore::DeleteTag(const std::string& run_id, const std::string& key) {
  std::vector<int64_t> changed;
  TB_RETURN_IF_ERROR(
      Write({{"DELETE FROM tags WHERE run_id = $1 AND key = $2", {Text(run_id), Text(key)}}}, &changed));
  if (!changed.empty() && changed[0] == 0) {
    return Status::NotFound("No tag with name: " + key + " in run with id " + run_id);
  }
  return Status::Ok();
}

Status PostgresStore::RenameRun(const std::string& run_id, const std::string& name) {
  return Write({{"UPDATE runs SET name = $1 WHERE id = $2", {Text(name), Text(run_id)}}});
}

Status PostgresStore::MoveRun(const std::string& run_id, int64_t experiment_id) {
  return Write({{"UPDATE runs SET experiment_id = $1 WHERE id = $2", {Int(experiment_id), Text(run_id)}}});
}

Status PostgresStore::ChangeExperiment(int64_t id, const ExperimentChange& change) {
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

Status PostgresStore::AddEvent(const EventRecord& e) {
  return Write(
      {{"INSERT INTO events(id, run_id, time_ms, kind, label) VALUES($1, $2, $3, $4, $5) "
        "ON CONFLICT DO NOTHING",
        {Int(RandomId()), Text(e.run_id), Int(e.time_ms), Text(e.kind), Text(e.label)}}});
}

Status PostgresStore::PutArtifact(const ArtifactRecord& a) {
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

Status PostgresStore::PutRegisteredModel(const std::string& name, const std::optional<std::string>& record) {
  if (record) {
    return Write(
        {{"INSERT INTO registered_models(name, record) VALUES($1, $2) ON CONFLICT (name) DO UPDATE SET "
          "record = EXCLUDED.record",
          {Text(name), Text(*record)}}});
  }
  std::vector<int64_t> changed;
  TB_RETURN_IF_ERROR(Write({{"DELETE FROM registered_models WHERE name = $1", {Text(name)}}}, &changed));
  if (!changed.empty() && changed[0] == 0) return Status::NotFound("no registered model " + name);
  return Status::Ok();
}

Result<std::vector<std::pair<std::string, std::string>>> PostgresStore::ListRegisteredModels() {
  Result<pg::Rows> rows = Query({"SELECT name, record FROM registered_models ORDER BY name", {}});
  if (!rows.ok()) return rows.status();
  return Collect<std::pair<std::string, std::string>>(*rows, [&](int i) {
    return std::pair{rows->Str(i, 0), rows->Str(i, 1)};
  });
}

Result<std::vector<ExperimentInfo>> PostgresStore::ListExperiments() {
  Result<pg::Rows> rows = Query({"SELECT id, name, created_ms FROM experiments ORDER BY created_ms, id", {}});
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

Result<std::vector<RunRecord>> PostgresStore::ListRuns(const std::string& experiment) {
  if (experiment.empty()) return ReadRuns({std::string(kRunSelect) + " ORDER BY r.start_ms, r.id", {}});
  return ReadRuns(
      {std::string(kRunSelect) + " WHERE e.name = $1 ORDER BY r.start_ms, r.id", {Text(experiment)}});
}

Result<RunRecord> PostgresStore::FindRun(const std::string& key) {
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

Result<std::vector<RunRecord>> PostgresStore::FindRunsById(const std::vector<std::string>& ids) {
  Result<std::vector<RunRecord>> found =
      ReadRuns({std::string(kRunSelect) + " WHERE r.id = ANY($1::text[])", {Text(TextArray(ids))}});
  if (!found.ok()) return found.status();
  return InOrderOfIds(ids, std::move(*found));
}

Result<std::vector<EventRecord>> PostgresStore::ListEvents(const std::string& run_id) {
  Result<pg::Rows> rows = Query(
      {"SELECT time_ms, kind, label FROM events WHERE run_id = $1 ORDER BY time_ms, seq", {Text(run_id)}});
  if (!rows.ok()) return rows.status();
  return Collect<EventRecord>(*rows, [&](int i) {
    return EventRecord{run_id, rows->Int(i, 0), rows->Str(i, 1), rows->Str(i, 2)};
  });
}

Result<std::vector<ArtifactRecord>> PostgresStore::ListArtifacts(const std::string& run_id) {
  Result<pg::Rows> rows =
      Query({"SELECT name, size, path FROM artifacts WHERE run_id = $1 ORDER BY name", {Text(run_id)}});
  if (!rows.ok()) return rows.status();
  return Collect<ArtifactRecord>(*rows, [&](int i) {
    return ArtifactRecord{run_id, rows->Str(i, 0), rows->Int(i, 1), "", rows->Str(i, 2)};
  });
}

Result<ArtifactRecord> PostgresStore::GetArtifact(const std::string& run_id, const std::string& name) {
  Result<pg::Rows> rows = Query({"SELECT size, content, path FROM artifacts WHERE run_id = $1 AND name = $2",
                                 {Text(run_id), Text(name)}});
  if (!rows.ok()) return rows.status();
  if (rows->size() == 0) return Status::NotFound("run " + run_id + " has no artifact " + name);
  return ArtifactRecord{run_id, name, rows->Int(0, 0), rows->Str(0, 1), rows->Str(0, 2)};
}

Result<std::vector<ArtifactRecord>> PostgresStore::GetArtifactOfRuns(const std::vector<std::string>& run_ids,
                                                                     const std::string& name) {
  Result<pg::Rows> rows =
      Query({"SELECT run_id, size, content, path FROM artifacts "
             "WHERE run_id = ANY($1::text[]) AND name = $2",
             {Text(TextArray(run_ids)), Text(name)}});
  if (!rows.ok()) return rows.status();
  return Collect<ArtifactRecord>(*rows, [&](int i) {
    return ArtifactRecord{rows->Str(i, 0), name, rows->Int(i, 1), rows->Str(i, 2), rows->Str(i, 3)};
  });
}

Result<std::vector<std::pair<std::string, int64_t>>> PostgresStore::CountEventsOfRuns(
    const std::vector<std::string>& run_ids) {
  Result<pg::Rows> rows =
      Query({"SELECT run_id, count(*) FROM events WHERE run_id = ANY($1::text[]) GROUP BY run_id",
             {Text(TextArray(run_ids))}});
  if (!rows.ok()) return rows.status();
  return Collect<std::pair<std::string, int64_t>>(*rows, [&](int i) {
    return std::pair{rows->Str(i, 0), rows->Int(i, 1)};
  });
}

Stmt PostgresStore::InsertParam(const std::string& run_id, const std::string& k, const std::string& v) {
  return {"INSERT INTO params(run_id, key, value) VALUES($1, $2, $3) ON CONFLICT DO NOTHING",
          {Text(run_id), Text(k), Text(v)}};
}

Stmt PostgresStore::UpsertTag(const std::string& run_id, const std::string& k, const std::string& v) {
  return {
      "INSERT INTO tags(run_id, key, value) VALUES($1, $2, $3) "
      "ON CONFLICT (run_id, key) DO UPDATE SET value = EXCLUDED.value",
      {Text(run_id), Text(k), Text(v)}};
}

Result<std::vector<RunRecord>> PostgresStore::ReadRuns(const Stmt& select) {
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

Status PostgresStore::Write(const Batch& batch, std::vector<int64_t>* changed) {
  return link_.Write(batch, changed);
}

Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& uri, const PostgresOptions& options) {
  auto store = std::make_unique<PostgresStore>(uri, options);
  TB_RETURN_IF_ERROR(store->Initialize());
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace tb
