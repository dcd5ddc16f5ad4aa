#include "collect/jetson.h"

#include <algorithm>
#include <mutex>

#include "base/strings.h"
#include "collect/tegrastats.h"
#include "collect/tool_stream.h"
#include "metrics/names.h"
#include "platform/process.h"

namespace tb {
namespace {

constexpr std::string_view kI2c = "/sys/bus/i2c/devices";
constexpr std::string_view kDevfreq = "/sys/class/devfreq";
constexpr std::string_view kCpus = "/sys/devices/system/cpu";
// The EMC's clock in Hz as the BPMP firmware sets it (debugfs: root only), as jtop reads it.
constexpr std::string_view kEmcRate = "/sys/kernel/debug/bpmp/debug/clk/emc/rate";

std::string Line(const HostFiles& files, const std::string& path) {
  std::string text;
  if (!files.Read(path, text).ok()) return "";
  return std::string(Trim(text));
}

std::vector<std::string> Entries(const HostFiles& files, const std::string& path) {
  std::vector<std::string> names;
  if (!files.List(path, names).ok()) return {};
  std::sort(names.begin(), names.end());
  return names;
}

bool Connected(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return !name.empty() && name != "NC" && lower.find("sum of shunt") == std::string::npos;
}

// The INA3221 channels of one i2c device: hwmon (label, mV, mA) or older iio (name, mW).
void AddRails(const HostFiles& files, const std::string& device, std::vector<JetsonRail>& rails) {
  for (const std::string& hwmon : Entries(files, device + "/hwmon")) {
    std::string dir = device;
    dir += "/hwmon/";
    dir += hwmon;
    for (int n = 1; n <= 8; ++n) {
      std::string in = dir + "/in" + std::to_string(n);
      std::string name = Line(files, in + "_label");
      if (!Connected(name) || !files.Exists(dir + "/curr" + std::to_string(n) + "_input")) continue;
      rails.push_back({name, in + "_input", dir + "/curr" + std::to_string(n) + "_input", ""});
    }
  }
  for (const std::string& iio : Entries(files, device)) {
    if (!StartsWith(iio, "iio:device")) continue;
    std::string dir = device;
    dir += '/';
    dir += iio;
    for (int n = 0; n <= 8; ++n) {
      std::string name = Line(files, dir + "/rail_name_" + std::to_string(n));
      if (Connected(name)) rails.push_back({name, "", "", dir + "/in_power" + std::to_string(n) + "_input"});
    }
  }
}

bool IsGpuDevfreq(const std::string& name) {
  for (const char* gpu : {"gpu", "ga10b", "gv11b", "gp10b", "gm20b", "gb10b"})
    if (name.find(gpu) != std::string::npos) return true;
  return false;
}

std::optional<double> Number(const std::string& text) {
  std::optional<uint64_t> v = ParseUint(text);
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

// What both Jetson listeners record from a reading (jetson.h), with the board's and the
// GPU rail's energy integrated between readings.
class JetsonRecorder {
 public:
  explicit JetsonRecorder(unsigned runs_sharing) : runs_sharing_(std::max(1U, runs_sharing)) {}

  void Record(const JetsonReading& r, const Tick& tick, SampleSink& sink) {
    Labels gpu = Labels().Add("gpu", 0);
    for (const auto& [name, mw] : r.rails_mw)
      sink.Add({metric::kHostRailPowerWatts, Labels().Add("rail", name), tick.time_ms, mw / 1000});
    std::optional<double> board = BoardPowerMilliwatts(r.rails_mw);
    const std::pair<std::string, double>* gpu_rail = GpuRail(r.rails_mw);
    double seconds = last_ns_ != 0 ? static_cast<double>(tick.monotonic_ns - last_ns_) / 1e9 : 0;
    Labels board_labels = Labels().Add("domain", "board");
    if (board) {
      if (last_board_w_) board_joules_ += (*last_board_w_ + *board / 1000) / 2 * seconds;
      last_board_w_ = *board / 1000;
      sink.Add({metric::kHostPowerDrawWatts, board_labels, tick.time_ms, *board / 1000});
      sink.Add(
          {metric::kHostEnergyConsumedJoules, board_labels, tick.time_ms, RoundForStorage(board_joules_)});
    }
    if (gpu_rail) {
      double w = gpu_rail->second / 1000;
      if (last_gpu_w_) gpu_joules_ += (*last_gpu_w_ + w) / 2 * seconds;
      last_gpu_w_ = w;
      sink.Add({metric::kGpuPowerDrawWatts, gpu, tick.time_ms, w});
      if (tick.tree != nullptr) {
        sink.Add({metric::kProcGpuShareRatio, gpu, tick.time_ms, RoundForStorage(1.0 / runs_sharing_)});
        sink.Add(
            {metric::kProcGpuEnergyJoules, gpu, tick.time_ms, RoundForStorage(gpu_joules_ / runs_sharing_)});
      }
    }
    if (r.gpu_load_ratio) sink.Add({metric::kGpuUtilizationGpuRatio, gpu, tick.time_ms, *r.gpu_load_ratio});
    if (r.gpu_hertz) sink.Add({metric::kGpuClockSmHertz, gpu, tick.time_ms, *r.gpu_hertz});
    if (r.emc_hertz) sink.Add({metric::kGpuClockMemoryHertz, gpu, tick.time_ms, *r.emc_hertz});
    if (r.emc_load_ratio)
      sink.Add({metric::kGpuUtilizationMemoryRatio, gpu, tick.time_ms, *r.emc_load_ratio});
    for (size_t cpu = 0; cpu < r.cpu_hertz.size(); ++cpu) {
      if (r.cpu_hertz[cpu])
        sink.Add({metric::kHostCpuClockHertz, Labels().Add("cpu", cpu), tick.time_ms, *r.cpu_hertz[cpu]});
    }
    last_ns_ = tick.monotonic_ns;
  }

 private:
  unsigned runs_sharing_;
  int64_t last_ns_ = 0;
  std::optional<double> last_board_w_, last_gpu_w_;
  double board_joules_ = 0, gpu_joules_ = 0;
};

class JetsonCollector : public Collector {
 public:
  JetsonCollector(const HostFiles& files, unsigned runs_sharing) : files_(files), recorder_(runs_sharing) {}
  std::string_view name() const override { return "jetson"; }

  Status Collect(const Tick& tick, SampleSink& sink) override {
    if (!found_) {
      board_ = FindJetsonBoard(files_);
      found_ = true;
    }
    if (board_.rails.empty() && board_.gpu_devfreq.empty()) return Status::Unavailable(board_.absent);
    JetsonReading r;
    for (const JetsonRail& rail : board_.rails) {
      std::optional<double> mw;
      if (!rail.power_path.empty()) {
        mw = Read(rail.power_path);
      } else if (std::optional<double> mv = Read(rail.voltage_path), ma = Read(rail.current_path); mv && ma) {
        mw = *mv * *ma / 1000;
      }
      if (mw) r.rails_mw.emplace_back(rail.name, *mw);
    }
    if (!board_.gpu_devfreq.empty()) {
      if (std::optional<double> load = Read(board_.gpu_devfreq + "/device/load"))
        r.gpu_load_ratio = *load / 1000;
      r.gpu_hertz = Read(board_.gpu_devfreq + "/cur_freq");
    }
    r.emc_hertz = Read(std::string(kEmcRate));
    for (unsigned cpu = 0; cpu < board_.cpus; ++cpu) {
      std::string dir = Concat({kCpus, "/cpu", std::to_string(cpu)});
      std::optional<double> online = Read(dir + "/online");  // cpu0 has none: always online
      std::optional<double> khz = online == 0.0 ? std::nullopt : Read(dir + "/cpufreq/scaling_cur_freq");
      r.cpu_hertz.push_back(khz ? std::optional(*khz * 1000) : std::nullopt);
    }
    recorder_.Record(r, tick, sink);
    files_.CloseUnused();
    return Status::Ok();
  }

 private:
  std::optional<double> Read(const std::string& path) {
    std::string text;
    if (!files_.ReadKeepOpen(path, text).ok()) return std::nullopt;
    return Number(std::string(Trim(text)));
  }

  HostFiles files_;
  bool found_ = false;
  JetsonBoard board_;
  JetsonRecorder recorder_;
};

class TegrastatsCollector : public Collector {
 public:
  TegrastatsCollector(int64_t interval_ms, unsigned runs_sharing)
      : interval_ms_(interval_ms), recorder_(runs_sharing) {}
  std::string_view name() const override { return "tegrastats"; }

  Status Collect(const Tick& tick, SampleSink& sink) override {
    if (!started_) {
      started_ = true;
      TB_RETURN_IF_ERROR(stream_.Start({"tegrastats", "--interval", std::to_string(interval_ms_)},
                                       [this](std::string_view line) {
                                         TegrastatsLine parsed;
                                         if (!ParseTegrastatsLine(line, parsed)) return;
                                         std::lock_guard lock(mu_);
                                         latest_ = std::move(parsed);
                                       }));
    }
    std::optional<TegrastatsLine> line;
    {
      std::lock_guard lock(mu_);
      line.swap(latest_);
    }
    if (!line) {
      if (stream_.Finished()) return Status::Unavailable("tegrastats stopped");
      return Status::Ok();
    }
    JetsonReading r;
    r.rails_mw = std::move(line->rails_mw);
    if (line->gpu_load_percent) r.gpu_load_ratio = *line->gpu_load_percent / 100;
    if (line->gpu_mhz) r.gpu_hertz = *line->gpu_mhz * 1e6;
    if (line->emc_mhz) r.emc_hertz = *line->emc_mhz * 1e6;
    if (line->emc_load_percent) r.emc_load_ratio = *line->emc_load_percent / 100;
    for (const std::optional<double>& mhz : line->cpu_mhz)
      r.cpu_hertz.push_back(mhz ? std::optional(*mhz * 1e6) : std::nullopt);
    recorder_.Record(r, tick, sink);
    return Status::Ok();
  }

 private:
  int64_t interval_ms_;
  bool started_ = false;
  ToolStream stream_;
  std::mutex mu_;
  std::optional<TegrastatsLine> latest_;
  JetsonRecorder recorder_;
};

}  // namespace

JetsonBoard FindJetsonBoard(const HostFiles& files) {
  JetsonBoard board;
  for (const std::string& device : Entries(files, std::string(kI2c)))
    AddRails(files, std::string(kI2c) + "/" + device, board.rails);
  for (const std::string& node : Entries(files, std::string(kDevfreq))) {
    if (!IsGpuDevfreq(node)) continue;
    board.gpu_devfreq = std::string(kDevfreq) + "/" + node;
    break;
  }
  while (files.Exists(Concat({kCpus, "/cpu", std::to_string(board.cpus), "/cpufreq"}))) ++board.cpus;
  if (board.rails.empty())
    board.absent = "no Jetson here (no INA3221 power rails under /sys/bus/i2c/devices)";
  return board;
}

std::unique_ptr<Collector> MakeJetsonCollector(const HostFiles& files, unsigned runs_sharing) {
  return std::make_unique<JetsonCollector>(files, runs_sharing);
}

std::unique_ptr<Collector> MakeTegrastatsCollector(int64_t interval_ms, unsigned runs_sharing) {
  return std::make_unique<TegrastatsCollector>(interval_ms, runs_sharing);
}

std::optional<std::pair<std::string, int>> ParseNvpmodelQuery(std::string_view output) {
  std::vector<std::string_view> lines = Split(output, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    constexpr std::string_view kMode = "NV Power Mode:";
    std::string_view l = Trim(lines[i]);
    if (!StartsWith(l, kMode)) continue;
    std::string name(Trim(l.substr(kMode.size())));
    std::optional<uint64_t> id = i + 1 < lines.size() ? ParseUint(Trim(lines[i + 1])) : std::nullopt;
    if (name.empty() || !id) return std::nullopt;
    return std::pair{name, static_cast<int>(*id)};
  }
  return std::nullopt;
}

std::optional<std::pair<std::string, int>> JetsonPowerMode() {
  if (!FindExecutable("nvpmodel")) return std::nullopt;
  constexpr int kTimeoutMs = 5000;
  Result<CapturedOutput> q = RunAndCapture({"nvpmodel", "-q"}, kTimeoutMs);
  if (!q.ok() || q->exit.ShellCode() != 0) return std::nullopt;
  return ParseNvpmodelQuery(q->out);
}

}  // namespace tb
