// What serve_query.cc's measurements and serve_query_week.cc's week-long run share: a run
// to write into, a server just started to ask, the figure a spec draws, the process's memory.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "store/store.h"

// A field of /proc/self/status in MiB ("VmRSS", "VmHWM": resident now, its peak).
double StatusMiB(const std::string& field);
// Starts measuring this process's peak resident memory afresh (Linux 4.0 and later).
void ResetPeakRss();
// A run of the experiment "bench" in `store`, recorded as started.
tb::RunRecord NewBenchRun(tb::Store& store, const std::string& name);
// A client of the server at `port` as a browser that has loaded the page is: one kept-alive
// connection without Nagle's delay, made (one request for the experiments) before anything
// is timed.
std::unique_ptr<httplib::Client> Connected(int port);
// Milliseconds since `t0` (MonotonicNanos).
double MillisSince(int64_t t0);
// Milliseconds of a GET of `path` to a server just started on the store `db` (opened
// afresh: SQLite's page cache empty, nothing decoded), connected before; exits on an error.
double ColdGet(const std::string& db, const std::string& path, const httplib::Headers& headers = {});
// The /api/v1/figure path of an SVG, one column of a paper, of gpu.utilization.gpu_ratio
// with `what` (`"runs": [...]` or `"workloads": [...]`) in its spec.
std::string FigureOf(const std::string& what);
// Writes a finished week-long run at 10 Hz with `week_series` series into a store in `dir`
// and prints what the page's first requests cost on a server just started, against reading
// the points whole (serve_query_week.cc).
void WeekRun(const std::filesystem::path& dir, int week_series);
