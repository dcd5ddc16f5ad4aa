// The seam between listeners and the machine's /proc and /sys. Every read of those trees
// goes through a HostFiles, whose root is "/" on a live machine and a captured fixture
// tree in tests ("testdata/proc-snapshots/a" holds proc/stat, proc/meminfo, ...).
// Not thread-safe: each listener owns its own instance (it reuses one read buffer).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace tb {

class HostFiles {
 public:
  explicit HostFiles(std::string root = "/");
  // A copy reads under the same root but shares no open files.
  HostFiles(const HostFiles& other) : HostFiles(other.root_) {}
  HostFiles& operator=(const HostFiles& other);
  HostFiles(HostFiles&& other) noexcept = default;
  HostFiles& operator=(HostFiles&& other) noexcept = default;
  ~HostFiles();

  // Reads the whole file at `path` (absolute, e.g. "/proc/stat", resolved under the root)
  // into `out`. Fails with NotFound when it does not exist (a process that just exited).
  Status Read(std::string_view path, std::string& out) const;
  // Like Read, but keeps the file open and rereads it from offset 0 next time, which
  // saves the path lookup, open and close of files read every tick (about half the cost
  // of a small /proc file). A file of a process that exited fails with NotFound and is
  // closed. Files not read between two CloseUnused() calls are closed then.
  Status ReadKeepOpen(std::string_view path, std::string& out);
  void CloseUnused();

  // Names of the entries in a directory, without "." and "..".
  Status List(std::string_view path, std::vector<std::string>& names) const;
  bool Exists(std::string_view path) const;

  const std::string& root() const { return root_; }
  // How many paths this instance has read, listed or checked: what a listener's tick costs
  // the kernel, for tests and benchmarks.
  size_t touched() const { return touched_; }

 private:
  std::string Resolve(std::string_view path) const;
  std::string root_;  // without trailing slash; empty for "/"
  mutable size_t touched_ = 0;
  struct OpenFile {
    int fd;
    bool used;
  };
  std::unordered_map<std::string, OpenFile> open_;
};

}  // namespace tb
