// The series of a long simulated training run, shared by the benchmarks that write one
// (bench/long_run.cc, bench/serve_query.cc).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "collect/collector.h"

namespace tb {

// A long training run's series (`count` of them, at least 27): what the analysis reads (GPU activity and
// power of 8 GPUs, the process's CPU and memory, throughput), the GPUs' energy counters (what the run's
// energy figure reads), the rest as other listeners' metrics.
inline std::vector<std::pair<std::string, std::string>> TrainingSeriesNames(int count) {
  std::vector<std::pair<std::string, std::string>> names;
  for (int g = 0; g < 8; ++g) {
    names.emplace_back("gpu.utilization.gpu_ratio", "gpu=" + std::to_string(g));
    names.emplace_back("gpu.power.draw_watts", "gpu=" + std::to_string(g));
    names.emplace_back("gpu.energy.consumed_joules", "gpu=" + std::to_string(g));
  }
  names.emplace_back("proc.cpu.utilization_ratio", "");
  names.emplace_back("proc.memory.rss_bytes", "");
  names.emplace_back("train.throughput_samples_per_second", "");
  for (int i = static_cast<int>(names.size()); i < count; ++i)
    names.emplace_back("host.bench.metric_" + std::to_string(i), "");
  names.resize(static_cast<size_t>(count));
  return names;
}

// A value that looks like a training run's: busy with noise, an idle minute every hour.
// The energy counters (every third of the first 24 series) grow by about 250 J a second, in
// millijoules, by a varying step.
inline double TrainingValue(int series, int64_t tick, int hz) {
  if (series < 24 && series % 3 == 2) {
    double t = static_cast<double>(tick);
    return std::round(t * 250000 / hz + 20000 * std::sin(t * 0.37 + series)) / 1000;
  }
  int64_t second = tick / hz;
  bool idle = second % 3600 >= 1800 && second % 3600 < 1860;
  double noise = std::sin(static_cast<double>(tick) * 0.37 + series) * 0.02;
  // Rounded as listeners store derived values (6 significant digits).
  return RoundForStorage((idle ? 0.0 : 0.85) + noise + 0.001 * static_cast<double>(series % 7));
}

}  // namespace tb
