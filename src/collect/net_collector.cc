// `net`: per interface receive/transmit bytes per second, from /proc/net/dev.
#include <string>

#include "collect/counter_rates.h"
#include "collect/host_collectors.h"
#include "collect/proc_parsers.h"
#include "metrics/names.h"

namespace tb {
namespace {

class NetCollector : public Collector {
 public:
  explicit NetCollector(HostFiles files) : files_(std::move(files)) {}

  std::string_view name() const override { return "net"; }

  Status Collect(const Tick& tick, SampleSink& sink) override {
    TB_RETURN_IF_ERROR(files_.ReadKeepOpen("/proc/net/dev", buffer_));
    TB_RETURN_IF_ERROR(ParseNetDev(buffer_, interfaces_));
    for (const NetCounters& n : interfaces_) {
      Labels labels{{"interface", n.interface}};
      if (auto r = rates_.Update(n.interface + ":rx", static_cast<double>(n.rx_bytes), tick.monotonic_ns)) {
        sink.Add({metric::kNetReceiveBytesPerSecond, labels, tick.time_ms, RoundForStorage(*r)});
      }
      if (auto r = rates_.Update(n.interface + ":tx", static_cast<double>(n.tx_bytes), tick.monotonic_ns)) {
        sink.Add({metric::kNetTransmitBytesPerSecond, labels, tick.time_ms, RoundForStorage(*r)});
      }
    }
    return Status::Ok();
  }

 private:
  HostFiles files_;
  std::string buffer_;
  std::vector<NetCounters> interfaces_;
  CounterRates rates_;
};

}  // namespace

std::unique_ptr<Collector> MakeNetCollector(const HostFiles& files) {
  return std::make_unique<NetCollector>(files);
}

}  // namespace tb
