#include "store/postgres/pg_connection.h"

#include <bit>

#include "base/strings.h"
#include "store/schema.h"

namespace tb::pg {

int64_t Rows::Int(int row, int col) const {
  uint64_t v = 0;
  const char* p = Pq().PQgetvalue(r_.get(), row, col);
  if (Pq().PQgetlength(r_.get(), row, col) != 8) return 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return static_cast<int64_t>(v);
}

double Rows::Double(int row, int col) const { return std::bit_cast<double>(Int(row, col)); }

std::string Rows::Str(int row, int col) const {
  return std::string(Pq().PQgetvalue(r_.get(), row, col),
                     static_cast<size_t>(Pq().PQgetlength(r_.get(), row, col)));
}

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& uri) {
  TB_RETURN_IF_ERROR(CLibraryAvailable<Libpq>());
  const char* keys[] = {"connect_timeout", "dbname", nullptr};
  const char* values[] = {"5", uri.c_str(), nullptr};
  PGconn* c = Pq().PQconnectdbParams(keys, values, 1);
  if (Pq().PQstatus(c) != CONNECTION_OK) {
    std::string msg = c != nullptr ? Pq().PQerrorMessage(c) : "out of memory";
    Pq().PQfinish(c);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    return Status::Unavailable("cannot reach the database " + RedactedUri(uri) + ": " + msg);
  }
  // Notices ("relation exists, skipping") are not for users.
  Pq().PQsetNoticeProcessor(
      c, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<Connection>(new Connection(c, uri));
}

Connection::~Connection() { Pq().PQfinish(conn_); }

bool Connection::ok() const { return Pq().PQstatus(conn_) == CONNECTION_OK; }

Result<ResultPtr> Connection::Exec(const Stmt& s, bool binary_result) {
  std::vector<const char*> values;
  std::vector<int> lengths, formats;
  for (const Param& p : s.params) {
    values.push_back(p.null ? nullptr : p.bytes.data());
    lengths.push_back(static_cast<int>(p.bytes.size()));
    formats.push_back(p.binary ? 1 : 0);
  }
  ResultPtr r(Pq().PQexecParams(conn_, s.sql.c_str(), static_cast<int>(s.params.size()), nullptr,
                                values.data(), lengths.data(), formats.data(), binary_result ? 1 : 0),
              Pq().PQclear);
  ExecStatusType st = Pq().PQresultStatus(r.get());
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
  std::string msg = Pq().PQerrorMessage(conn_);
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  if (!ok()) return Status::Unavailable(msg);
  return Status::IoError("database " + RedactedUri(uri_) + ": " + msg);
}

Result<Rows> Connection::Query(const Stmt& s) {
  Result<ResultPtr> r = Exec(s, true);
  if (!r.ok()) return r.status();
  return Rows(std::move(*r));
}

Status Connection::ExecBatch(const Batch& batch, std::vector<int64_t>* changed) {
  bool single = batch.size() == 1;
  if (!single) {
    Result<ResultPtr> begin = Exec({"BEGIN", {}}, false);
    if (!begin.ok()) return begin.status();
  }
  for (const Stmt& s : batch) {
    Result<ResultPtr> r = Exec(s, false);
    if (!r.ok()) {
      if (!single && ok()) (void)Exec({"ROLLBACK", {}}, false);
      return r.status();
    }
    if (changed != nullptr) changed->push_back(ParseInt(Pq().PQcmdTuples(r->get())).value_or(0));
  }
  if (!single) {
    Result<ResultPtr> commit = Exec({"COMMIT", {}}, false);
    if (!commit.ok()) return commit.status();
  }
  return Status::Ok();
}

int64_t HashId(std::string_view s) {
  uint64_t h = Fnv1a64(s);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return static_cast<int64_t>(h >> 1);
}

Result<int> Connection::StoredSchemaVersion() {
  Result<ResultPtr> v = Exec({"SELECT value FROM trainbench_meta WHERE key = 'schema_version'", {}}, false);
  if (!v.ok()) return v.status();
  return Pq().PQntuples(v->get()) > 0
             ? static_cast<int>(ParseInt(Pq().PQgetvalue(v->get(), 0, 0)).value_or(0))
             : 0;
}

Status Connection::Migrate(const std::vector<std::string>& migrations) {
  auto target = static_cast<int>(migrations.size());
  // A database already at this build's schema is used as it is: no lock is taken and
  // nothing written, however many machines start runs into it at once.
  Result<ResultPtr> has_meta = Exec({"SELECT to_regclass('trainbench_meta') IS NOT NULL", {}}, false);
  if (!has_meta.ok()) return has_meta.status();
  if (std::string_view(Pq().PQgetvalue(has_meta->get(), 0, 0)) == "t") {
    Result<int> version = StoredSchemaVersion();
    if (!version.ok()) return version.status();
    if (*version == target) return Status::Ok();
  }
  Result<ResultPtr> begin = Exec({"BEGIN", {}}, false);
  if (!begin.ok()) return begin.status();
  auto fail = [&](const Status& s) {
    if (ok()) (void)Exec({"ROLLBACK", {}}, false);
    return s;
  };
  // One machine migrates; the others wait for it here.
  for (const char* sql :
       {"SELECT pg_advisory_xact_lock(7465627)",
        "CREATE TABLE IF NOT EXISTS trainbench_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)"}) {
    Result<ResultPtr> r = Exec({sql, {}}, false);
    if (!r.ok()) return fail(r.status());
  }
  // Read again under the lock: another machine may have migrated it meanwhile.
  Result<int> version = StoredSchemaVersion();
  if (!version.ok()) return fail(version.status());
  Status known = CheckSchemaVersion(*version, RedactedUri(uri_));
  if (!known.ok()) return fail(known);
  for (int i = *version; i < target; ++i) {
    // A migration is a script of several statements: the simple query protocol takes it.
    ResultPtr r(Pq().PQexec(conn_, migrations[static_cast<size_t>(i)].c_str()), Pq().PQclear);
    if (Pq().PQresultStatus(r.get()) != PGRES_COMMAND_OK && Pq().PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
      return fail(Status::IoError("cannot set up the database " + RedactedUri(uri_) + ": " +
                                  Pq().PQerrorMessage(conn_)));
    }
  }
  Result<ResultPtr> set = Exec({"INSERT INTO trainbench_meta(key, value) VALUES('schema_version', $1) "
                                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                                {Text(std::to_string(target))}},
                               false);
  if (!set.ok()) return fail(set.status());
  Result<ResultPtr> commit = Exec({"COMMIT", {}}, false);
  return commit.ok() ? Status::Ok() : commit.status();
}

}  // namespace tb::pg
