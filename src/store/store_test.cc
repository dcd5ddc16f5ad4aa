// The stores as their callers see them, on both backends: runs found by id, prefix or name,
// reopened intact, read while another writer holds the locks, artifacts, params written
// once; what is not a store, newer schemas and old stores migrated.
#include <gtest/gtest.h>

#include <map>

#include "store/store_test_fixture.h"

namespace tb {
namespace {

INSTANTIATE_TEST_SUITE_P(Backends, BackendTest, ::testing::Values("sqlite", "postgresql"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// The model registry's records: written whole, listed by name, replaced, deleted once.
TEST_P(BackendTest, RegisteredModelsAreKeptByName) {
  auto store = OpenOk();
  ASSERT_TRUE(store->PutRegisteredModel("digits-mlp", R"({"versions":[1]})").ok());
  ASSERT_TRUE(store->PutRegisteredModel("cifar", "{}").ok());
  ASSERT_TRUE(store->PutRegisteredModel("digits-mlp", R"({"versions":[1,2]})").ok());
  auto listed = store->ListRegisteredModels();
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  using Records = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(*listed, (Records{{"cifar", "{}"}, {"digits-mlp", R"({"versions":[1,2]})"}}));
  EXPECT_TRUE(store->PutRegisteredModel("cifar", std::nullopt).ok());
  EXPECT_EQ(store->PutRegisteredModel("cifar", std::nullopt).code(), Status::Code::kNotFound);
  EXPECT_EQ(store->ListRegisteredModels()->size(), 1u);
}

// radT's experiment numbers: an experiment made with the id a number names keeps it, and
// neither its id nor its name can be taken twice.
TEST_P(BackendTest, AnExperimentIsMadeWithTheIdItIsGiven) {
  auto store = OpenOk();
  ASSERT_TRUE(store->CreateExperimentWithId(7, "7").ok());
  EXPECT_EQ(store->EnsureExperiment("7").value(), 7);
  EXPECT_FALSE(store->CreateExperimentWithId(7, "other").ok());
  EXPECT_FALSE(store->CreateExperimentWithId(8, "7").ok());
  EXPECT_EQ(store->ListExperiments().value().size(), 1u);
}

TEST_P(BackendTest, RunsRoundTripAndAreFoundByPrefixOrName) {
  auto store = OpenOk();
  RunRecord a = NewRun(*store, "first");
  RunRecord b = NewRun(*store, "second");
  ASSERT_TRUE(store->FinishRun(a.id, a.start_ms + 5000, kFinished, 0, std::nullopt, "").ok());

  Result<RunRecord> got = store->FindRun(a.id.substr(0, 8));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->id, a.id);
  EXPECT_EQ(got->status, kFinished);
  EXPECT_EQ(got->exit_code, 0);
  EXPECT_EQ(got->params, a.params);
  EXPECT_EQ(got->tags, a.tags);
  EXPECT_EQ(store->FindRun("second")->id, b.id);
  EXPECT_EQ(store->FindRun(b.id)->status, kRunning);  // finishing a did not touch b
  EXPECT_EQ(store->FindRun("nope").status().code(), Status::Code::kNotFound);
  // The contract both backends keep: a run's id once; a run's experiment made when missing.
  Status again = store->CreateRun(a);
  EXPECT_EQ(again.code(), Status::Code::kInvalidArgument) << again.message();
  EXPECT_NE(again.message().find("exists already"), std::string::npos) << again.message();
  RunRecord stray = a;
  stray.id = NewRunId();
  stray.experiment = "no such experiment";  // yet
  ASSERT_TRUE(store->CreateRun(stray).ok());
  EXPECT_EQ(store->ListRuns("no such experiment")->size(), 1u);
  EXPECT_EQ(store->ListRuns("exp")->size(), 2u);
  EXPECT_TRUE(store->ListRuns("other")->empty());
  // A run moved to another experiment is listed there, with what it holds.
  int64_t other = store->EnsureExperiment("other").value();
  ASSERT_TRUE(store->MoveRun(b.id, other).ok());
  ASSERT_EQ(store->ListRuns("other")->size(), 1u);
  EXPECT_EQ(store->ListRuns("other")->front().params, b.params);
  EXPECT_EQ(store->FindRun(b.id)->experiment, "other");
  EXPECT_EQ(store->ListRuns("exp")->size(), 1u);
}

TEST_P(BackendTest, ManyRunsAreFoundByIdAtOnceEachWithItsOwnParamsAndTags) {
  auto store = OpenOk();
  std::vector<RunRecord> made;
  for (int i = 0; i < 5; ++i) {
    made.push_back(NewRun(*store, "run" + std::to_string(i)));
    // Each its own params and tags, logged in an order that is not the keys'.
    KeyValues params = {{"seed", std::to_string(i)}, {"arch", i % 2 ? "resnet" : "vit"}};
    ASSERT_TRUE(store->LogParams(made.back().id, params).ok());
    ASSERT_TRUE(store->SetTags(made.back().id, {{"quote \"and\\ back", std::to_string(10 * i)}}).ok());
    made.back().params.insert(made.back().params.end(), params.begin(), params.end());
    made.back().tags.emplace_back("quote \"and\\ back", std::to_string(10 * i));
  }
  std::string missing = NewRunId();
  // Asked out of creation order, one twice and one that is no run.
  std::vector<std::string> ids = {made[3].id, made[0].id, missing, made[4].id, made[0].id};
  Result<std::vector<RunRecord>> got = store->FindRunsById(ids);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), 3u);
  for (auto [k, i] : {std::pair{0, 3}, {1, 0}, {2, 4}}) {
    const RunRecord& r = (*got)[static_cast<size_t>(k)];
    EXPECT_EQ(r.id, made[static_cast<size_t>(i)].id);
    EXPECT_EQ(r.name, made[static_cast<size_t>(i)].name);
    EXPECT_EQ(r.params, made[static_cast<size_t>(i)].params) << r.name;
    EXPECT_EQ(r.tags, made[static_cast<size_t>(i)].tags) << r.name;
  }
  EXPECT_TRUE(store->FindRunsById({missing}).value().empty());
  EXPECT_TRUE(store->FindRunsById({}).value().empty());
  // Listing reads the params and tags of all runs together: each keeps its own, in order.
  std::vector<RunRecord> listed = store->ListRuns("exp").value();
  ASSERT_EQ(listed.size(), made.size());
  for (const RunRecord& r : listed) {
    auto same = std::find_if(made.begin(), made.end(), [&](const RunRecord& m) { return m.id == r.id; });
    ASSERT_NE(same, made.end());
    EXPECT_EQ(r.params, same->params) << r.name;
    EXPECT_EQ(r.tags, same->tags) << r.name;
  }
}

TEST_P(BackendTest, ReopensWithDataIntact) {
  std::string id;
  {
    auto store = OpenOk();
    id = NewRun(*store).id;
  }
  auto store = OpenOk();
  EXPECT_TRUE(store->FindRun(id).ok());
}

// `trainbench ls`, `serve` or another machine's `run` opening a store that someone else
// is writing into (a schedule, an import in one long transaction, a machine migrating the
// shared database) opens it at once and reads what was committed: opening a store at this
// build's schema takes no lock and writes nothing.
TEST_P(BackendTest, ACurrentStoreOpensAndReadsWhileAnotherWriterHoldsItsLocks) {
  std::string id = NewRun(*OpenOk()).id;
  const char* rename = "UPDATE runs SET name = 'renamed, not committed'";
  sqlite3* sqlite_writer = nullptr;
  std::unique_ptr<pg::Connection> pg_writer;
  std::string uri = uri_;
  if (sqlite()) {
    ASSERT_EQ(sqlite3_open(uri_.c_str(), &sqlite_writer), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(sqlite_writer, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(sqlite_writer, rename, nullptr, nullptr, nullptr), SQLITE_OK);
  } else {
    pg_writer = pg::Connection::Open(uri_).value();
    for (const char* sql : {"BEGIN", "SELECT pg_advisory_xact_lock(7465627)", rename})
      ASSERT_TRUE(pg_writer->Exec({sql, {}}, false).ok()) << sql;
    // Waiting for a lock fails after 3 s instead of for ever.
    uri += std::string(uri.find('?') == std::string::npos ? "?" : "&") + "options=-c%20lock_timeout%3D3000";
  }
  {
    Result<std::unique_ptr<Store>> reader = Store::Open(uri);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    Result<RunRecord> run = (*reader)->FindRun(id);
    ASSERT_TRUE(run.ok()) << run.status().message();
    EXPECT_EQ(run->name, "train.py");  // what was committed
  }
  if (sqlite()) {
    EXPECT_EQ(sqlite3_exec(sqlite_writer, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(sqlite_writer);
  } else {
    EXPECT_TRUE(pg_writer->Exec({"COMMIT", {}}, false).ok());
  }
  EXPECT_EQ(OpenOk()->FindRun(id)->name, "renamed, not committed");
}

TEST_P(BackendTest, ArtifactsInlineAndBesideTheStore) {
  auto store = OpenOk();
  RunRecord run = NewRun(*store);
  std::string dir = store->ArtifactDirectory(run.id).value();
  std::ofstream(dir + "/stdout.log") << "epoch 1\n";
  ASSERT_TRUE(store->PutArtifact({run.id, "stdout.log", 8, "", dir + "/stdout.log"}).ok());
  ASSERT_TRUE(store->PutArtifact({run.id, "manifest.json", 2, "{}", ""}).ok());
  EXPECT_EQ(store->ListArtifacts(run.id)->size(), 2u);
  if (sqlite()) {
    // The path is kept relative to the store and resolved on the way out.
    EXPECT_EQ(store->ListArtifacts(run.id).value()[1].path, "t.db.artifacts/" + run.id + "/stdout.log");
    EXPECT_EQ(store->GetArtifact(run.id, "stdout.log")->path, dir + "/stdout.log");
  } else {
    // Every machine reads the database: a small file goes into it...
    EXPECT_EQ(store->GetArtifact(run.id, "stdout.log")->content, "epoch 1\n");
    EXPECT_EQ(store->GetArtifact(run.id, "stdout.log")->path, "");
    // ...a large one stays in the shared directory, recorded by its path.
    std::string big = dir + "/report.nsys-rep";
    std::ofstream(big) << std::string((9 << 20), 'x');
    ASSERT_TRUE(store->PutArtifact({run.id, "report.nsys-rep", 0, "", big}).ok());
    ArtifactRecord a = store->GetArtifact(run.id, "report.nsys-rep").value();
    EXPECT_EQ(a.path, big);
    EXPECT_EQ(a.size, 9 << 20);
    EXPECT_TRUE(a.content.empty());
  }
  EXPECT_EQ(store->GetArtifact(run.id, "manifest.json")->content, "{}");
}

// What a table of many runs reads of each in one go: one artifact of every run that has
// it (as GetArtifact gives it) and how many events each holds.
TEST_P(BackendTest, AnArtifactAndTheEventCountsOfManyRunsAreReadAtOnce) {
  auto store = OpenOk();
  RunRecord a = NewRun(*store), b = NewRun(*store), none = NewRun(*store);
  ASSERT_TRUE(store->PutArtifact({a.id, "phases.json", 6, "{\"a\":1}", ""}).ok());
  ASSERT_TRUE(store->PutArtifact({b.id, "phases.json", 6, "{\"b\":2}", ""}).ok());
  ASSERT_TRUE(store->PutArtifact({b.id, "manifest.json", 2, "{}", ""}).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(store->AddEvent({a.id, 1000 + i, "epoch", "epoch"}).ok());
  ASSERT_TRUE(store->AddEvent({b.id, 1000, "epoch", "epoch"}).ok());

  std::vector<ArtifactRecord> kept = store->GetArtifactOfRuns({a.id, b.id, none.id}, "phases.json").value();
  ASSERT_EQ(kept.size(), 2u);
  std::map<std::string, std::string> by_run;
  for (const ArtifactRecord& k : kept) by_run[k.run_id] = k.content;
  EXPECT_EQ(by_run[a.id], store->GetArtifact(a.id, "phases.json")->content);
  EXPECT_EQ(by_run[b.id], "{\"b\":2}");
  EXPECT_TRUE(store->GetArtifactOfRuns({none.id}, "phases.json").value().empty());

  std::vector<std::pair<std::string, int64_t>> counts =
      store->CountEventsOfRuns({a.id, b.id, none.id}).value();
  std::map<std::string, int64_t> count(counts.begin(), counts.end());
  EXPECT_EQ(count, (std::map<std::string, int64_t>{{a.id, 3}, {b.id, 1}}));
}

TEST_P(BackendTest, ParamsAreWrittenOnceTagsReplacedAllOrNothing) {
  auto store = OpenOk();
  RunRecord run = NewRun(*store);
  EXPECT_TRUE(store->LogParams(run.id, {{"epochs", "5"}, {"lr", "0.1"}}).ok());  // lr: same value
  Status changed = store->LogParams(run.id, {{"optimizer", "adam"}, {"lr", "0.2"}});
  EXPECT_EQ(changed.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(changed.message().find("lr"), std::string::npos);
  EXPECT_TRUE(store->SetTags(run.id, {{"model", "resnet"}, {"phase", "1"}}).ok());
  EXPECT_TRUE(store->DeleteTag(run.id, "phase").ok());
  EXPECT_EQ(store->DeleteTag(run.id, "phase").code(), Status::Code::kNotFound);
  EXPECT_TRUE(store->RenameRun(run.id, "renamed").ok());

  RunRecord back = store->FindRun(run.id).value();
  EXPECT_EQ(back.name, "renamed");
  // The refused batch stored nothing, not even its valid first param.
  EXPECT_EQ(back.params, (KeyValues{{"batch-size", "128"}, {"lr", "0.1"}, {"epochs", "5"}}));
  EXPECT_EQ(back.tags, (KeyValues{{"model", "resnet"}}));
}

TEST_F(StoreTest, RefusesWhatIsNotATrainbenchStore) {
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "other.db").c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE metrics(key TEXT, value REAL)", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  Result<std::unique_ptr<Store>> s = Store::Open((dir_ / "other.db").string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("not a trainbench store"), std::string::npos);
  EXPECT_NE(s.status().message().find("--store"), std::string::npos);

  std::ofstream(dir_ / "notes.txt") << "these are my notes, not a database, and they are long enough\n";
  s = Store::Open((dir_ / "notes.txt").string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("not a trainbench store"), std::string::npos);
  std::ifstream back(dir_ / "notes.txt");
  std::string line;
  std::getline(back, line);
  EXPECT_EQ(line, "these are my notes, not a database, and they are long enough");  // untouched
}

TEST_F(StoreTest, RefusesNewerSchemaAndMissingDirectory) {
  OpenOk();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "t.db").c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "UPDATE trainbench_meta SET value='99' WHERE key='schema_version'", nullptr, nullptr,
               nullptr);
  sqlite3_close(db);
  Result<std::unique_ptr<Store>> s = Store::Open((dir_ / "t.db").string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("newer trainbench"), std::string::npos);

  s = Store::Open((dir_ / "missing" / "t.db").string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("does not exist"), std::string::npos);
  EXPECT_FALSE(Store::Open("mysql://host/db").ok());
}

TEST_F(StoreTest, AnOlderStoreIsMigratedWithItsRunsIntact) {
  std::string id;
  {
    auto store = OpenOk();
    id = NewRun(*store).id;
    // Two sealed chunks and a provisional one.
    SeriesWriter writer(*store, id, /*seal_points=*/10, /*checkpoint_flushes=*/1);
    for (int i = 0; i < 25; ++i) {
      writer.Append("gpu.power.draw_watts", "gpu=0", {1000 * i, 50.0 + i % 7, kNoStep});
      if (i % 10 == 9 || i == 24) {
        ASSERT_TRUE(writer.Flush().ok());
      }
    }
  }
  // Turn the file back into a schema-1 store, as an earlier trainbench left it.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "t.db").c_str(), &db), SQLITE_OK);
  for (const char* sql :
       {"ALTER TABLE runs DROP COLUMN devices", "CREATE INDEX journal_by_run ON journal(run_id, id)",
        "DROP TABLE experiment_tags", "ALTER TABLE chunks DROP COLUMN summary",
        "DROP INDEX chunks_provisional", "ALTER TABLE series DROP COLUMN sealed_count",
        "ALTER TABLE series DROP COLUMN sealed_sum", "ALTER TABLE series DROP COLUMN sealed_min",
        "ALTER TABLE series DROP COLUMN sealed_max", "DROP TABLE series_overview", "DROP TABLE chunk_times",
        "ALTER TABLE chunks DROP COLUMN times_series", "DROP TABLE registered_models",
        "UPDATE trainbench_meta SET value='1' WHERE key='schema_version'"}) {
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  }
  sqlite3_close(db);
  auto store = OpenOk();
  Result<RunRecord> run = store->FindRun(id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->params.size(), 2u);
  EXPECT_EQ(run->devices, "");
  // The series' totals are those of the chunks written before.
  ASSERT_EQ(
      store->ReadChunks({.series = {store->ListSeries(id)->at(0).id}, .part = ChunkPart::kInfo})->size(), 3u);
  ExpectTotalsOfEveryChunk(*store, id);
  EXPECT_EQ(store->ListSeriesTotals(id)->at(0).count, 25);
  // Its sealed chunks have no overview: readers see that it lacks them.
  Result<SeriesOverview> overview = store->ReadSeriesOverview(store->ListSeries(id)->at(0).id);
  ASSERT_TRUE(overview.ok()) << overview.status().message();
  EXPECT_EQ(overview->sealed_points, 20);
  EXPECT_EQ(overview->covered_points, 0);
  // The migrated store takes the newer fields.
  RunRecord fresh;
  fresh.id = NewRunId();
  fresh.experiment = "exp";
  fresh.name = "after";
  fresh.devices = "0+1";
  ASSERT_TRUE(store->CreateRun(fresh).ok());
  EXPECT_EQ(store->FindRun("after")->devices, "0+1");
}

TEST_F(StoreTest, UriForms) {
  EXPECT_TRUE(Store::Open("sqlite://" + (dir_ / "a.db").string()).ok());
  EXPECT_TRUE(fs::exists(dir_ / "a.db"));
}

[[maybe_unused]] ::testing::Environment* const kStopCluster =
    ::testing::AddGlobalTestEnvironment(new StopCluster);

}  // namespace
}  // namespace tb
