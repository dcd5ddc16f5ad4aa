#include "collect/pcie_reader.h"

#include <array>
#include <chrono>

#include "base/time.h"
#include "metrics/names.h"

namespace tb {

PcieReader::PcieReader(std::shared_ptr<Nvml> nvml, std::vector<std::pair<nvml::Device, Labels>> devices,
                       int64_t every_ms)
    : nvml_(std::move(nvml)),
      devices_(std::move(devices)),
      every_ms_(every_ms),
      thread_([this] { Loop(); }) {}

PcieReader::~PcieReader() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PcieReader::Loop() {
  const nvml::Functions& f = nvml_->fn();
  std::vector<std::array<bool, 2>> off(devices_.size(), {false, false});
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    for (size_t i = 0; i < devices_.size(); ++i) {
      Reading reading;
      for (int counter : {nvml::kPcieTxBytes, nvml::kPcieRxBytes}) {
        if (off[i][counter]) continue;
        unsigned int kbps = 0;
        nvml::Return r = f.DeviceGetPcieThroughput(devices_[i].first, counter, &kbps);
        if (r == nvml::kSuccess) {
          (counter == nvml::kPcieTxBytes ? reading.tx : reading.rx) = kbps * 1024.0;
        } else if (r == nvml::kNotSupported || r == nvml::kNoPermission || r == nvml::kGpuIsLost) {
          off[i][counter] = true;
        }
      }
      reading.time_ms = WallMillis();
      reading.fresh = reading.tx || reading.rx;
      std::lock_guard readings(readings_mu_);
      if (reading.fresh) readings_[i] = reading;
    }
    lock.lock();
    wake_.wait_for(lock, std::chrono::milliseconds(every_ms_), [this] { return stop_; });
  }
}

void PcieReader::Emit(SampleSink& sink) {
  std::lock_guard lock(readings_mu_);
  for (auto& [i, reading] : readings_) {
    if (!reading.fresh) continue;
    reading.fresh = false;
    const Labels& l = devices_[i].second;
    if (reading.tx) sink.Add({metric::kGpuPcieTransmitBytesPerSecond, l, reading.time_ms, *reading.tx});
    if (reading.rx) sink.Add({metric::kGpuPcieReceiveBytesPerSecond, l, reading.time_ms, *reading.rx});
  }
}

}  // namespace tb
