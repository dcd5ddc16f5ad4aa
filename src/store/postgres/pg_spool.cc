#include "store/postgres/pg_spool.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace tb::pg {
namespace {

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
bool GetU32(std::string_view in, size_t& pos, uint32_t& v) {
  if (in.size() - pos < 4) return false;
  v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  pos += 4;
  return true;
}

uint32_t RandomSuffix() {
  uint32_t v = 0;
  while (getrandom(&v, sizeof v, 0) != sizeof v) {
  }
  return v % 1000000;
}

Status ApplyFile(const std::string& path, const std::function<Status(const Batch&)>& apply) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  for (const Batch& batch : DecodeSpool(bytes)) TB_RETURN_IF_ERROR(apply(batch));
  return Status::Ok();
}

}  // namespace

Param Text(std::string s) { return {false, false, std::move(s)}; }
Param Int(int64_t v) { return {false, false, std::to_string(v)}; }
Param Bytes(std::string s) { return {false, true, std::move(s)}; }
Param OptBytes(std::string s) { return {s.empty(), true, std::move(s)}; }
Param Real(std::optional<double> v) {
  if (!v) return {true, false, ""};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", *v);
  return {false, false, buf};
}
Param OptInt(std::optional<int64_t> v) { return v ? Int(*v) : Param{true, false, ""}; }

std::string EncodeBatch(const Batch& batch) {
  std::string body;
  PutU32(body, static_cast<uint32_t>(batch.size()));
  for (const Stmt& s : batch) {
    PutU32(body, static_cast<uint32_t>(s.sql.size()));
    body += s.sql;
    PutU32(body, static_cast<uint32_t>(s.params.size()));
    for (const Param& p : s.params) {
      PutU32(body, p.null ? 0xffffffffu : static_cast<uint32_t>(p.bytes.size()));
      body += p.bytes;
      body += static_cast<char>(p.binary ? 1 : 0);
    }
  }
  std::string out = "TBSB";
  PutU32(out, static_cast<uint32_t>(body.size()));
  return out + body;
}

// The complete batches of a spool file.
std::vector<Batch> DecodeSpool(std::string_view in) {
  std::vector<Batch> batches;
  size_t pos = 0;
  while (in.size() - pos >= 8 && in.substr(pos, 4) == "TBSB") {
    pos += 4;
    uint32_t len = 0;
    if (!GetU32(in, pos, len) || in.size() - pos < len) break;
    std::string_view body = in.substr(pos, len);
    pos += len;
    size_t p = 0;
    uint32_t n = 0;
    if (!GetU32(body, p, n)) break;
    Batch batch;
    bool ok = true;
    for (uint32_t i = 0; i < n && ok; ++i) {
      Stmt s;
      uint32_t sql_len = 0, params = 0;
      ok = GetU32(body, p, sql_len) && body.size() - p >= sql_len;
      if (!ok) break;
      s.sql = std::string(body.substr(p, sql_len));
      p += sql_len;
      ok = GetU32(body, p, params);
      for (uint32_t j = 0; j < params && ok; ++j) {
        uint32_t plen = 0;
        ok = GetU32(body, p, plen);
        if (!ok) break;
        Param prm;
        prm.null = plen == 0xffffffffu;
        if (!prm.null) {
          ok = body.size() - p >= plen;
          if (!ok) break;
          prm.bytes = std::string(body.substr(p, plen));
          p += plen;
        }
        ok = p < body.size();
        if (!ok) break;
        prm.binary = body[p++] != 0;
        s.params.push_back(std::move(prm));
      }
      batch.push_back(std::move(s));
    }
    if (!ok) break;
    batches.push_back(std::move(batch));
  }
  return batches;
}

Spool::Spool(std::string directory) : directory_(std::move(directory)) {}

Spool::~Spool() {
  if (fd_ >= 0) close(fd_);  // the file stays: the next process that reaches the database replays it
}

Status Spool::Append(const Batch& batch) {
  if (fd_ < 0) {
    std::error_code ec;
    std::filesystem::create_directories(directory_, ec);
    path_ = directory_ + "/" + std::to_string(getpid()) + "-" + std::to_string(RandomSuffix()) + ".spool";
    fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd_ < 0) return Status::FromErrno("cannot spool to " + path_, errno);
    flock(fd_, LOCK_EX);  // held while this process may still add to it
    batches_ = 0;
  }
  std::string bytes = EncodeBatch(batch);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno("cannot spool to " + path_, errno);
    done += static_cast<size_t>(n);
  }
  ++batches_;
  return Status::Ok();
}

Status Spool::Replay(const std::function<Status(const Batch&)>& apply) {
  if (fd_ < 0) return Status::Ok();
  TB_RETURN_IF_ERROR(ApplyFile(path_, apply));
  close(fd_);
  fd_ = -1;
  std::remove(path_.c_str());
  return Status::Ok();
}

std::vector<std::string> Spool::ReplayOrphans(const std::function<Status(const Batch&)>& apply) {
  std::vector<std::string> replayed;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(directory_, ec)) {
    std::string path = entry.path().string();
    if ((fd_ >= 0 && path == path_) || !path.ends_with(".spool")) continue;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && ApplyFile(path, apply).ok()) {
      std::remove(path.c_str());
      replayed.push_back(path);
    }
    close(fd);
  }
  return replayed;
}

}  // namespace tb::pg
