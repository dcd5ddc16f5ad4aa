// `free`: what free(1) shows, as radT's free listener records it (its 12 "Free - ..." series):
// memory total, used, free, shared, buff/cache and available; swap total, used and free;
// and memory and swap together (free --total). Read from /proc/meminfo, in bytes (radT
// divided free --mega's figures by 1024 and called them GB). Each series carries the label
// listener=free: `top` records used, available and swap used too, under its own series.
#include "collect/host_collectors.h"
#include "collect/proc_parsers.h"
#include "metrics/names.h"

namespace tb {
namespace {

class FreeCollector : public Collector {
 public:
  explicit FreeCollector(HostFiles files) : files_(std::move(files)) {}

  std::string_view name() const override { return "free"; }

  Status Collect(const Tick& tick, SampleSink& sink) override {
    TB_RETURN_IF_ERROR(files_.ReadKeepOpen("/proc/meminfo", buffer_));
    MemInfo m;
    TB_RETURN_IF_ERROR(ParseMemInfo(buffer_, m));
    // free(1) of procps 4: used is total - available.
    uint64_t used = m.total_bytes - std::min(m.available_bytes, m.total_bytes);
    uint64_t swap_used = m.swap_total_bytes - std::min(m.swap_free_bytes, m.swap_total_bytes);
    const Labels labels = Labels().Add("listener", "free");
    auto add = [&](std::string_view metric, uint64_t bytes) {
      sink.Add({metric, labels, tick.time_ms, static_cast<double>(bytes)});
    };
    add(metric::kHostMemoryTotalBytes, m.total_bytes);
    add(metric::kHostMemoryUsedBytes, used);
    add(metric::kHostMemoryFreeBytes, m.free_bytes);
    add(metric::kHostMemorySharedBytes, m.shared_bytes);
    add(metric::kHostMemoryBuffCacheBytes, m.buff_cache_bytes);
    add(metric::kHostMemoryAvailableBytes, m.available_bytes);
    add(metric::kHostSwapTotalBytes, m.swap_total_bytes);
    add(metric::kHostSwapUsedBytes, swap_used);
    add(metric::kHostSwapFreeBytes, m.swap_free_bytes);
    add(metric::kHostMemorySwapTotalBytes, m.total_bytes + m.swap_total_bytes);
    add(metric::kHostMemorySwapUsedBytes, used + swap_used);
    add(metric::kHostMemorySwapFreeBytes, m.free_bytes + m.swap_free_bytes);
    files_.CloseUnused();
    return Status::Ok();
  }

 private:
  HostFiles files_;
  std::string buffer_;
};

}  // namespace

std::unique_ptr<Collector> MakeFreeCollector(const HostFiles& files) {
  return std::make_unique<FreeCollector>(files);
}

}  // namespace tb
