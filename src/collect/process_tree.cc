#include "collect/process_tree.h"

#include <string>
#include <unordered_map>

#include "base/strings.h"

namespace tb {

Status ListThreads(HostFiles& files, const PidStat& process, std::vector<std::string>& tids) {
  if (process.num_threads <= 1) {
    tids.assign(1, std::to_string(process.pid));
    return Status::Ok();
  }
  return files.List(Concat({"/proc/", std::to_string(process.pid), "/task"}), tids);
}

ProcessTree::ProcessTree(HostFiles files, pid_t root) : files_(std::move(files)), root_(root) {}

void ProcessTree::Invalidate() {
  fresh_ = false;
  files_.CloseUnused();
}

const std::vector<PidStat>& ProcessTree::Processes() {
  if (!fresh_) {
    processes_.clear();
    if (have_children_file_) Walk();
    if (!have_children_file_) ScanAll();
    fresh_ = true;
  }
  return processes_;
}

bool ProcessTree::Contains(pid_t pid) {
  // Deeper than any real tree: a loop in a malformed /proc ends here.
  constexpr int kMaxGenerations = 256;
  for (int generation = 0; generation < kMaxGenerations && pid > 1; ++generation) {
    if (pid == root_) return true;
    PidStat stat;
    if (!files_.ReadKeepOpen(Concat({"/proc/", std::to_string(pid), "/stat"}), buffer_).ok() ||
        !ParsePidStat(buffer_, stat).ok()) {
      return false;  // exited, or its parent did
    }
    pid = stat.ppid;
  }
  return false;
}

void ProcessTree::Walk() {
  std::vector<pid_t> queue{root_};
  std::vector<pid_t> children;
  for (size_t i = 0; i < queue.size(); ++i) {
    pid_t pid = queue[i];
    std::string dir = Concat({"/proc/", std::to_string(pid)});
    PidStat stat;
    if (!files_.ReadKeepOpen(Concat({dir, "/stat"}), buffer_).ok() || !ParsePidStat(buffer_, stat).ok()) {
      continue;  // exited between ticks
    }
    if (stat.state == 'Z' && pid != root_) continue;
    processes_.push_back(stat);
    if (!ListThreads(files_, stat, names_).ok()) continue;
    for (const std::string& tid : names_) {
      Status s = files_.ReadKeepOpen(Concat({dir, "/task/", tid, "/children"}), buffer_);
      if (s.code() == Status::Code::kNotFound && files_.Exists(Concat({dir, "/task/", tid}))) {
        have_children_file_ = false;  // kernel without CONFIG_PROC_CHILDREN
        processes_.clear();
        return;
      }
      if (!s.ok()) continue;
      children.clear();
      ParseChildren(buffer_, children);
      queue.insert(queue.end(), children.begin(), children.end());
    }
  }
}

void ProcessTree::ScanAll() {
  std::vector<std::string> entries;
  if (!files_.List("/proc", entries).ok()) return;
  std::unordered_map<pid_t, std::vector<PidStat>> by_parent;
  PidStat root_stat;
  bool have_root = false;
  for (const std::string& e : entries) {
    std::optional<int64_t> pid = ParseInt(e);
    if (!pid) continue;
    PidStat stat;
    if (!files_.Read("/proc/" + e + "/stat", buffer_).ok() || !ParsePidStat(buffer_, stat).ok()) {
      continue;
    }
    if (stat.pid == root_) {
      root_stat = stat;
      have_root = true;
    } else if (stat.state != 'Z') {
      by_parent[stat.ppid].push_back(std::move(stat));
    }
  }
  if (!have_root) return;
  processes_.push_back(std::move(root_stat));
  for (size_t i = 0; i < processes_.size(); ++i) {
    auto it = by_parent.find(processes_[i].pid);
    if (it == by_parent.end()) continue;
    for (PidStat& child : it->second) processes_.push_back(std::move(child));
    by_parent.erase(it);
  }
}

}  // namespace tb
