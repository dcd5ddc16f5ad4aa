#include "run/distributed.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <set>
#include <thread>

#include "base/strings.h"
#include "base/time.h"
#include "metrics/sample.h"

extern char** environ;

namespace tb {
namespace {

constexpr const char* kPartStart = "part.start";
constexpr const char* kPartEnd = "part.end";

std::optional<int> EnvInt(const std::map<std::string, std::string>& env, const std::string& name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  char* end = nullptr;
  long v = std::strtol(it->second.c_str(), &end, 10);
  if (*end != '\0' || v < 0) return std::nullopt;
  return static_cast<int>(v);
}

std::string EnvText(const std::map<std::string, std::string>& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

// The worse of two endings: a failed part makes the run FAILED, a killed one KILLED.
int Severity(const std::string& status) {
  if (status == kFailed) return 2;
  if (status == kKilled) return 1;
  return 0;
}

}  // namespace

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string_view::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

std::string SlurmStepRunId(const std::string& cluster, const std::string& job, const std::string& step) {
  std::string key = Concat({"slurm\n", cluster, "\n", job, "\n", step});
  char id[33];
  std::snprintf(id, sizeof id, "%016" PRIx64 "%016" PRIx64, Fnv1a64(key), Fnv1a64(key + "\n2"));
  return id;
}

Result<DistributedRun> ResolveDistributed(const DistributedRequest& request,
                                          const std::map<std::string, std::string>& env,
                                          const std::string& host) {
  std::optional<int> tasks = EnvInt(env, "SLURM_STEP_NUM_TASKS");
  std::optional<int> procid = EnvInt(env, "SLURM_PROCID");
  bool in_step = tasks.has_value() && procid.has_value() && !EnvText(env, "SLURM_STEP_ID").empty();
  DistributedRun out;
  out.part.count = request.nodes;
  out.part.index = request.rank;
  out.part.node = request.node;
  out.run_id = request.run_id;
  if (in_step) {
    std::optional<int> nodes = EnvInt(env, "SLURM_STEP_NUM_NODES");
    if (request.nodes == 0 && nodes && *nodes != *tasks) {
      return Status::InvalidArgument(
          "trainbench run --distributed is one part per node, but this Slurm step has " +
          std::to_string(*tasks) + " tasks on " + std::to_string(*nodes) +
          " nodes: start it with srun --ntasks-per-node=1 and let the training script (or torchrun) "
          "start the processes of each node");
    }
    if (out.part.count == 0) out.part.count = *tasks;
    if (out.part.index < 0) out.part.index = *procid;
    if (out.part.node.empty()) out.part.node = EnvText(env, "SLURMD_NODENAME");
    if (out.run_id.empty()) {
      out.run_id = SlurmStepRunId(EnvText(env, "SLURM_CLUSTER_NAME"), EnvText(env, "SLURM_JOB_ID"),
                                  EnvText(env, "SLURM_STEP_ID"));
    }
  }
  if (out.part.count <= 0 || out.part.index < 0) {
    return Status::InvalidArgument(
        "--distributed needs to know the parts: run it in a Slurm step (srun --ntasks-per-node=1 "
        "trainbench run --distributed ...), or give --nodes N and --node-rank R (0 to N-1) on each node");
  }
  if (out.part.index >= out.part.count) {
    return Status::InvalidArgument("--node-rank " + std::to_string(out.part.index) +
                                   " is not below --nodes " + std::to_string(out.part.count));
  }
  if (out.run_id.empty()) {
    return Status::InvalidArgument(
        "outside a Slurm step every node must be given the same --run-id (32 hex digits; make one with "
        "`openssl rand -hex 16`)");
  }
  if (out.part.node.empty()) out.part.node = host;
  out.part.node = LabelValue(out.part.node);
  return out;
}

Result<RunRecord> AwaitRun(Store& store, const std::string& run_id, int64_t timeout_ms) {
  int64_t deadline = MonotonicNanos() / 1000000 + timeout_ms;
  while (true) {
    Result<RunRecord> run = store.FindRun(run_id);
    if (run.ok() && run->id == run_id) return run;
    if (MonotonicNanos() / 1000000 >= deadline) {
      return Status::NotFound(
          "part 0 of run " + run_id + " has not recorded the run within " + FormatDuration(timeout_ms) +
          ": start trainbench run --distributed on every node of the run, with the same store");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

EventRecord PartStartEvent(const std::string& run_id, const RunPart& part, int64_t time_ms) {
  return {run_id, time_ms, kPartStart,
          part.node + " started (part " + std::to_string(part.index + 1) + " of " +
              std::to_string(part.count) + ")"};
}

Result<std::optional<PartEnding>> EndPart(Store& store, const std::string& run_id, const RunPart& part,
                                          const PartEnding& mine) {
  // The label reads "NODE STATUS" or "NODE STATUS: reason"; the parts' endings are read back
  // from it.
  std::string label = part.node + " " + mine.status + (mine.reason.empty() ? "" : ": " + mine.reason);
  TB_RETURN_IF_ERROR(store.AddEvent({run_id, mine.end_ms, kPartEnd, label}));
  Result<std::vector<EventRecord>> events = store.ListEvents(run_id);
  if (!events.ok()) return events.status();
  std::set<std::string> ended;
  PartEnding run{kFinished, 0, std::nullopt, "", mine.end_ms};
  for (const EventRecord& e : *events) {
    if (e.kind != kPartEnd) continue;
    size_t space = e.label.find(' ');
    if (space == std::string::npos || !ended.insert(e.label.substr(0, space)).second) continue;
    std::string rest = e.label.substr(space + 1);
    size_t colon = rest.find(": ");
    std::string status = rest.substr(0, colon);
    run.end_ms = std::max(run.end_ms, e.time_ms);
    if (Severity(status) > Severity(run.status)) run.status = status;
    if (colon != std::string::npos)
      run.reason +=
          (run.reason.empty() ? "" : "; ") + e.label.substr(0, space) + ": " + rest.substr(colon + 2);
  }
  if (static_cast<int>(ended.size()) < part.count) return std::optional<PartEnding>();
  // The run's exit code: 0 when every part finished, else this part's when it did not.
  run.exit_code = run.status == kFinished    ? std::optional<int>(0)
                  : mine.status != kFinished ? mine.exit_code
                                             : std::nullopt;
  return std::optional<PartEnding>(run);
}

}  // namespace tb
