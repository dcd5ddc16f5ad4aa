// Reads series for many requests at once (trainbench serve): the sealed chunks of a
// series are decoded once and kept (LRU, bounded by a number of points across series; a
// finished run's series never change, so its cached copy is answered without a query);
// the provisional chunk and journal of a running run are read fresh on every call.
// Thread-safe. For a single read without a cache, ReadSeriesPoints (store/store.h).
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/store.h"

namespace tb {

class SeriesReader {
 public:
  // `cache_points`: decoded points kept in memory, across series.
  explicit SeriesReader(Store& store, size_t cache_points = 32u << 20);

  // The series of a run; a finished run's are kept (they no longer change).
  Result<std::shared_ptr<const std::vector<SeriesInfo>>> SeriesOf(const RunRecord& run);
  // The same for several runs, in their order, those not kept read in one go.
  Result<std::vector<std::shared_ptr<const std::vector<SeriesInfo>>>> SeriesOfRuns(
      std::span<const RunRecord> runs);
  // Every point of a series in time order (cached sealed chunks, then the newer points).
  // `finished`: the series' run has ended, so a cached copy is complete.
  Result<std::shared_ptr<const std::vector<Point>>> Points(int64_t series_id, bool finished = false,
                                                           bool retried = false);

  // What a chart of `buckets` buckets over [from_ms, to_ms] needs, in time order. Where a
  // bucket covers many groups of points, the sealed chunks' summaries at the coarsest such
  // level (store/format/chunk_summary.h) instead of their points, from the series' overview (a few
  // rows holding every chunk's summary) where it has one; otherwise the points of the
  // chunks in range only (always, when `buckets` is 0). A series whose points are cached
  // already is answered from them.
  struct Window {
    std::shared_ptr<const std::vector<Point>> points;
    int64_t total_points = 0;  // in the whole series (sealed and provisional chunks)
    int64_t group = 1;         // the level read: 1 for every point
    int64_t last_ms = 0;       // MeansForChart: the time of the series' newest point
    // MeansForChart with group means: for each point, the times its group spans (a point's
    // own time twice).
    std::vector<std::pair<int64_t, int64_t>> spans{};
  };
  Result<Window> PointsForChart(int64_t series_id, bool finished, int64_t from_ms, int64_t to_ms,
                                size_t buckets, bool retried = false);
  // Before PointsForChart of many series with the same `buckets`: the finished ones'
  // overviews read in one go (one query, not one a series) and kept; with `whole_range`
  // (the chart spans each run), those too short for an overview to serve are drawn from
  // every point, so their chunks are read in one more query and held, encoded, for the
  // call that draws them. `series`: (series, whether its run has ended).
  Status ReadAheadForCharts(const std::vector<std::pair<SeriesInfo, bool>>& series, size_t buckets,
                            bool whole_range);
  // The same before MeansForChart of many series in `buckets` buckets.
  Status ReadAheadForMeans(const std::vector<std::pair<SeriesInfo, bool>>& series, size_t buckets);
  // The same before Points of many series: the finished ones' chunks in one query.
  Status ReadAheadWhole(const std::vector<std::pair<SeriesInfo, bool>>& series);

  // What a workload's mean of the whole series in `buckets` buckets needs, in time order,
  // each point's `step` saying how many points it stands for and `spans` the times they span:
  //  - where a bucket covers a group of means or more (kMeanGroups: 128 points), each sealed
  //    chunk's coarsest such group means (store/format/chunk_summary.h; from the series' overview
  //    where it has one; `group` the coarsest read), then every point of the unsealed chunk
  //    and the journal (a sealed chunk too short for means counts as its points);
  //  - where it covers 16 points or more, the means of groups of an eighth of a bucket, made
  //    from each chunk as it is decoded (`group` then that size), then the journal's points;
  //  - otherwise, or when a sealed chunk has no means as fine (written before there were any,
  //    or with coarser ones), every point, steps as logged (group 1).
  // A group that straddles two buckets is shared between them by its time in each, so a
  // bucket's mean is exact to within a bucket, as a chart's envelope is.
  Result<Window> MeansForChart(int64_t series_id, bool finished, size_t buckets, bool retried = false);

  // Before PointsForChart of many series: the running runs' journals in one query (each
  // series read its run's, and the journal's table is not indexed by run: a flush writes
  // one page). `series`: (series, whether its run has ended).
  Status ReadJournalsAhead(const std::vector<std::pair<SeriesInfo, bool>>& series);

  // Before PointsSince of many series with the same `since_ms`: what each reads (the chunks
  // that reach past it, the running runs' journals, the series' counts) in three queries for
  // all of them. `series`: (series, whether its run has ended).
  Status ReadAheadSince(const std::vector<std::pair<SeriesInfo, bool>>& series, int64_t since_ms);

  // The points stored with a time after `since_ms`, in time order: what a live chart asks
  // for every few seconds. Only the chunks whose last point is newer are read (and a running
  // run's journal), so the cost follows what is new, not the run's length. A point logged
  // out of order, older than the last point of its chunk, is found by a whole read instead.
  Result<Window> PointsSince(int64_t series_id, bool finished, int64_t since_ms, bool retried = false);

 private:
  // The series' sealed chunks as its overview describes them (records without data or id,
  // each `summary` what the chunk keeps there: store/format/chunk_summary.h OverviewLevels), then
  // with their data the chunks begun after the last of them (the provisional one, and any
  // sealed since the overview was read); nullopt when the overview lacks some sealed chunk
  // (sealed before there were overviews), or when the sealed chunks hold fewer than
  // `min_points` points (what the caller needs for the overview to serve it).
  Result<std::optional<std::vector<ChunkRecord>>> OverviewChunks(int64_t series_id, int64_t min_points);
  // The same from the overview as read.
  Result<std::optional<std::vector<ChunkRecord>>> Described(int64_t series_id, const SeriesOverview& overview,
                                                            int64_t min_points);
  // What the ReadAhead calls share: the finished series' overviews read in one go and kept
  // where their sealed chunks hold `overview_points` points or more; the chunks of those
  // with fewer than `whole_points` (up to about a million points) read in one more query
  // and held in ahead_.
  Status ReadAhead(const std::vector<std::pair<SeriesInfo, bool>>& series, int64_t overview_points,
                   int64_t whole_points);
  // What ReadAhead (`since_ms` nullopt) or ReadAheadSince (the same `since_ms`) holds for a
  // series, given up to the caller.
  struct Ahead {
    std::vector<ChunkRecord> chunks;  // with their data
    int64_t read_ns = 0;              // MonotonicNanos when read
    std::optional<int64_t> since_ms;  // ReadAheadSince's: the chunks reaching past it
    int64_t total = 0;                // ReadAheadSince's: the series' points in chunks
    std::shared_ptr<const std::vector<JournalEntry>> journal;  // ReadAheadSince's: its run's
  };
  std::optional<Ahead> TakeAhead(int64_t series_id, std::optional<int64_t> since_ms = std::nullopt);
  // The journals of runs in one query, by run id (each shared by the run's series; a run
  // without entries has an empty one).
  using Journals = std::unordered_map<std::string, std::shared_ptr<const std::vector<JournalEntry>>>;
  Result<Journals> ReadJournals(const std::vector<std::string>& run_ids);
  // What ReadJournalsAhead read for a series, given up to the caller; null when none.
  std::shared_ptr<const std::vector<JournalEntry>> TakeJournalAhead(int64_t series_id);
  // The journal of a running run's series: what ReadJournalsAhead read (not when `retried`:
  // a checkpoint came in between), or read now.
  Result<std::shared_ptr<const std::vector<JournalEntry>>> JournalOf(int64_t series_id, bool retried);
  // The level of detail a chart's buckets call for over a series' chunks (counting a chunk
  // that reaches past an end of the window by the share of its time inside).
  struct ChartDetail {
    int64_t total = 0;             // the series' points in chunks
    int64_t per_bucket = 0;        // raw points a bucket covers: a chunk's coarsest level up to this is read
    std::optional<int64_t> level;  // nullopt: every point in the window is read
  };
  static ChartDetail DetailFor(const std::vector<ChunkRecord>& listed, int64_t from_ms, int64_t to_ms,
                               size_t buckets);
  // The chunks PointsForChart draws from: a window wide enough for a level of detail reads
  // the series' overview (its chunks' summaries in a few rows however many chunks), where it
  // has one; else the list of chunks (a narrow window: every point in range is read), and
  // where that calls for a level, the summaries in the chunks' rows (series sealed before
  // overviews). A finished run's overview, once read, is kept (encoded levels, a few KB a
  // series) and serves its next charts without a query; the points decoded from it are not
  // kept: they are ten times larger.
  Result<std::shared_ptr<const std::vector<ChunkRecord>>> ChartChunks(int64_t series_id, bool finished,
                                                                      int64_t from_ms, int64_t to_ms,
                                                                      size_t buckets, ChartDetail& detail);
  // Where MeansForChart found a series' chunks: read ahead with their data, described by its
  // overview, or listed without data.
  enum class ChunkSource { kAhead, kOverview, kListed };
  Result<std::vector<ChunkRecord>> MeansChunks(int64_t series_id, bool finished, size_t buckets,
                                               ChunkSource& source);
  // Keeps a finished run's series' overview (what OverviewChunks gave) for its next charts.
  void Keep(int64_t series_id, const std::shared_ptr<const std::vector<ChunkRecord>>& described);

  struct Cached {
    std::vector<int64_t> chunk_ids;  // sealed chunks, in order
    std::shared_ptr<const std::vector<Point>> points;
    std::list<int64_t>::iterator lru;
  };

  Store& store_;
  size_t cache_points_;
  std::mutex mu_;
  std::unordered_map<int64_t, Cached> cache_;  // by series id
  std::unordered_map<std::string, std::shared_ptr<const std::vector<SeriesInfo>>>
      series_of_;           // finished runs
  std::list<int64_t> lru_;  // most recently used first
  size_t cached_points_ = 0;
  // A finished run's series as its overview describes them (OverviewChunks, when it
  // describes every chunk): by series id. Emptied when its summaries grow past the bytes
  // of cache_points_ / 8 points.
  std::unordered_map<int64_t, std::shared_ptr<const std::vector<ChunkRecord>>> overviews_;
  size_t overview_bytes_ = 0;
  // Finished series' chunks read by ReadAhead for the call after it, which takes them: kept
  // encoded (decoded points are ten times larger, and a server just started pays most for
  // memory touched for the first time).
  std::unordered_map<int64_t, Ahead> ahead_;
  // ReadJournalsAhead's: by series id, its run's journal and when it was read.
  std::unordered_map<int64_t, std::pair<std::shared_ptr<const std::vector<JournalEntry>>, int64_t>>
      journals_ahead_;
};

// A run that has ended: its series are complete.
bool Finished(const RunRecord& run);

}  // namespace tb
