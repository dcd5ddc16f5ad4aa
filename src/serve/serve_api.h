// The JSON API of `trainbench serve`, under /api/v1 (GET only; every answer is JSON except
// figures, artifact downloads and CSV exports). Its endpoints are the rows of one table
// (ServeRoutes(), serve_api.cc), each documented in docs/API.md, which a test holds to the
// table.
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
#include "http/route_table.h"
#include "query/series_reader.h"
#include "store/store.h"

namespace tb {

// The routes of /api/v1, from the table the server dispatches by (serve_api.cc), patterns
// as docs/API.md writes them: adding an endpoint is a row of that table and its handler;
// docs/API.md's resource table is tested against it.
std::vector<Route> ServeRoutes();

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
  friend struct ServeRouteTable;
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
