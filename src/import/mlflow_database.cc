#include "import/mlflow_database.h"

#include <sqlite3.h>

#include <utility>

#include "base/strings.h"
#include "store/postgres/pg_connection.h"
#include "store/sqlite/sqlite_statement.h"

namespace tb::mlflow_db {
namespace {

template <typename Row>
class CellsOf final : public Cells {
 public:
  explicit CellsOf(const Row& row) : row_(row) {}
  bool IsNull(int col) const override { return row_.IsNull(col); }
  int64_t Int(int col) const override { return row_.Int(col); }
  double Double(int col) const override { return row_.Double(col); }
  std::string Text(int col) const override { return row_.Text(col); }

 private:
  const Row& row_;
};

class SqliteDatabase final : public Database {
 public:
  static Result<std::unique_ptr<Database>> Open(const std::string& path) {
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    auto out = std::unique_ptr<SqliteDatabase>(new SqliteDatabase(db));
    if (rc != SQLITE_OK) {
      return Status::NotFound(
          "cannot open the MLflow database " + path + ": " + sqlite3_errstr(rc) +
          " (give the file MLflow's --backend-store-uri names: sqlite:///mlflow.db in this directory, "
          "sqlite:////abs/path/mlflow.db)");
    }
    sqlite3_busy_timeout(db, 5000);  // an MLflow server may be writing to it
    return std::unique_ptr<Database>(std::move(out));
  }
  ~SqliteDatabase() override { sqlite3_close(db_); }
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  Status Each(const std::string& sql, const std::string& param,
              const std::function<void(const Cells&)>& row) override {
    Statement st(db_, sql.c_str());
    if (!st.ok()) return Status::InvalidArgument(sqlite3_errmsg(db_));
    if (sql.find("$1") != std::string::npos) st.Bind(1, param);
    CellsOf<Statement> cells(st);
    int rc = SQLITE_ROW;
    while ((rc = st.Step()) == SQLITE_ROW) row(cells);
    if (rc != SQLITE_DONE) return Status::IoError(sqlite3_errmsg(db_));
    return Status::Ok();
  }
  std::string TypeOf(std::string_view column) const override { return Concat({"typeof(", column, ")"}); }

 private:
  explicit SqliteDatabase(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

class PostgresDatabase final : public Database {
 public:
  explicit PostgresDatabase(std::unique_ptr<pg::Connection> c) : c_(std::move(c)) {}
  Status Each(const std::string& sql, const std::string& param,
              const std::function<void(const Cells&)>& row) override {
    pg::Stmt st{sql, {}};
    if (sql.find("$1") != std::string::npos) st.params.push_back(pg::Text(param));
    Result<pg::Rows> rows = c_->Query(st);
    if (!rows.ok()) return Status::InvalidArgument(rows.status().message());
    for (int i = 0; i < rows->size(); ++i) {
      pg::Row r{*rows, i};
      row(CellsOf<pg::Row>(r));
    }
    return Status::Ok();
  }
  std::string TypeOf(std::string_view column) const override {
    return Concat({"CASE WHEN ", column, " IS NULL THEN 'null' ELSE 'number' END"});
  }

 private:
  std::unique_ptr<pg::Connection> c_;
};

}  // namespace

Result<std::unique_ptr<Database>> OpenDatabase(const std::string& source) {
  if (StartsWith(source, "postgresql://") || StartsWith(source, "postgres://")) {
    Result<std::unique_ptr<pg::Connection>> c = pg::Connection::Open(source);
    if (!c.ok()) return c.status();
    return std::unique_ptr<Database>(std::make_unique<PostgresDatabase>(std::move(c.value())));
  }
  std::string path = source;
  if (StartsWith(path, "sqlite:///")) {
    path = path.substr(std::string_view("sqlite:///").size());
  } else if (StartsWith(path, "sqlite:")) {
    return Status::InvalidArgument(
        "cannot import " + source +
        ": give MLflow's database file as sqlite:///mlflow.db (in this directory), "
        "sqlite:////abs/path/mlflow.db or a path");
  }
  if (path.empty()) return Status::InvalidArgument("no MLflow database file in " + source);
  return SqliteDatabase::Open(path);
}

Status EachOf(Database& db, const std::vector<std::string>& shapes, const std::string& param,
              const std::function<void(const Cells&)>& row) {
  Status last;
  for (const std::string& sql : shapes) {
    last = db.Each(sql, param, row);
    if (last.ok()) return last;
  }
  return last;
}

}  // namespace tb::mlflow_db
