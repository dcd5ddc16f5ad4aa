// The report as text: its columns, the speed-up's sentence and verdict, the terminal's
// table and the CSV (report.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "analyze/report.h"
#include "base/strings.h"
#include "store/run_tags.h"

namespace tb {
namespace {

std::string Number(double v, const char* format) {
  char buf[40];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// "1.20x" for one attempt, "1.20x ±0.05" for more.
std::string Cell(const std::optional<Estimate>& e, const char* format) {
  if (!e) return "-";
  std::string out = Number(e->mean, format);
  if (!e->HasInterval()) return out;
  std::string bare = format;  // the half-width without a unit the format appends
  while (!bare.empty() && bare.back() != 'f' && bare.back() != 'g') bare.pop_back();
  return out + " \u00b1" + Number((e->high - e->low) / 2, bare.c_str());
}

std::string Hosts(const WorkloadReport& w) {
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
}

#define TB_ESTIMATE(field) [](const WorkloadReport& w) { return w.field; }
#define TB_PERCENT(field)                                                           \
  [](const WorkloadReport& w) {                                                     \
    return w.field ? std::optional<Estimate>(Scaled(*w.field, 100)) : std::nullopt; \
  }

const std::vector<ReportColumn> kColumns = {
    {"workload", [](const WorkloadReport& w) { return w.workload.empty() ? std::string("-") : w.workload; }},
    {"runs",
     [](const WorkloadReport& w) {
       return std::to_string(w.attempts.empty() ? w.runs.size() : w.attempts.front().members.size());
     }},
    {"repeats", [](const WorkloadReport& w) { return std::to_string(w.repeats()); }},
    {"collocation", [](const WorkloadReport& w) { return w.collocation; }},
    {"trained together",
     [](const WorkloadReport& w) { return w.overlap.empty() ? std::string("-") : Percents(w.overlap); }},
    {"nodes", Hosts},
    {"samples/s per run", nullptr, TB_ESTIMATE(run_throughput), "%.1f"},
    {"samples/s combined", nullptr, TB_ESTIMATE(combined_throughput), "%.1f"},
    {"training s per run", nullptr, TB_ESTIMATE(run_seconds), "%.1f"},
    {"s per epoch", nullptr, TB_ESTIMATE(epoch_seconds), "%.2f"},
    {"GPU util %", nullptr, TB_PERCENT(gpu_util), "%.1f"},
    {"SM active %", nullptr, TB_PERCENT(sm_active), "%.1f"},
    {"power W", nullptr, TB_ESTIMATE(power_watts), "%.1f"},
    {"GPU J per run", nullptr, TB_ESTIMATE(energy_per_run), "%.4g"},
    {"CPU J per run", nullptr, TB_ESTIMATE(cpu_energy_per_run), "%.4g"},
    {"J per sample", nullptr, TB_ESTIMATE(energy_per_sample_joules), "%.4g"},
    {"vs alone", [](const WorkloadReport& w) { return w.alone.empty() ? std::string("-") : w.alone; }},
    {"speed-up", nullptr, TB_ESTIMATE(speedup), "%.2fx"},
    {"time per run", nullptr, TB_ESTIMATE(run_cost), "%.2fx"},
};

#undef TB_ESTIMATE
#undef TB_PERCENT

}  // namespace

std::string Percents(const std::vector<double>& fractions) {
  std::string out;
  for (double f : fractions)
    out += (out.empty() ? "" : "/") + std::to_string(static_cast<int>(std::lround(f * 100))) + "%";
  return out;
}

std::string Verdict(const Estimate& speedup) {
  if (!speedup.HasInterval())
    return "one attempt, so no interval: `schedule --repeat 3` tells a gain from the noise";
  if (speedup.low > 1) return "collocation paid off beyond the noise of the repeats";
  if (speedup.high < 1) return "collocation cost throughput beyond the noise of the repeats";
  return "no difference the repeats can tell apart";
}

std::string SpeedupSentence(const WorkloadReport& w, const char* open, const char* close) {
  size_t n = w.attempts.empty() ? w.runs.size() : w.attempts.front().members.size();
  std::string by =
      w.basis == "time"
          ? Concat({" by the training time of the same command (the scripts logged no samples): ",
                    Number(w.alone_throughput->mean, "%.1f"), " s alone, ",
                    Number(w.run_seconds->mean, "%.1f"), " s each together"})
          : Concat({" (", Number(w.combined_throughput->mean, "%.1f"), " vs ",
                    Number(w.alone_throughput->mean, "%.1f"), " samples/s)"});
  std::string speedup =
      w.speedup->HasInterval() ? EstimateText(*w.speedup, "%.2fx") : Number(w.speedup->mean, "%.2fx");
  return Concat({std::to_string(n), " runs together did ", open, speedup, close, " the work of one alone", by,
                 "; each run took ", Number(w.run_cost->mean, "%.2fx"),
                 " as long (their training overlapped ", Percents(w.overlap), ", by ",
                 TrainingWindowSource(w.training_source), "): ", Verdict(*w.speedup)});
}

const std::vector<ReportColumn>& ReportColumns() { return kColumns; }

std::vector<std::string> ReportRow(const WorkloadReport& w) {
  std::vector<std::string> row;
  row.reserve(kColumns.size());
  for (const ReportColumn& c : kColumns) row.push_back(c.get ? c.get(w) : Cell(c.estimate(w), c.format));
  return row;
}

std::string ReportTable(const ExperimentReport& r) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head(kColumns.size());
  std::vector<size_t> width(kColumns.size());
  for (size_t i = 0; i < kColumns.size(); ++i) {
    head[i] = kColumns[i].title;
    width[i] = head[i].size();
  }
  // Columns line up by characters, not bytes (the ± is two).
  auto shown = [](const std::string& s) {
    return s.size() - static_cast<size_t>(std::count(s.begin(), s.end(), '\xc2'));
  };
  for (const WorkloadReport& w : r.workloads) {
    rows.push_back(ReportRow(w));
    for (size_t i = 0; i < kColumns.size(); ++i) width[i] = std::max(width[i], shown(rows.back()[i]));
  }
  std::string out = "experiment " + r.experiment + ": " + std::to_string(r.workloads.size()) +
                    " workloads (figures over each run's steady state; over repeats: mean \u00b1 its 95 % "
                    "interval)\n";
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      out += (i ? "  " : "") + cells[i] + std::string(width[i] - shown(cells[i]), ' ');
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
  for (const ReportColumn& c : kColumns) {
    out += "," + CsvField(c.title);
    if (c.estimate) out += "," + CsvField(std::string(c.title) + " \u00b195%");
  }
  out += ",parent run\n";
  for (const WorkloadReport& w : r.workloads) {
    out += CsvField(r.experiment);
    for (const ReportColumn& c : kColumns) {
      if (!c.estimate) {
        std::string v = c.get(w);
        out += "," + CsvField(v == "-" ? "" : v);
        continue;
      }
      std::optional<Estimate> e = c.estimate(w);
      out += "," + (e ? Number(e->mean, "%.6g") : "");
      out += "," + (e && e->HasInterval() ? Number((e->high - e->low) / 2, "%.6g") : "");
    }
    out += "," + CsvField(w.parent) + "\n";
  }
  return out;
}

}  // namespace tb
