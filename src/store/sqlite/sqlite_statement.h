// One prepared SQLite statement, with typed binds and reads: finalized with its owner, or
// borrowed from a StatementCache and given back to it, reset, for the next use of its SQL.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>

namespace tb {

// The statements of one connection prepared once and kept, by their SQL, while no
// Statement uses them. Parsing and planning a statement costs more than running a
// short one: a request that looks up 50 runs by id prepared 150 statements. A kept
// statement is reset, so it holds no read transaction open. Thread-safe; finalizes what
// it keeps when destroyed (before the connection closes).
class StatementCache {
 public:
  explicit StatementCache(sqlite3* db) : db_(db) {}
  ~StatementCache() {
    for (auto& [sql, stmt] : idle_) sqlite3_finalize(stmt);
  }
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  // The kept statement for `sql`, or a new one (nullptr when it does not prepare).
  sqlite3_stmt* Take(const std::string& sql) {
    {
      std::lock_guard lock(mu_);
      auto it = idle_.find(sql);
      if (it != idle_.end()) {
        sqlite3_stmt* stmt = it->second;
        idle_.erase(it);
        return stmt;
      }
    }
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) {
      sqlite3_finalize(stmt);
      return nullptr;
    }
    return stmt;
  }
  // Keeps `stmt`, reset and unbound, unless one for `sql` is kept already.
  void Give(const std::string& sql, sqlite3_stmt* stmt) {
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    std::lock_guard lock(mu_);
    if (!idle_.emplace(sql, stmt).second) sqlite3_finalize(stmt);
  }

 private:
  sqlite3* db_;
  std::mutex mu_;
  std::map<std::string, sqlite3_stmt*, std::less<>> idle_;
};

class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) stmt_ = nullptr;
  }
  // Borrowed from `cache`, given back when this is destroyed.
  Statement(StatementCache& cache, std::string sql) : cache_(&cache), sql_(std::move(sql)) {
    stmt_ = cache.Take(sql_);
  }
  ~Statement() {
    if (cache_ != nullptr && stmt_ != nullptr) {
      cache_->Give(sql_, stmt_);
    } else {
      sqlite3_finalize(stmt_);
    }
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  Statement& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Statement& Bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // Not copied: `v` must outlive the statement's next Step.
  Statement& BindBlob(int i, const std::string& v) {
    sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
    return *this;
  }
  Statement& Bind(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  // NULL when empty.
  template <typename T>
  Statement& Bind(int i, std::optional<T> v) {
    if (!v) {
      sqlite3_bind_null(stmt_, i);
      return *this;
    }
    if constexpr (std::is_floating_point_v<T>) {
      return Bind(i, static_cast<double>(*v));
    } else {
      return Bind(i, static_cast<int64_t>(*v));
    }
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string Text(int col) const {
    const void* p = sqlite3_column_blob(stmt_, col);
    int n = sqlite3_column_bytes(stmt_, col);
    return p == nullptr ? std::string() : std::string(static_cast<const char*>(p), static_cast<size_t>(n));
  }

 private:
  StatementCache* cache_ = nullptr;
  std::string sql_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace tb
