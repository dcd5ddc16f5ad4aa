#include "query/series_reader.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "base/time.h"
#include "query/overview_points.h"
#include "store/chunk_summary.h"

namespace tb {

namespace {
// Fewer points a bucket than this, and MeansForChart reads every point.
constexpr double kEveryPointMeans = 16;
}  // namespace

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
  Result<std::vector<ChunkRecord>> chunks = ahead ? Result<std::vector<ChunkRecord>>(std::move(ahead->chunks))
                                            : known ? store_.ListChunkInfo(series_id)
                                                    : store_.ReadChunks(series_id);
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
  // The series' points, and the level of detail its points in the window call for (counting
  // a chunk that reaches past an end by the share of its time inside).
  int64_t total = 0;
  int64_t per_bucket = 0;  // raw points a bucket covers: a chunk's coarsest level up to this is read
  auto level_for = [&](const std::vector<ChunkRecord>& listed) -> std::optional<int64_t> {
    total = 0;
    double in_window = 0;
    for (const ChunkRecord& c : listed) {
      total += c.count;
      if (c.last_ms < from_ms || c.first_ms > to_ms) continue;
      double span = static_cast<double>(c.last_ms - c.first_ms);
      double inside = static_cast<double>(std::min(c.last_ms, to_ms) - std::max(c.first_ms, from_ms));
      in_window += span > 0 ? static_cast<double>(c.count) * std::clamp(inside / span, 0.0, 1.0)
                            : static_cast<double>(c.count);
    }
    if (buckets == 0) return std::nullopt;
    per_bucket = static_cast<int64_t>(in_window / static_cast<double>(buckets));
    return SummaryLevelFor(in_window / static_cast<double>(buckets));
  };
  // A window wide enough for a level of detail reads the series' overview (its chunks'
  // summaries in a few rows however many chunks), where it has one. Else the list of chunks
  // (a narrow window, few points a bucket: every point in range is read), and where that
  // calls for a level, the summaries in the chunks' rows (series sealed before overviews).
  // A finished run's overview, once read, is kept (encoded levels, a few KB a series) and
  // serves its next charts, of any width or range, without a query; the points decoded
  // from it are not kept: they are ten times larger, and memory touched for the first time
  // is what a chart on a server just started pays most for (docs/PERFORMANCE.md).
  std::shared_ptr<const std::vector<ChunkRecord>> chunks;
  std::optional<int64_t> level;
  // A finished series read ahead (ReadAheadForCharts): its chunks with their data.
  if (std::optional<Ahead> ahead = finished ? TakeAhead(series_id) : std::nullopt) {
    level = level_for(ahead->chunks);
    chunks = std::make_shared<const std::vector<ChunkRecord>>(std::move(ahead->chunks));
  }
  if (buckets > 0 && !chunks) {
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
    if (described && (level = level_for(*described))) chunks = std::move(described);
  }
  if (!chunks) {
    Result<std::vector<ChunkRecord>> listed = store_.ListChunkInfo(series_id);
    if (listed.ok() && (level = level_for(*listed))) {
      listed = store_.ReadChunkSummaries(series_id);
      if (listed.ok()) level = level_for(*listed);
    }
    if (!listed.ok()) return listed.status();
    chunks = std::make_shared<const std::vector<ChunkRecord>>(std::move(*listed));
  }
  // A chunk is drawn from its summary when it is sealed and holds a level the buckets call
  // for: the coarsest up to per_bucket (a store written with other group sizes than today's
  // holds other levels). `group`: the coarsest level read, 1 when any chunk is read whole.
  auto summary_group = [&](const ChunkRecord& c) -> int64_t {
    if (!level || !c.sealed || c.summary.empty()) return 0;
    int64_t best = 0;
    for (int64_t g : SummaryLevels(c.summary)) {
      if (g <= per_bucket) best = std::max(best, g);
    }
    return best;
  };
  std::vector<int64_t> groups(chunks->size());  // each chunk's, found once
  int64_t group = level ? std::numeric_limits<int64_t>::max() : 1;
  for (size_t i = 0; i < chunks->size(); ++i) {
    const ChunkRecord& c = (*chunks)[i];
    if (c.last_ms < from_ms || c.first_ms > to_ms) continue;
    groups[i] = summary_group(c);
    group = std::min(group, groups[i] == 0 ? 1 : groups[i]);
  }
  if (group == std::numeric_limits<int64_t>::max()) group = 1;
  auto group_of = [&](const ChunkRecord& c) { return groups[static_cast<size_t>(&c - chunks->data())]; };
  auto points = std::make_shared<std::vector<Point>>();
  // Room for all of them at once: growing by doubling would copy and zero them again.
  size_t expected = 0;
  for (const ChunkRecord& c : *chunks) {
    if (c.last_ms < from_ms || c.first_ms > to_ms) continue;
    int64_t g = group_of(c);
    expected += g > 0 ? static_cast<size_t>(c.count / g + 1) * 4 : static_cast<size_t>(c.count);
  }
  points->reserve(expected);
  // Every point of a chunk is needed where it has no summary at that level (written before
  // there were summaries, or too small), is not sealed yet, or the window is narrow enough to
  // need them all. Those chunks come in one read when there are several (one query per
  // chunk cost more than decoding them).
  // Each stretch of such chunks (summarized ones in between are not read again) is one read.
  std::vector<ChunkRecord> whole_chunks;
  {
    const ChunkRecord *first = nullptr, *last = nullptr;
    size_t stretch = 0;
    auto read_stretch = [&]() -> Status {
      // One chunk alone is read by its id, below; one the overview described has none.
      if (stretch > 1 || (stretch == 1 && first->id == 0)) {
        Result<std::vector<ChunkRecord>> read =
            store_.ReadChunkRange(series_id, first->first_ms, last->first_ms);
        if (!read.ok()) return read.status();
        std::move(read->begin(), read->end(), std::back_inserter(whole_chunks));
      }
      stretch = 0;
      return Status::Ok();
    };
    for (const ChunkRecord& c : *chunks) {
      if (c.last_ms < from_ms || c.first_ms > to_ms) continue;
      if (group_of(c) > 0 || !c.data.empty()) {  // drawn from its summary, or read already
        TB_RETURN_IF_ERROR(read_stretch());
        continue;
      }
      if (stretch++ == 0) first = &c;
      last = &c;
    }
    TB_RETURN_IF_ERROR(read_stretch());
  }
  auto next_whole = whole_chunks.begin();
  for (const ChunkRecord& c : *chunks) {
    if (c.last_ms < from_ms || c.first_ms > to_ms) continue;
    if (int64_t g = group_of(c); g > 0) {
      TB_RETURN_IF_ERROR(DecodeSummaryLevel(c.summary, g, *points));
      continue;
    }
    // The chunk as the stretch read brought it: by id, or by its first time where the
    // overview described it without one.
    auto same = [&](const ChunkRecord& read) {
      return c.id != 0 ? read.id == c.id : read.first_ms == c.first_ms && read.sealed;
    };
    while (next_whole != whole_chunks.end() && !same(*next_whole) && next_whole->first_ms <= c.first_ms)
      ++next_whole;
    bool have = next_whole != whole_chunks.end() && same(*next_whole);
    // A chunk not in that read is read by itself (NotFound when a checkpoint replaced it).
    Status read = DecodeSeriesParts(store_, series_id,
                                    std::span<const ChunkRecord>(have ? &*next_whole : &c, 1), {}, *points);
    // The writer replaced a provisional chunk meanwhile (a checkpoint): read again.
    if (read.code() == Status::Code::kNotFound && !retried)
      return PointsForChart(series_id, finished, from_ms, to_ms, buckets, true);
    TB_RETURN_IF_ERROR(read);
  }
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
  Result<std::vector<ChunkRecord>> newer =
      store_.ReadChunkRange(series_id, after, std::numeric_limits<int64_t>::max());
  if (!newer.ok()) return newer.status();
  for (ChunkRecord& c : *newer) {
    c.sealed = false;
    c.summary.clear();
    chunks.push_back(std::move(c));
  }
  return std::optional<std::vector<ChunkRecord>>(std::move(chunks));
}

Result<SeriesReader::Window> SeriesReader::MeansForChart(int64_t series_id, bool finished, size_t buckets,
                                                         bool retried) {
  auto every_point_of = [](std::shared_ptr<const std::vector<Point>> all) {
    int64_t newest = 0;
    for (const Point& p : *all) newest = std::max(newest, p.time_ms);
    auto size = static_cast<int64_t>(all->size());
    return Window{std::move(all), size, 1, newest};
  };
  auto every_point = [&]() -> Result<Window> {
    Result<std::shared_ptr<const std::vector<Point>>> all = Points(series_id, finished);
    if (!all.ok()) return all.status();
    return every_point_of(*all);
  };
  bool cached = false;
  {
    std::lock_guard lock(mu_);
    cached = finished && cache_.count(series_id) != 0;
  }
  if (cached) return every_point();  // Points takes the lock itself
  // A finished series read ahead (ReadAheadForMeans): every chunk with its points at hand.
  std::optional<Ahead> ahead = finished ? TakeAhead(series_id) : std::nullopt;
  bool whole = ahead.has_value();
  // The sealed chunks' means from the series' overview where a bucket covers a group or
  // more (a finished run's kept one, or read now); else the list of chunks (and their
  // summaries below, for series sealed before).
  std::shared_ptr<const std::vector<ChunkRecord>> kept;
  if (finished && !whole) {
    std::lock_guard lock(mu_);
    if (auto it = overviews_.find(series_id); it != overviews_.end()) kept = it->second;
  }
  Result<std::optional<std::vector<ChunkRecord>>> described =
      whole  ? std::optional<std::vector<ChunkRecord>>()
      : kept ? std::optional<std::vector<ChunkRecord>>(*kept)
             : OverviewChunks(series_id, MeansOverviewPoints(buckets));
  if (!described.ok()) return described.status();
  bool listed = !*described;
  Result<std::vector<ChunkRecord>> chunks = whole ? Result<std::vector<ChunkRecord>>(std::move(ahead->chunks))
                                            : listed
                                                ? store_.ListChunkInfo(series_id)
                                                : Result<std::vector<ChunkRecord>>(std::move(**described));
  if (!chunks.ok()) return chunks.status();
  int64_t total = 0;
  for (const ChunkRecord& c : *chunks) total += c.count;
  // Where a bucket covers a stored group or more, the coarsest such groups' means (a group
  // straddling two buckets is shared by its time in each, so a bucket's mean is exact to
  // within a bucket, as a chart's envelope). Where it covers fewer but 16 points or more,
  // the means of groups of an eighth of a bucket, made from each chunk's points as it is
  // decoded (the series' points are never all in memory at once). Else every point (those
  // read ahead decoded here, not kept).
  double per_bucket = buckets == 0 ? 0 : static_cast<double>(total) / static_cast<double>(buckets);
  if (per_bucket < kEveryPointMeans) {
    if (!whole) return every_point();
    auto all = std::make_shared<std::vector<Point>>();
    TB_RETURN_IF_ERROR(DecodeSeriesParts(store_, series_id, *chunks, {}, *all));
    return every_point_of(std::move(all));
  }
  bool stored = per_bucket >= static_cast<double>(kMeanGroups[0]);
  int64_t group = static_cast<int64_t>(stored ? per_bucket : per_bucket / 8);
  if (stored ? listed : !whole) {
    // Every chunk with its points in one read; or their summaries.
    chunks = stored ? store_.ReadChunkSummaries(series_id) : store_.ReadChunks(series_id);
    if (!chunks.ok()) return chunks.status();
    total = 0;
    for (const ChunkRecord& c : *chunks) total += c.count;
  }
  auto points = std::make_shared<std::vector<Point>>();
  int64_t expected = stored ? kMeanGroups[0] : group;  // points a mean stands for
  for (int64_t g : kMeanGroups) {
    if (stored && g <= group) expected = g;
  }
  points->reserve(static_cast<size_t>(total / expected) + chunks->size());
  std::vector<std::pair<int64_t, int64_t>> spans;
  std::vector<ChunkRecord> unsealed;
  std::vector<Point> decoded;
  int64_t read_group = 1;  // the coarsest stored means read
  for (const ChunkRecord& c : *chunks) {
    size_t begin = points->size();
    if (!stored) {
      decoded.clear();
      TB_RETURN_IF_ERROR(DecodeChunk(c.data, decoded, c.times));
      std::vector<Point> means = GroupMeans(decoded, group);
      points->insert(points->end(), means.begin(), means.end());
    } else if (!c.sealed || c.summary.empty()) {  // unsealed, or too short for a summary: point by point
      unsealed.push_back(c);
      continue;
    } else if (Result<int64_t> read = DecodeSummaryMeans(c.summary, group, *points); read.ok()) {
      read_group = std::max(read_group, *read);
    } else {
      // Too short for means, its overview keeps its points (group 1); else written before
      // there were means, or with none as fine.
      if (!DecodeSummaryLevel(c.summary, 1, *points).ok()) return every_point();
      for (size_t i = begin; i < points->size(); ++i) {
        (*points)[i].step = 1;
        spans.emplace_back((*points)[i].time_ms, (*points)[i].time_ms);
      }
      continue;
    }
    // Each group from halfway after the one before to halfway before the next; the chunk's
    // first and last groups to its ends.
    for (size_t i = begin; i < points->size(); ++i) {
      int64_t at = (*points)[i].time_ms;
      int64_t from = i == begin ? c.first_ms : at - (at - (*points)[i - 1].time_ms) / 2;
      int64_t to = i + 1 == points->size() ? c.last_ms : at + ((*points)[i + 1].time_ms - at) / 2;
      spans.emplace_back(from, to);
    }
  }
  Result<std::shared_ptr<const std::vector<JournalEntry>>> journal =
      finished ? std::make_shared<const std::vector<JournalEntry>>() : JournalOf(series_id, retried);
  if (!journal.ok()) return journal.status();
  size_t means = points->size();
  Status read = DecodeSeriesParts(store_, series_id, unsealed, **journal, *points);
  if (read.code() == Status::Code::kNotFound && !retried)
    return MeansForChart(series_id, finished, buckets, true);
  TB_RETURN_IF_ERROR(read);
  for (size_t i = means; i < points->size(); ++i) {
    (*points)[i].step = 1;
    spans.emplace_back((*points)[i].time_ms, (*points)[i].time_ms);
  }
  // The journal's points are in no chunk yet.
  int64_t in_unsealed = 0;
  for (const ChunkRecord& c : unsealed) in_unsealed += c.count;
  total += static_cast<int64_t>(points->size() - means) - in_unsealed;
  auto by_time = [](const Point& a, const Point& b) { return a.time_ms < b.time_ms; };
  if (!std::is_sorted(points->begin(), points->end(), by_time)) return every_point();  // chunks out of order
  int64_t newest = 0;
  for (const ChunkRecord& c : *chunks) newest = std::max(newest, c.last_ms);
  for (size_t i = means; i < points->size(); ++i) newest = std::max(newest, (*points)[i].time_ms);
  Window window{points, total, stored ? read_group : group, newest};
  window.spans = std::move(spans);
  return window;
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
      ahead ? Result<std::vector<ChunkRecord>>(std::move(ahead->chunks)) : store_.ListChunkInfo(series_id);
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
