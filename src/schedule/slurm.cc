#include "schedule/slurm.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"
#include "platform/process.h"
#include "platform/supervisor.h"
#include "schedule/write_back.h"
#include "store/store.h"

namespace tb {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kToolTimeoutMs = 30000;
constexpr int64_t kCancelWaitMs = 120000;  // for cancelled jobs' runs to stop and write their outcome

// A Slurm command's output with its error messages (Slurm's tools write them on stderr).
Result<CapturedOutput> Slurm(std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"sh", "-c", "exec \"$0\" \"$@\" 2>&1"});
  return RunAndCapture(argv, kToolTimeoutMs);
}

std::string FirstLine(const std::string& s) {
  std::string_view v = Trim(s);
  return std::string(v.substr(0, v.find('\n')));
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// "exp/w 1" -> "exp_w_1": a name safe for a file.
std::string FileSafe(std::string_view s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  return out;
}

struct Job {
  const Workload* workload = nullptr;
  std::vector<const PlannedRun*> runs;
  std::string id;        // Slurm's job id; "" until submitted
  std::string csv, out;  // the job's experiment file and output
  SlurmJobState last;    // what Slurm said last
  bool ended = false;
};

// The job id in the rows' Status cells ("SLURM 1234"), when every row of the workload has the same.
std::string SubmittedJob(const Workload& w) {
  std::string id;
  for (const PlannedRun& r : w.runs) {
    std::vector<std::string_view> words = SplitWhitespace(r.row.status);
    if (words.size() != 2 || StatusWord(words[0]) != "SLURM") return "";
    if (!id.empty() && id != words[1]) return "";
    id = std::string(words[1]);
  }
  return id;
}

std::string ScriptOf(const Job& j) { return j.csv.substr(0, j.csv.size() - 4) + ".sh"; }

Result<SlurmJobState> QueryJob(const std::string& id) {
  Result<CapturedOutput> shown = Slurm({"scontrol", "show", "job", "-o", id});
  if (shown.ok() && shown->exit.ShellCode() == 0) return ParseScontrolJob(FirstLine(shown->out));
  // Slurm forgets ended jobs after MinJobAge; accounting remembers them where it is kept.
  Result<CapturedOutput> acct = Slurm({"sacct", "-n", "-P", "-X", "-j", id, "-o", "State,Reason,NodeList"});
  if (acct.ok() && acct->exit.ShellCode() == 0 && !Trim(acct->out).empty()) {
    std::vector<std::string_view> cells = Split(FirstLine(acct->out), '|');
    SlurmJobState s;
    s.state = std::string(SplitWhitespace(cells[0]).empty() ? "UNKNOWN" : SplitWhitespace(cells[0])[0]);
    if (cells.size() > 1) s.reason = std::string(cells[1]);
    if (cells.size() > 2) s.nodes = std::string(cells[2]);
    return s;
  }
  return Status::NotFound(
      Concat({"Slurm knows no job ", id, " any more (", FirstLine(shown.ok() ? shown->out : ""),
              "): its rows are marked as not known"}));
}

// The job's experiment file: the header and the workload's rows, Status and Run emptied.
Status WriteJobFile(const ExperimentFile& file, const Workload& w, const std::string& path) {
  size_t header = 0;
  while (header < file.lines.size() && (Trim(file.lines[header]).empty() || file.lines[header][0] == '#'))
    ++header;
  std::string text = file.lines[header] + "\n";
  for (const PlannedRun& r : w.runs) text += file.lines[r.row.line - 1] + "\n";
  Result<ExperimentFile> job = ParseExperimentFile(text, path);
  if (!job.ok()) return job.status();
  std::vector<CellUpdate> cleared;
  for (const ExperimentRow& row : job->rows) cleared.push_back({row.line, "", ""});
  return WriteFileAtomically(path, UpdateStatusAndRun(*job, cleared));
}

}  // namespace

bool SlurmJobState::Active() const {
  static const std::set<std::string, std::less<>> kActive = {
      "PENDING",     "CONFIGURING", "RUNNING",   "COMPLETING", "SUSPENDED", "REQUEUED",     "REQUEUE_HOLD",
      "REQUEUE_FED", "RESIZING",    "SIGNALING", "STAGE_OUT",  "STOPPED",   "RESV_DEL_HOLD"};
  return kActive.count(state) != 0;
}

Result<SlurmJobState> ParseScontrolJob(std::string_view line) {
  SlurmJobState s;
  for (std::string_view field : SplitWhitespace(line)) {
    size_t eq = field.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "JobState") s.state = std::string(value);
    if (key == "Reason") s.reason = std::string(value);
    if (key == "NodeList") s.nodes = std::string(value);
    if (key == "RunTime") s.run_time = std::string(value);
    if (key == "TimeLimit") s.time_limit = std::string(value);
  }
  if (s.state.empty()) return Status::InvalidArgument(Concat({"no JobState in Slurm's answer: ", line}));
  return s;
}

bool SlurmJobState::EndedBySlurm() const {
  return !Active() && state != "COMPLETED" && state != "FAILED" && !state.empty();
}

std::string SlurmOutcome(const SlurmJobState& job) {
  // A job that ended by itself without its runs' outcomes failed (the job's command could
  // not start, say); one Slurm ended was killed.
  std::string what = job.EndedBySlurm() ? kKilled : kFailed;
  std::string reason = job.reason.empty() || job.reason == "None" ? "" : ", " + job.reason;
  return Concat({what, " (Slurm: ", job.state, reason, ")"});
}

int GpusOfWorkload(const Workload& w) {
  uint64_t indices = 0;  // the highest index + 1
  std::set<std::string> uuids;
  auto count = [&](std::string_view t) {
    if (std::optional<uint64_t> k = ParseUint(t)) {
      indices = std::max(indices, *k + 1);
    } else if (!t.empty() && t != "-") {
      uuids.insert(std::string(t));
    }
  };
  for (const PlannedRun& r : w.runs) {
    if (r.mig_gpu) {
      count(std::to_string(*r.mig_gpu));
      continue;
    }
    std::string devices = r.row.devices;
    std::replace(devices.begin(), devices.end(), '+', ',');
    for (std::string_view d : Split(devices, ',')) count(Trim(d));
  }
  return static_cast<int>(indices + uuids.size());
}

std::string SlurmBatchScript(const SlurmJob& job) {
  std::string s = "#!/bin/sh\n";
  s += "#SBATCH --job-name=" + job.name + "\n";
  s += "#SBATCH --output=" + job.output + "\n";
  s += "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n";
  if (job.gpus > 0) s += "#SBATCH --gres=gpu:" + std::to_string(job.gpus) + "\n";
  if (!job.partition.empty()) s += "#SBATCH --partition=" + job.partition + "\n";
  if (!job.account.empty()) s += "#SBATCH --account=" + job.account + "\n";
  if (!job.time_limit.empty()) s += "#SBATCH --time=" + job.time_limit + "\n";
  s += "# trainbench runs the workload's runs together on this node, as it does locally.\nexec";
  for (const std::string& w : job.command) s += " " + ShellQuote(w);
  return s + "\n";
}

namespace {

// The workloads' jobs as they go through Slurm: submitted up to the limit, looked at every
// poll, their outcomes written back into the experiment file as each ends.
class SlurmQueue {
 public:
  SlurmQueue(const ScheduleOptions& o, const ExperimentFile& file, std::vector<Job> jobs)
      : o_(o), file_(file), jobs_(std::move(jobs)), started_(WallMillis()) {}

  // Looks at every job until all ended, or the error that stopped submitting.
  Status Run(StopSignals& signals);
  int End() const { return EndSchedule(o_.file, unwritten_.size(), finished_, failed_, started_, stopping_); }

 private:
  struct Counts {
    size_t active = 0, running = 0, queued = 0, ended = 0;
    std::string running_note;
  };
  void Write(const Job& j, const std::vector<std::pair<std::string, std::string>>& outcomes);
  void Collect(Job& j);
  Status Submit(Job& j);
  Counts Look();
  void Cancel(int sig);

  const ScheduleOptions& o_;
  const ExperimentFile& file_;
  std::vector<Job> jobs_;
  std::vector<Unwritten> unwritten_;
  int finished_ = 0, failed_ = 0;
  bool stopping_ = false;
  int64_t started_, stop_at_ = 0;
};

void SlurmQueue::Write(const Job& j, const std::vector<std::pair<std::string, std::string>>& outcomes) {
  for (size_t i = 0; i < j.runs.size(); ++i)
    unwritten_.push_back({j.runs[i], outcomes[i].first, outcomes[i].second});
  WriteBack(o_.file, unwritten_);
}

// A job that ended: its runs' outcomes from its file, Slurm's where they wrote none.
void SlurmQueue::Collect(Job& j) {
  j.ended = true;
  Result<std::string> text = ReadFile(j.csv);
  Result<ExperimentFile> done =
      text.ok() ? ParseExperimentFile(*text, j.csv) : Result<ExperimentFile>(text.status());
  std::vector<std::pair<std::string, std::string>> outcomes;
  for (size_t i = 0; i < j.runs.size(); ++i) {
    const ExperimentRow* row = done.ok() && i < done->rows.size() ? &done->rows[i] : nullptr;
    std::string word = row != nullptr ? StatusWord(row->status) : "";
    std::string status = row != nullptr ? row->status : "", run = row != nullptr ? row->run : "";
    if (word != kFinished && word != kFailed && word != kKilled) {
      status = SlurmOutcome(j.last);
    } else if (word != kFinished && j.last.EndedBySlurm()) {
      status += " (Slurm: " + j.last.state + ")";
    }
    (StatusWord(status) == kFinished ? finished_ : failed_) += 1;
    outcomes.emplace_back(status, run);
  }
  Write(j, outcomes);
  std::printf("trainbench: Slurm job %s (%s/%s) %s on %s%s\n", j.id.c_str(), j.workload->experiment.c_str(),
              j.workload->workload.c_str(), j.last.state.c_str(), j.last.nodes.c_str(),
              j.last.state == "COMPLETED" ? "" : ("; its output: " + j.out).c_str());
  std::error_code ec;
  if (j.last.state == "COMPLETED") {
    fs::remove(j.csv, ec);
    fs::remove(ScriptOf(j), ec);
  }
}

// Writes the job's experiment file and batch script and gives it to sbatch: the job runs
// `trainbench schedule` on that file on its node.
Status SlurmQueue::Submit(Job& j) {
  if (Status s = WriteJobFile(file_, *j.workload, j.csv); !s.ok()) return s;
  std::vector<std::string> command = {SelfExecutable(), "schedule", j.csv, "--store", o_.store};
  if (!o_.python.empty()) command.insert(command.end(), {"--python", o_.python});
  if (!o_.max_time.empty()) command.insert(command.end(), {"--max-time", o_.max_time});
  if (o_.max_epochs > 0) command.insert(command.end(), {"--max-epochs", std::to_string(o_.max_epochs)});
  if (o_.drop_caches) command.push_back("--drop-caches");
  SlurmJob job{"trainbench:" + FileSafe(j.workload->experiment) + "/" + FileSafe(j.workload->workload),
               j.out,
               GpusOfWorkload(*j.workload),
               o_.slurm_partition,
               o_.slurm_account,
               o_.slurm_time,
               command};
  std::string script = ScriptOf(j);
  if (Status s = WriteFileAtomically(script, SlurmBatchScript(job)); !s.ok()) return s;
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), o_.sbatch_args.begin(), o_.sbatch_args.end());
  argv.push_back(script);
  Result<CapturedOutput> sent = Slurm(argv);
  if (!sent.ok()) return sent.status();
  std::string answer = FirstLine(sent->out);
  if (sent->exit.ShellCode() != 0 || answer.empty() || !std::isdigit(static_cast<unsigned char>(answer[0])))
    return Status::Unavailable(Concat({"sbatch refused workload ", j.workload->workload, ": ", answer}));
  j.id = answer.substr(0, answer.find(';'));  // "ID;CLUSTER" on federations
  Write(j, std::vector<std::pair<std::string, std::string>>(j.runs.size(), {"SLURM " + j.id, ""}));
  std::printf("trainbench: workload %s/%s submitted as Slurm job %s\n", j.workload->experiment.c_str(),
              j.workload->workload.c_str(), j.id.c_str());
  return Status::Ok();
}

// Asks Slurm about every submitted job; those that ended are collected.
SlurmQueue::Counts SlurmQueue::Look() {
  Counts c;
  for (Job& j : jobs_) {
    if (j.ended) {
      ++c.ended;
      continue;
    }
    if (j.id.empty()) continue;
    Result<SlurmJobState> state = QueryJob(j.id);
    j.last =
        state.ok() ? *state : SlurmJobState{"UNKNOWN", std::string(state.status().message()), "", "", ""};
    if (!state.ok() || !j.last.Active()) {
      Collect(j);
      ++c.ended;
      continue;
    }
    ++c.active;
    if (j.last.state == "PENDING") {
      ++c.queued;
    } else {
      ++c.running;
      c.running_note = Concat(
          {"; ", j.workload->workload, " on ", j.last.nodes, " for ", j.last.run_time,
           j.last.time_limit.empty() || j.last.time_limit == "UNLIMITED" ? "" : " of " + j.last.time_limit});
    }
  }
  return c;
}

// A stop signal: cancels our jobs; their runs stop and write their outcomes.
void SlurmQueue::Cancel(int sig) {
  stopping_ = true;
  stop_at_ = WallMillis();
  std::vector<std::string> cancel = {"scancel"};
  for (const Job& j : jobs_) {
    if (!j.id.empty() && !j.ended) cancel.push_back(j.id);
  }
  std::printf("trainbench: %s: cancelling %zu Slurm job(s); waiting for their runs to stop\n", strsignal(sig),
              cancel.size() - 1);
  if (cancel.size() > 1) (void)Slurm(cancel);
}

Status SlurmQueue::Run(StopSignals& signals) {
  size_t next = 0;
  std::string last_line;
  while (true) {
    // Jobs that ended since the last look; then new ones, up to the limit.
    Counts c = Look();
    while (!stopping_ && next < jobs_.size() &&
           c.active < static_cast<size_t>(std::max(1, o_.slurm_max_jobs))) {
      Job& j = jobs_[next++];
      if (!j.id.empty()) continue;  // submitted by an earlier trainbench: followed above
      if (Status error = Submit(j); !error.ok()) return error;
      ++c.active, ++c.queued;
    }
    if (c.active == 0 && (next >= jobs_.size() || stopping_)) return Status::Ok();
    std::string line = Concat({"trainbench: Slurm: ", std::to_string(c.queued), " queued, ",
                               std::to_string(c.running), " running, ", std::to_string(c.ended), " of ",
                               std::to_string(jobs_.size()), " done", c.running_note});
    if (line != last_line)
      std::printf("%s; elapsed %s\n", line.c_str(), FormatDuration(WallMillis() - started_).c_str());
    last_line = line;
    std::fflush(stdout);
    if (stopping_ && WallMillis() > stop_at_ + kCancelWaitMs) {
      LogError(
          "cancelled Slurm jobs have not ended after 2 minutes; their rows keep 'SLURM <id>': run the same "
          "command again to follow them");
      return Status::Ok();
    }
    // Wait for the next look, or a stop signal.
    timespec wait{o_.slurm_poll_ms / 1000, (o_.slurm_poll_ms % 1000) * 1000000L};
    int sig = sigtimedwait(&signals.set(), nullptr, &wait);
    if ((sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) && !stopping_) Cancel(sig);
  }
}

}  // namespace

Result<int> RunOnSlurm(const ScheduleOptions& o, const ExperimentFile& file,
                       const std::vector<Workload>& plan) {
  if (!o.store.starts_with("postgres")) {
    return Status::InvalidArgument(
        "--slurm runs the workloads on other machines, which write to the store: give a store they all "
        "reach, --store postgresql://USER@HOST/DB (or TRAINBENCH_STORE); see docs/SLURM.md");
  }
  if (o.text.size() > 0) return Status::InvalidArgument("--slurm takes an experiment file");
  Result<CapturedOutput> version = Slurm({"sbatch", "--version"});
  if (!version.ok() || version->exit.ShellCode() != 0) {
    return Status::NotFound(
        "sbatch cannot be run here: --slurm needs Slurm's client commands (sbatch, scontrol, scancel) on "
        "this machine, set up for the cluster (Debian: slurm-client)");
  }
  fs::path experiment = fs::absolute(o.file);
  std::string stem = experiment.stem().string();

  std::vector<Job> jobs;
  for (const Workload& w : plan) {
    if (!Runnable(w, o.rerun)) continue;
    Job j;
    j.workload = &w;
    for (const PlannedRun& r : w.runs) j.runs.push_back(&r);
    // One name per workload of the file (two experiments may share workload names).
    std::string base = Concat({".", stem, ".", FileSafe(w.experiment), ".", FileSafe(w.workload), ".slurm"});
    j.csv = (experiment.parent_path() / (base + ".csv")).string();
    j.out = (experiment.parent_path() / (base + ".out")).string();
    j.id = SubmittedJob(w);
    if (!j.id.empty())
      std::printf(
          "trainbench: workload %s/%s is Slurm job %s, submitted before: followed, not submitted again\n",
          w.experiment.c_str(), w.workload.c_str(), j.id.c_str());
    jobs.push_back(std::move(j));
  }
  std::printf("trainbench: %s: %zu workload%s to run as Slurm jobs, %d at a time\n", o.file.c_str(),
              jobs.size(), jobs.size() == 1 ? "" : "s", o.slurm_max_jobs);

  StopSignals signals;
  SlurmQueue queue(o, file, std::move(jobs));
  if (Status error = queue.Run(signals); !error.ok()) return error;
  return queue.End();
}

}  // namespace tb
