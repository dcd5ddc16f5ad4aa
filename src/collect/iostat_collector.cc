// `iostat`: per block device read/write bytes and requests per second and busy ratio,
// from /proc/diskstats. Partitions, loop and RAM devices are left out: whole disks are
// what /sys/block lists (when /sys is not under the root, every non-loop device counts).
#include <string>

#include "base/strings.h"
#include "collect/counter_rates.h"
#include "collect/host_collectors.h"
#include "collect/proc_parsers.h"
#include "metrics/names.h"

namespace tb {
namespace {

constexpr double kSectorBytes = 512;  // diskstats counts 512-byte sectors on every device

class IostatCollector : public Collector {
 public:
  explicit IostatCollector(HostFiles files) : files_(std::move(files)) {}

  std::string_view name() const override { return "iostat"; }

  Status Collect(const Tick& tick, SampleSink& sink) override {
    TB_RETURN_IF_ERROR(files_.ReadKeepOpen("/proc/diskstats", buffer_));
    TB_RETURN_IF_ERROR(ParseDiskStats(buffer_, disks_));
    int64_t now = tick.monotonic_ns;
    for (const DiskCounters& d : disks_) {
      if (!IsWholeDisk(d.device)) continue;
      Labels labels{{"device", d.device}};
      auto rate = [&](const char* what, uint64_t counter) {
        return rates_.Update(d.device + what, static_cast<double>(counter), now);
      };
      if (auto r = rate(":rs", d.sectors_read))
        sink.Add({metric::kDiskReadBytesPerSecond, labels, tick.time_ms, RoundForStorage(*r * kSectorBytes)});
      if (auto r = rate(":ws", d.sectors_written))
        sink.Add(
            {metric::kDiskWriteBytesPerSecond, labels, tick.time_ms, RoundForStorage(*r * kSectorBytes)});
      if (auto r = rate(":r", d.reads))
        sink.Add({metric::kDiskReadOpsPerSecond, labels, tick.time_ms, RoundForStorage(*r)});
      if (auto r = rate(":w", d.writes))
        sink.Add({metric::kDiskWriteOpsPerSecond, labels, tick.time_ms, RoundForStorage(*r)});
      if (auto r = rate(":io", d.io_ms))
        sink.Add({metric::kDiskBusyRatio, labels, tick.time_ms, RoundForStorage(std::min(1.0, *r / 1000))});
    }
    return Status::Ok();
  }

 private:
  bool IsWholeDisk(const std::string& device) {
    if (StartsWith(device, "loop") || StartsWith(device, "ram")) return false;
    if (!checked_sys_) {
      has_sys_block_ = files_.Exists("/sys/block");
      checked_sys_ = true;
    }
    return !has_sys_block_ || files_.Exists("/sys/block/" + device);
  }

  HostFiles files_;
  std::string buffer_;
  std::vector<DiskCounters> disks_;
  CounterRates rates_;
  bool checked_sys_ = false;
  bool has_sys_block_ = false;
};

}  // namespace

std::unique_ptr<Collector> MakeIostatCollector(const HostFiles& files) {
  return std::make_unique<IostatCollector>(files);
}

}  // namespace tb
