// A link to one PostgreSQL database that outlives the database going away. Reads need the
// database; writes never wait for it: while it cannot be reached they go to an on-disk
// spool (pg_spool.h), and a background thread reconnects every second, brings the schema
// up to date, writes the spool in order and then the spools of processes that ended while
// the database was away. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "store/postgres/pg_connection.h"
#include "store/postgres/pg_spool.h"

namespace tb::pg {

class Link {
 public:
  // `migrations`: the schema's scripts, applied when the link first reaches the database.
  // Spools live under `spool_directory`, one directory per database.
  Link(std::string uri, const std::string& spool_directory, std::vector<std::string> migrations);
  // Stops the reconnecting thread; says where the writes are when the spool is not empty.
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // Connects and migrates. A database that does not answer is no error: writes spool.
  // A database that answers but refuses the schema (a newer trainbench's) is one.
  Status Open();
  // OK while the database answers; otherwise an error that says what to check.
  Status Reachable();
  // The URI with its password hidden.
  std::string Describe() const { return RedactedUri(uri_); }

  Result<Rows> Query(const Stmt& s);
  // Applies `batch` in one transaction, or appends it to the spool while the database is
  // away. `changed` gets each statement's row count when it was applied now, else nothing.
  Status Write(const Batch& batch, std::vector<int64_t>* changed = nullptr);

 private:
  Status ConnectLocked();
  Status MigrateLocked();
  Status Unreachable() const;
  void GoOfflineLocked(const std::string& why);
  void Reconnect();
  void ReplayOrphansLocked();

  std::string uri_;
  std::vector<std::string> migrations_;
  std::mutex mu_;  // the connection, the spool
  std::unique_ptr<Connection> conn_;
  Spool spool_;
  bool schema_checked_ = false;
  std::string offline_reason_;
  std::thread reconnector_;
  std::mutex wake_mu_;
  std::condition_variable wake_;
  bool stop_ = false;
};

}  // namespace tb::pg
