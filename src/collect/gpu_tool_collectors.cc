#include "collect/gpu_tool_collectors.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <regex>
#include <string>

#include "base/strings.h"
#include "base/time.h"
#include "collect/gpu_tool_parsers.h"
#include "collect/tool_stream.h"
#include "metrics/names.h"
#include "platform/process.h"

namespace tb {
namespace {

// A tool's column: stored as value * multiply / divide, which is exact where the input is
// (95 % is 0.95, not 95 * 0.01 = 0.9500000000000001).
struct FieldMetric {
  std::string_view metric;  // empty: not stored (timestamp, index)
  double multiply = 1;
  double divide = 1;
  double Convert(double v) const { return v * multiply / divide; }
};

// How long a one-shot dcgmi command (discovery, group) may take: the host engine answers
// in milliseconds, or has hung.
constexpr int kDcgmiTimeoutMs = 10000;

// Rows kept per entity between two ticks (a tool faster than the ticks; bounded).
constexpr size_t kMaxRowsPerTick = 64;

// The shared machinery: start the tool on the first tick, keep the newest row of each
// GPU, store fresh rows each tick, go quiet with one notice when the tool cannot run.
class ToolCollector : public Collector {
 public:
  ToolCollector(const DeviceSelection& devices, int64_t interval_ms)
      : indices_(devices.gpu_indices), mig_(devices.mig), interval_ms_(interval_ms) {}

  Status Collect(const Tick& tick, SampleSink& sink) override {
    if (listener_labels_.empty()) listener_labels_ = Labels{{"listener", name()}};
    if (off_) return off_status_;  // the same notice, which the sampler reports once
    if (!running_) {
      Status s = Begin();
      if (!s.ok()) return Off(s.message());
      running_ = true;
    }
    if (stream_.Finished()) {
      Status s = AfterExit(tick);
      if (!s.ok()) return Off(s.message());
    }
    std::lock_guard lock(mu_);
    for (auto& [entity, rows] : pending_) {
      Labels labels = entity.With(listener_labels_);
      for (const Row& row : rows) {
        for (size_t i = 0; i < row.values.size() && i < fields_.size(); ++i) {
          if (row.values[i] && !fields_[i].metric.empty())
            sink.Add({fields_[i].metric, labels, row.time_ms, fields_[i].Convert(*row.values[i])});
        }
      }
      rows.clear();
    }
    if (unparsed_ > 0)
      sink.Add({metric::kTrainbenchListenerUnparsedLines, listener_labels_, tick.time_ms,
                static_cast<double>(unparsed_)});
    if (unparsed_ > 0 && !told_unparsed_ && tick.event != nullptr && *tick.event) {
      told_unparsed_ = true;
      (*tick.event)("listener",
                    std::string(name()) + ": a line of its tool's output could not be read: " + bad_line_);
    }
    return Status::Ok();
  }

 protected:
  struct Row {
    int64_t time_ms = 0;  // when the tool printed it
    std::vector<std::optional<double>> values;
  };

  // Starts the tool (first tick).
  virtual Status Begin() = 0;
  // The tool exited: start it again differently, or fail to turn the listener off.
  virtual Status AfterExit(const Tick& tick) = 0;

  Status Off(const std::string& why) {
    off_ = true;
    stream_.Stop();
    off_status_ = Status::Unavailable(why + "; the " + std::string(name()) + " listener is off for this run");
    return off_status_;
  }

  // Keeps a row of a GPU (of the run's GPUs only), printed at `time_ms`.
  void Store(int gpu, int64_t time_ms, std::vector<std::optional<double>> values) {
    if (!indices_.empty() &&
        std::find(indices_.begin(), indices_.end(), static_cast<unsigned>(gpu)) == indices_.end()) {
      return;
    }
    StoreEntity(Labels().Add("gpu", gpu), time_ms, std::move(values));
  }

  // Keeps a row of any entity, named by its labels (gpu=1,gpu_instance=2).
  void StoreEntity(Labels labels, int64_t time_ms, std::vector<std::optional<double>> values) {
    std::lock_guard lock(mu_);
    std::deque<Row>& rows = pending_[std::move(labels)];
    if (rows.size() >= kMaxRowsPerTick) rows.pop_front();
    rows.push_back(Row{time_ms, std::move(values)});
  }

  void Unparsed(std::string_view line) {
    std::lock_guard lock(mu_);
    if (unparsed_++ == 0) bad_line_ = std::string(line.substr(0, 200));
  }

  std::vector<unsigned> indices_;
  std::vector<MigSelection> mig_;
  int64_t interval_ms_;
  std::vector<FieldMetric> fields_;  // per column of the tool's rows
  ToolStream stream_;
  std::mutex mu_;
  std::string last_error_;  // the tool's last "Error" line

 private:
  bool running_ = false;
  bool off_ = false;
  Status off_status_;
  std::map<Labels, std::deque<Row>> pending_;  // rows since the last tick, by entity labels
  Labels listener_labels_;                     // listener=smi|dcgmi
  int64_t unparsed_ = 0;
  bool told_unparsed_ = false;
  std::string bad_line_;
};

std::string JoinIndices(const std::vector<unsigned>& indices) {
  std::string out;
  for (unsigned i : indices) out += (out.empty() ? "" : ",") + std::to_string(i);
  return out;
}

// --- smi ---------------------------------------------------------------------------------

struct SmiField {
  const char* name;
  FieldMetric metric;
};
const SmiField kSmiFields[] = {
    {"timestamp", {"", 1}},
    {"index", {"", 1}},
    {"power.draw", {metric::kGpuPowerDrawWatts}},
    {"utilization.gpu", {metric::kGpuUtilizationGpuRatio, 1, 100}},
    {"utilization.memory", {metric::kGpuUtilizationMemoryRatio, 1, 100}},
    // nvidia-smi's memory.used leaves out what the driver reserves, as NVML's v2 `used`.
    {"memory.used", {metric::kGpuMemoryUsedBytes, 1048576}},
    {"memory.total", {metric::kGpuMemoryTotalBytes, 1048576}},
    {"pstate", {metric::kGpuPerformanceStateIndex}},
    {"temperature.gpu", {metric::kGpuTemperatureGpuCelsius}},
    {"clocks.sm", {metric::kGpuClockSmHertz, 1e6}},
    {"clocks.mem", {metric::kGpuClockMemoryHertz, 1e6}},
};

class SmiCollector : public ToolCollector {
 public:
  using ToolCollector::ToolCollector;
  std::string_view name() const override { return "smi"; }

 protected:
  Status Begin() override {
    std::string query;
    for (const SmiField& f : kSmiFields) {
      query += (query.empty() ? "" : ",") + std::string(f.name);
      fields_.push_back(f.metric);
    }
    std::vector<std::string> argv = {"nvidia-smi", "--query-gpu=" + query, "--format=csv,noheader,nounits",
                                     "-lms", std::to_string(interval_ms_)};
    if (!indices_.empty()) {
      argv.push_back("-i");
      argv.push_back(JoinIndices(indices_));
    }
    return stream_.Start(argv, [this](std::string_view line) {
      SmiRow row;
      if (!ParseSmiCsvLine(line, std::size(kSmiFields), row) || !row.values[1]) {
        if (line.find("Error") != std::string_view::npos || line.find("failed") != std::string_view::npos ||
            line.find("lost") != std::string_view::npos) {
          std::lock_guard lock(mu_);
          last_error_ = std::string(Trim(line));
        } else {
          Unparsed(line);
        }
        return;
      }
      int gpu = static_cast<int>(*row.values[1]);
      int64_t printed = ParseSmiTimestamp(row.text[0]).value_or(WallMillis());
      Store(gpu, printed, std::move(row.values));
    });
  }

  Status AfterExit(const Tick&) override {
    std::lock_guard lock(mu_);
    return Status::Unavailable("nvidia-smi stopped" +
                               (last_error_.empty() ? std::string() : ": " + last_error_));
  }
};

// --- dcgmi -------------------------------------------------------------------------------

const std::map<int, FieldMetric>& DcgmMetrics() {
  static const std::map<int, FieldMetric> m = {
      {155, {metric::kGpuPowerDrawWatts}},
      {156, {metric::kGpuEnergyConsumedJoules, 1, 1000}},
      {203, {metric::kGpuUtilizationGpuRatio, 1, 100}},
      {204, {metric::kGpuUtilizationMemoryRatio, 1, 100}},
      {1001, {metric::kGpuGraphicsEngineActiveRatio}},
      {1002, {metric::kGpuSmActiveRatio}},
      {1003, {metric::kGpuSmOccupancyRatio}},
      {1004, {metric::kGpuPipeTensorActiveRatio}},
      {1005, {metric::kGpuDramActiveRatio}},
      {1006, {metric::kGpuPipeFp64ActiveRatio}},
      {1007, {metric::kGpuPipeFp32ActiveRatio}},
      {1008, {metric::kGpuPipeFp16ActiveRatio}},
      {1009, {metric::kGpuPcieTxTotalBytesPerSecond}},
      {1010, {metric::kGpuPcieRxTotalBytesPerSecond}},
      {1011, {metric::kGpuNvlinkTransmitBytesPerSecond}},
      {1012, {metric::kGpuNvlinkReceiveBytesPerSecond}},
  };
  return m;
}

class DcgmiCollector : public ToolCollector {
 public:
  using ToolCollector::ToolCollector;
  ~DcgmiCollector() override {
    stream_.Stop();
    if (group_ >= 0) (void)RunAndCapture({"dcgmi", "group", "-d", std::to_string(group_)}, kDcgmiTimeoutMs);
  }
  std::string_view name() const override { return "dcgmi"; }

 protected:
  Status Begin() override {
    Result<std::string> probe = ProbeDcgm();
    if (!probe.ok()) return probe.status();
    std::string entities = indices_.empty() ? std::string() : JoinIndices(indices_);
    if (entities.empty()) {
      // Every GPU dcgmi discovered: "N GPUs found."
      std::vector<std::string_view> words = SplitWhitespace(*probe);
      std::optional<uint64_t> n = ParseUint(words.empty() ? "" : words[0]);
      for (uint64_t i = 0; i < n.value_or(0); ++i)
        entities += (entities.empty() ? "" : ",") + std::to_string(i);
    }
    // The run's MIG instances as DCGM GPU-I entities (their own ids, from the hierarchy).
    if (!mig_.empty()) {
      Result<CapturedOutput> hierarchy = RunAndCapture({"dcgmi", "discovery", "-c"}, kDcgmiTimeoutMs);
      for (const MigSelection& m : mig_) {
        std::optional<int> entity =
            hierarchy.ok() ? FindDcgmInstanceEntity(hierarchy->out, m.gpu, m.gpu_instance_id) : std::nullopt;
        if (!entity) continue;
        instances_[*entity] = Labels().Add("gpu", m.gpu).Add("gpu_instance", m.gpu_instance_id);
        entities += (entities.empty() ? "" : ",") + ("i:" + std::to_string(*entity));
      }
    }
    Result<CapturedOutput> created = RunAndCapture(
        {"dcgmi", "group", "-c", "trainbench-" + std::to_string(getpid()), "-a", entities}, kDcgmiTimeoutMs);
    std::smatch m;
    std::string out = created.ok() ? created->out : "";
    if (!created.ok() || !std::regex_search(out, m, std::regex("group ID of ([0-9]+)"))) {
      return Status::Unavailable("dcgmi could not create a GPU group: " + std::string(Trim(out)));
    }
    group_ = std::stoi(m[1]);
    return StartSet();
  }

  Status AfterExit(const Tick& tick) override {
    std::string error;
    {
      std::lock_guard lock(mu_);
      error = last_error_;
      last_error_.clear();
    }
    if (error.find("Error setting watches") != std::string::npos && set_ + 1 < DcgmiFieldSets().size()) {
      ++set_;
      if (tick.event != nullptr && *tick.event) {
        (*tick.event)("listener", "dcgmi refused its profiling fields (" + error + "); watching fields " +
                                      FieldList(DcgmiFieldSets()[set_]) + " instead");
      }
      return StartSet();
    }
    return Status::Unavailable("dcgmi dmon stopped" + (error.empty() ? std::string() : ": " + error));
  }

 private:
  static std::string FieldList(const std::vector<int>& ids) {
    std::string s;
    for (int id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
    return s;
  }

  Status StartSet() {
    const std::vector<int>& ids = DcgmiFieldSets()[set_];
    bool profiling = std::any_of(ids.begin(), ids.end(), [](int id) { return id >= 1001; });
    int64_t delay = profiling ? std::max<int64_t>(interval_ms_, 100) : interval_ms_;
    {
      std::lock_guard lock(mu_);
      fields_.clear();
      for (int id : ids) fields_.push_back(DcgmMetrics().at(id));
    }
    size_t columns = ids.size();
    return stream_.Start(
        {"dcgmi", "dmon", "-e", FieldList(ids), "-d", std::to_string(delay), "-g", std::to_string(group_)},
        [this, columns](std::string_view line) {
          DmonRow row;
          switch (ParseDmonLine(line, columns, row)) {
            case DmonLine::kRow: {
              int64_t now = WallMillis();  // dmon prints no time: the row's is its arrival
              if (row.entity_kind == "GPU") {
                Store(row.entity_id, now, std::move(row.values));
              } else if (row.entity_kind == "GPU-I") {  // a MIG GPU instance
                auto it = instances_.find(row.entity_id);
                Labels labels =
                    it != instances_.end() ? it->second : Labels().Add("gpu_instance_entity", row.entity_id);
                StoreEntity(std::move(labels), now, std::move(row.values));
              }
              break;
            }
            case DmonLine::kError: {
              std::lock_guard lock(mu_);
              last_error_ = std::string(Trim(line));
              break;
            }
            case DmonLine::kHeader:
              break;
            case DmonLine::kOther:
              if (!Trim(line).empty()) Unparsed(line);
              break;
          }
        });
  }

  int group_ = -1;
  size_t set_ = 0;
  std::map<int, Labels> instances_;  // DCGM GPU-I entity id -> labels
};

}  // namespace

const std::vector<std::vector<int>>& DcgmiFieldSets() {
  static const std::vector<std::vector<int>> sets = {
      {155, 156, 203, 204, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012},
      {155, 156, 203, 204, 1001, 1002, 1003, 1004, 1005, 1007, 1008, 1009, 1010, 1011, 1012},
      {155, 156, 203, 204},
  };
  return sets;
}

namespace {

// A GPU tool's quick query (`argv`): its output, or why the tool cannot be used here: not
// installed (`missing`), or the query failed (`failed`, its first line, then `hint`).
Result<std::string> ProbeTool(const std::vector<std::string>& argv, const std::string& missing,
                              const std::string& failed, const std::string& hint) {
  if (!FindExecutable(argv[0])) return Status::Unavailable(missing);
  constexpr int kProbeTimeoutMs = 10000;
  Result<CapturedOutput> probe = RunAndCapture(argv, kProbeTimeoutMs);
  if (!probe.ok() || probe->exit.ShellCode() != 0) {
    std::string why = probe.ok() ? std::string(Trim(probe->out.substr(0, probe->out.find('\n', 7))))
                                 : probe.status().message();
    return Status::Unavailable(failed + " (" + why + "); " + hint);
  }
  return probe->out;
}

}  // namespace

Result<std::string> ProbeDcgm() {
  return ProbeTool({"dcgmi", "discovery", "-l"},
                   "dcgmi is not installed (no dcgmi on PATH; install datacenter-gpu-manager)",
                   "dcgmi cannot reach the DCGM host engine",
                   "start it with `nv-hostengine` or `systemctl start nvidia-dcgm`");
}

Result<std::string> ProbeSmi() {
  return ProbeTool({"nvidia-smi", "-L"}, "no nvidia-smi on PATH (it comes with NVIDIA's driver)",
                   "nvidia-smi -L failed", "check that the NVIDIA driver is loaded");
}

bool DcgmHostEngineAnswers() { return ProbeDcgm().ok(); }

std::unique_ptr<Collector> MakeSmiCollector(const DeviceSelection& devices, int64_t interval_ms) {
  return std::make_unique<SmiCollector>(devices, interval_ms);
}

std::unique_ptr<Collector> MakeDcgmiCollector(const DeviceSelection& devices, int64_t interval_ms) {
  return std::make_unique<DcgmiCollector>(devices, interval_ms);
}

}  // namespace tb
