#include "store/schema.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>

namespace tb {
namespace {

TEST(SchemaTest, BothDialectsSpellEveryPlaceholder) {
  for (Dialect d : {Dialect::kSqlite, Dialect::kPostgres}) {
    std::vector<std::string> scripts = Migrations(d);
    ASSERT_EQ(scripts.size(), static_cast<size_t>(kSchemaVersion));
    for (const std::string& sql : scripts) EXPECT_EQ(sql.find('{'), std::string::npos) << sql;
  }
  std::string pg = Migrations(Dialect::kPostgres)[0];
  EXPECT_NE(pg.find("id BIGINT PRIMARY KEY"), std::string::npos);
  EXPECT_NE(pg.find("data BYTEA NOT NULL"), std::string::npos);
  EXPECT_NE(pg.find("seq BIGSERIAL"), std::string::npos);
  // SQLite's rowid alias needs exactly INTEGER PRIMARY KEY.
  std::string lite = Migrations(Dialect::kSqlite)[0];
  EXPECT_NE(lite.find("id INTEGER PRIMARY KEY"), std::string::npos);
  EXPECT_EQ(lite.find("seq"), std::string::npos);
}

TEST(SchemaTest, SqliteMigrationsApplyInOrderToAnEmptyDatabase) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  for (const std::string& sql : Migrations(Dialect::kSqlite))
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::set<std::string> tables;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW)
    tables.insert(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_EQ(tables, (std::set<std::string>{"experiments", "runs", "params", "tags", "series", "chunks",
                                           "events", "journal", "artifacts", "experiment_tags",
                                           "series_overview", "chunk_times", "registered_models"}));
}

TEST(SchemaTest, AStoreFromANewerBuildIsRefusedWithWhatToDo) {
  EXPECT_TRUE(CheckSchemaVersion(kSchemaVersion, "s.db").ok());
  EXPECT_TRUE(CheckSchemaVersion(0, "s.db").ok());
  Status newer = CheckSchemaVersion(kSchemaVersion + 1, "s.db");
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.message().find("s.db was written by a newer trainbench"), std::string::npos);
  EXPECT_NE(newer.message().find("upgrade trainbench"), std::string::npos);
}

}  // namespace
}  // namespace tb
