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
// Reads from offset 0 to end-of-file with pread, growing `out` as needed.
Status ReadFromStart(int fd, const std::string& name, std::string& out) {
  out.clear();
  size_t used = 0;
  while (true) {
    if (out.size() < used + 4096) out.resize(used + 8192);
    ssize_t n = pread(fd, out.data() + used, out.size() - used, static_cast<off_t>(used));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      out.clear();
      // ESRCH: the process behind a /proc file exited.
      return Status::FromErrno(name, err == ESRCH ? ENOENT : err);
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  out.resize(used);
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
  std::string full = root_;
  full.append(path);
  return full;
}

Status HostFiles::Read(std::string_view path, std::string& out) const {
  std::string full = Resolve(path);
  int fd = open(full.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(full, errno);
  out.clear();
  // /proc files report size 0, so read until EOF in blocks.
  size_t used = 0;
  while (true) {
    if (out.size() < used + 4096) out.resize(used + 8192);
    ssize_t n = read(fd, out.data() + used, out.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      out.clear();
      return Status::FromErrno(full, err);
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  close(fd);
  out.resize(used);
  return Status::Ok();
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
