#include "import/mlflow_import.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "import/migrate.h"
#include "metrics/names.h"
#include "metrics/sample.h"
#include "store/pg_connection.h"
#include "store/run_tags.h"
#include "store/sqlite_statement.h"

namespace tb {
namespace {

// --- reading an MLflow database: SQLite or PostgreSQL, one query at a time ---------------

// One row of a query's result, read by column.
class Cells {
 public:
  virtual ~Cells() = default;
  virtual bool IsNull(int col) const = 0;
  virtual int64_t Int(int col) const = 0;
  virtual double Double(int col) const = 0;
  virtual std::string Text(int col) const = 0;
};

template <typename Row>
class CellsOf final : public Cells {
 public:
  explicit CellsOf(const Row& row) : row_(row) {}
  bool IsNull(int col) const override { return row_.IsNull(col); }
  int64_t Int(int col) const override { return row_.Int(col); }
  double Double(int col) const override { return row_.Double(col); }
  std::string Text(int col) const override { return row_.Text(col); }

 private:
  const Row& row_;
};

class Database {
 public:
  virtual ~Database() = default;
  // Calls `row` for every row of `sql`, whose $1 (if any) is `param`. Integers are read as
  // BIGINT and reals as DOUBLE PRECISION: queries cast to them.
  virtual Status Each(const std::string& sql, const std::string& param,
                      const std::function<void(const Cells&)>& row) = 0;
};

class SqliteDatabase final : public Database {
 public:
  static Result<std::unique_ptr<Database>> Open(const std::string& path) {
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    auto out = std::unique_ptr<SqliteDatabase>(new SqliteDatabase(db));
    if (rc != SQLITE_OK) {
      return Status::NotFound(
          "cannot open the MLflow database " + path + ": " + sqlite3_errstr(rc) +
          " (give the file MLflow's --backend-store-uri names: sqlite:///mlflow.db in this directory, "
          "sqlite:////abs/path/mlflow.db)");
    }
    sqlite3_busy_timeout(db, 5000);  // an MLflow server may be writing to it
    return std::unique_ptr<Database>(std::move(out));
  }
  ~SqliteDatabase() override { sqlite3_close(db_); }
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  Status Each(const std::string& sql, const std::string& param,
              const std::function<void(const Cells&)>& row) override {
    Statement st(db_, sql.c_str());
    if (!st.ok()) return Status::InvalidArgument(sqlite3_errmsg(db_));
    if (sql.find("$1") != std::string::npos) st.Bind(1, param);
    CellsOf<Statement> cells(st);
    int rc = SQLITE_ROW;
    while ((rc = st.Step()) == SQLITE_ROW) row(cells);
    if (rc != SQLITE_DONE) return Status::IoError(sqlite3_errmsg(db_));
    return Status::Ok();
  }

 private:
  explicit SqliteDatabase(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

class PostgresDatabase final : public Database {
 public:
  explicit PostgresDatabase(std::unique_ptr<pg::Connection> c) : c_(std::move(c)) {}
  Status Each(const std::string& sql, const std::string& param,
              const std::function<void(const Cells&)>& row) override {
    pg::Stmt st{sql, {}};
    if (sql.find("$1") != std::string::npos) st.params.push_back(pg::Text(param));
    Result<pg::Rows> rows = c_->Query(st);
    if (!rows.ok()) return Status::InvalidArgument(rows.status().message());
    for (int i = 0; i < rows->size(); ++i) {
      pg::Row r{*rows, i};
      row(CellsOf<pg::Row>(r));
    }
    return Status::Ok();
  }

 private:
  std::unique_ptr<pg::Connection> c_;
};

Result<std::unique_ptr<Database>> OpenDatabase(const std::string& source) {
  if (StartsWith(source, "postgresql://") || StartsWith(source, "postgres://")) {
    Result<std::unique_ptr<pg::Connection>> c = pg::Connection::Open(source);
    if (!c.ok()) return c.status();
    return std::unique_ptr<Database>(std::make_unique<PostgresDatabase>(std::move(c.value())));
  }
  // MLflow's URI as SQLAlchemy reads it: sqlite:///mlflow.db is mlflow.db in the working
  // directory, sqlite:////srv/mlflow.db the absolute path; a bare path is a path.
  std::string path = source;
  if (StartsWith(path, "sqlite:///")) {
    path = path.substr(std::string_view("sqlite:///").size());
  } else if (StartsWith(path, "sqlite:")) {
    return Status::InvalidArgument(
        "cannot import " + source +
        ": give MLflow's database file as sqlite:///mlflow.db (in this directory), "
        "sqlite:////abs/path/mlflow.db or a path");
  }
  if (path.empty()) return Status::InvalidArgument("no MLflow database file in " + source);
  return SqliteDatabase::Open(path);
}

// The first query that works: MLflow's schema gained columns over the years (runs.name in
// 2.0, metrics.is_nan in 1.x); older databases are read with the older shape.
Status EachOf(Database& db, const std::vector<std::string>& shapes, const std::string& param,
              const std::function<void(const Cells&)>& row) {
  Status last;
  for (const std::string& sql : shapes) {
    last = db.Each(sql, param, row);
    if (last.ok()) return last;
  }
  return last;
}

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
};

// "SMI - Timestamp" is the clock nvidia-smi printed, not a measurement: left behind.
constexpr std::string_view kRadtClock = "SMI - Timestamp";

std::string Param(const KeyValues& kvs, std::string_view key) {
  for (const auto& [k, v] : kvs) {
    if (k == key) return v;
  }
  return "";
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
  if (key == kRadtClock) return std::nullopt;
  std::optional<RadtSeries> radt = RadtMetric(key);
  if (!radt) return Target{Concat({metric::kScriptPrefix, key}), "", 1, true};
  Labels labels;
  if (!radt->listener.empty()) {
    if (AllDigits(devices)) labels.Add("gpu", devices);
    labels.Add("listener", radt->listener);
  }
  // DCGM's PCIe throughput fields (200, 201) are never filled: radT's 0s there are no data.
  bool never_filled = radt->listener == "dcgmi" && (radt->metric == metric::kGpuPcieTransmitBytesPerSecond ||
                                                    radt->metric == metric::kGpuPcieReceiveBytesPerSecond);
  return Target{std::string(radt->metric), labels.text(), radt->scale, false, never_filled};
}

const std::vector<std::string> kRunShapes = {
    "SELECT run_uuid, COALESCE(name, ''), COALESCE(status, ''), CAST(COALESCE(start_time, 0) AS BIGINT), "
    "CAST(COALESCE(end_time, 0) AS BIGINT), COALESCE(lifecycle_stage, 'active'), CAST(experiment_id AS "
    "BIGINT) FROM runs ORDER BY start_time, run_uuid",
    "SELECT run_uuid, '', COALESCE(status, ''), CAST(COALESCE(start_time, 0) AS BIGINT), "
    "CAST(COALESCE(end_time, 0) AS BIGINT), COALESCE(lifecycle_stage, 'active'), CAST(experiment_id AS "
    "BIGINT) FROM runs ORDER BY start_time, run_uuid",
};
const std::vector<std::string> kMetricShapes = {
    "SELECT key, CAST(value AS DOUBLE PRECISION), CAST(timestamp AS BIGINT), CAST(COALESCE(step, 0) AS "
    "BIGINT), CAST(CASE WHEN is_nan THEN 1 ELSE 0 END AS BIGINT) FROM metrics WHERE run_uuid = $1 "
    "ORDER BY key, timestamp, step",
    "SELECT key, CAST(value AS DOUBLE PRECISION), CAST(timestamp AS BIGINT), CAST(0 AS BIGINT), CAST(0 AS "
    "BIGINT) FROM metrics WHERE run_uuid = $1 ORDER BY key, timestamp",
};

struct MlflowRun {
  RunRecord record;
  bool deleted = false;
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

Result<std::vector<MlflowRun>> ReadRuns(Database& db) {
  std::map<int64_t, std::string> experiments;
  Status st = db.Each("SELECT CAST(experiment_id AS BIGINT), name FROM experiments", "",
                      [&](const Cells& c) { experiments[c.Int(0)] = c.Text(1); });
  std::vector<MlflowRun> runs;
  if (st.ok()) {
    st = EachOf(db, kRunShapes, "", [&](const Cells& c) {
      MlflowRun m;
      RunRecord& r = m.record;
      r.id = c.Text(0);
      r.name = c.Text(1);
      r.status = c.Text(2);  // MLflow's, shaped below
      r.start_ms = c.Int(3);
      r.end_ms = c.Int(4);
      m.deleted = c.Text(5) == "deleted";
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

bool Imported(const Result<RunRecord>& there, const std::string& id) {
  if (!there.ok() || there->id != id) return false;
  return HasTag(there.value(), kImportedTag);
}

Status ImportRun(Database& db, Store& to, const RunRecord& run, int64_t& points) {
  Result<RunRecord> there = to.FindRun(run.id);
  if (!(there.ok() && there->id == run.id)) {
    TB_RETURN_IF_ERROR(to.EnsureExperiment(run.experiment).status());
    TB_RETURN_IF_ERROR(to.CreateRun(run));
  }
  std::map<std::pair<std::string, std::string>, std::vector<Point>> series;
  std::string key;
  std::optional<Target> target;
  TB_RETURN_IF_ERROR(EachOf(db, kMetricShapes, run.id, [&](const Cells& c) {
    if (c.Text(0) != key || key.empty()) {
      key = c.Text(0);
      target = TargetOf(key, run.devices);
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
    series[{target->metric, target->labels}].push_back(p);
  }));
  for (auto& [name, values] : series) {
    std::stable_sort(values.begin(), values.end(),
                     [](const Point& a, const Point& b) { return a.time_ms < b.time_ms; });
    points += static_cast<int64_t>(values.size());
    TB_RETURN_IF_ERROR(WriteSealedSeries(to, run.id, name.first, name.second, values));
  }
  return to.SetTags(run.id, {{kImportedTag, "mlflow"}});
}

}  // namespace

std::optional<RadtSeries> RadtMetric(std::string_view name) {
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

// The experiments of MLflow's runs, with their tags (an MLflow database without the table
// has none) and MLflow's id beside them (kMlflowExperimentIdTag).
Status ImportExperiments(Database& db, Store& to, const std::vector<MlflowRun>& runs) {
  std::map<std::string, KeyValues> tags;  // by name
  (void)db.Each(
      "SELECT e.name, t.key, COALESCE(t.value, '') FROM experiment_tags t JOIN experiments e ON "
      "e.experiment_id = t.experiment_id ORDER BY t.key",
      "", [&](const Cells& c) { tags[c.Text(0)].emplace_back(c.Text(1), c.Text(2)); });
  std::map<std::string, int64_t> ids;
  TB_RETURN_IF_ERROR(db.Each("SELECT name, CAST(experiment_id AS BIGINT) FROM experiments", "",
                             [&](const Cells& c) { ids[c.Text(0)] = c.Int(1); }));
  std::set<std::string> done;
  for (const MlflowRun& m : runs) {
    const std::string& name = m.record.experiment;
    if (m.deleted || !done.insert(name).second || !CheckExperimentName(name).ok()) continue;
    Result<int64_t> id = to.EnsureExperiment(name);
    if (!id.ok()) return id.status();
    KeyValues set = tags[name];
    if (auto mlflow_id = ids.find(name); mlflow_id != ids.end())
      set.emplace_back(kMlflowExperimentIdTag, std::to_string(mlflow_id->second));
    if (!set.empty())
      TB_RETURN_IF_ERROR(
          to.ChangeExperiment(*id, {.name = std::nullopt, .set_tags = set, .delete_tags = {}}));
  }
  return Status::Ok();
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
  TB_RETURN_IF_ERROR(ImportExperiments(**db, to, *runs));
  ImportResult result;
  for (const MlflowRun& m : *runs) {
    if (m.deleted) {
      ++result.deleted;
      continue;
    }
    if (Imported(to.FindRun(m.record.id), m.record.id)) {
      ++result.skipped;
      continue;
    }
    if (Status id = CheckRunId(m.record.id); !id.ok()) {
      result.refused.push_back("run '" + Printable(m.record.id) + "' (not an MLflow run id: " + id.message() +
                               ")");
      continue;
    }
    if (Status name = CheckExperimentName(m.record.experiment); !name.ok()) {
      result.refused.push_back("run " + m.record.id + " (" + name.message() + ")");
      continue;
    }
    if (progress) progress(m.record);
    TB_RETURN_IF_ERROR(ImportRun(**db, to, m.record, result.points));
    ++result.imported;
  }
  return result;
}

}  // namespace tb
