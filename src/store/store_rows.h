// What both stores select for a run and a chunk, and how a row becomes a record: one
// mapping for SQLite's statements and PostgreSQL's results. `Row` offers Text, Int,
// Double and IsNull by column (a chunk's data is read with Text: bytes as they are).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "store/store.h"

namespace tb {

// The run columns RunFromRow reads, with the experiment's name joined in.
inline constexpr const char* kRunSelect =
    "SELECT r.id, e.name, r.workload, r.name, r.command, r.working_directory, r.host, "
    "r.supervisor_pid, r.start_ms, r.end_ms, r.status, r.exit_code, r.signal, r.reason, "
    "r.listeners, r.interval_ms, r.devices FROM runs r JOIN experiments e ON e.id = r.experiment_id";

// The chunk and the times it shares (schema 8; NULL when its data holds its own).
inline constexpr const char* kChunkWithTimes =
    " FROM chunks c LEFT JOIN chunk_times t ON t.series_id = c.times_series AND t.first_ms = c.first_ms";

// The chunk columns ChunkFromRow reads, of the series whose id `series_in` admits (the
// dialect's test of c.series_id: "= ?", "= $1", "IN (SELECT value FROM json_each(?))",
// "= ANY($1::bigint[])"), by series and each series' in time order. With `range` (two more
// placeholders), only the chunks whose first_ms lies between those; with `reaching` (a
// placeholder), only the chunks not sealed and those with a point after it.
inline std::string ChunkSelect(ChunkPart blobs, const char* series_in,
                               std::pair<const char*, const char*> range = {nullptr, nullptr},
                               const char* reaching = nullptr) {
  const char* extra = blobs == ChunkPart::kData        ? ", c.data, c.summary, t.data, c.times_series"
                      : blobs == ChunkPart::kSummaries ? ", c.summary"
                                                       : "";
  std::string sql =
      std::string("SELECT c.id, c.first_ms, c.last_ms, c.count, c.min, c.max, c.sum, c.sealed") + extra +
      ", c.series_id" + (blobs == ChunkPart::kData ? kChunkWithTimes : " FROM chunks c") +
      " WHERE c.series_id " + series_in;
  if (range.first != nullptr) {
    sql += " AND c.first_ms >= ";
    sql += range.first;
    sql += " AND c.first_ms <= ";
    sql += range.second;
  }
  if (reaching != nullptr) {
    std::string r = reaching;
    sql += " AND (c.sealed = 0 OR c.last_ms > " + r + " OR c.first_ms > " + r + ")";
  }
  return sql + " ORDER BY c.series_id, c.first_ms, c.id";
}

// A chunk's data and the times it shares, of the chunk whose id is `placeholder`.
inline std::string ChunkDataSelect(const char* placeholder) {
  return std::string("SELECT c.data, t.data") + kChunkWithTimes + " WHERE c.id = " + placeholder;
}

// Each series' id, sealed points, its overview's blocks in order (one row with NULLs when
// it has none) and how many of its chunks are not sealed (through the partial index
// chunks_provisional), for the series whose id `series_in` admits (the dialect's test of
// s.id: "= ?1", "= ANY($1::bigint[])"); the blocks' data NULL when the sealed points are
// fewer than the placeholder `min_points` or not fewer than `max_points`. One statement, so one snapshot: a
// chunk sealed meanwhile is in both or in neither.
inline std::string OverviewSelect(const char* series_in, const char* min_points, const char* max_points) {
  return std::string("SELECT s.id, s.sealed_count, o.points, CASE WHEN s.sealed_count >= ") + min_points +
         " AND s.sealed_count < " + max_points +
         " THEN o.data END, (SELECT count(*) FROM chunks c WHERE c.series_id = s.id AND c.sealed = 0) "
         "FROM series s LEFT JOIN series_overview o ON o.series_id = s.id WHERE s.id " +
         series_in + " ORDER BY s.id, o.block";
}

// ReadSeriesOverviews' answer, made from OverviewSelect's rows.
class OverviewRows {
 public:
  template <typename Row>
  void Add(const Row& row) {
    SeriesOverview& o = by_id_[row.Int(0)];
    o.sealed_points = row.Int(1);
    o.unsealed = row.Int(4) > 0;
    if (row.IsNull(2)) return;
    o.covered_points += row.Int(2);
    if (!row.IsNull(3)) o.blocks.push_back(row.Text(3));
  }
  // One for each of `ids`, in their order; the rows moved, not copied (a week-long run's
  // overviews are megabytes, and memory touched for the first time is what a cold chart
  // pays most for), but to an id asked for again.
  std::vector<SeriesOverview> Take(const std::vector<int64_t>& ids) {
    std::unordered_map<int64_t, size_t> uses;
    for (int64_t id : ids) ++uses[id];
    std::vector<SeriesOverview> out;
    out.reserve(ids.size());
    for (int64_t id : ids) {
      auto it = by_id_.find(id);
      if (it == by_id_.end()) {
        out.emplace_back();
      } else if (--uses[id] == 0) {
        out.push_back(std::move(it->second));
      } else {
        out.push_back(it->second);
      }
    }
    return out;
  }

 private:
  std::unordered_map<int64_t, SeriesOverview> by_id_;
};

// A run without its params and tags (they are read apart).
template <typename Row>
RunRecord RunFromRow(const Row& row) {
  RunRecord r;
  r.id = row.Text(0);
  r.experiment = row.Text(1);
  r.workload = row.Text(2);
  r.name = row.Text(3);
  r.command = row.Text(4);
  r.working_directory = row.Text(5);
  r.host = row.Text(6);
  r.supervisor_pid = row.Int(7);
  r.start_ms = row.Int(8);
  r.end_ms = row.Int(9);
  r.status = row.Text(10);
  if (!row.IsNull(11)) r.exit_code = static_cast<int>(row.Int(11));
  if (!row.IsNull(12)) r.signal = static_cast<int>(row.Int(12));
  r.reason = row.Text(13);
  r.listeners = row.Text(14);
  r.interval_ms = row.Int(15);
  r.devices = row.Text(16);
  return r;
}

template <typename Row>
ChunkRecord ChunkFromRow(const Row& row, ChunkPart blobs) {
  ChunkRecord c;
  c.id = row.Int(0);
  c.first_ms = row.Int(1);
  c.last_ms = row.Int(2);
  c.count = row.Int(3);
  if (!row.IsNull(4)) c.min = row.Double(4);
  if (!row.IsNull(5)) c.max = row.Double(5);
  c.sum = row.IsNull(6) ? 0 : row.Double(6);
  c.sealed = row.Int(7) != 0;
  if (blobs == ChunkPart::kData) c.data = row.Text(8);
  int summary = blobs == ChunkPart::kData ? 9 : blobs == ChunkPart::kSummaries ? 8 : -1;
  if (summary > 0 && !row.IsNull(summary)) c.summary = row.Text(summary);
  if (blobs == ChunkPart::kData && !row.IsNull(10)) c.times = row.Text(10);
  if (blobs == ChunkPart::kData && !row.IsNull(11)) c.times_series = row.Int(11);
  c.series_id = row.Int(blobs == ChunkPart::kData ? 12 : blobs == ChunkPart::kSummaries ? 9 : 8);
  return c;
}

// The columns SeriesTotalsFromRow reads, per series of the runs `runs` selects (" = ?1" for
// one, " IN (...)" or " = ANY(...)" for several), in ListSeriesOfRuns' order: the totals kept
// for its sealed chunks, then (unless `provisional` is false: NULLs) its provisional
// chunks' (through the index on them: one or none per series).
inline std::string SeriesTotalsSelect(const std::string& runs, bool provisional = true) {
  if (!provisional)
    return "SELECT s.id, s.run_id, s.metric, s.labels, s.sealed_count, s.sealed_sum, s.sealed_min, "
           "s.sealed_max, "
           "NULL, NULL, NULL, NULL FROM series s WHERE s.run_id" +
           runs + " ORDER BY s.run_id, s.metric, s.labels";
  return "SELECT s.id, s.run_id, s.metric, s.labels, s.sealed_count, s.sealed_sum, s.sealed_min, "
         "s.sealed_max, p.n, p.total, p.lo, p.hi "
         "FROM series s LEFT JOIN (SELECT series_id, CAST(sum(count) AS BIGINT) AS n, sum(sum) AS total, "
         "min(min) AS lo, "
         "max(max) AS hi FROM chunks WHERE sealed = 0 AND series_id IN (SELECT id FROM series WHERE run_id" +
         runs + ") GROUP BY series_id) p ON p.series_id = s.id WHERE s.run_id" + runs +
         " ORDER BY s.run_id, s.metric, s.labels";
}

template <typename Row>
SeriesTotals SeriesTotalsFromRow(const Row& row) {
  auto optional = [&](int col) { return row.IsNull(col) ? std::nullopt : std::optional(row.Double(col)); };
  SeriesTotals t;
  t.series = {row.Int(0), row.Text(1), row.Text(2), row.Text(3)};
  t.Add(row.Int(4), row.Double(5), optional(6), optional(7));
  if (!row.IsNull(8)) t.Add(row.Int(8), row.IsNull(9) ? 0 : row.Double(9), optional(10), optional(11));
  return t;
}

}  // namespace tb
