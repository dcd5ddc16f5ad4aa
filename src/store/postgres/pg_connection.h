// One libpq connection, used the way the PostgreSQL store needs it: statements with
// parameters, results read in binary (BIGINT as 8 big-endian bytes, DOUBLE PRECISION as
// IEEE 754), batches in one transaction, and the schema brought up to date under an
// advisory lock (several machines may start at once). Not thread-safe: its owner
// serializes calls.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/secret.h"
#include "base/status.h"
#include "platform/c_library.h"
#include "store/postgres/pg_spool.h"

namespace tb::pg {

// The functions of libpq this connection calls, loaded when a PostgreSQL store is first
// opened (platform/c_library.h): a SQLite user's trainbench never loads libpq.
// clang-format off
#define TB_LIBPQ_FUNCTIONS(X) \
  X(PQclear) \
  X(PQcmdTuples) \
  X(PQconnectdbParams) \
  X(PQerrorMessage) \
  X(PQexec) \
  X(PQexecParams) \
  X(PQfinish) \
  X(PQgetisnull) \
  X(PQgetlength) \
  X(PQgetvalue) \
  X(PQntuples) \
  X(PQresultStatus) \
  X(PQsetNoticeProcessor) \
  X(PQstatus)
// clang-format on
struct Libpq {
  static constexpr CLibrary kLibrary{"libpq.so.5", "PostgreSQL stores", "libpq5"};
  TB_C_LIBRARY_FUNCTIONS(TB_LIBPQ_FUNCTIONS)
};
// libpq, once LoadCLibrary<Libpq>() has succeeded (every Connection exists after it did).
inline const Libpq& Pq() { return LoadedCLibrary<Libpq>(); }

using ResultPtr = std::unique_ptr<PGresult, decltype(&PQclear)>;

class Rows {
 public:
  explicit Rows(ResultPtr r) : r_(std::move(r)) {}
  int size() const { return Pq().PQntuples(r_.get()); }
  bool IsNull(int row, int col) const { return Pq().PQgetisnull(r_.get(), row, col) != 0; }
  int64_t Int(int row, int col) const;
  double Double(int row, int col) const;
  std::string Str(int row, int col) const;

 private:
  ResultPtr r_;
};

// One row of Rows, read by column (as store_rows.h reads rows).
struct Row {
  const Rows& rows;
  int index;
  bool IsNull(int col) const { return rows.IsNull(index, col); }
  int64_t Int(int col) const { return rows.Int(index, col); }
  double Double(int col) const { return rows.Double(index, col); }
  std::string Text(int col) const { return rows.Str(index, col); }
};

// 63 bits of a hash of `s` (FNV-1a, then mixed): the id of what a name identifies, the
// same on every machine, so that machines sharing a database agree on it.
int64_t HashId(std::string_view s);

class Connection {
 public:
  // Connects (waiting up to 5 s); Unavailable saying why not.
  static Result<std::unique_ptr<Connection>> Open(const std::string& uri);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Whether the server still answers on it.
  bool ok() const;
  // Unavailable when the connection is lost, IoError when the statement failed.
  Result<ResultPtr> Exec(const Stmt& s, bool binary_result);
  Result<Rows> Query(const Stmt& s);
  // The statements in one transaction; `changed` gets each one's affected rows.
  Status ExecBatch(const Batch& batch, std::vector<int64_t>* changed);
  // Runs the migrations the database has not had (each a script of statements) and records
  // the version; InvalidArgument when a newer trainbench wrote the database. A database
  // at the version already is only read.
  Status Migrate(const std::vector<std::string>& migrations);

 private:
  // The version trainbench_meta records (0 when none is).
  Result<int> StoredSchemaVersion();
  Connection(PGconn* conn, std::string uri) : conn_(conn), uri_(std::move(uri)) {}

  PGconn* conn_;
  std::string uri_;
};

}  // namespace tb::pg
