#include "store/postgres/pg_link.h"

#include <chrono>
#include <cstdio>

#include "base/log.h"

namespace tb::pg {
namespace {

// Spools of one database share a directory: the URI hashed.
std::string DatabaseKey(const std::string& uri) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(HashId(uri)));
  return buf;
}

}  // namespace

Link::Link(std::string uri, const std::string& spool_directory, std::vector<std::string> migrations)
    : uri_(std::move(uri)),
      migrations_(std::move(migrations)),
      spool_(spool_directory + "/" + DatabaseKey(uri_)) {}

Link::~Link() {
  {
    std::lock_guard lock(wake_mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (reconnector_.joinable()) reconnector_.join();
  std::lock_guard lock(mu_);
  if (spool_.active()) {
    LogWarning("the database " + RedactedUri(uri_) +
               " is still unreachable: what this run recorded meanwhile is in " + spool_.path() +
               ", written by the next trainbench command that reaches the database");
  }
}

Status Link::Open() {
  std::lock_guard lock(mu_);
  Status connected = ConnectLocked();
  if (!connected.ok()) {
    GoOfflineLocked(connected.message());
    return Status::Ok();
  }
  TB_RETURN_IF_ERROR(MigrateLocked());
  ReplayOrphansLocked();
  return Status::Ok();
}

Status Link::Reachable() {
  std::lock_guard lock(mu_);
  return conn_ ? Status::Ok() : Unreachable();
}

Result<Rows> Link::Query(const Stmt& s) {
  std::lock_guard lock(mu_);
  if (!conn_) return Unreachable();
  Result<Rows> rows = conn_->Query(s);
  if (!rows.ok() && rows.status().code() == Status::Code::kUnavailable)
    GoOfflineLocked(rows.status().message());
  return rows;
}

Status Link::Write(const Batch& batch, std::vector<int64_t>* changed) {
  if (batch.empty()) return Status::Ok();
  std::lock_guard lock(mu_);
  if (conn_ && !spool_.active()) {
    Status s = conn_->ExecBatch(batch, changed);
    if (s.ok() || s.code() != Status::Code::kUnavailable) return s;
    GoOfflineLocked(s.message());
  }
  if (changed != nullptr) changed->clear();  // unknown while spooling
  bool starting = !spool_.active();
  TB_RETURN_IF_ERROR(spool_.Append(batch));
  if (starting) {
    LogWarning("the database " + RedactedUri(uri_) + " cannot be reached (" + offline_reason_ +
               "); the run goes on and its samples are kept in " + spool_.path() + " until it answers");
  }
  return Status::Ok();
}

Status Link::ConnectLocked() {
  Result<std::unique_ptr<Connection>> c = Connection::Open(uri_);
  if (!c.ok()) return c.status();
  conn_ = std::move(*c);
  return Status::Ok();
}

Status Link::MigrateLocked() {
  TB_RETURN_IF_ERROR(conn_->Migrate(migrations_));
  schema_checked_ = true;
  return Status::Ok();
}

Status Link::Unreachable() const {
  return Status::Unavailable("the database " + RedactedUri(uri_) + " cannot be reached (" + offline_reason_ +
                             "); is the server running and the connection string right?");
}

void Link::GoOfflineLocked(const std::string& why) {
  offline_reason_ = why;
  conn_.reset();
  if (!reconnector_.joinable()) reconnector_ = std::thread([this] { Reconnect(); });
}

void Link::Reconnect() {
  auto apply = [this](const Batch& b) { return conn_->ExecBatch(b, nullptr); };
  while (true) {
    {
      std::unique_lock wait(wake_mu_);
      wake_.wait_for(wait, std::chrono::seconds(1), [this] { return stop_; });
      if (stop_) return;
    }
    bool need_connection;
    {
      std::lock_guard lock(mu_);
      if (conn_ && !spool_.active()) continue;
      need_connection = !conn_;
    }
    // Connecting may wait seconds: writers keep spooling meanwhile.
    std::unique_ptr<Connection> fresh;
    if (need_connection) {
      Result<std::unique_ptr<Connection>> c = Connection::Open(uri_);
      if (!c.ok()) continue;
      fresh = std::move(*c);
    }
    std::lock_guard lock(mu_);
    if (fresh) conn_ = std::move(fresh);
    if (!schema_checked_ && !MigrateLocked().ok()) continue;
    if (spool_.active()) {
      int64_t batches = spool_.batches();
      if (!spool_.Replay(apply).ok()) {
        if (conn_ && !conn_->ok()) conn_.reset();
        continue;
      }
      LogInfo("the database " + RedactedUri(uri_) + " answers again: " + std::to_string(batches) +
              " spooled writes are in it");
    }
    ReplayOrphansLocked();
  }
}

void Link::ReplayOrphansLocked() {
  auto apply = [this](const Batch& b) { return conn_->ExecBatch(b, nullptr); };
  for (const std::string& path : spool_.ReplayOrphans(apply))
    LogInfo("wrote what an earlier run spooled while the database was away (" + path + ")");
}

}  // namespace tb::pg
