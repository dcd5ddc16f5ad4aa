// Stores someone else wrote: the rows of a run's chunks and series as a shared PostgreSQL
// store or a handed-over SQLite file may hold them (any count, times, extremes, sums and
// blob), read through `trainbench serve`'s JSON API (charts with and without a budget, by
// time and by step, an export, the runs table). Nothing stored may crash or exhaust it.
//
// Input: 8 bytes each of count, first_ms, last_ms, series sealed_count (integers) and
// min, max, sum (doubles), one byte of sealed, then the chunk's data blob.
#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "fuzz/api_store.h"
#include "serve/serve_api.h"

namespace {

template <typename T>
T Take(const uint8_t*& data, size_t& size) {
  T v{};
  size_t n = std::min(size, sizeof v);
  std::memcpy(&v, data, n);
  data += n;
  size -= n;
  return v;
}

// Pulls a streamed answer as the server does: a stream that throws (a chunk that does not
// decode) ends its transfer unfinished, which the server catches.
void Drain(tb::ApiResponse response) {
  std::string piece;
  try {
    for (int i = 0; i < 100000 && response.stream && response.stream(piece); ++i) piece.clear();
  } catch (...) {  // as HttpServer's Send
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tb::Store& store = tb::FuzzStore();
  static sqlite3* db = [] {
    sqlite3* d = nullptr;
    if (sqlite3_open(tb::FuzzStorePath().c_str(), &d) != SQLITE_OK) std::abort();
    sqlite3_busy_timeout(d, 5000);
    return d;
  }();
  auto count = Take<int64_t>(data, size), first = Take<int64_t>(data, size), last = Take<int64_t>(data, size);
  auto sealed_count = Take<int64_t>(data, size);
  auto lo = Take<double>(data, size), hi = Take<double>(data, size), sum = Take<double>(data, size);
  auto sealed = Take<uint8_t>(data, size);
  const char* sql =
      "UPDATE chunks SET count = ?1, first_ms = ?2, last_ms = ?3, min = ?4, max = ?5, sum = ?6, sealed = ?7, "
      "data = ?8, summary = NULL WHERE series_id IN (SELECT id FROM series WHERE metric = 'train.loss');"
      "UPDATE series SET sealed_count = ?9 WHERE metric = 'train.loss';"
      "DELETE FROM series_overview";
  const char* next = sql;
  while (next != nullptr && *next != '\0') {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, next, -1, &st, &next) != SQLITE_OK || st == nullptr) break;
    int params = sqlite3_bind_parameter_count(st);
    if (params >= 8) {
      sqlite3_bind_int64(st, 1, count);
      sqlite3_bind_int64(st, 2, first);
      sqlite3_bind_int64(st, 3, last);
      sqlite3_bind_double(st, 4, lo);
      sqlite3_bind_double(st, 5, hi);
      sqlite3_bind_double(st, 6, sum);
      sqlite3_bind_int(st, 7, sealed & 1);
      sqlite3_bind_blob(st, 8, data, static_cast<int>(size), SQLITE_TRANSIENT);
    }
    if (params >= 9) sqlite3_bind_int64(st, 9, sealed_count);
    sqlite3_step(st);
    sqlite3_finalize(st);
  }
  // A server that has read nothing yet (its cache would hide the rows).
  tb::ServeApi api(store);
  std::string run = tb::kFuzzRunId;
  for (const char* metric : {"train.loss", "gpu.utilization.gpu_ratio"}) {
    Drain(api.Handle({"GET", "/api/v1/series", {{"runs", run}, {"metric", metric}}, ""}));
    Drain(api.Handle({"GET", "/api/v1/series", {{"runs", run}, {"metric", metric}, {"budget", "400"}}, ""}));
    Drain(api.Handle({"GET",
                      "/api/v1/series",
                      {{"runs", run}, {"metric", metric}, {"budget", "400"}, {"x", "step"}},
                      ""}));
  }
  Drain(api.Handle({"GET", "/api/v1/export", {{"runs", run}}, ""}));
  Drain(api.Handle({"GET", "/api/v1/runs", {{"experiment", "fuzz"}}, ""}));
  Drain(api.Handle({"GET", "/api/v1/runs/" + run, {}, ""}));
  return 0;
}
