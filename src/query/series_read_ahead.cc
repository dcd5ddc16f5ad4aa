// SeriesReader's reads ahead: what the calls of one request will need, read in few queries
// before they run (sealed chunks, overviews, journals), and taken by those calls.
#include <algorithm>
#include <iterator>
#include <limits>

#include "base/time.h"
#include "query/overview_points.h"
#include "query/series_reader.h"

namespace tb {

namespace {
// The points SeriesReader::ReadAhead reads in one query at most: 1.5-3 MB encoded. Beyond
// that a query a series costs less than the memory such a read touches for the first time
// (`build/bench/pg_store`: the means of 50 runs of 100,000 points, each read whole, took
// longer read in one query than in 50; docs/PERFORMANCE.md).
constexpr int64_t kAheadPoints = int64_t{1} << 20;
// The sealed points of a series whose overview ReadAhead leaves to the call that draws it:
// beyond a million points an overview is hundreds of kilobytes, and the calls of one
// request read and split theirs on its two threads, where ReadAhead would do all of them on
// one (a week-long run's first chart, 8 series of 6 million points: 80 against 57 ms).
constexpr int64_t kAheadOverviewPoints = int64_t{1} << 20;
// How long what ReadAhead read waits for the call that takes it.
constexpr int64_t kAheadKeptNanos = int64_t{10} * 1000 * 1000 * 1000;
}  // namespace

Status SeriesReader::ReadAheadForCharts(const std::vector<std::pair<SeriesInfo, bool>>& series,
                                        size_t buckets, bool whole_range) {
  int64_t overview = ChartOverviewPoints(buckets);
  return ReadAhead(series, overview, whole_range ? overview : 0);
}

Status SeriesReader::ReadAheadForMeans(const std::vector<std::pair<SeriesInfo, bool>>& series,
                                       size_t buckets) {
  int64_t overview = MeansOverviewPoints(buckets);
  return ReadAhead(series, overview, overview);  // fewer points: every chunk is decoded
}

Status SeriesReader::ReadAheadWhole(const std::vector<std::pair<SeriesInfo, bool>>& series) {
  return ReadAhead(series, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max());
}

Status SeriesReader::ReadAhead(const std::vector<std::pair<SeriesInfo, bool>>& series,
                               int64_t overview_points, int64_t whole_points) {
  // The short ones are read whole together, up to kAheadPoints (the rest one by one, as
  // they would be without this).
  std::vector<int64_t> whole;
  int64_t whole_total = 0;
  auto short_one = [&](int64_t id, int64_t points) {
    if (points >= whole_points) return false;
    if (whole_total + points <= kAheadPoints) {
      whole.push_back(id);
      whole_total += points;
    }
    return true;
  };
  std::vector<int64_t> ids;  // overviews to read
  {
    std::lock_guard lock(mu_);
    for (const auto& [s, finished] : series) {
      int64_t id = s.id;
      if (!finished || cache_.count(id) != 0 || ahead_.count(id) != 0) continue;
      if (auto kept = overviews_.find(id); kept != overviews_.end()) {
        // Kept for a chart that asked less of it: it still tells the series' length.
        int64_t points = 0;
        for (const ChunkRecord& c : *kept->second) points += c.count;
        short_one(id, points);
        continue;
      }
      ids.push_back(id);
    }
  }
  if (ids.size() >= 2) {  // (the call's own read of one is as cheap)
    Result<std::vector<SeriesOverview>> read =
        store_.ReadSeriesOverviews(ids, overview_points, kAheadOverviewPoints);
    if (!read.ok()) return read.status();
    for (size_t i = 0; i < ids.size(); ++i) {
      SeriesOverview& overview = (*read)[i];
      if (overview.unsealed) continue;  // a crashed run's provisional chunk: read when drawn
      if (short_one(ids[i], overview.sealed_points)) continue;
      if (overview.sealed_points >= kAheadOverviewPoints) continue;  // read by its own call
      Result<std::optional<std::vector<ChunkRecord>>> described =
          Described(ids[i], overview, overview_points);
      // Its rows let go before the next series' are split, which then reuses their memory.
      std::vector<std::string>().swap(overview.blocks);
      if (!described.ok()) return described.status();
      if (*described) Keep(ids[i], std::make_shared<const std::vector<ChunkRecord>>(std::move(**described)));
    }
  }
  if (whole.size() < 2) return Status::Ok();
  Result<std::vector<ChunkRecord>> chunks = store_.ReadChunks({.series = whole});
  if (!chunks.ok()) return chunks.status();
  // Kept as read (a point and a half a byte, where decoded points take 24): decoded by the
  // call that takes them, into memory it frees after, as when it reads them itself.
  std::unordered_map<int64_t, std::vector<ChunkRecord>> by_series;
  for (ChunkRecord& c : *chunks) by_series[c.series_id].push_back(std::move(c));
  int64_t now = MonotonicNanos();
  std::lock_guard lock(mu_);
  // Those a request left (it failed before taking them) go after a while.
  std::erase_if(ahead_, [&](const auto& entry) { return now - entry.second.read_ns > kAheadKeptNanos; });
  for (auto& [id, parts] : by_series) {
    // A finished run's chunks are all sealed; one that is not is read by the call itself.
    if (std::all_of(parts.begin(), parts.end(), [](const ChunkRecord& c) { return c.sealed; }))
      ahead_[id] = Ahead{std::move(parts), now, std::nullopt, 0, nullptr};
  }
  return Status::Ok();
}

std::optional<SeriesReader::Ahead> SeriesReader::TakeAhead(int64_t series_id,
                                                           std::optional<int64_t> since_ms) {
  std::lock_guard lock(mu_);
  auto it = ahead_.find(series_id);
  if (it == ahead_.end() || it->second.since_ms != since_ms) return std::nullopt;
  std::optional<Ahead> taken;
  if (MonotonicNanos() - it->second.read_ns <= kAheadKeptNanos) taken = std::move(it->second);
  ahead_.erase(it);
  return taken;
}

Result<SeriesReader::Journals> SeriesReader::ReadJournals(const std::vector<std::string>& run_ids) {
  Result<std::vector<std::pair<std::string, JournalEntry>>> read = store_.ReadJournalsOfRuns(run_ids);
  if (!read.ok()) return read.status();
  std::unordered_map<std::string, std::shared_ptr<std::vector<JournalEntry>>> by_run;
  for (auto& [run_id, entry] : *read) {
    auto& journal = by_run[run_id];
    if (!journal) journal = std::make_shared<std::vector<JournalEntry>>();
    journal->push_back(std::move(entry));
  }
  Journals out;
  for (const std::string& id : run_ids) {  // a run with no entries has an empty journal
    auto it = by_run.find(id);
    out[id] = it != by_run.end() ? std::move(it->second) : std::make_shared<std::vector<JournalEntry>>();
  }
  return out;
}

Status SeriesReader::ReadJournalsAhead(const std::vector<std::pair<SeriesInfo, bool>>& series) {
  std::vector<std::string> running;
  size_t series_running = 0;
  for (const auto& [s, finished] : series) {
    if (finished) continue;
    ++series_running;
    if (std::find(running.begin(), running.end(), s.run_id) == running.end()) running.push_back(s.run_id);
  }
  if (series_running < 2) return Status::Ok();  // the call's own read of one is as cheap
  Result<Journals> journals = ReadJournals(running);
  if (!journals.ok()) return journals.status();
  int64_t now = MonotonicNanos();
  std::lock_guard lock(mu_);
  std::erase_if(journals_ahead_,
                [&](const auto& entry) { return now - entry.second.second > kAheadKeptNanos; });
  for (const auto& [s, finished] : series) {
    if (!finished) journals_ahead_[s.id] = {journals->at(s.run_id), now};
  }
  return Status::Ok();
}

std::shared_ptr<const std::vector<JournalEntry>> SeriesReader::TakeJournalAhead(int64_t series_id) {
  std::lock_guard lock(mu_);
  auto it = journals_ahead_.find(series_id);
  if (it == journals_ahead_.end()) return nullptr;
  std::shared_ptr<const std::vector<JournalEntry>> taken;
  if (MonotonicNanos() - it->second.second <= kAheadKeptNanos) taken = std::move(it->second.first);
  journals_ahead_.erase(it);
  return taken;
}

Result<std::shared_ptr<const std::vector<JournalEntry>>> SeriesReader::JournalOf(int64_t series_id,
                                                                                 bool retried) {
  std::shared_ptr<const std::vector<JournalEntry>> journal = retried ? nullptr : TakeJournalAhead(series_id);
  if (journal) return journal;
  Result<std::vector<JournalEntry>> read = store_.ReadJournal(series_id);
  if (!read.ok()) return read.status();
  return std::shared_ptr<const std::vector<JournalEntry>>(
      std::make_shared<const std::vector<JournalEntry>>(std::move(*read)));
}

Status SeriesReader::ReadAheadSince(const std::vector<std::pair<SeriesInfo, bool>>& series,
                                    int64_t since_ms) {
  std::vector<int64_t> ids;
  std::vector<std::string> running;
  {
    std::lock_guard lock(mu_);
    for (const auto& [s, finished] : series) {
      if (finished && cache_.count(s.id) != 0) continue;  // answered from the cache
      ids.push_back(s.id);
      if (!finished && std::find(running.begin(), running.end(), s.run_id) == running.end())
        running.push_back(s.run_id);
    }
  }
  if (ids.size() < 2) return Status::Ok();  // the call's own reads of one are as cheap
  // The journals first, then the counts and the chunks: a checkpoint in between moves a
  // journal's points into chunks, which are then read twice (the page draws a point twice
  // at its place) rather than missed (the page would never ask for them again).
  Result<Journals> journals = running.empty() ? Result<Journals>(Journals{}) : ReadJournals(running);
  if (!journals.ok()) return journals.status();
  Result<std::vector<SeriesOverview>> counts =
      store_.ReadSeriesOverviews(ids, std::numeric_limits<int64_t>::max());
  if (!counts.ok()) return counts.status();
  Result<std::vector<ChunkRecord>> chunks = store_.ReadChunks({.series = ids, .reaching_ms = since_ms});
  if (!chunks.ok()) return chunks.status();
  std::unordered_map<int64_t, Ahead> read;
  int64_t now = MonotonicNanos();
  for (size_t i = 0; i < ids.size(); ++i)
    read[ids[i]] = Ahead{{}, now, since_ms, (*counts)[i].sealed_points, nullptr};
  for (ChunkRecord& c : *chunks) {
    Ahead& a = read[c.series_id];
    if (!c.sealed) a.total += c.count;
    a.chunks.push_back(std::move(c));
  }
  for (const auto& [s, finished] : series) {
    auto it = journals->find(s.run_id);
    if (!finished && it != journals->end() && read.count(s.id) != 0) read[s.id].journal = it->second;
  }
  std::lock_guard lock(mu_);
  std::erase_if(ahead_, [&](const auto& entry) { return now - entry.second.read_ns > kAheadKeptNanos; });
  for (auto& [id, a] : read) ahead_[id] = std::move(a);
  return Status::Ok();
}

}  // namespace tb
