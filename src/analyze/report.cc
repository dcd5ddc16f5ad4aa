#include "analyze/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
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

std::optional<double> Steady(const RunAnalysis& a, std::string_view metric) {
  auto it = a.steady.find(metric);
  return it == a.steady.end() ? std::nullopt : std::optional<double>(it->second);
}

// What makes two runs "the same run": the script and its params, the seed aside.
std::string Identity(const RunRecord& r) {
  std::string script;
  for (std::string_view w : SplitWhitespace(r.command)) {
    if (w.ends_with(".py")) script = std::string(w.substr(w.rfind('/') + 1));
  }
  std::string id = script.empty() ? r.command : script;
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

// How much of each run's training another run of the workload trained alongside; a
// workload's runs are together when every one of them overlapped the others for most of
// its training. Runs logged under one workload one after another (repeats), or started
// together but training one after the other (a ten-second start-up before one second of
// training), were not, and their throughputs do not add up.
void JudgeOverlap(WorkloadReport& w) {
  std::vector<TrainingWindow> windows;
  int weakest = 0;
  const std::vector<std::string> order = {"steps", "gpu", "process"};
  for (size_t i = 0; i < w.runs.size(); ++i) {
    windows.push_back(WindowOf(w.runs[i], w.analyses[i]));
    int rank = static_cast<int>(std::find(order.begin(), order.end(), windows.back().source) - order.begin());
    weakest = std::max(weakest, std::min(rank, 2));
  }
  w.training_source = order[static_cast<size_t>(weakest)];
  w.together = true;
  if (windows.size() < 2) return;
  for (size_t i = 0; i < windows.size(); ++i) {
    std::vector<TrainingWindow> others = windows;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
    w.overlap.push_back(OverlapFraction(windows[i], others));
    if (w.overlap.back() < kTogetherFraction) w.together = false;
  }
}

std::string Percents(const std::vector<double>& fractions) {
  std::string out;
  for (double f : fractions)
    out += (out.empty() ? "" : "/") + std::to_string(static_cast<int>(std::lround(f * 100))) + "%";
  return out;
}

std::string Num(const std::optional<double>& v, const char* format = "%.4g") {
  if (!v) return "-";
  char buf[40];
  std::snprintf(buf, sizeof buf, format, *v);
  return buf;
}

}  // namespace

std::string SpeedupSentence(const WorkloadReport& w, const char* open, const char* close) {
  char buf[400];
  std::snprintf(
      buf, sizeof buf,
      "%zu runs together did %s%.2fx%s the work of one alone (%.1f vs %.1f samples/s); each run took "
      "%.2fx as long (their training overlapped %s, by %s)",
      w.runs.size(), open, *w.speedup, close, *w.combined_throughput, *w.alone_throughput, *w.run_cost,
      Percents(w.overlap).c_str(), TrainingWindowSource(w.training_source).c_str());
  return buf;
}

namespace {

const std::vector<ReportColumn> kColumns = {
    {"workload", [](const WorkloadReport& w) { return w.workload.empty() ? std::string("-") : w.workload; }},
    {"runs", [](const WorkloadReport& w) { return std::to_string(w.runs.size()); }},
    {"collocation", [](const WorkloadReport& w) { return w.collocation; }},
    {"trained together",
     [](const WorkloadReport& w) { return w.overlap.empty() ? std::string("-") : Percents(w.overlap); }},
    {"nodes",
     [](const WorkloadReport& w) {
       std::set<std::string> hosts;
       for (const RunRecord& r : w.runs) {
         // A run across several nodes names each part's node (trainbench.node.N).
         bool parts = false;
         for (const auto& [key, value] : r.tags) {
           if (!key.starts_with(kNodeTagPrefix)) continue;
           hosts.insert(value);
           parts = true;
         }
         if (!parts) hosts.insert(r.host.empty() ? "-" : r.host);
       }
       std::string out;
       for (const std::string& h : hosts) out += (out.empty() ? "" : " ") + h;
       return out;
     }},
    {"samples/s per run", [](const WorkloadReport& w) { return Num(w.run_throughput, "%.1f"); }},
    {"samples/s combined", [](const WorkloadReport& w) { return Num(w.combined_throughput, "%.1f"); }},
    {"s per epoch", [](const WorkloadReport& w) { return Num(w.epoch_seconds, "%.2f"); }},
    {"GPU util", [](const WorkloadReport& w) { return Num(w.gpu_util, "%.3f"); }},
    {"SM active", [](const WorkloadReport& w) { return Num(w.sm_active, "%.3f"); }},
    {"power W", [](const WorkloadReport& w) { return Num(w.power_watts, "%.1f"); }},
    {"J per sample", [](const WorkloadReport& w) { return Num(w.energy_per_sample_joules, "%.4g"); }},
    {"vs alone", [](const WorkloadReport& w) { return w.alone.empty() ? std::string("-") : w.alone; }},
    {"speed-up", [](const WorkloadReport& w) { return Num(w.speedup, "%.2fx"); }},
    {"time per run", [](const WorkloadReport& w) { return Num(w.run_cost, "%.2fx"); }},
};

// Whether each run names its devices and no two share one ("0" and "1", "0+1" and "2"):
// runs together in time that share nothing, not a collocation.
bool OnSeparateDevices(const std::vector<RunRecord>& runs) {
  std::set<std::string> seen;
  for (const RunRecord& r : runs) {
    std::string devices = r.devices;
    std::replace(devices.begin(), devices.end(), ',', '+');
    if (Trim(devices).empty() || Trim(devices) == "-") return false;
    for (std::string_view d : Split(devices, '+')) {
      if (!seen.insert(std::string(Trim(d))).second) return false;
    }
  }
  return true;
}

}  // namespace

const std::vector<ReportColumn>& ReportColumns() { return kColumns; }

std::vector<std::string> ReportRow(const WorkloadReport& w) {
  std::vector<std::string> row;
  row.reserve(kColumns.size());
  for (const ReportColumn& c : kColumns) row.push_back(c.get(w));
  return row;
}

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
  // A workload interrupted and resumed (schedule after Ctrl-C) ran each of its runs again:
  // of the runs of one letter, only the latest attempt's counts.
  std::map<std::pair<std::string, std::string>, int64_t> latest;
  for (const RunRecord& r : *runs) {
    std::string letter = TagValue(r, kLetterTag);
    if (letter.empty()) continue;
    int64_t& start = latest.try_emplace({r.workload, letter}, r.start_ms).first->second;
    start = std::max(start, r.start_ms);
  }
  std::map<std::string, const RunRecord*> parents;  // runs others are nested under
  for (const RunRecord& r : *runs) {
    std::string parent = TagValue(r, kParentRunTag);
    auto p = std::find_if(runs->begin(), runs->end(), [&](const RunRecord& x) { return x.id == parent; });
    if (!parent.empty() && p != runs->end()) parents[parent] = &*p;
  }
  std::map<std::string, int> superseded;
  for (const RunRecord& r : *runs) {
    if (parents.count(r.id) != 0) continue;
    std::string letter = TagValue(r, kLetterTag);
    if (!letter.empty() && r.start_ms < latest[{r.workload, letter}]) {
      ++superseded[r.workload];
      continue;
    }
    auto it = std::find_if(report.workloads.begin(), report.workloads.end(),
                           [&](const WorkloadReport& w) { return w.workload == r.workload; });
    if (it == report.workloads.end()) {
      report.workloads.push_back({});
      it = report.workloads.end() - 1;
      it->workload = r.workload;
      auto parent = parents.find(TagValue(r, kParentRunTag));
      if (parent != parents.end())
        it->parent = parent->second->name + " (" + parent->second->id.substr(0, 8) + ")";
    }
    Result<RunAnalysis> a = KeptOrStoredAnalysis(store, r);
    if (!a.ok()) return a.status();
    for (const std::string& c : a->caveats) caveats.insert(c);
    it->runs.push_back(r);
    it->analyses.push_back(std::move(*a));
  }
  for (const auto& [workload, n] : superseded) {
    caveats.insert("workload " + workload + ": " + std::to_string(n) + " run" + (n == 1 ? "" : "s") +
                   " of an earlier, interrupted attempt left out (the attempt run after it counts)");
  }
  report.caveats.assign(caveats.begin(), caveats.end());
  for (WorkloadReport& w : report.workloads) {
    std::set<std::string> colloc;
    for (const RunRecord& r : w.runs) {
      for (const auto& [k, v] : r.tags) {
        // radT's "-": runs sharing the device with neither MPS nor MIG, which readers call naive.
        if (k == kCollocationTag) colloc.insert(v == "-" ? "naive" : v);
      }
    }
    w.collocation = colloc.empty() ? (w.runs.size() > 1 ? "naive" : "alone") : "";
    for (const std::string& c : colloc) w.collocation += (w.collocation.empty() ? "" : ",") + c;
    if (w.runs.size() == 1) w.collocation = "alone";
    if (w.runs.size() > 1 && OnSeparateDevices(w.runs)) w.collocation = "separate GPUs";
    std::vector<std::optional<double>> tput, epoch, gpu, sm, power, eps;
    for (const RunAnalysis& a : w.analyses) {
      tput.push_back(a.throughput);
      epoch.push_back(a.epoch_seconds);
      gpu.push_back(Steady(a, metric::kGpuUtilizationGpuRatio));
      sm.push_back(Steady(a, metric::kGpuSmActiveRatio));
      power.push_back(Steady(a, metric::kGpuPowerDrawWatts));
      eps.push_back(a.energy_per_sample_joules);
    }
    w.run_throughput = Mean(tput);
    JudgeOverlap(w);
    if (!w.together) {
      w.collocation = "not together";
      report.caveats.push_back(
          "workload " + w.workload + ": its " + std::to_string(w.runs.size()) +
          " runs did not train at the same time (each run's training overlapped the "
          "others' for " +
          Percents(w.overlap) + " of it, by " + TrainingWindowSource(w.training_source) +
          "), so their throughputs are not added up and it is not compared with runs alone");
    }
    if (w.together && std::all_of(tput.begin(), tput.end(), [](const auto& t) { return t.has_value(); })) {
      double sum = 0;
      for (const auto& t : tput) sum += *t;
      w.combined_throughput = sum;
    }
    w.epoch_seconds = Mean(epoch);
    w.gpu_util = Mean(gpu);
    w.sm_active = Mean(sm);
    w.power_watts = Mean(power);
    w.energy_per_sample_joules = Mean(eps);
  }
  // Collocated workloads against the same runs alone.
  for (WorkloadReport& w : report.workloads) {
    if (w.runs.size() < 2 || !w.combined_throughput) continue;
    std::vector<std::optional<double>> alone;
    std::set<std::string> names;
    for (const RunRecord& r : w.runs) {
      for (const WorkloadReport& other : report.workloads) {
        if (&other == &w || other.runs.size() != 1 || !other.run_throughput) continue;
        if (Identity(other.runs[0]) != Identity(r)) continue;
        alone.push_back(other.run_throughput);
        names.insert(other.workload);
        break;
      }
    }
    if (alone.size() != w.runs.size()) continue;  // not every run has its alone counterpart
    for (const std::string& n : names) w.alone += (w.alone.empty() ? "" : ",") + n;
    w.alone_throughput = Mean(alone);
    w.speedup = *w.combined_throughput / *w.alone_throughput;
    w.run_cost = *w.alone_throughput / *w.run_throughput;
  }
  return report;
}

std::string ReportTable(const ExperimentReport& r) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head(kColumns.size());
  std::vector<size_t> width(kColumns.size());
  for (size_t i = 0; i < kColumns.size(); ++i) {
    head[i] = kColumns[i].title;
    width[i] = head[i].size();
  }
  for (const WorkloadReport& w : r.workloads) {
    rows.push_back(ReportRow(w));
    for (size_t i = 0; i < kColumns.size(); ++i) width[i] = std::max(width[i], rows.back()[i].size());
  }
  std::string out = "experiment " + r.experiment + ": " + std::to_string(r.workloads.size()) +
                    " workloads (figures over each run's steady state)\n";
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      out += (i ? "  " : "") + cells[i] + std::string(width[i] - cells[i].size(), ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  };
  line(head);
  std::string parent;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (r.workloads[i].parent != parent) {
      parent = r.workloads[i].parent;
      out += parent.empty() ? "not nested:\n" : "parent run " + parent + ":\n";
    }
    line(rows[i]);
  }
  for (const WorkloadReport& w : r.workloads) {
    if (w.speedup) out += "workload " + w.workload + ": " + SpeedupSentence(w, "", "") + "\n";
  }
  for (const std::string& c : r.caveats) out += "note: " + c + "\n";
  return out;
}

std::string ReportCsv(const ExperimentReport& r) {
  std::string out = "experiment";
  for (const ReportColumn& c : kColumns) out += "," + CsvField(c.title);
  out += ",parent run\n";
  for (const WorkloadReport& w : r.workloads) {
    out += CsvField(r.experiment);
    for (const ReportColumn& c : kColumns) {
      std::string v = c.get(w);
      if (v == "-") v.clear();
      if (!v.empty() && v.back() == 'x' && c.title != std::string_view("collocation")) v.pop_back();
      out += "," + CsvField(v);
    }
    out += "," + CsvField(w.parent) + "\n";
  }
  return out;
}

}  // namespace tb
