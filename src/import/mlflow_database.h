// Reading an MLflow tracking database, SQLite or PostgreSQL, one query at a time, for
// `import --mlflow`. Queries are written once for both: integers are read as BIGINT and
// reals as DOUBLE PRECISION (the queries cast to them), and TypeOf says what a column
// really holds, since SQLite keeps whatever was written (text where MLflow writes numbers).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tb::mlflow_db {

// One row of a query's result, read by column.
class Cells {
 public:
  virtual ~Cells() = default;
  virtual bool IsNull(int col) const = 0;
  virtual int64_t Int(int col) const = 0;
  virtual double Double(int col) const = 0;
  virtual std::string Text(int col) const = 0;
};

class Database {
 public:
  virtual ~Database() = default;
  // Calls `row` for every row of `sql`, whose $1 (if any) is `param`.
  virtual Status Each(const std::string& sql, const std::string& param,
                      const std::function<void(const Cells&)>& row) = 0;
  // An SQL expression naming what `column` holds: 'integer', 'real', 'null', or 'text' and
  // 'blob' where a SQLite database holds those in place of a number (PostgreSQL's typed
  // columns cannot: it answers 'number' or 'null').
  virtual std::string TypeOf(std::string_view column) const = 0;
};

// MLflow's URI as SQLAlchemy reads it: sqlite:///mlflow.db is mlflow.db in the working
// directory, sqlite:////srv/mlflow.db the absolute path, a bare path a path;
// postgresql://user@host/db a server. Read-only.
Result<std::unique_ptr<Database>> OpenDatabase(const std::string& source);

// The first of `shapes` that works: MLflow's schema gained columns over the years
// (runs.name in 2.0, metrics.is_nan in 1.x); older databases are read with the older shape.
Status EachOf(Database& db, const std::vector<std::string>& shapes, const std::string& param,
              const std::function<void(const Cells&)>& row);

// Whether a TypeOf answer is text or bytes where a number belongs.
inline bool NotANumber(std::string_view type) { return type == "text" || type == "blob"; }

}  // namespace tb::mlflow_db
