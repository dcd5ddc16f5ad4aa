#include "collect/gpu_tool_collectors.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <regex>
#include <string>

#include "base/strings.h"
#include "collect/gpu_tool_parsers.h"
#include "collect/tool_stream.h"
#include "platform/process.h"

namespace tb {
namespace {

struct FieldMetric {
  const char* metric;  // empty: not stored (timestamp, index)
  double scale;
};

// The shared machinery: start the tool on the first tick, keep the newest row of each
// GPU, store fresh rows each tick, go quiet with one notice when the tool cannot run.
class ToolCollector : public Collector {
 public:
  ToolCollector(std::vector<unsigned> indices, int64_t interval_ms)
      : indices_(std::move(indices)), interval_ms_(interval_ms) {}

  Status Collect(const Tick& tick, SampleSink& sink) override {
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
    for (auto& [entity, row] : latest_) {
      if (!row.fresh) continue;
      row.fresh = false;
      std::string labels = entity + ",listener=" + std::string(name());
      for (size_t i = 0; i < row.values.size() && i < fields_.size(); ++i) {
        if (row.values[i] && *fields_[i].metric != '\0')
          sink.Add(fields_[i].metric, labels, *row.values[i] * fields_[i].scale);
      }
    }
    if (unparsed_ > 0)
      sink.Add("trainbench.listener.unparsed_lines", "listener=" + std::string(name()), unparsed_);
    if (unparsed_ > 0 && !told_unparsed_ && tick.event != nullptr && *tick.event) {
      told_unparsed_ = true;
      (*tick.event)("listener",
                    std::string(name()) + ": a line of its tool's output could not be read: " + bad_line_);
    }
    return Status::Ok();
  }

 protected:
  struct Row {
    std::vector<std::optional<double>> values;
    bool fresh = false;
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

  // Keeps the newest row of a GPU (of the run's GPUs only).
  void Store(int gpu, std::vector<std::optional<double>> values) {
    if (!indices_.empty() &&
        std::find(indices_.begin(), indices_.end(), static_cast<unsigned>(gpu)) == indices_.end()) {
      return;
    }
    StoreEntity("gpu=" + std::to_string(gpu), std::move(values));
  }

  // Keeps the newest row of any entity, named by its labels ("gpu_instance=1").
  void StoreEntity(std::string labels, std::vector<std::optional<double>> values) {
    std::lock_guard lock(mu_);
    latest_[std::move(labels)] = Row{std::move(values), true};
  }

  void Unparsed(std::string_view line) {
    std::lock_guard lock(mu_);
    if (unparsed_++ == 0) bad_line_ = std::string(line.substr(0, 200));
  }

  std::vector<unsigned> indices_;
  int64_t interval_ms_;
  std::vector<FieldMetric> fields_;  // per column of the tool's rows
  ToolStream stream_;
  std::mutex mu_;
  std::string last_error_;  // the tool's last "Error" line

 private:
  bool running_ = false;
  bool off_ = false;
  Status off_status_;
  std::map<std::string, Row> latest_;  // by entity labels
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
    {"power.draw", {"gpu.power.draw_watts", 1}},
    {"utilization.gpu", {"gpu.utilization.gpu_ratio", 0.01}},
    {"utilization.memory", {"gpu.utilization.memory_ratio", 0.01}},
    {"memory.used", {"gpu.memory.used_bytes", 1048576}},
    {"memory.total", {"gpu.memory.total_bytes", 1048576}},
    {"pstate", {"gpu.performance.state_index", 1}},
    {"temperature.gpu", {"gpu.temperature.gpu_celsius", 1}},
    {"clocks.sm", {"gpu.clock.sm_hertz", 1e6}},
    {"clocks.mem", {"gpu.clock.memory_hertz", 1e6}},
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
      Store(gpu, std::move(row.values));
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
      {155, {"gpu.power.draw_watts", 1}},
      {156, {"gpu.energy.consumed_joules", 0.001}},
      {200, {"gpu.pcie.transmit_bytes_per_second", 1024}},
      {201, {"gpu.pcie.receive_bytes_per_second", 1024}},
      {203, {"gpu.utilization.gpu_ratio", 0.01}},
      {204, {"gpu.utilization.memory_ratio", 0.01}},
      {1001, {"gpu.graphics.engine_active_ratio", 1}},
      {1002, {"gpu.sm.active_ratio", 1}},
      {1003, {"gpu.sm.occupancy_ratio", 1}},
      {1004, {"gpu.pipe.tensor_active_ratio", 1}},
      {1005, {"gpu.dram.active_ratio", 1}},
      {1006, {"gpu.pipe.fp64_active_ratio", 1}},
      {1007, {"gpu.pipe.fp32_active_ratio", 1}},
      {1008, {"gpu.pipe.fp16_active_ratio", 1}},
      {1009, {"gpu.pcie.tx_total_bytes_per_second", 1}},
      {1010, {"gpu.pcie.rx_total_bytes_per_second", 1}},
      {1011, {"gpu.nvlink.transmit_bytes_per_second", 1}},
      {1012, {"gpu.nvlink.receive_bytes_per_second", 1}},
  };
  return m;
}

class DcgmiCollector : public ToolCollector {
 public:
  using ToolCollector::ToolCollector;
  ~DcgmiCollector() override {
    stream_.Stop();
    if (group_ >= 0) (void)RunAndCapture({"dcgmi", "group", "-d", std::to_string(group_)}, 10000);
  }
  std::string_view name() const override { return "dcgmi"; }

 protected:
  Status Begin() override {
    if (!FindExecutable("dcgmi")) return Status::Unavailable("dcgmi is not installed (no dcgmi on PATH)");
    Result<CapturedOutput> probe = RunAndCapture({"dcgmi", "discovery", "-l"}, 10000);
    if (!probe.ok() || probe->exit.ShellCode() != 0) {
      std::string why = probe.ok() ? std::string(Trim(probe->out.substr(0, probe->out.find('\n', 7))))
                                   : probe.status().message();
      return Status::Unavailable("dcgmi cannot reach the DCGM host engine (" + why +
                                 "); start it with `nv-hostengine` or `systemctl start nvidia-dcgm`");
    }
    std::string gpus = indices_.empty() ? std::string() : JoinIndices(indices_);
    if (gpus.empty()) {
      // Every GPU dcgmi discovered: "N GPUs found."
      std::optional<uint64_t> n =
          ParseUint(SplitWhitespace(probe->out).empty() ? "" : SplitWhitespace(probe->out)[0]);
      for (uint64_t i = 0; i < n.value_or(0); ++i) gpus += (gpus.empty() ? "" : ",") + std::to_string(i);
    }
    Result<CapturedOutput> created =
        RunAndCapture({"dcgmi", "group", "-c", "trainbench-" + std::to_string(getpid()), "-a", gpus}, 10000);
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
            case DmonLine::kRow:
              if (row.entity_kind == "GPU") {
                int gpu = row.entity_id;
                Store(gpu, std::move(row.values));
              } else if (row.entity_kind == "GPU-I") {  // a MIG GPU instance
                std::string labels = "gpu_instance=" + std::to_string(row.entity_id);
                StoreEntity(std::move(labels), std::move(row.values));
              }
              break;
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
};

}  // namespace

const std::vector<std::vector<int>>& DcgmiFieldSets() {
  static const std::vector<std::vector<int>> sets = {
      {155, 156, 200, 201, 203, 204, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012},
      {155, 156, 200, 201, 203, 204, 1001, 1002, 1003, 1004, 1005},
      {155, 156, 200, 201, 203, 204, 1002},
      {155, 156, 200, 201, 203, 204},
  };
  return sets;
}

std::unique_ptr<Collector> MakeSmiCollector(std::vector<unsigned> gpu_indices, int64_t interval_ms) {
  return std::make_unique<SmiCollector>(std::move(gpu_indices), interval_ms);
}

std::unique_ptr<Collector> MakeDcgmiCollector(std::vector<unsigned> gpu_indices, int64_t interval_ms) {
  return std::make_unique<DcgmiCollector>(std::move(gpu_indices), interval_ms);
}

}  // namespace tb
