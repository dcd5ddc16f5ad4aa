#include "import/mlflow_import.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "import/migrate.h"
#include "import/mlflow_beside_runs.h"
#include "import/mlflow_database.h"
#include "import/not_held.h"
#include "metrics/names.h"
#include "metrics/sample.h"
#include "store/run_tags.h"

namespace tb {
namespace {

using mlflow_db::Cells;
using mlflow_db::Database;
using mlflow_db::EachOf;
using mlflow_db::ImportExperiments;
using mlflow_db::MetricDigests;
using mlflow_db::NotANumber;
using mlflow_db::OpenDatabase;

// --- what radT logged --------------------------------------------------------------------

constexpr double kMiB = 1024.0 * 1024.0;

struct RadtName {
  std::string_view name;
  RadtSeries series;
};

// radT's listeners (smi_listener.py, dcgmi_listener.py, top_listener.py) and their units.
constexpr RadtName kRadtNames[] = {
    {"SMI - Power Draw", {metric::kGpuPowerDrawWatts, "smi", 1}},
    {"SMI - GPU Util", {metric::kGpuUtilizationGpuRatio, "smi", 1}},  // radT divided by 100
    {"SMI - Mem Util", {metric::kGpuUtilizationMemoryRatio, "smi", 1}},
    {"SMI - Mem Used", {metric::kGpuMemoryUsedBytes, "smi", kMiB}},
    {"SMI - Performance State", {metric::kGpuPerformanceStateIndex, "smi", 1}},
    {"DCGMI - Power Usage", {metric::kGpuPowerDrawWatts, "dcgmi", 1}},
    {"DCGMI - Total Energy Consumption", {metric::kGpuEnergyConsumedJoules, "dcgmi", 0.001}},  // mJ
    {"DCGMI - PCIE TX Throughput", {metric::kGpuPcieTransmitBytesPerSecond, "dcgmi", 1024}},   // KB/s
    {"DCGMI - PCIE RX Throughput", {metric::kGpuPcieReceiveBytesPerSecond, "dcgmi", 1024}},
    {"DCGMI - GPU Utilization", {metric::kGpuUtilizationGpuRatio, "dcgmi", 0.01}},  // percent
    {"DCGMI - Memory Copy Utilization", {metric::kGpuUtilizationMemoryRatio, "dcgmi", 0.01}},
    {"DCGMI - GR Engine Active", {metric::kGpuGraphicsEngineActiveRatio, "dcgmi", 1}},
    {"DCGMI - SN Active", {metric::kGpuSmActiveRatio, "dcgmi", 1}},  // radT's spelling
    {"DCGMI - SN Actuie", {metric::kGpuSmActiveRatio, "dcgmi", 1}},  // an older radT's
    {"DCGMI - SM Active", {metric::kGpuSmActiveRatio, "dcgmi", 1}},
    {"DCGMI - SM Occupancy", {metric::kGpuSmOccupancyRatio, "dcgmi", 1}},
    {"DCGMI - Tensor Active", {metric::kGpuPipeTensorActiveRatio, "dcgmi", 1}},
    {"DCGMI - DRAM Active", {metric::kGpuDramActiveRatio, "dcgmi", 1}},
    {"DCGMI - FP64 Active", {metric::kGpuPipeFp64ActiveRatio, "dcgmi", 1}},
    {"DCGMI - FP32 Active", {metric::kGpuPipeFp32ActiveRatio, "dcgmi", 1}},
    {"DCGMI - FP16 Active", {metric::kGpuPipeFp16ActiveRatio, "dcgmi", 1}},
    {"DCGMI - PCIE TX Bytes", {metric::kGpuPcieTxTotalBytesPerSecond, "dcgmi", 1}},
    {"DCGMI - PCIE RX Bytes", {metric::kGpuPcieRxTotalBytesPerSecond, "dcgmi", 1}},
    {"DCGMI - NVlink TX Bytes", {metric::kGpuNvlinkTransmitBytesPerSecond, "dcgmi", 1}},
    {"DCGMI - NVlink RX Bytes", {metric::kGpuNvlinkReceiveBytesPerSecond, "dcgmi", 1}},
    // top's %CPU of the python processes, summed: 100 is one core.
    {"TOP - CPU Utilization", {metric::kProcCpuUtilizationRatio, "", 0.01}},
    // top's MiB divided by 1000.
    {"TOP - Memory Usage GB", {metric::kHostMemoryUsedBytes, "", 1000 * kMiB}},
    // top's %MEM of the python processes, summed.
    {"TOP - Memory Utilization", {metric::kProcMemoryShareRatio, "", 0.01}},
    {"TOP - Swap Memory GB", {metric::kHostSwapUsedBytes, "", 1000 * kMiB}},
    // radT 0.2.29's free listener: free --mega's MB divided by 1024.
    {"Free - Mem Total GB", {metric::kHostMemoryTotalBytes, "free", 1024e6}},
    {"Free - Mem Used GB", {metric::kHostMemoryUsedBytes, "free", 1024e6}},
    {"Free - Mem Free GB", {metric::kHostMemoryFreeBytes, "free", 1024e6}},
    {"Free - Mem Shared GB", {metric::kHostMemorySharedBytes, "free", 1024e6}},
    {"Free - Mem Buff/Cache GB", {metric::kHostMemoryBuffCacheBytes, "free", 1024e6}},
    {"Free - Mem Available GB", {metric::kHostMemoryAvailableBytes, "free", 1024e6}},
    {"Free - Swap Total GB", {metric::kHostSwapTotalBytes, "free", 1024e6}},
    {"Free - Swap Used GB", {metric::kHostSwapUsedBytes, "free", 1024e6}},
    {"Free - Swap Free GB", {metric::kHostSwapFreeBytes, "free", 1024e6}},
    {"Free - Total Total GB", {metric::kHostMemorySwapTotalBytes, "free", 1024e6}},
    {"Free - Total Used GB", {metric::kHostMemorySwapUsedBytes, "free", 1024e6}},
    {"Free - Total Free GB", {metric::kHostMemorySwapFreeBytes, "free", 1024e6}},
};

// radT 0.2.21 and later log every listener's metric as "system/<name>" (one of its
// listeners even as "system/system/<name>"): the name without them.
std::string_view WithoutSystemPrefix(std::string_view key) {
  while (StartsWith(key, "system/")) key.remove_prefix(7);
  return key;
}

// "SMI - Timestamp" is the clock nvidia-smi printed, not a measurement: left behind.
constexpr std::string_view kRadtClock = "SMI - Timestamp";

std::string Param(const KeyValues& kvs, std::string_view key) {
  for (const auto& [k, v] : kvs) {
    if (k == key) return v;
  }
  return "";
}

// Whether the run has the param at all (an empty value is a value).
bool HasParam(const RunRecord& r, std::string_view key) {
  return std::any_of(r.params.begin(), r.params.end(), [&](const auto& kv) { return kv.first == key; });
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The series `key` of a run lands in, with its scale.
struct Target {
  std::string metric;
  std::string labels;
  double scale = 1;
  bool script = false;          // the script's own metric: keeps MLflow's step
  bool zero_is_absent = false;  // a field DCGM never fills, which radT logged as 0

  // The value in trainbench's unit, converted as the live path does: a percent divided by
  // 100 (95 is 0.95, not 0.9500000000000001), MiB multiplied.
  double Convert(double v) const { return scale < 1 ? v / std::round(1 / scale) : v * scale; }
};

std::optional<Target> TargetOf(std::string_view key, const std::string& devices) {
  if (WithoutSystemPrefix(key) == kRadtClock) return std::nullopt;
  std::optional<RadtSeries> radt = RadtMetric(key);
  if (!radt) return Target{Concat({metric::kScriptPrefix, key}), "", 1, true};
  Labels labels;
  if (!radt->listener.empty()) {
    if (AllDigits(devices) && radt->listener != "free") labels.Add("gpu", devices);  // a GPU's
    labels.Add("listener", radt->listener);
  }
  // DCGM's PCIe throughput fields (200, 201) are never filled: radT's 0s there are no data.
  bool never_filled = radt->listener == "dcgmi" && (radt->metric == metric::kGpuPcieTransmitBytesPerSecond ||
                                                    radt->metric == metric::kGpuPcieReceiveBytesPerSecond);
  return Target{std::string(radt->metric), labels.text(), radt->scale, false, never_filled};
}

// A time MLflow's clients could have written: milliseconds from 1970 to the end of 9999.
// Beyond it, nanoseconds or garbage written where milliseconds belong.
constexpr int64_t kLatestMs = 253402300799999;
bool AbsurdTime(int64_t ms) { return ms < 0 || ms > kLatestMs; }

std::vector<std::string> RunShapes(const Database& db) {
  std::string rest = Concat({", CAST(COALESCE(end_time, 0) AS BIGINT), COALESCE(lifecycle_stage, 'active'), ",
                             "CAST(experiment_id AS BIGINT), ", db.TypeOf("start_time"), ", ",
                             db.TypeOf("end_time"), " FROM runs ORDER BY start_time, run_uuid"});
  return {
      "SELECT run_uuid, COALESCE(name, ''), COALESCE(status, ''), CAST(COALESCE(start_time, 0) AS BIGINT)" +
          rest,
      "SELECT run_uuid, '', COALESCE(status, ''), CAST(COALESCE(start_time, 0) AS BIGINT)" + rest};
}

std::vector<std::string> MetricShapes(const Database& db) {
  const std::string read = "SELECT key, CAST(value AS DOUBLE PRECISION), CAST(timestamp AS BIGINT), ";
  std::string types = Concat({db.TypeOf("value"), ", ", db.TypeOf("timestamp")});
  std::string step =
      "CAST(COALESCE(step, 0) AS BIGINT), CAST(CASE WHEN is_nan THEN 1 ELSE 0 END AS BIGINT), ";
  std::string no_step = "CAST(0 AS BIGINT), CAST(0 AS BIGINT), ";
  return {read + step + types + ", " + db.TypeOf("step") +
              " FROM metrics WHERE run_uuid = $1 ORDER BY key, timestamp, step",
          read + no_step + types + ", 'integer' FROM metrics WHERE run_uuid = $1 ORDER BY key, timestamp"};
}

struct MlflowRun {
  RunRecord record;
  bool deleted = false;
  std::string hostile;  // why trainbench cannot keep the run's record as it is; "" when it can
};

// The run as trainbench keeps it: radT's params made into its workload, letter, devices,
// collocation and listeners.
void ShapeRun(RunRecord& r, const std::string& mlflow_status) {
  for (const auto& [k, v] : r.tags) {
    if (k == kRunNameTag && r.name.empty()) r.name = v;
    if (k == "mlflow.source.name") r.command = v;
  }
  if (r.command.empty()) r.command = Param(r.params, "file");
  std::string letter = Param(r.params, "letter");
  r.workload = Param(r.params, "workload");
  if (!letter.empty() && !r.workload.empty()) {
    RadtLetter l = ParseRadtLetter(letter);
    r.devices = l.devices;
    r.listeners = Param(r.params, "listeners");
    r.tags.emplace_back(kLetterTag, letter);
    r.tags.emplace_back(kCollocationTag, l.collocation.empty() ? "-" : l.collocation);
  }
  if (r.name.empty()) r.name = r.id.substr(0, 8);
  if (mlflow_status == kFinished || mlflow_status == kFailed || mlflow_status == kKilled) {
    r.status = mlflow_status;
  } else if (mlflow_status == kRunning && r.end_ms == 0) {
    r.status = kRunning;
  } else {
    r.status = kFailed;
    r.reason = "MLflow's status was " + (mlflow_status.empty() ? std::string("empty") : mlflow_status);
  }
}

// Why a run's start or end cannot be kept ("" when it can).
std::string HostileTimes(const Cells& c) {
  for (auto [col, type_col, name] : {std::tuple{3, 7, "start_time"}, std::tuple{4, 8, "end_time"}}) {
    if (NotANumber(c.Text(type_col)))
      return Concat({"its ", name, " holds ", c.Text(type_col), " where MLflow writes milliseconds"});
    if (AbsurdTime(c.Int(col)))
      return Concat({"its ", name, " ", std::to_string(c.Int(col)), " is no time in milliseconds"});
  }
  return "";
}

Result<std::vector<MlflowRun>> ReadRuns(Database& db) {
  std::map<int64_t, std::string> experiments;
  Status st = db.Each("SELECT CAST(experiment_id AS BIGINT), name FROM experiments", "",
                      [&](const Cells& c) { experiments[c.Int(0)] = c.Text(1); });
  std::vector<MlflowRun> runs;
  if (st.ok()) {
    st = EachOf(db, RunShapes(db), "", [&](const Cells& c) {
      MlflowRun m;
      RunRecord& r = m.record;
      r.id = c.Text(0);
      r.name = c.Text(1);
      r.status = c.Text(2);  // MLflow's, shaped below
      r.start_ms = c.Int(3);
      r.end_ms = c.Int(4);
      m.deleted = c.Text(5) == "deleted";
      m.hostile = HostileTimes(c);
      auto e = experiments.find(c.Int(6));
      r.experiment = e != experiments.end() ? e->second : "mlflow-" + std::to_string(c.Int(6));
      runs.push_back(std::move(m));
    });
  }
  if (!st.ok()) {
    return Status::InvalidArgument(
        "this is not an MLflow tracking database (" + st.message() +
        "); give the database an MLflow server writes to (its --backend-store-uri)");
  }
  for (MlflowRun& m : runs) {
    RunRecord& r = m.record;
    std::string mlflow_status = r.status;
    TB_RETURN_IF_ERROR(db.Each("SELECT key, value FROM params WHERE run_uuid = $1 ORDER BY key", r.id,
                               [&](const Cells& c) { r.params.emplace_back(c.Text(0), c.Text(1)); }));
    TB_RETURN_IF_ERROR(db.Each("SELECT key, COALESCE(value, '') FROM tags WHERE run_uuid = $1 ORDER BY key",
                               r.id, [&](const Cells& c) { r.tags.emplace_back(c.Text(0), c.Text(1)); }));
    ShapeRun(r, mlflow_status);
  }
  return runs;
}

// The points of a run's metrics, by trainbench series (metric, labels), each in time order.
struct RunPoints {
  std::map<std::pair<std::string, std::string>, std::vector<Point>> series;
  std::string hostile;  // why they cannot be kept ("" when they can): the run is left out
};

Result<RunPoints> ReadPoints(Database& db, const RunRecord& run) {
  RunPoints out;
  std::string key;
  std::optional<Target> target;
  TB_RETURN_IF_ERROR(EachOf(db, MetricShapes(db), run.id, [&](const Cells& c) {
    if (!out.hostile.empty()) return;
    if (c.Text(0) != key || key.empty()) {
      key = c.Text(0);
      target = TargetOf(key, run.devices);
    }
    for (auto [col, field] : {std::pair{5, "value"}, std::pair{6, "timestamp"}, std::pair{7, "step"}}) {
      if (NotANumber(c.Text(col))) {
        out.hostile = Concat({"its metric '", Printable(key), "' holds ", c.Text(col), " as a ", field,
                              ", where MLflow writes a number"});
        return;
      }
    }
    if (AbsurdTime(c.Int(2))) {
      out.hostile = Concat({"its metric '", Printable(key), "' has the timestamp ", std::to_string(c.Int(2)),
                            ", no time in milliseconds"});
      return;
    }
    if (!target) return;
    Point p;
    p.time_ms = c.Int(2);
    p.value = c.Int(4) != 0 || c.IsNull(1) ? std::numeric_limits<double>::quiet_NaN()
                                           : target->Convert(c.Double(1));
    if (target->zero_is_absent && p.value == 0) return;
    if (target->script) {
      p.step = c.Int(3);
    } else if (p.value < 0) {
      p.value = std::numeric_limits<double>::quiet_NaN();  // radT's -1: the tool said N/A
    }
    out.series[{target->metric, target->labels}].push_back(p);
  }));
  for (auto& [name, values] : out.series) {
    std::stable_sort(values.begin(), values.end(),
                     [](const Point& a, const Point& b) { return a.time_ms < b.time_ms; });
  }
  return out;
}

// Writes the points of each series the store does not hold already: all of them for a new
// run, the ones MLflow got since for a run imported before (NotHeld). A pass cut short
// wrote each series whole or not at all, so a pass again writes what is missing.
Result<int64_t> AppendPoints(Store& to, const std::string& run_id, const RunPoints& points) {
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> held;  // id, count
  Result<std::vector<SeriesTotals>> totals = to.ListSeriesTotals(run_id);
  if (!totals.ok()) return totals.status();
  for (const SeriesTotals& t : *totals) {
    auto& h = held[{t.series.metric, t.series.labels}];
    h.first = t.series.id;
    h.second += t.count;
  }
  int64_t added = 0;
  for (const auto& [name, values] : points.series) {
    auto [series_id, count] = held[name];
    if (count >= static_cast<int64_t>(values.size())) continue;  // nothing MLflow got since
    std::vector<Point> fresh;
    if (count > 0) {
      Result<std::vector<Point>> missing = NotHeld(to, series_id, values);
      if (!missing.ok()) return missing.status();
      fresh = std::move(*missing);
    }
    std::span<const Point> more = count > 0 ? std::span<const Point>(fresh) : std::span<const Point>(values);
    if (more.empty()) continue;
    added += static_cast<int64_t>(more.size());
    TB_RETURN_IF_ERROR(WriteSealedSeries(to, run_id, name.first, name.second, more, count));
  }
  return added;
}

// Brings the copy `there` of a run imported before up to MLflow's record: its name, new
// tags and params, its status and end. What changed, said for people ("" for nothing).
Result<std::string> UpdateRecord(Store& to, const RunRecord& run, const RunRecord& there) {
  std::vector<std::string> said;
  if (run.name != there.name) {
    TB_RETURN_IF_ERROR(to.RenameRun(run.id, run.name));
    said.push_back("renamed " + Printable(run.name));
  }
  KeyValues tags, params;
  for (const auto& tag : run.tags) {
    if (std::find(there.tags.begin(), there.tags.end(), tag) == there.tags.end()) tags.push_back(tag);
  }
  for (const auto& [k, v] : run.params) {
    if (!HasParam(there, k)) params.emplace_back(k, v);
  }
  if (run.experiment != there.experiment) {
    Result<int64_t> experiment = to.EnsureExperiment(run.experiment);
    if (!experiment.ok()) return experiment.status();
    TB_RETURN_IF_ERROR(to.MoveRun(run.id, *experiment));
    said.push_back("moved to " + Printable(run.experiment));
  }
  if (!tags.empty()) {
    TB_RETURN_IF_ERROR(to.SetTags(run.id, tags));
    said.push_back(std::to_string(tags.size()) + (tags.size() == 1 ? " tag" : " tags"));
  }
  if (!params.empty()) {
    TB_RETURN_IF_ERROR(to.LogParams(run.id, params));
    said.push_back(std::to_string(params.size()) + (params.size() == 1 ? " param" : " params"));
  }
  if (run.status != there.status || run.end_ms != there.end_ms) {
    TB_RETURN_IF_ERROR(to.FinishRun(run.id, run.end_ms, run.status, std::nullopt, std::nullopt, run.reason));
    said.push_back(there.status == run.status ? "ended later" : there.status + " -> " + run.status);
  }
  std::string text;
  for (const std::string& part : said) text += (text.empty() ? "" : ", ") + part;
  return text;
}

// Whether the copy of a run imported whole matches MLflow's record, so its points are not
// read again: ended, with the same end, name, tags and params.
bool UpToDate(const RunRecord& run, const RunRecord& there, const std::string& digest) {
  if (!HasTag(there, kImportedTag) || there.status == kRunning) return false;
  if (run.status != there.status || run.end_ms != there.end_ms || run.name != there.name ||
      run.experiment != there.experiment || TagValue(there, kImportedMetricsTag) != digest)
    return false;
  for (const auto& tag : run.tags) {
    if (std::find(there.tags.begin(), there.tags.end(), tag) == there.tags.end()) return false;
  }
  for (const auto& [k, v] : run.params) {
    if (!HasParam(there, k)) return false;
  }
  return true;
}

// Imports a run, or brings one imported before up to date. What it did, said for people
// ("" when the run was there whole), or why it was left out (`hostile`).
Result<std::string> ImportRun(Database& db, Store& to, const RunRecord& run, const std::string& digest,
                              std::string& hostile, int64_t& points) {
  Result<RunRecord> found = to.FindRun(run.id);
  std::optional<RunRecord> there;
  if (found.ok() && found->id == run.id) there = *found;
  if (there && UpToDate(run, *there, digest)) return std::string();
  Result<RunPoints> read = ReadPoints(db, run);
  if (!read.ok()) return read.status();
  if (!read->hostile.empty()) {
    hostile = read->hostile;
    return std::string();
  }
  if (!there) {
    TB_RETURN_IF_ERROR(to.EnsureExperiment(run.experiment).status());
    TB_RETURN_IF_ERROR(to.CreateRun(run));
  }
  Result<int64_t> added = AppendPoints(to, run.id, *read);
  if (!added.ok()) return added.status();
  points += *added;
  std::string said;
  if (there) {
    Result<std::string> changed = UpdateRecord(to, run, *there);
    if (!changed.ok()) return changed.status();
    said = *changed;
    if (*added > 0) said = Concat({std::to_string(*added), " more points", said.empty() ? "" : ", ", said});
  }
  TB_RETURN_IF_ERROR(to.SetTags(run.id, {{kImportedTag, "mlflow"}, {kImportedMetricsTag, digest}}));
  return there ? said : std::string("imported");
}

}  // namespace

std::optional<RadtSeries> RadtMetric(std::string_view name) {
  name = WithoutSystemPrefix(name);
  for (const RadtName& n : kRadtNames) {
    if (n.name == name) return n.series;
  }
  return std::nullopt;
}

RadtLetter ParseRadtLetter(std::string_view letter) {
  std::vector<std::string_view> parts = Split(letter, '_');
  RadtLetter out;
  out.devices = std::string(parts.empty() ? letter : parts[0]);
  size_t at = 1;
  if (at < parts.size() && parts[at].size() == 1 && parts[at][0] >= 'A' && parts[at][0] <= 'Z') ++at;
  for (; at < parts.size(); ++at)
    out.collocation += (out.collocation.empty() ? "" : "_") + std::string(parts[at]);
  return out;
}

Status CheckMlflowSource(const std::string& source) {
  Result<std::unique_ptr<Database>> db = OpenDatabase(source);
  if (!db.ok()) return db.status();
  return ReadRuns(**db).status();
}

Result<ImportResult> ImportMlflow(const std::string& source, Store& to,
                                  const std::function<void(const RunRecord&)>& progress) {
  Result<std::unique_ptr<Database>> db = OpenDatabase(source);
  if (!db.ok()) return db.status();
  Result<std::vector<MlflowRun>> runs = ReadRuns(**db);
  if (!runs.ok()) return runs.status();
  std::set<std::string> experiments;  // of the runs not deleted
  for (const MlflowRun& m : *runs) {
    if (!m.deleted) experiments.insert(m.record.experiment);
  }
  TB_RETURN_IF_ERROR(ImportExperiments(**db, to, experiments));
  std::map<std::string, std::string> digests = MetricDigests(**db);
  ImportResult result;
  for (const MlflowRun& m : *runs) {
    const RunRecord& r = m.record;
    if (m.deleted) {
      ++result.deleted;
      continue;
    }
    if (Status id = CheckRunId(r.id); !id.ok()) {
      result.refused.push_back("run '" + Printable(r.id) + "' (not an MLflow run id: " + id.message() + ")");
      continue;
    }
    if (Status name = CheckExperimentName(r.experiment); !name.ok()) {
      result.refused.push_back("run " + r.id + " (" + name.message() + ")");
      continue;
    }
    if (!m.hostile.empty()) {
      result.refused.push_back("run " + r.id + " (" + m.hostile + ")");
      continue;
    }
    Result<RunRecord> there = to.FindRun(r.id);
    if (progress && !(there.ok() && there->id == r.id)) progress(r);
    std::string hostile;
    Result<std::string> done = ImportRun(**db, to, r, digests[r.id], hostile, result.points);
    if (!done.ok()) return done.status();
    if (!hostile.empty()) {
      result.refused.push_back("run " + r.id + " (" + hostile + ")");
    } else if (*done == "imported") {
      ++result.imported;
      result.changed.push_back(r.id);
    } else if (done->empty()) {
      ++result.skipped;
    } else {
      ++result.updated;
      result.changed.push_back(r.id);
      result.updates.push_back(Concat({r.id.substr(0, 8), "  ", Printable(r.name), ": ", *done}));
    }
  }
  return result;
}

}  // namespace tb
