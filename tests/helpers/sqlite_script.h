// Runs SQL statements on a SQLite file, as MLflow's server writes its database while a test
// imports from it (waiting up to 5 s for a reader's lock); a statement that fails is
// reported with SQLite's message and the statement.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

namespace tb {

inline void RunSqlite(const std::string& path, const std::vector<std::string>& statements) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK) << path;
  sqlite3_busy_timeout(db, 5000);
  for (const std::string& s : statements) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, s.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "") << s;
    sqlite3_free(error);
  }
  sqlite3_close(db);
}

}  // namespace tb
