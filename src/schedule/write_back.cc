#include "schedule/write_back.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"
#include "collect/listeners.h"
#include "platform/process.h"
#include "schedule/experiment_file.h"
#include "schedule/gpu_sharing.h"
#include "schedule/sweep_file.h"
#include "store/run_tags.h"
#include "store/store.h"

namespace tb {
namespace {

namespace fs = std::filesystem;

}  // namespace

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read experiment file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Replaces `path` with `text` whole or not at all; a failed write (a full disk) leaves no
// temporary file behind.
Status WriteFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".trainbench-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return Status::IoError("cannot write " + tmp + " (is the disk full?)");
    }
  }
  // The user's file keeps its mode (trainbench's own files are created owner-only).
  struct stat was {};
  if (stat(path.c_str(), &was) == 0) chmod(tmp.c_str(), was.st_mode & 07777);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int error = errno;
    std::remove(tmp.c_str());
    return Status::FromErrno("cannot replace " + path, error);
  }
  return Status::Ok();
}

void WriteBack(const std::string& path, std::vector<Unwritten>& pending) {
  std::string side = path + ".trainbench-status";
  Result<std::string> now = ReadFile(path);
  Result<ExperimentFile> current = now.ok() ? ParseExperimentFile(*now, path) : now.status();
  if (!current.ok()) {
    std::string listing = "# trainbench: outcomes not yet written into " + path + "\nLine,Status,Run\n";
    for (const Unwritten& u : pending)
      listing += std::to_string(u.run->row.line) + "," + u.status + "," + u.run_id + "\n";
    Status kept = WriteFileAtomically(side, listing);
    LogWarning(
        Concat({path, " cannot be read back (", current.status().message(),
                "); it is left as it is. The outcomes so far are in ", kept.ok() ? side : "this output only",
                " and are written into the file after the next workload once it reads again"}));
    return;
  }
  std::vector<CellUpdate> updates;
  std::set<size_t> taken;
  for (const Unwritten& u : pending) {
    std::optional<size_t> line = MatchRow(*current, u.run->row, taken);
    if (!line) {
      LogWarning(Concat({path, ":", std::to_string(u.run->row.line),
                         ": the row was changed or removed while it ran; ", u.run->letter, " ended ",
                         u.status, u.run_id.empty() ? "" : " (run " + u.run_id + ")", ", not written back"}));
      continue;
    }
    taken.insert(*line);
    updates.push_back({*line, u.status, u.run_id});
  }
  Status written = WriteFileAtomically(path, UpdateStatusAndRun(*current, updates));
  if (!written.ok()) {
    LogError("cannot write the statuses back: " + written.message() +
             "; tried again after the next workload");
    return;
  }
  pending.clear();
  std::error_code ec;
  fs::remove(side, ec);
}

void WriteSweepBack(const std::string& path, const std::string& parent, std::vector<Unwritten>& pending) {
  Result<std::string> now = ReadFile(path);
  Result<SweepFile> current = now.ok() ? ParseSweep(*now, path) : Result<SweepFile>(now.status());
  if (!current.ok()) {
    LogWarning(
        Concat({path, " cannot be read back (", current.status().message(),
                "); it is left as it is, and the outcomes so far are written in after the next workload "
                "once it reads again"}));
    return;
  }
  for (const Unwritten& u : pending) {
    std::optional<int64_t> number = ParseInt(u.run->row.workload);
    if (number) current->status[*number] = SweepOutcome(StatusWord(u.status), u.run_id, u.run->row.params);
  }
  Status written = WriteFileAtomically(path, SweepWithOutcomes(*now, parent, current->status));
  if (!written.ok()) {
    LogError("cannot write the statuses back: " + written.message() +
             "; tried again after the next workload");
    return;
  }
  pending.clear();
}

Result<std::string> OpenParentRun(Store& store, const ScheduleOptions& o, const std::string& experiment) {
  if (Result<RunRecord> found = store.FindRun(o.group); found.ok() && found->id == o.group) {
    std::printf("trainbench: the runs are nested under parent run %s (%s)\n", found->id.c_str(),
                found->name.c_str());
    return found->id;
  }
  RunRecord parent;
  parent.id = NewRunId();
  parent.experiment = experiment;
  parent.name = o.group;
  parent.command = "trainbench schedule " + o.file;
  std::error_code ec;
  parent.working_directory = fs::current_path(ec).string();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  parent.host = host;
  parent.supervisor_pid = getpid();
  parent.start_ms = WallMillis();
  parent.tags = {{kGroupTag, o.file}};
  TB_RETURN_IF_ERROR(store.EnsureExperiment(experiment).status());
  TB_RETURN_IF_ERROR(store.CreateRun(parent));
  std::printf("trainbench: new parent run %s ('%s') in experiment '%s'; every run is nested under it\n",
              parent.id.c_str(), parent.name.c_str(), experiment.c_str());
  return parent.id;
}

}  // namespace tb
