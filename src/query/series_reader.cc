#include "query/series_reader.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "base/time.h"
#include "query/overview_points.h"
#include "store/format/chunk_summary.h"

namespace tb {

bool Finished(const RunRecord& run) { return run.end_ms > 0 && run.status != kRunning; }

SeriesReader::SeriesReader(Store& store, size_t cache_points) : store_(store), cache_points_(cache_points) {}

Result<std::shared_ptr<const std::vector<SeriesInfo>>> SeriesReader::SeriesOf(const RunRecord& run) {
  Result<std::vector<std::shared_ptr<const std::vector<SeriesInfo>>>> one = SeriesOfRuns({&run, 1});
  if (!one.ok()) return one.status();
  return std::move(one->front());
}

Result<std::vector<std::shared_ptr<const std::vector<SeriesInfo>>>> SeriesReader::SeriesOfRuns(
    std::span<const RunRecord> runs) {
  std::vector<std::shared_ptr<const std::vector<SeriesInfo>>> out(runs.size());
  std::vector<std::string> unknown;
  {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < runs.size(); ++i) {
      auto it = Finished(runs[i]) ? series_of_.find(runs[i].id) : series_of_.end();
      if (it != series_of_.end()) {
        out[i] = it->second;
      } else {
        unknown.push_back(runs[i].id);
      }
    }
  }
  if (unknown.empty()) return out;
  Result<std::vector<SeriesInfo>> listed = store_.ListSeriesOfRuns(unknown);
  if (!listed.ok()) return listed.status();
  std::unordered_map<std::string, std::vector<SeriesInfo>> by_run;
  for (SeriesInfo& s : *listed) by_run[s.run_id].push_back(std::move(s));
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < runs.size(); ++i) {
    if (out[i]) continue;
    auto series = std::make_shared<const std::vector<SeriesInfo>>(std::move(by_run[runs[i].id]));
    if (Finished(runs[i])) {
      if (series_of_.size() >= 100000) series_of_.clear();  // a bound, not a policy: it is cheap to refill
      series_of_[runs[i].id] = series;
    }
    out[i] = std::move(series);
  }
  return out;
}

Result<std::shared_ptr<const std::vector<Point>>> SeriesReader::Points(int64_t series_id, bool finished,
                                                                       bool retried) {
  bool known;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(series_id);
    known = it != cache_.end();
    // A finished run's series do not change: what is cached is all of it, with no query
    // (on a database server each query is a round trip).
    if (known && finished) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      return it->second.points;
    }
  }
  // Read for the first time: the chunks with their data in one query (or read ahead).
  std::optional<Ahead> ahead = known || !finished ? std::nullopt : TakeAhead(series_id);
  Result<std::vector<ChunkRecord>> chunks =
      ahead   ? Result<std::vector<ChunkRecord>>(std::move(ahead->chunks))
      : known ? store_.ReadChunks({.series = {series_id}, .part = ChunkPart::kInfo})
              : store_.ReadChunks({.series = {series_id}});
  if (!chunks.ok()) return chunks.status();
  std::vector<int64_t> sealed;
  std::vector<const ChunkRecord*> sealed_chunks;
  std::vector<ChunkRecord> provisional;
  for (const ChunkRecord& c : *chunks) {
    if (c.sealed) {
      sealed.push_back(c.id);
      sealed_chunks.push_back(&c);
    } else {
      provisional.push_back(c);
    }
  }
  std::shared_ptr<const std::vector<Point>> base;
  size_t cached_chunks = 0;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(series_id);
    if (it != cache_.end() && it->second.chunk_ids.size() <= sealed.size() &&
        std::equal(it->second.chunk_ids.begin(), it->second.chunk_ids.end(), sealed.begin())) {
      base = it->second.points;
      cached_chunks = it->second.chunk_ids.size();
      lru_.splice(lru_.begin(), lru_, it->second.lru);
    }
  }
  bool has_newer = sealed.size() < chunks->size();
  // A finished run's journal is empty (its writer sealed everything).
  Result<std::vector<JournalEntry>> journal =
      finished ? Result<std::vector<JournalEntry>>(std::vector<JournalEntry>{})
               : store_.ReadJournal(series_id);
  if (!journal.ok()) return journal.status();
  has_newer |= !journal->empty();
  if (base && cached_chunks == sealed.size() && !has_newer) return base;

  // Sealed chunks not cached yet, decoded and cached.
  if (cached_chunks < sealed.size()) {
    // Sized once: a long run read for the first time is millions of points.
    int64_t total = base ? static_cast<int64_t>(base->size()) : 0;
    for (const ChunkRecord& c : *chunks) total += c.sealed ? c.count : 0;
    auto grown = std::make_shared<std::vector<Point>>();
    grown->reserve(static_cast<size_t>(total));
    if (base) grown->insert(grown->end(), base->begin(), base->end());
    std::vector<ChunkRecord> uncached;
    for (size_t i = cached_chunks; i < sealed.size(); ++i) uncached.push_back(*sealed_chunks[i]);
    TB_RETURN_IF_ERROR(DecodeSeriesParts(store_, series_id, uncached, {}, *grown));
    base = grown;
    std::lock_guard lock(mu_);
    auto it = cache_.find(series_id);
    if (it != cache_.end()) {
      cached_points_ -= it->second.points->size();
      lru_.erase(it->second.lru);
      cache_.erase(it);
    }
    lru_.push_front(series_id);
    cache_[series_id] = Cached{sealed, base, lru_.begin()};
    cached_points_ += base->size();
    while (cached_points_ > cache_points_ && lru_.size() > 1) {
      auto victim = cache_.find(lru_.back());
      cached_points_ -= victim->second.points->size();
      cache_.erase(victim);
      lru_.pop_back();
    }
  }
  if (!has_newer) return base ? base : std::make_shared<const std::vector<Point>>();
  // The provisional chunk and the journal of a running run: read fresh every time.
  auto all = base ? std::make_shared<std::vector<Point>>(*base) : std::make_shared<std::vector<Point>>();
  Status fresh = DecodeSeriesParts(store_, series_id, provisional, *journal, *all);
  // The writer replaced the provisional chunk meanwhile (a checkpoint): read again.
  if (fresh.code() == Status::Code::kNotFound && !retried) return Points(series_id, finished, true);
  TB_RETURN_IF_ERROR(fresh);
  return std::shared_ptr<const std::vector<Point>>(all);
}

namespace {

bool OutsideWindow(const ChunkRecord& c, int64_t from_ms, int64_t to_ms) {
  return c.last_ms < from_ms || c.first_ms > to_ms;
}

// Each chunk's summary level to draw it from (0: its points), and the coarsest level read
// (`group`: 1 when any chunk is read whole). A chunk is drawn from its summary when it is
// sealed and holds a level the buckets call for: the coarsest up to per_bucket (a store
// written with other group sizes than today's holds other levels).
std::vector<int64_t> SummaryGroups(const std::vector<ChunkRecord>& chunks, bool summaries, int64_t per_bucket,
                                   int64_t from_ms, int64_t to_ms, int64_t& group) {
  std::vector<int64_t> groups(chunks.size());
  group = summaries ? std::numeric_limits<int64_t>::max() : 1;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const ChunkRecord& c = chunks[i];
    if (OutsideWindow(c, from_ms, to_ms)) continue;
    if (summaries && c.sealed && !c.summary.empty()) {
      for (int64_t g : SummaryLevels(c.summary)) {
        if (g <= per_bucket) groups[i] = std::max(groups[i], g);
      }
    }
    group = std::min(group, groups[i] == 0 ? 1 : groups[i]);
  }
  if (group == std::numeric_limits<int64_t>::max()) group = 1;
  return groups;
}

// Every point of a chunk is needed where it has no summary at that level (written before
// there were summaries, or too small), is not sealed yet, or the window is narrow enough to
// need them all. Each stretch of such chunks (summarized ones in between are not read
// again) comes in one read when there are several (one query per chunk cost more than
// decoding them); one alone is read by its id by the caller.
Result<std::vector<ChunkRecord>> ReadWholeStretches(Store& store, int64_t series_id,
                                                    const std::vector<ChunkRecord>& chunks,
                                                    const std::vector<int64_t>& groups, int64_t from_ms,
                                                    int64_t to_ms) {
  std::vector<ChunkRecord> whole;
  const ChunkRecord *first = nullptr, *last = nullptr;
  size_t stretch = 0;
  auto read_stretch = [&]() -> Status {
    // One the overview described has no id: it is read here too.
    if (stretch > 1 || (stretch == 1 && first->id == 0)) {
      Result<std::vector<ChunkRecord>> read = store.ReadChunks(
          {.series = {series_id}, .first_ms = std::pair<int64_t, int64_t>(first->first_ms, last->first_ms)});
      if (!read.ok()) return read.status();
      std::move(read->begin(), read->end(), std::back_inserter(whole));
    }
    stretch = 0;
    return Status::Ok();
  };
  for (size_t i = 0; i < chunks.size(); ++i) {
    const ChunkRecord& c = chunks[i];
    if (OutsideWindow(c, from_ms, to_ms)) continue;
    if (groups[i] > 0 || !c.data.empty()) {  // drawn from its summary, or read already
      TB_RETURN_IF_ERROR(read_stretch());
      continue;
    }
    if (stretch++ == 0) first = &c;
    last = &c;
  }
  TB_RETURN_IF_ERROR(read_stretch());
  return whole;
}

}  // namespace

SeriesReader::ChartDetail SeriesReader::DetailFor(const std::vector<ChunkRecord>& listed, int64_t from_ms,
                                                  int64_t to_ms, size_t buckets) {
  ChartDetail d;
  double in_window = 0;
  for (const ChunkRecord& c : listed) {
    d.total += c.count;
    if (OutsideWindow(c, from_ms, to_ms)) continue;
    double span = static_cast<double>(c.last_ms - c.first_ms);
    double inside = static_cast<double>(std::min(c.last_ms, to_ms) - std::max(c.first_ms, from_ms));
    in_window += span > 0 ? static_cast<double>(c.count) * std::clamp(inside / span, 0.0, 1.0)
                          : static_cast<double>(c.count);
  }
  if (buckets == 0) return d;
  d.per_bucket = static_cast<int64_t>(in_window / static_cast<double>(buckets));
  d.level = SummaryLevelFor(in_window / static_cast<double>(buckets));
  return d;
}

Result<std::shared_ptr<const std::vector<ChunkRecord>>> SeriesReader::ChartChunks(
    int64_t series_id, bool finished, int64_t from_ms, int64_t to_ms, size_t buckets, ChartDetail& detail) {
  // A finished series read ahead (ReadAheadForCharts): its chunks with their data.
  if (std::optional<Ahead> ahead = finished ? TakeAhead(series_id) : std::nullopt) {
    detail = DetailFor(ahead->chunks, from_ms, to_ms, buckets);
    return std::make_shared<const std::vector<ChunkRecord>>(std::move(ahead->chunks));
  }
  if (buckets > 0) {
    std::shared_ptr<const std::vector<ChunkRecord>> described;
    if (finished) {
      std::lock_guard lock(mu_);
      if (auto it = overviews_.find(series_id); it != overviews_.end()) described = it->second;
    }
    if (!described) {
      Result<std::optional<std::vector<ChunkRecord>>> read =
          OverviewChunks(series_id, ChartOverviewPoints(buckets));
      if (!read.ok()) return read.status();
      if (*read) described = std::make_shared<const std::vector<ChunkRecord>>(std::move(**read));
      if (described && finished) Keep(series_id, described);
    }
    if (described && (detail = DetailFor(*described, from_ms, to_ms, buckets)).level) return described;
  }
  Result<std::vector<ChunkRecord>> listed =
      store_.ReadChunks({.series = {series_id}, .part = ChunkPart::kInfo});
  if (listed.ok() && (detail = DetailFor(*listed, from_ms, to_ms, buckets)).level) {
    listed = store_.ReadChunks({.series = {series_id}, .part = ChunkPart::kSummaries});
    if (listed.ok()) detail = DetailFor(*listed, from_ms, to_ms, buckets);
  }
  if (!listed.ok()) return listed.status();
  return std::make_shared<const std::vector<ChunkRecord>>(std::move(*listed));
}

Result<SeriesReader::Window> SeriesReader::PointsForChart(int64_t series_id, bool finished, int64_t from_ms,
                                                          int64_t to_ms, size_t buckets, bool retried) {
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(series_id);
    if (it != cache_.end() && finished) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      return Window{it->second.points, static_cast<int64_t>(it->second.points->size()), 1};
    }
  }
  ChartDetail detail;
  Result<std::shared_ptr<const std::vector<ChunkRecord>>> listed =
      ChartChunks(series_id, finished, from_ms, to_ms, buckets, detail);
  if (!listed.ok()) return listed.status();
  const std::vector<ChunkRecord>& chunks = **listed;
  int64_t group = 1;
  std::vector<int64_t> groups =
      SummaryGroups(chunks, detail.level.has_value(), detail.per_bucket, from_ms, to_ms, group);
  auto points = std::make_shared<std::vector<Point>>();
  // Room for all of them at once: growing by doubling would copy and zero them again.
  size_t expected = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const ChunkRecord& c = chunks[i];
    if (OutsideWindow(c, from_ms, to_ms)) continue;
    expected +=
        groups[i] > 0 ? static_cast<size_t>(c.count / groups[i] + 1) * 4 : static_cast<size_t>(c.count);
  }
  points->reserve(expected);
  Result<std::vector<ChunkRecord>> whole_chunks =
      ReadWholeStretches(store_, series_id, chunks, groups, from_ms, to_ms);
  if (!whole_chunks.ok()) return whole_chunks.status();
  auto next_whole = whole_chunks->begin();
  for (size_t i = 0; i < chunks.size(); ++i) {
    const ChunkRecord& c = chunks[i];
    if (OutsideWindow(c, from_ms, to_ms)) continue;
    if (groups[i] > 0) {
      TB_RETURN_IF_ERROR(DecodeSummaryLevel(c.summary, groups[i], *points));
      continue;
    }
    // The chunk as the stretch read brought it: by id, or by its first time where the
    // overview described it without one.
    auto same = [&](const ChunkRecord& read) {
      return c.id != 0 ? read.id == c.id : read.first_ms == c.first_ms && read.sealed;
    };
    while (next_whole != whole_chunks->end() && !same(*next_whole) && next_whole->first_ms <= c.first_ms)
      ++next_whole;
    bool have = next_whole != whole_chunks->end() && same(*next_whole);
    // A chunk not in that read is read by itself (NotFound when a checkpoint replaced it).
    Status read = DecodeSeriesParts(store_, series_id,
                                    std::span<const ChunkRecord>(have ? &*next_whole : &c, 1), {}, *points);
    // The writer replaced a provisional chunk meanwhile (a checkpoint): read again.
    if (read.code() == Status::Code::kNotFound && !retried)
      return PointsForChart(series_id, finished, from_ms, to_ms, buckets, true);
    TB_RETURN_IF_ERROR(read);
  }
  int64_t total = detail.total;
  if (!finished) {
    Result<std::shared_ptr<const std::vector<JournalEntry>>> journal = JournalOf(series_id, retried);
    if (!journal.ok()) return journal.status();
    size_t before = points->size();
    TB_RETURN_IF_ERROR(DecodeSeriesParts(store_, series_id, {}, **journal, *points));
    // Only the journal's points in the window.
    auto outside = [&](const Point& p) { return p.time_ms < from_ms || p.time_ms > to_ms; };
    points->erase(
        std::remove_if(points->begin() + static_cast<std::ptrdiff_t>(before), points->end(), outside),
        points->end());
    total += static_cast<int64_t>(points->size() - before);
  }
  return Window{points, total, group};
}

void SeriesReader::Keep(int64_t series_id, const std::shared_ptr<const std::vector<ChunkRecord>>& described) {
  // Only an overview that describes every chunk (OverviewChunks marks those it read beside
  // it, a crashed run's provisional chunk, unsealed).
  size_t bytes = 0;
  for (const ChunkRecord& c : *described) {
    if (!c.sealed) return;
    bytes += sizeof(ChunkRecord) + c.summary.size();
  }
  std::lock_guard lock(mu_);
  if (overview_bytes_ + bytes > cache_points_ * sizeof(Point) / 8) {
    overviews_.clear();
    overview_bytes_ = 0;
  }
  if (overviews_.emplace(series_id, described).second) overview_bytes_ += bytes;
}

Result<std::optional<std::vector<ChunkRecord>>> SeriesReader::OverviewChunks(int64_t series_id,
                                                                             int64_t min_points) {
  Result<SeriesOverview> overview = store_.ReadSeriesOverview(series_id, min_points);
  if (!overview.ok()) return overview.status();
  return Described(series_id, *overview, min_points);
}

Result<std::optional<std::vector<ChunkRecord>>> SeriesReader::Described(int64_t series_id,
                                                                        const SeriesOverview& overview,
                                                                        int64_t min_points) {
  if (overview.covered_points != overview.sealed_points || overview.sealed_points < min_points)
    return std::optional<std::vector<ChunkRecord>>();
  std::vector<ChunkRecord> chunks;
  for (const std::string& block : overview.blocks)
    TB_RETURN_IF_ERROR(DecodeOverview(block, series_id, chunks));
  // Every chunk sealed and described (a finished run's series): nothing else to read.
  if (!overview.unsealed) return std::optional<std::vector<ChunkRecord>>(std::move(chunks));
  // The chunks begun after the last one described: the provisional chunk, and any sealed
  // since the overview was read (the writer's checkpoint in between), read whole.
  int64_t after = std::numeric_limits<int64_t>::min();
  for (const ChunkRecord& c : chunks) after = std::max(after, c.first_ms + 1);
  Result<std::vector<ChunkRecord>> newer = store_.ReadChunks(
      {.series = {series_id},
       .first_ms = std::pair<int64_t, int64_t>(after, std::numeric_limits<int64_t>::max())});
  if (!newer.ok()) return newer.status();
  for (ChunkRecord& c : *newer) {
    c.sealed = false;
    c.summary.clear();
    chunks.push_back(std::move(c));
  }
  return std::optional<std::vector<ChunkRecord>>(std::move(chunks));
}

Result<SeriesReader::Window> SeriesReader::PointsSince(int64_t series_id, bool finished, int64_t since_ms,
                                                       bool retried) {
  auto newer = [since_ms](const Point& p) { return p.time_ms > since_ms; };
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(series_id);
    if (it != cache_.end() && finished) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      const std::vector<Point>& all = *it->second.points;
      auto out = std::make_shared<std::vector<Point>>();
      std::copy_if(all.begin(), all.end(), std::back_inserter(*out), newer);
      return Window{out, static_cast<int64_t>(all.size()), 1};
    }
  }
  // Read ahead with the other series of the chart (ReadAheadSince), or now.
  std::optional<Ahead> ahead = retried ? std::nullopt : TakeAhead(series_id, since_ms);
  Result<std::vector<ChunkRecord>> chunks =
      ahead ? Result<std::vector<ChunkRecord>>(std::move(ahead->chunks))
            : store_.ReadChunks({.series = {series_id}, .part = ChunkPart::kInfo});
  if (!chunks.ok()) return chunks.status();
  int64_t total = ahead ? ahead->total : 0;
  std::vector<ChunkRecord> reaching;
  for (ChunkRecord& c : *chunks) {
    if (!ahead) total += c.count;
    if (std::max(c.first_ms, c.last_ms) > since_ms) reaching.push_back(std::move(c));
  }
  // A running run's journal (a finished run's is empty), shared by its series read ahead.
  std::shared_ptr<const std::vector<JournalEntry>> journal = ahead ? ahead->journal : nullptr;
  if (!finished && !ahead) {
    Result<std::shared_ptr<const std::vector<JournalEntry>>> read = JournalOf(series_id, retried);
    if (!read.ok()) return read.status();
    journal = std::move(*read);
  }
  auto points = std::make_shared<std::vector<Point>>();
  size_t chunk_points = 0;
  Status read = DecodeSeriesParts(store_, series_id, reaching, {}, *points);
  if (read.ok()) {
    chunk_points = points->size();
    if (journal) read = DecodeSeriesParts(store_, series_id, {}, *journal, *points);
  }
  // The writer replaced a provisional chunk meanwhile (a checkpoint): read again.
  if (read.code() == Status::Code::kNotFound && !retried)
    return PointsSince(series_id, finished, since_ms, true);
  TB_RETURN_IF_ERROR(read);
  total += static_cast<int64_t>(points->size() - chunk_points);
  points->erase(std::remove_if(points->begin(), points->end(), [&](const Point& p) { return !newer(p); }),
                points->end());
  return Window{points, total, 1};
}

}  // namespace tb
