#include "platform/host_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace tb {

HostFiles::HostFiles(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

HostFiles& HostFiles::operator=(const HostFiles& other) {
  if (this != &other) {
    for (auto& [path, f] : open_) close(f.fd);
    open_.clear();
    root_ = other.root_;
  }
  return *this;
}

HostFiles::~HostFiles() {
  for (auto& [path, f] : open_) close(f.fd);
}

namespace {
constexpr size_t kReadBlock = 65536;

// Reads from offset 0 to end-of-file with pread into `out` (reusing its capacity: no
// allocation and no zero-filling on the hot path). /proc files fill a read as far as
// they can, so a short read is the end and costs no extra call.
Status ReadFromStart(int fd, const std::string& name, std::string& out) {
  thread_local char block[kReadBlock];
  out.clear();
  off_t offset = 0;
  while (true) {
    ssize_t n = pread(fd, block, kReadBlock, offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      out.clear();
      // ESRCH: the process behind a /proc file exited.
      return Status::FromErrno(name, err == ESRCH ? ENOENT : err);
    }
    out.append(block, static_cast<size_t>(n));
    offset += n;
    if (static_cast<size_t>(n) < kReadBlock) break;
  }
  return Status::Ok();
}
constexpr size_t kMaxOpenFiles = 512;
}  // namespace

Status HostFiles::ReadKeepOpen(std::string_view path, std::string& out) {
  std::string full = Resolve(path);
  auto it = open_.find(full);
  if (it == open_.end()) {
    if (open_.size() >= kMaxOpenFiles) return Read(path, out);
    int fd = open(full.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::FromErrno(full, errno);
    it = open_.emplace(full, OpenFile{fd, true}).first;
  }
  it->second.used = true;
  Status s = ReadFromStart(it->second.fd, full, out);
  if (!s.ok()) {
    close(it->second.fd);
    open_.erase(it);
  }
  return s;
}

void HostFiles::CloseUnused() {
  for (auto it = open_.begin(); it != open_.end();) {
    if (!it->second.used) {
      close(it->second.fd);
      it = open_.erase(it);
    } else {
      it->second.used = false;
      ++it;
    }
  }
}

std::string HostFiles::Resolve(std::string_view path) const {
  ++touched_;
  std::string full = root_;
  full.append(path);
  return full;
}

Status HostFiles::Read(std::string_view path, std::string& out) const {
  std::string full = Resolve(path);
  int fd = open(full.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(full, errno);
  Status s = ReadFromStart(fd, full, out);
  close(fd);
  return s;
}

Status HostFiles::List(std::string_view path, std::vector<std::string>& names) const {
  std::string full = Resolve(path);
  names.clear();
  DIR* dir = opendir(full.c_str());
  if (dir == nullptr) return Status::FromErrno(full, errno);
  while (dirent* e = readdir(dir)) {
    std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    names.emplace_back(n);
  }
  closedir(dir);
  return Status::Ok();
}

bool HostFiles::Exists(std::string_view path) const {
  struct stat st {};
  return stat(Resolve(path).c_str(), &st) == 0;
}

}  // namespace tb
