// SeriesReader::MeansForChart: a series' means per chart bucket, from the stored groups'
// means where a bucket covers a group or more, else from its points as they are decoded.
#include <algorithm>

#include "query/overview_points.h"
#include "query/series_reader.h"
#include "store/format/chunk_summary.h"

namespace tb {
namespace {

// Fewer points a bucket than this, and MeansForChart reads every point.
constexpr double kEveryPointMeans = 16;

// What DecodeMeans makes of the chunks: the means (or points) with the span of time each
// stands for, the chunks to be read point by point, the coarsest stored means read.
struct Means {
  std::shared_ptr<std::vector<Point>> points = std::make_shared<std::vector<Point>>();
  std::vector<std::pair<int64_t, int64_t>> spans;
  std::vector<ChunkRecord> unsealed;
  int64_t read_group = 1;
};

// A point standing for itself alone: its span is its time.
void AddOwnSpans(Means& m, size_t from) {
  for (size_t i = from; i < m.points->size(); ++i) {
    (*m.points)[i].step = 1;
    m.spans.emplace_back((*m.points)[i].time_ms, (*m.points)[i].time_ms);
  }
}

// The chunks' means: the stored groups' (`stored`) or made from each chunk's points as it is
// decoded. False when a chunk holds no means that serve (the caller reads every point).
Result<bool> DecodeMeans(const std::vector<ChunkRecord>& chunks, bool stored, int64_t group, Means& m) {
  std::vector<Point> decoded;
  std::vector<Point>& points = *m.points;
  for (const ChunkRecord& c : chunks) {
    size_t begin = points.size();
    if (!stored) {
      decoded.clear();
      TB_RETURN_IF_ERROR(DecodeChunk(c.data, decoded, c.times));
      std::vector<Point> means = GroupMeans(decoded, group);
      points.insert(points.end(), means.begin(), means.end());
    } else if (!c.sealed || c.summary.empty()) {  // unsealed, or too short for a summary: point by point
      m.unsealed.push_back(c);
      continue;
    } else if (Result<int64_t> read = DecodeSummaryMeans(c.summary, group, points); read.ok()) {
      m.read_group = std::max(m.read_group, *read);
    } else {
      // Too short for means, its overview keeps its points (group 1); else written before
      // there were means, or with none as fine.
      if (!DecodeSummaryLevel(c.summary, 1, points).ok()) return false;
      AddOwnSpans(m, begin);
      continue;
    }
    // Each group from halfway after the one before to halfway before the next; the chunk's
    // first and last groups to its ends.
    for (size_t i = begin; i < points.size(); ++i) {
      int64_t at = points[i].time_ms;
      int64_t from = i == begin ? c.first_ms : at - (at - points[i - 1].time_ms) / 2;
      int64_t to = i + 1 == points.size() ? c.last_ms : at + (points[i + 1].time_ms - at) / 2;
      m.spans.emplace_back(from, to);
    }
  }
  return true;
}

SeriesReader::Window EveryPointOf(std::shared_ptr<const std::vector<Point>> all) {
  int64_t newest = 0;
  for (const Point& p : *all) newest = std::max(newest, p.time_ms);
  auto size = static_cast<int64_t>(all->size());
  return SeriesReader::Window{std::move(all), size, 1, newest};
}

int64_t PointsIn(const std::vector<ChunkRecord>& chunks) {
  int64_t total = 0;
  for (const ChunkRecord& c : chunks) total += c.count;
  return total;
}

}  // namespace

Result<std::vector<ChunkRecord>> SeriesReader::MeansChunks(int64_t series_id, bool finished, size_t buckets,
                                                           ChunkSource& source) {
  // A finished series read ahead (ReadAheadForMeans): every chunk with its points at hand.
  if (std::optional<Ahead> ahead = finished ? TakeAhead(series_id) : std::nullopt) {
    source = ChunkSource::kAhead;
    return std::move(ahead->chunks);
  }
  // The sealed chunks' means from the series' overview where a bucket covers a group or
  // more (a finished run's kept one, or read now); else the list of chunks (and their
  // summaries, for series sealed before).
  std::shared_ptr<const std::vector<ChunkRecord>> kept;
  if (finished) {
    std::lock_guard lock(mu_);
    if (auto it = overviews_.find(series_id); it != overviews_.end()) kept = it->second;
  }
  source = ChunkSource::kOverview;
  if (kept) return *kept;
  Result<std::optional<std::vector<ChunkRecord>>> described =
      OverviewChunks(series_id, MeansOverviewPoints(buckets));
  if (!described.ok()) return described.status();
  if (!*described) {
    source = ChunkSource::kListed;
    return store_.ReadChunks({.series = {series_id}, .part = ChunkPart::kInfo});
  }
  return std::move(**described);
}

Result<SeriesReader::Window> SeriesReader::MeansForChart(int64_t series_id, bool finished, size_t buckets,
                                                         bool retried) {
  auto every_point = [&]() -> Result<Window> {
    Result<std::shared_ptr<const std::vector<Point>>> all = Points(series_id, finished);
    if (!all.ok()) return all.status();
    return EveryPointOf(*all);
  };
  bool cached = false;
  {
    std::lock_guard lock(mu_);
    cached = finished && cache_.count(series_id) != 0;
  }
  if (cached) return every_point();  // Points takes the lock itself
  ChunkSource source = ChunkSource::kListed;
  Result<std::vector<ChunkRecord>> chunks = MeansChunks(series_id, finished, buckets, source);
  if (!chunks.ok()) return chunks.status();
  bool whole = source == ChunkSource::kAhead, listed = source == ChunkSource::kListed;
  int64_t total = PointsIn(*chunks);
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
    return EveryPointOf(std::move(all));
  }
  bool stored = per_bucket >= static_cast<double>(kMeanGroups[0]);
  int64_t group = static_cast<int64_t>(stored ? per_bucket : per_bucket / 8);
  if (stored ? listed : !whole) {
    // Every chunk with its points in one read; or their summaries.
    chunks = stored ? store_.ReadChunks({.series = {series_id}, .part = ChunkPart::kSummaries})
                    : store_.ReadChunks({.series = {series_id}});
    if (!chunks.ok()) return chunks.status();
    total = PointsIn(*chunks);
  }
  Means m;
  int64_t expected = stored ? kMeanGroups[0] : group;  // points a mean stands for
  for (int64_t g : kMeanGroups) {
    if (stored && g <= group) expected = g;
  }
  m.points->reserve(static_cast<size_t>(total / expected) + chunks->size());
  Result<bool> decoded = DecodeMeans(*chunks, stored, group, m);
  if (!decoded.ok()) return decoded.status();
  if (!*decoded) return every_point();
  Result<std::shared_ptr<const std::vector<JournalEntry>>> journal =
      finished ? std::make_shared<const std::vector<JournalEntry>>() : JournalOf(series_id, retried);
  if (!journal.ok()) return journal.status();
  size_t means = m.points->size();
  Status read = DecodeSeriesParts(store_, series_id, m.unsealed, **journal, *m.points);
  if (read.code() == Status::Code::kNotFound && !retried)
    return MeansForChart(series_id, finished, buckets, true);
  TB_RETURN_IF_ERROR(read);
  AddOwnSpans(m, means);
  // The journal's points are in no chunk yet.
  total += static_cast<int64_t>(m.points->size() - means) - PointsIn(m.unsealed);
  auto by_time = [](const Point& a, const Point& b) { return a.time_ms < b.time_ms; };
  if (!std::is_sorted(m.points->begin(), m.points->end(), by_time))
    return every_point();  // chunks out of order
  int64_t newest = 0;
  for (const ChunkRecord& c : *chunks) newest = std::max(newest, c.last_ms);
  for (size_t i = means; i < m.points->size(); ++i) newest = std::max(newest, (*m.points)[i].time_ms);
  Window window{m.points, total, stored ? m.read_group : group, newest};
  window.spans = std::move(m.spans);
  return window;
}

}  // namespace tb
