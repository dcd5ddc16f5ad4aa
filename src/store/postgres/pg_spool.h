// The PostgreSQL store's statements and its offline spool. Every write to the shared store
// is a batch of statements that can be applied twice (inserts skip what exists); while the
// database cannot be reached, batches are appended to a spool file on local disk and
// replayed in order once it answers.
//
// A spool file is a sequence of batches: "TBSB", u32 length, then the batch: u32 statement
// count; per statement u32 SQL length, SQL, u32 parameter count; per parameter i32 length
// (-1: NULL), the bytes, u8 binary. A batch cut short by a crash is ignored.
//
// A process holds an exclusive flock on its own spool while it may still add to it, so a
// spool whose lock is free belongs to a process that ended: an orphan, replayed by the
// next process that reaches the database.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tb::pg {

// A statement parameter: text (or NULL), or binary for BYTEA.
struct Param {
  bool null = false;
  bool binary = false;
  std::string bytes;
};
Param Text(std::string s);
Param Int(int64_t v);
Param Bytes(std::string s);
Param OptBytes(std::string s);           // NULL when empty
Param Real(std::optional<double> v);     // NULL when absent; 17 digits, exact
Param OptInt(std::optional<int64_t> v);  // NULL when absent

struct Stmt {
  std::string sql;
  std::vector<Param> params;
};
using Batch = std::vector<Stmt>;

std::string EncodeBatch(const Batch& batch);
// The complete batches of a spool file's bytes.
std::vector<Batch> DecodeSpool(std::string_view bytes);

class Spool {
 public:
  // `directory`: where this database's spools live (created when needed).
  explicit Spool(std::string directory);
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  // Whether this process is spooling (its file exists and is locked).
  bool active() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  // Batches appended since the spool started.
  int64_t batches() const { return batches_; }

  // Appends a batch; the first one creates and locks this process's file.
  Status Append(const Batch& batch);
  // Applies this process's spooled batches in order with `apply`; on success the file is
  // removed and the spool is no longer active. On failure nothing is removed: a batch
  // applied twice does no harm.
  Status Replay(const std::function<Status(const Batch&)>& apply);
  // Replays the spools of processes that ended (their lock is free), removing each one
  // that was applied whole. Returns the paths replayed.
  std::vector<std::string> ReplayOrphans(const std::function<Status(const Batch&)>& apply);

 private:
  std::string directory_;
  std::string path_;
  int fd_ = -1;
  int64_t batches_ = 0;
};

}  // namespace tb::pg
