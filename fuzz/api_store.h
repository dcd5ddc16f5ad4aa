// A store for the API fuzzers: one experiment "fuzz" with a finished run whose id the
// corpus can name (0123456789abcdef0123456789abcdef), holding a metric with a few points.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "http/http_server.h"
#include "store/series_writer.h"
#include "store/store.h"

namespace tb {

inline constexpr const char* kFuzzRunId = "0123456789abcdef0123456789abcdef";

// The store's files, removed when the fuzzer exits: by a handler registered after the path
// was made and before the store was (handlers and destructors run in the reverse order, so
// the store is closed before it runs and the path still exists when it does).
inline const std::string& FuzzStorePath() {
  static const std::string path = "/tmp/trainbench-fuzz-" + std::to_string(getpid()) + ".db";
  return path;
}

inline Store& FuzzStore() {
  static std::unique_ptr<Store> store = [] {
    FuzzStorePath();
    std::atexit([] {
      std::error_code ec;
      for (const char* suffix : {"", "-wal", "-shm", ".artifacts"})
        std::filesystem::remove_all(FuzzStorePath() + suffix, ec);
    });
    std::unique_ptr<Store> s = Store::Open(FuzzStorePath()).value();
    RunRecord run;
    run.id = kFuzzRunId;
    run.experiment = "fuzz";
    run.workload = "1";
    run.name = "r";
    run.start_ms = 1763777000000;
    if (!s->EnsureExperiment("fuzz").ok() || !s->CreateRun(run).ok()) std::abort();
    SeriesWriter writer(*s, run.id);
    for (int i = 0; i < 100; ++i) {
      writer.Append("gpu.utilization.gpu_ratio", "gpu=0", Point{run.start_ms + i * 100, i % 7 / 7.0, i});
      writer.Append("train.loss", "", Point{run.start_ms + i * 100, 1.0 / (i + 1), i});
    }
    if (!writer.Close().ok() || !s->FinishRun(run.id, run.start_ms + 10000, kFinished, 0, {}, "").ok())
      std::abort();
    return s;
  }();
  return *store;
}

// "METHOD PATH?QUERY\nBODY" as a request; the query split at '&' and '=' (already decoded,
// as the server hands it over).
inline ApiRequest FuzzRequest(std::string_view text) {
  ApiRequest r;
  size_t nl = text.find('\n');
  std::string_view head = text.substr(0, nl);
  r.body = nl == std::string_view::npos ? "" : std::string(text.substr(nl + 1));
  size_t space = head.find(' ');
  r.method = space == std::string_view::npos ? "GET" : std::string(head.substr(0, space));
  std::string_view target = space == std::string_view::npos ? head : head.substr(space + 1);
  size_t q = target.find('?');
  r.path = std::string(target.substr(0, q));
  if (q == std::string_view::npos) return r;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view item = query.substr(0, amp);
    size_t eq = item.find('=');
    r.query.emplace(std::string(item.substr(0, eq)),
                    eq == std::string_view::npos ? "" : std::string(item.substr(eq + 1)));
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
  }
  return r;
}

}  // namespace tb
