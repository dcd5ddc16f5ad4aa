#include "analyze/report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "base/strings.h"
#include "metrics/names.h"
#include "store/run_tags.h"

namespace tb {
namespace {

std::optional<double> Mean(const std::vector<std::optional<double>>& v) {
  double sum = 0;
  int n = 0;
  for (const auto& x : v) {
    if (x) {
      sum += *x;
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

// The sum when every value is there.
std::optional<double> SumOfAll(const std::vector<std::optional<double>>& v) {
  double sum = 0;
  for (const auto& x : v) {
    if (!x) return std::nullopt;
    sum += *x;
  }
  return v.empty() ? std::nullopt : std::optional<double>(sum);
}

std::optional<double> Steady(const RunAnalysis& a, std::string_view metric) {
  auto it = a.steady.find(metric);
  return it == a.steady.end() ? std::nullopt : std::optional<double>(it->second);
}

// What makes two runs "the same run": the script, its arguments and the params it logged,
// the seed and the device aside.
std::string Identity(const RunRecord& r) {
  std::vector<std::string_view> words = SplitWhitespace(r.command);
  size_t script = words.size();
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].ends_with(".py")) script = i;
  }
  std::string id;
  if (script == words.size()) {
    id = r.command;
  } else {
    id = std::string(words[script].substr(words[script].rfind('/') + 1));
    for (size_t i = script + 1; i < words.size(); ++i) {
      std::string_view w = words[i];
      if (w.starts_with("--seed=") || w.starts_with("--device=")) continue;
      if ((w == "--seed" || w == "--device") && i + 1 < words.size()) {
        ++i;
        continue;
      }
      id.append(" ").append(w);
    }
  }
  KeyValues params = r.params;
  std::sort(params.begin(), params.end());
  for (const auto& [k, v] : params) {
    if (k != "seed" && k != "device") id.append(" ").append(k).append("=").append(v);
  }
  return id;
}

// Each run's training window (its process's span where the analysis found none).
TrainingWindow WindowOf(const RunRecord& r, const RunAnalysis& a) {
  if (a.training) return *a.training;
  return {r.start_ms, r.end_ms > 0 ? r.end_ms : r.start_ms, "process"};
}

int SourceRank(const std::string& source) {
  static const std::vector<std::string> order = {"steps", "gpu", "cpu", "process"};
  return static_cast<int>(std::min<size_t>(std::find(order.begin(), order.end(), source) - order.begin(), 3));
}
const char* SourceOfRank(int rank) {
  static const char* const names[] = {"steps", "gpu", "cpu", "process"};
  return names[rank];
}

// How much of each run's training another run of the attempt trained alongside; an
// attempt's runs are together when every one of them overlapped the others for most of
// its training. Runs logged under one workload one after another, or started together but
// training one after the other (a ten-second start-up before one second of training), were
// not, and their throughputs do not add up.
void JudgeOverlap(const WorkloadReport& w, AttemptReport& a) {
  std::vector<TrainingWindow> windows;
  int weakest = 0;
  for (size_t i : a.members) {
    windows.push_back(WindowOf(w.runs[i], w.analyses[i]));
    weakest = std::max(weakest, SourceRank(windows.back().source));
  }
  a.training_source = SourceOfRank(weakest);
  a.together = true;
  if (windows.size() < 2) return;
  for (size_t i = 0; i < windows.size(); ++i) {
    std::vector<TrainingWindow> others = windows;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
    a.overlap.push_back(OverlapFraction(windows[i], others));
    if (a.overlap.back() < kTogetherFraction) a.together = false;
  }
}

// The attempt's figures from its runs' analyses.
void MeasureAttempt(const WorkloadReport& w, AttemptReport& a) {
  JudgeOverlap(w, a);
  std::vector<std::optional<double>> tput, seconds, rate, epoch, gpu, sm, power, energy, cpu_energy, eps;
  for (size_t i : a.members) {
    const RunAnalysis& an = w.analyses[i];
    TrainingWindow window = WindowOf(w.runs[i], an);
    double s = static_cast<double>(window.length_ms()) / 1000;
    tput.push_back(an.throughput);
    seconds.push_back(s > 0 ? std::optional<double>(s) : std::nullopt);
    rate.push_back(s > 0 ? std::optional<double>(1 / s) : std::nullopt);
    epoch.push_back(an.epoch_seconds);
    gpu.push_back(Steady(an, metric::kGpuUtilizationGpuRatio));
    sm.push_back(Steady(an, metric::kGpuSmActiveRatio));
    power.push_back(Steady(an, metric::kGpuPowerDrawWatts));
    energy.push_back(an.energy_joules);
    cpu_energy.push_back(an.cpu_energy_joules);
    eps.push_back(an.energy_per_sample_joules);
  }
  a.run_throughput = Mean(tput);
  a.run_seconds = Mean(seconds);
  a.run_rate = Mean(rate);
  if (a.together) {
    a.combined_throughput = SumOfAll(tput);
    a.combined_rate = SumOfAll(rate);
  }
  a.epoch_seconds = Mean(epoch);
  a.gpu_util = Mean(gpu);
  a.sm_active = Mean(sm);
  a.power_watts = Mean(power);
  a.energy_per_run = Mean(energy);
  a.cpu_energy_per_run = Mean(cpu_energy);
  a.energy_per_sample_joules = Mean(eps);
}

// Where no run recorded CPU energy, the report says why its CPU column is empty.
void NoteMissingCpuEnergy(ExperimentReport& report) {
  bool cpu_energy = std::any_of(report.workloads.begin(), report.workloads.end(),
                                [](const WorkloadReport& w) { return w.cpu_energy_per_run.has_value(); });
  if (report.workloads.empty() || cpu_energy) return;
  report.caveats.push_back(
      "CPU J per run: no run recorded CPU energy (the rapl listener reads it where the host has RAPL and "
      "this user may read it; most virtual machines have none: `trainbench devices` says), so J per sample "
      "is the GPUs' only");
}

// The estimate over the workload's repeats of one of their figures.
std::optional<Estimate> OverRepeats(const WorkloadReport& w, std::optional<double> AttemptReport::*field) {
  std::vector<std::optional<double>> values;
  for (const AttemptReport& a : w.attempts) values.push_back(a.*field);
  return EstimateOfAll(values);
}

// Whether each run names its devices and no two share one ("0" and "1", "0+1" and "2"):
// runs together in time that share nothing, not a collocation.
bool OnSeparateDevices(const std::vector<RunRecord>& runs, const std::vector<size_t>& members) {
  std::set<std::string> seen;
  for (size_t i : members) {
    std::string devices = runs[i].devices;
    std::replace(devices.begin(), devices.end(), ',', '+');
    if (Trim(devices).empty() || Trim(devices) == "-") return false;
    for (std::string_view d : Split(devices, '+')) {
      if (!seen.insert(std::string(Trim(d))).second) return false;
    }
  }
  return true;
}

// For runs on separate devices that are partitions of one GPU socket (an MI300X's compute
// partitions): "CPX partitions of one GPU" (they share its memory, power and energy); ""
// when some run is not on a partition or no socket is shared.
std::string SharedSocketPartitions(const std::vector<RunRecord>& runs, const std::vector<size_t>& members) {
  std::set<std::string> seen, modes;
  bool shared = false;
  for (size_t i : members) {
    std::string sockets = TagValue(runs[i], kGpuSocketsTag);
    if (sockets.empty()) return "";
    for (std::string_view s : Split(sockets, '+')) shared |= !seen.insert(std::string(s)).second;
    modes.insert(TagValue(runs[i], kGpuPartitionTag));
  }
  if (!shared) return "";
  std::string mode = modes.size() == 1 ? *modes.begin() : "";
  return (mode.empty() ? "" : mode + " ") + "partitions of one GPU";
}

// How the runs of the workload's first attempt shared: "alone", the Collocation column's
// modes ("naive" for radT's "-"), "separate GPUs", "CPX partitions of one GPU".
std::string CollocationOf(const WorkloadReport& w) {
  const std::vector<size_t>& members = w.attempts.front().members;
  if (members.size() == 1) return "alone";
  if (OnSeparateDevices(w.runs, members)) {
    std::string partitions = SharedSocketPartitions(w.runs, members);
    return partitions.empty() ? "separate GPUs" : partitions;
  }
  std::set<std::string> colloc;
  for (const RunRecord& r : w.runs) {
    // radT's "-": runs sharing the device with neither MPS nor MIG, which readers call naive.
    std::string v = TagValue(r, kCollocationTag);
    if (!v.empty()) colloc.insert(v == "-" ? "naive" : v);
  }
  if (colloc.empty()) return "naive";
  std::string out;
  for (const std::string& c : colloc) out += (out.empty() ? "" : ",") + c;
  return out;
}

// The workload's runs (in start order) split into attempts, in the order they started.
std::vector<std::vector<const RunRecord*>> SplitIntoAttempts(std::vector<const RunRecord*> runs) {
  std::stable_sort(runs.begin(), runs.end(),
                   [](const RunRecord* a, const RunRecord* b) { return a->start_ms < b->start_ms; });
  std::vector<std::vector<const RunRecord*>> attempts;
  std::map<std::string, size_t> tagged;  // attempt tag -> index
  std::optional<size_t> untagged;        // the attempt runs without the tag go to
  std::set<std::string> letters;         // the letters it has
  for (const RunRecord* r : runs) {
    std::string tag = TagValue(*r, kAttemptTag);
    if (!tag.empty()) {
      auto [it, fresh] = tagged.try_emplace(tag, attempts.size());
      if (fresh) attempts.emplace_back();
      attempts[it->second].push_back(r);
      continue;
    }
    // Before the tag: a letter seen again starts the next attempt (schedule resumed or the
    // file run again); runs without a letter (started by hand, `run -w`) are one attempt
    // while their processes overlap, and one started after all of them ended is the next
    // (a repeat by hand).
    std::string letter = TagValue(*r, kLetterTag);
    bool after = untagged && letter.empty() &&
                 std::all_of(attempts[*untagged].begin(), attempts[*untagged].end(),
                             [&](const RunRecord* x) { return x->end_ms > 0 && x->end_ms <= r->start_ms; });
    if (!untagged || after || (!letter.empty() && letters.count(letter) != 0)) {
      untagged = attempts.size();
      attempts.emplace_back();
      letters.clear();
    }
    if (!letter.empty()) letters.insert(letter);
    attempts[*untagged].push_back(r);
  }
  return attempts;
}

// The value of each repeat of `alone` workloads, mean over them, repeat by repeat (as many
// as the one with fewest has).
std::optional<Estimate> AloneOverRepeats(const std::vector<const WorkloadReport*>& alone,
                                         std::optional<double> AttemptReport::*field) {
  if (alone.empty()) return std::nullopt;
  size_t n = std::numeric_limits<size_t>::max();
  for (const WorkloadReport* a : alone) n = std::min(n, a->attempts.size());
  std::vector<std::optional<double>> values;
  values.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    std::vector<std::optional<double>> of_runs;
    of_runs.reserve(alone.size());
    for (const WorkloadReport* a : alone) of_runs.push_back(a->attempts[k].*field);
    std::optional<double> sum = SumOfAll(of_runs);
    values.push_back(sum ? std::optional<double>(*sum / static_cast<double>(of_runs.size())) : std::nullopt);
  }
  return EstimateOfAll(values);
}

// Collocated workloads against the same runs alone: by the samples they logged where
// every run on both sides has a throughput, else by their training time.
void CompareWithAlone(ExperimentReport& report) {
  for (WorkloadReport& w : report.workloads) {
    const std::vector<size_t>& members = w.attempts.front().members;
    if (members.size() < 2 || !w.together) continue;
    std::vector<const WorkloadReport*> alone;
    std::set<std::string> names;
    for (size_t i : members) {
      for (const WorkloadReport& other : report.workloads) {
        if (&other == &w || other.collocation != "alone") continue;
        if (Identity(other.runs[0]) != Identity(w.runs[i])) continue;
        alone.push_back(&other);
        names.insert(other.workload);
        break;
      }
    }
    if (alone.size() != members.size()) continue;  // not every run has its alone counterpart
    std::optional<Estimate> alone_tput = AloneOverRepeats(alone, &AttemptReport::run_throughput);
    std::optional<Estimate> combined, per_run, alone_rate;
    if (w.combined_throughput && w.run_throughput && alone_tput) {
      w.basis = "samples";
      combined = w.combined_throughput;
      per_run = w.run_throughput;
      alone_rate = alone_tput;
      w.alone_throughput = alone_tput;
    } else {
      w.basis = "time";
      combined = OverRepeats(w, &AttemptReport::combined_rate);
      per_run = OverRepeats(w, &AttemptReport::run_rate);
      alone_rate = AloneOverRepeats(alone, &AttemptReport::run_rate);
      w.alone_throughput = AloneOverRepeats(alone, &AttemptReport::run_seconds);
    }
    if (!combined || !per_run || !alone_rate) {
      w.basis.clear();
      w.alone_throughput.reset();
      continue;
    }
    for (const std::string& n : names) w.alone += (w.alone.empty() ? "" : ",") + n;
    w.speedup = RatioEstimate(*combined, *alone_rate);
    w.run_cost = RatioEstimate(*alone_rate, *per_run);
  }
}

bool Finished(const std::vector<const RunRecord*>& attempt) {
  return std::all_of(attempt.begin(), attempt.end(),
                     [](const RunRecord* r) { return r->status == kFinished; });
}

// An analysis kept by an older trainbench: its method's version, 0 when none is kept.
int KeptVersion(Store& store, const RunRecord& run) {
  Result<ArtifactRecord> kept = store.GetArtifact(run.id, "phases.json");
  if (!kept.ok() || !kept->path.empty()) return 0;
  size_t at = kept->content.rfind("\"version\":");
  if (at == std::string::npos) return 0;
  return std::atoi(kept->content.c_str() + at + 10);
}

}  // namespace

Result<ExperimentReport> BuildReport(Store& store, const std::string& experiment) {
  Result<std::vector<RunRecord>> runs = store.ListRuns(experiment);
  if (!runs.ok()) return runs.status();
  if (runs->empty()) {
    return Status::NotFound("no runs in experiment '" + experiment +
                            "'; `trainbench ls` lists the experiments");
  }
  ExperimentReport report;
  report.experiment = experiment;
  std::set<std::string> caveats;
  std::map<std::string, const RunRecord*> parents;  // runs others are nested under
  for (const RunRecord& r : *runs) {
    std::string parent = TagValue(r, kParentRunTag);
    auto p = std::find_if(runs->begin(), runs->end(), [&](const RunRecord& x) { return x.id == parent; });
    if (!parent.empty() && p != runs->end()) parents[parent] = &*p;
  }
  // The workloads in the order their first runs come, each with its runs.
  std::vector<std::pair<std::string, std::vector<const RunRecord*>>> workloads;
  for (const RunRecord& r : *runs) {
    if (parents.count(r.id) != 0) continue;
    auto it = std::find_if(workloads.begin(), workloads.end(),
                           [&](const auto& w) { return w.first == r.workload; });
    if (it == workloads.end()) it = workloads.insert(workloads.end(), {r.workload, {}});
    it->second.push_back(&r);
  }
  int older = 0;
  for (const auto& [name, of_workload] : workloads) {
    std::vector<std::vector<const RunRecord*>> attempts = SplitIntoAttempts(of_workload);
    std::vector<size_t> counted;
    for (size_t i = 0; i < attempts.size(); ++i) {
      if (Finished(attempts[i])) counted.push_back(i);
    }
    if (counted.empty()) counted.push_back(attempts.size() - 1);  // none finished: the latest, as it is
    size_t retries = 0, retry_runs = 0;
    for (size_t i = 0; i < attempts.size(); ++i) {
      if (std::find(counted.begin(), counted.end(), i) != counted.end()) continue;
      ++retries;
      retry_runs += attempts[i].size();
    }
    if (retries > 0) {
      caveats.insert(
          Concat({"workload ", name, ": ", std::to_string(retry_runs), " run", retry_runs == 1 ? "" : "s",
                  " of ", std::to_string(retries),
                  retries == 1 ? " earlier, interrupted attempt" : " interrupted or failed attempts",
                  " left out (a retry is not a repeat; the attempts that finished count)"}));
    }
    WorkloadReport& w = report.workloads.emplace_back();
    w.workload = name;
    auto parent = parents.find(TagValue(*of_workload.front(), kParentRunTag));
    if (parent != parents.end())
      w.parent = parent->second->name + " (" + parent->second->id.substr(0, 8) + ")";
    for (size_t i : counted) {
      AttemptReport& a = w.attempts.emplace_back();
      a.repeat = static_cast<int>(w.attempts.size());
      for (const RunRecord* r : attempts[i]) {
        Result<RunAnalysis> an = KeptOrStoredAnalysis(store, *r);
        if (!an.ok()) return an.status();
        int version = KeptVersion(store, *r);
        if (version != 0 && version != kAnalysisVersion) ++older;
        for (const std::string& c : an->caveats) caveats.insert(c);
        a.members.push_back(w.runs.size());
        w.runs.push_back(*r);
        w.analyses.push_back(std::move(*an));
      }
    }
  }
  if (older > 0) {
    caveats.insert(Concat({std::to_string(older), " run", older == 1 ? " was" : "s were",
                           " analysed by an older trainbench (another method's figures, such as energy split "
                           "the old way between runs sharing a GPU); every figure here is this version's "
                           "analysis of what the runs recorded"}));
  }
  report.caveats.assign(caveats.begin(), caveats.end());
  for (WorkloadReport& w : report.workloads) {
    size_t per_attempt = w.attempts.front().members.size();
    w.collocation = CollocationOf(w);
    int weakest = 0;
    for (AttemptReport& a : w.attempts) {
      MeasureAttempt(w, a);
      w.together = w.together && a.together;
      weakest = std::max(weakest, SourceRank(a.training_source));
      for (size_t k = 0; k < a.overlap.size(); ++k) {
        if (k >= w.overlap.size()) w.overlap.push_back(a.overlap[k]);
        w.overlap[k] = std::min(w.overlap[k], a.overlap[k]);
      }
    }
    w.training_source = SourceOfRank(weakest);
    if (!w.together) {
      w.collocation = "not together";
      report.caveats.push_back(
          Concat({"workload ", w.workload, ": its ", std::to_string(per_attempt),
                  " runs did not train at the same time (each run's training overlapped the others' for ",
                  Percents(w.overlap), " of it, by ", TrainingWindowSource(w.training_source),
                  "), so their throughputs are not added up and it is not compared with runs alone"}));
    }
    w.run_throughput = OverRepeats(w, &AttemptReport::run_throughput);
    if (w.together) w.combined_throughput = OverRepeats(w, &AttemptReport::combined_throughput);
    w.run_seconds = OverRepeats(w, &AttemptReport::run_seconds);
    w.epoch_seconds = OverRepeats(w, &AttemptReport::epoch_seconds);
    w.gpu_util = OverRepeats(w, &AttemptReport::gpu_util);
    w.sm_active = OverRepeats(w, &AttemptReport::sm_active);
    w.power_watts = OverRepeats(w, &AttemptReport::power_watts);
    w.energy_per_run = OverRepeats(w, &AttemptReport::energy_per_run);
    w.cpu_energy_per_run = OverRepeats(w, &AttemptReport::cpu_energy_per_run);
    w.energy_per_sample_joules = OverRepeats(w, &AttemptReport::energy_per_sample_joules);
  }
  CompareWithAlone(report);
  NoteMissingCpuEnergy(report);
  return report;
}

}  // namespace tb
