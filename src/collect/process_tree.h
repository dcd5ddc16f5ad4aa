// The process tree of a run: the root (the command trainbench started) and every
// descendant, such as DataLoader workers. Found each tick by walking
// /proc/PID/task/TID/children (only the tree's own files are read), or, on kernels
// without that file, by one scan of /proc. Not thread-safe; owned by the sampler.
#pragma once

#include <sys/types.h>

#include <vector>

#include "collect/proc_parsers.h"
#include "platform/host_files.h"

namespace tb {

// The thread ids of a process: the pid alone when it has one thread (no directory read),
// otherwise the entries of /proc/PID/task.
Status ListThreads(HostFiles& files, const PidStat& process, std::vector<std::string>& tids);

class ProcessTree {
 public:
  ProcessTree(HostFiles files, pid_t root);

  // Forgets the previous tick's answer; the next Processes() call walks /proc again. Closes
  // the files the previous tick did not read.
  void Invalidate();
  // The /proc/PID/stat of every live process in the tree, root first. Its cost grows with
  // the tree's threads (a children file each): a PyTorch process has dozens.
  const std::vector<PidStat>& Processes();
  // Whether `pid` is the root or one of its descendants, found by walking its parents
  // (/proc/PID/stat): a file per generation, whatever the tree's size. What a listener
  // that asks about a few processes (those NVML lists on a GPU) uses.
  bool Contains(pid_t pid);
  pid_t root() const { return root_; }
  const HostFiles& files() const { return files_; }

 private:
  void Walk();
  void ScanAll();
  HostFiles files_;
  pid_t root_;
  bool fresh_ = false;
  bool have_children_file_ = true;
  std::vector<PidStat> processes_;
  std::string buffer_;
  std::vector<std::string> names_;
};

}  // namespace tb
