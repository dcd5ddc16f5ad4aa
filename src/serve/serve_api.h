// The JSON API of `trainbench serve`, under /api/v1 (GET only; every answer is JSON
// except artifact downloads and CSV exports):
//
//   experiments                                   experiments with run and workload counts
//   experiments/{id}/workloads                    workloads, their runs' statuses and durations
//   runs?experiment=&workload=&status=&q=&param.K=V&tag.K=V
//                                                 runs with params, tags, devices, summaries
//   runs?...&format=columns|columnar              the same runs as one table (run_table.cc)
//   runs/{id}                                     one run with its series and their statistics
//   runs/{id}/events, runs/{id}/artifacts, runs/{id}/artifacts/{name}
//   metrics?runs=A,B                              metrics the runs have, with their labels
//   series?runs=A,B&metric=M[&labels=L][&x=relative|wall|step][&from=&to=][&budget=N][&since=MS][&exact=1]
//       per run: x and y arrays; within `budget` points per run each bucket keeps its
//       first, lowest, highest and last point; without it full resolution, streamed;
//       `since` (ms) gives only what arrived after that time (live charts).
//   aggregate?workloads=EXP:W,EXP:W2&metric=M[&labels=L][&budget=N]
//       per workload: its runs aligned on time since start, mean with a min-max band
//   export?runs=A,B[&metric=M]&format=csv|json    full resolution, streamed
//
// x values: "relative" seconds since the run started, "wall" Unix milliseconds, "step" the
// logged step. y values that are NaN or infinite are null in series answers (JSON has no
// such numbers; charts draw a gap); exports keep them exactly.
//
// Every input is checked (ids, ranges, budgets, metric names) and answered with 400 and
// {"error_code", "message"} when wrong, 404 when unknown. No SQL is built from request
// text. Sealed chunks are decoded once and kept in a bounded cache.
#pragma once

#include <atomic>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "base/spare_thread.h"
#include "http/http_server.h"
#include "query/series_reader.h"
#include "store/store.h"

namespace tb {

class ServeApi {
 public:
  static constexpr size_t kMaxRunsPerRequest = 500;
  static constexpr size_t kMaxBudget = 1000000;
  // What one aggregate request may cost: workloads in it, and buckets per workload.
  static constexpr size_t kMaxAggregateWorkloads = 32;
  static constexpr size_t kMaxAggregateBuckets = 10000;
  // Heavy requests (a figure rendered, a workload aggregate) answered at once at most;
  // beyond, 429 with Retry-After, so that a burst of them cannot take the server's memory.
  static constexpr int kMaxHeavyRequests = 4;
  // Full-resolution reads (a series without a budget, an export) streaming at once at most,
  // 429 beyond: each holds one series' points and their text at a time (about 60 bytes a
  // point: 0.6 GB for a series of 10 M), so four bound what a burst of them can take.
  static constexpr int kMaxFullReads = 4;

  // `cache_points`: decoded points kept in memory, across series.
  explicit ServeApi(Store& store, size_t cache_points = 32u << 20);

  ApiResponse Handle(const ApiRequest& request);
  // Handle() for /api/v1/, for HttpServer.
  ApiHandler Handler();

 private:
  class Call;
  Store& store_;
  SeriesReader reader_;
  std::mutex mu_;
  std::unordered_map<std::string, std::string> phases_;  // finished runs' analyses, as JSON
  struct LiveAnalysis {
    std::string json;
    int64_t at_ms = 0;  // when it was made (wall clock)
  };
  std::unordered_map<std::string, LiveAnalysis> live_phases_;  // running runs', the latest
  // Analyses under way, by run: a request for the same run waits for it instead of reading
  // the run again (each chart of a page asks for its runs' phases at once).
  std::unordered_map<std::string, std::shared_future<Result<std::string>>> analysing_;
  SpareThread& spare_ = SpareThread::OfProcess();  // a second core for a chart's series
  std::atomic<int> heavy_{0};                      // heavy requests being answered
  std::atomic<int> full_reads_{0};                 // full-resolution reads streaming
  // Holds one of the kMaxHeavyRequests places (or, for a full read, of kMaxFullReads) while
  // alive; throws 429 when none is free.
  class HeavySlot {
   public:
    explicit HeavySlot(ServeApi& api, bool full_read = false);
    ~HeavySlot() { taken_.fetch_sub(1); }
    HeavySlot(const HeavySlot&) = delete;
    HeavySlot& operator=(const HeavySlot&) = delete;

   private:
    std::atomic<int>& taken_;
  };
};

}  // namespace tb
