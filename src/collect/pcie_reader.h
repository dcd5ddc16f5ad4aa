// PCIe throughput of a run's GPUs, off the tick's path: NVML measures it over a window
// within each call, per counter (NVIDIA documents 20 ms; its CPU cost on an H200 is in
// docs/GPU.md), so a thread of its own reads TX and RX of every GPU every `every_ms` and the nvml listener
// hands the newest readings to its sink at its next tick. A counter a GPU does not support (or a lost GPU) is
// learnt and not asked for again. Emit() from one thread (the sampler's).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "metrics/sample.h"
#include "platform/nvml.h"

namespace tb {

class PcieReader {
 public:
  // Starts reading `devices` (each with its labels, gpu=N) now and every `every_ms`.
  PcieReader(std::shared_ptr<Nvml> nvml, std::vector<std::pair<nvml::Device, Labels>> devices,
             int64_t every_ms);
  ~PcieReader();  // stops and joins the thread
  PcieReader(const PcieReader&) = delete;
  PcieReader& operator=(const PcieReader&) = delete;

  // Adds the readings made since the last call.
  void Emit(SampleSink& sink);

 private:
  struct Reading {
    int64_t time_ms = 0;
    std::optional<double> tx, rx;  // bytes/s
    bool fresh = false;
  };
  void Loop();

  std::shared_ptr<Nvml> nvml_;
  std::vector<std::pair<nvml::Device, Labels>> devices_;
  int64_t every_ms_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::mutex readings_mu_;
  std::map<size_t, Reading> readings_;  // by index into devices_
  std::thread thread_;                  // last: started once the rest exists
};

}  // namespace tb
