// Helpers shared by the benchmarks.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "collect/collector.h"

namespace tb {

// A benchmark's setup that fails ends it at once, saying why: its figures would be wrong.
inline void Must(const Status& s) {
  if (s.ok()) return;
  std::fprintf(stderr, "benchmark setup failed: %s\n", s.message().c_str());
  std::exit(1);
}
template <typename T>
T Must(Result<T> r) {
  Must(r.status());
  return std::move(r.value());
}

// The middle value (the upper one of the two middles for an even count).
inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// CPU time of the children this process waited for, in nanoseconds.
inline int64_t ChildrenCpuNanos() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000LL +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000LL;
}

// A sink that only counts what listeners hand it.
class DiscardSink : public SampleSink {
 public:
  void Add(const Sample&) override { ++count; }
  size_t count = 0;
};

}  // namespace tb
