#include "store/store.h"

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <set>
#include <string_view>
#include <unordered_map>

#include "base/log.h"
#include "base/secret.h"
#include "base/strings.h"
#include "platform/process.h"
#include "store/format/chunk_codec.h"
#include "store/format/chunk_summary.h"
#include "store/format/varint.h"

namespace tb {

std::string ShownStatus(const RunRecord& r) {
  if (r.status != kRunning) return r.status;
  if (r.host == HostName() && r.supervisor_pid > 0 && kill(static_cast<pid_t>(r.supervisor_pid), 0) != 0 &&
      errno == ESRCH)
    return "UNFINISHED";
  return r.status;
}

bool SoundChunk(const ChunkRecord& c) {
  constexpr int64_t kLatestMs = 253402300799999;  // the end of year 9999, MLflow's latest too
  auto in_time = [](int64_t ms) { return ms >= -kLatestMs && ms <= kLatestMs; };
  return c.count >= 0 && c.count <= static_cast<int64_t>(kMaxChunkPoints) && in_time(c.first_ms) &&
         in_time(c.last_ms);
}

Result<std::vector<ChunkRecord>> SoundChunks(Result<std::vector<ChunkRecord>> chunks) {
  if (!chunks.ok()) return chunks;
  static std::mutex mu;
  static std::set<int64_t> said;  // chunks warned about, each once (a few thousand at most)
  std::erase_if(*chunks, [](const ChunkRecord& c) {
    if (SoundChunk(c)) return false;
    std::lock_guard lock(mu);
    if (said.size() < 4096 && said.insert(c.id).second) {
      LogWarning("store: chunk " + std::to_string(c.id) + " of series " + std::to_string(c.series_id) +
                 " says it holds " + std::to_string(c.count) + " points from " + std::to_string(c.first_ms) +
                 " to " + std::to_string(c.last_ms) + " ms (trainbench writes 0 to " +
                 std::to_string(kMaxChunkPoints) +
                 " points within years -9999 to 9999): left out; the store was changed outside trainbench");
    }
    return true;
  });
  return chunks;
}

ChunkRecord MakeChunk(int64_t series_id, std::span<const Point> points, bool sealed, int64_t times_series) {
  ChunkRecord c;
  c.series_id = series_id;
  c.sealed = sealed;
  c.count = static_cast<int64_t>(points.size());
  if (!points.empty()) {
    c.first_ms = points.front().time_ms;
    c.last_ms = points.back().time_ms;
  }
  for (const Point& p : points) {
    if (std::isnan(p.value)) continue;
    c.min = c.min ? std::min(*c.min, p.value) : p.value;
    c.max = c.max ? std::max(*c.max, p.value) : p.value;
    // +inf and -inf in one series (a diverging loss) would make the sum NaN, which a
    // database keeps as NULL: the sum is the finite values', the extremes show the others.
    if (std::isfinite(p.value)) c.sum += p.value;
  }
  c.data = EncodeChunk(points, true, times_series == 0);
  c.times_series = times_series;
  if (sealed) c.summary = EncodeSummary(points);
  return c;
}

std::string OverviewSegment(const ChunkRecord& sealed) {
  std::string levels = OverviewLevels(sealed.summary, sealed.data);
  std::string out;
  PutVarint(out, ZigZag(sealed.first_ms));
  PutVarint(out, ZigZag(sealed.last_ms - sealed.first_ms));
  PutVarint(out, static_cast<uint64_t>(sealed.count));
  PutVarint(out, levels.size());
  return out + levels;
}

Status DecodeOverview(std::string_view block, int64_t series_id, std::vector<ChunkRecord>& out) {
  size_t pos = 0;
  while (pos < block.size()) {
    uint64_t first = 0, span = 0, count = 0, size = 0;
    if (!GetVarint(block, pos, first) || !GetVarint(block, pos, span) || !GetVarint(block, pos, count) ||
        !GetVarint(block, pos, size) || size > block.size() - pos)
      return Status::Corrupt("a series overview is cut short");
    ChunkRecord c;
    c.series_id = series_id;
    c.first_ms = UnZigZag(first);
    c.last_ms = c.first_ms + UnZigZag(span);
    c.count = static_cast<int64_t>(count);
    c.sealed = true;
    c.summary.assign(block.substr(pos, size));
    pos += size;
    out.push_back(std::move(c));
  }
  return Status::Ok();
}

Result<RunRecord> ChooseRun(const std::string& key, std::vector<RunRecord> candidates,
                            const std::string& store) {
  std::vector<RunRecord*> by_id;
  for (RunRecord& r : candidates) {
    if (r.id == key) return std::move(r);
    if (key.size() >= 4 && StartsWith(r.id, key)) by_id.push_back(&r);
  }
  if (by_id.size() > 1) {
    return Status::InvalidArgument("run id prefix '" + key + "' is ambiguous: " + by_id[0]->id + ", " +
                                   by_id[1]->id + "...; give more digits");
  }
  if (by_id.size() == 1) return std::move(*by_id[0]);
  if (!candidates.empty()) return std::move(candidates.front());  // the newest run with that name
  return Status::NotFound("no run '" + key + "' in " + store + "; `trainbench ls` lists the runs");
}

bool IsWholeRunId(const std::string& key) {
  return key.size() == 32 && key.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::vector<RunRecord> InOrderOfIds(const std::vector<std::string>& ids, std::vector<RunRecord> found) {
  std::unordered_map<std::string_view, RunRecord*> by_id;
  for (RunRecord& r : found) by_id.emplace(r.id, &r);
  std::vector<RunRecord> out;
  out.reserve(found.size());
  for (const std::string& id : ids) {
    auto it = by_id.find(id);
    if (it == by_id.end() || it->second == nullptr) continue;
    out.push_back(std::move(*it->second));
    it->second = nullptr;  // each once
  }
  return out;
}

std::string NewRunId() { return RandomHex(16); }

Status DecodeSeriesParts(Store& store, int64_t series_id, std::span<const ChunkRecord> chunks,
                         std::span<const JournalEntry> journal, std::vector<Point>& out) {
  // Room for the chunks' points at once: growing by doubling copies them again and again.
  size_t more = 0;
  for (const ChunkRecord& c : chunks) more += static_cast<size_t>(c.count);
  if (out.size() + more > out.capacity()) out.reserve(std::max(out.size() + more, out.capacity() * 2));
  for (const ChunkRecord& c : chunks) {
    if (!c.data.empty()) {
      TB_RETURN_IF_ERROR(DecodeChunk(c.data, out, c.times));
      continue;
    }
    if (c.count == 0) continue;
    Result<std::vector<ChunkRecord>> read = store.ReadChunks({.chunk = c.id});
    if (!read.ok()) return read.status();
    TB_RETURN_IF_ERROR(DecodeChunk(read->front().data, out, read->front().times));
  }
  for (const JournalEntry& e : journal) TB_RETURN_IF_ERROR(DecodeJournalEntry(e.data, series_id, out));
  return Status::Ok();
}

Status ForEachSeriesPart(Store& store, int64_t series_id,
                         const std::function<void(std::span<const Point>)>& part) {
  constexpr size_t kSliceChunks = 64;  // chunks a query: their encoded data held at once
  Result<std::vector<ChunkRecord>> chunks =
      store.ReadChunks({.series = {series_id}, .part = ChunkPart::kInfo});
  if (!chunks.ok()) return chunks.status();
  std::vector<Point> points;  // one chunk's
  for (size_t from = 0; from < chunks->size(); from += kSliceChunks) {
    size_t to = std::min(chunks->size(), from + kSliceChunks) - 1;
    Result<std::vector<ChunkRecord>> slice = store.ReadChunks(
        {.series = {series_id},
         .first_ms = std::pair<int64_t, int64_t>((*chunks)[from].first_ms, (*chunks)[to].first_ms)});
    if (!slice.ok()) return slice.status();
    for (const ChunkRecord& c : *slice) {
      points.clear();
      TB_RETURN_IF_ERROR(DecodeChunk(c.data, points, c.times));
      part(points);
    }
  }
  Result<std::vector<JournalEntry>> journal = store.ReadJournal(series_id);
  if (!journal.ok()) return journal.status();
  points.clear();
  TB_RETURN_IF_ERROR(DecodeSeriesParts(store, series_id, {}, *journal, points));
  part(points);
  return Status::Ok();
}

Result<std::vector<Point>> ReadSeriesPage(Store& store, int64_t series_id, int64_t offset, int64_t limit,
                                          int64_t& total) {
  Result<std::vector<ChunkRecord>> chunks =
      store.ReadChunks({.series = {series_id}, .part = ChunkPart::kInfo});
  if (!chunks.ok()) return chunks.status();
  Result<std::vector<JournalEntry>> journal = store.ReadJournal(series_id);
  if (!journal.ok()) return journal.status();
  std::vector<Point> newest;  // the journal's points, after every chunk's
  TB_RETURN_IF_ERROR(DecodeSeriesParts(store, series_id, {}, *journal, newest));
  int64_t in_chunks = 0;
  for (const ChunkRecord& c : *chunks) in_chunks += c.count;
  total = in_chunks + static_cast<int64_t>(newest.size());
  offset = std::clamp<int64_t>(offset, 0, total);
  int64_t end = offset + std::min(std::max<int64_t>(limit, 0), total - offset);
  // The chunks that hold [offset, end), and the index of the first one's first point.
  std::vector<ChunkRecord> wanted;
  int64_t first_index = 0, at = 0, wanted_points = 0;
  for (const ChunkRecord& c : *chunks) {
    if (at + c.count > offset && at < end) {
      if (wanted.empty()) first_index = at;
      wanted.push_back(c);
      wanted_points += c.count;
    }
    at += c.count;
  }
  std::vector<Point> points;
  if (!wanted.empty()) {
    Result<std::vector<ChunkRecord>> read = store.ReadChunks(
        {.series = {series_id},
         .first_ms = std::pair<int64_t, int64_t>(wanted.front().first_ms, wanted.back().first_ms)});
    if (!read.ok()) return read.status();
    size_t next = 0;  // the wanted chunk to find next
    for (const ChunkRecord& c : *read) {
      if (next == wanted.size() || c.id != wanted[next].id) continue;
      TB_RETURN_IF_ERROR(DecodeChunk(c.data, points, c.times));
      ++next;
    }
    if (next != wanted.size() || static_cast<int64_t>(points.size()) != wanted_points) {
      // A checkpoint replaced chunks between the two reads: the page from every point.
      Result<std::vector<Point>> all = ReadSeriesPoints(store, series_id);
      if (!all.ok()) return all.status();
      total = static_cast<int64_t>(all->size());
      offset = std::min(offset, total);
      end = offset + std::min(std::max<int64_t>(limit, 0), total - offset);
      return std::vector<Point>(all->begin() + offset, all->begin() + end);
    }
  }
  std::vector<Point> page;
  page.reserve(static_cast<size_t>(end - offset));
  for (int64_t i = offset; i < end; ++i) {
    page.push_back(i < in_chunks ? points[static_cast<size_t>(i - first_index)]
                                 : newest[static_cast<size_t>(i - in_chunks)]);
  }
  return page;
}

Result<std::vector<Point>> ReadSeriesPoints(Store& store, int64_t series_id) {
  Result<std::vector<ChunkRecord>> chunks = store.ReadChunks({.series = {series_id}});
  if (!chunks.ok()) return chunks.status();
  Result<std::vector<JournalEntry>> journal = store.ReadJournal(series_id);
  if (!journal.ok()) return journal.status();
  std::vector<Point> points;
  TB_RETURN_IF_ERROR(DecodeSeriesParts(store, series_id, *chunks, *journal, points));
  return points;
}

void SeriesTotals::Add(int64_t more_count, double more_sum, std::optional<double> lo,
                       std::optional<double> hi) {
  // Counts come from rows anyone with the database may have rewritten: a negative one adds
  // nothing, and a sum beyond int64 stays at its largest.
  if (more_count < 0) return;
  if (__builtin_add_overflow(count, more_count, &count)) count = std::numeric_limits<int64_t>::max();
  sum += more_sum;
  if (lo) min = min ? std::min(*min, *lo) : *lo;
  if (hi) max = max ? std::max(*max, *hi) : *hi;
}

Result<std::optional<std::pair<Point, Point>>> ReadSeriesEnds(Store& store, int64_t series_id) {
  Status status = Status::Ok();
  for (int attempt = 0; attempt < 2; ++attempt) {  // a checkpoint may replace a chunk listed
    Result<std::vector<ChunkRecord>> chunks =
        store.ReadChunks({.series = {series_id}, .part = ChunkPart::kInfo});
    if (!chunks.ok()) return chunks.status();
    Result<std::vector<JournalEntry>> journal = store.ReadJournal(series_id);
    if (!journal.ok()) return journal.status();
    std::vector<ChunkRecord> ends;
    if (!chunks->empty()) ends.push_back(chunks->front());
    if (chunks->size() > 1) ends.push_back(chunks->back());
    std::vector<Point> points;
    status = DecodeSeriesParts(store, series_id, ends, *journal, points);
    if (status.code() == Status::Code::kNotFound) continue;
    if (!status.ok()) return status;
    if (points.empty()) return std::optional<std::pair<Point, Point>>();
    return std::optional(std::pair(points.front(), points.back()));
  }
  return status;
}

std::string EncodeJournalEntry(const std::vector<std::pair<int64_t, std::string>>& chunks_by_series) {
  std::string out;
  PutVarint(out, chunks_by_series.size());
  for (const auto& [series_id, chunk] : chunks_by_series) {
    PutVarint(out, static_cast<uint64_t>(series_id));
    PutVarint(out, chunk.size());
    out.append(chunk);
  }
  return out;
}

Status DecodeJournalEntry(std::string_view data, int64_t series_id, std::vector<Point>& out) {
  size_t pos = 0;
  uint64_t count = 0;
  if (!GetVarint(data, pos, count)) return Status::Corrupt("corrupt journal entry");
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t id = 0, size = 0;
    if (!GetVarint(data, pos, id) || !GetVarint(data, pos, size) || size > data.size() - pos) {
      return Status::Corrupt("corrupt journal entry");
    }
    // A series' points may come in several pieces of one entry.
    if (static_cast<int64_t>(id) == series_id) TB_RETURN_IF_ERROR(DecodeChunk(data.substr(pos, size), out));
    pos += size;
  }
  return Status::Ok();
}

Status CheckParamUnchanged(std::string_view run_id, std::string_view key, std::string_view logged,
                           std::string_view wanted) {
  if (logged == wanted) return Status::Ok();
  return Status::InvalidArgument(Concat({"Changing param values is not allowed. Param with key='", key,
                                         "' was already logged with value='", logged, "' for run ID='",
                                         run_id, "'. Attempted logging new value '", wanted, "'."}));
}

Status CheckRunId(std::string_view id) {
  bool ok = !id.empty() && id.size() <= 256 && std::isalnum(static_cast<unsigned char>(id[0])) &&
            std::all_of(id.begin(), id.end(), [](char c) {
              return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
            });
  if (ok) return Status::Ok();
  return Status::InvalidArgument(
      "'" + Printable(id) + "' is not a run id (letters, digits, '_' and '-', at most 256, as MLflow's)");
}

Status CheckExperimentName(std::string_view name) {
  if (name.empty()) return Status::InvalidArgument("an experiment needs a name");
  if (name.size() > kMaxExperimentName) {
    return Status::InvalidArgument("experiment names are at most " + std::to_string(kMaxExperimentName) +
                                   " bytes; this one has " + std::to_string(name.size()));
  }
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      return Status::InvalidArgument("experiment names cannot hold control characters (byte " +
                                     std::to_string(c) + " in '" + Printable(name) + "')");
    }
  }
  return Status::Ok();
}

bool IsRunRecordArtifact(std::string_view name) {
  for (std::string_view own : {"stdout.log", "stderr.log", "manifest.json", "phases.json", "workload.log"}) {
    if (name == own) return true;
  }
  return name.starts_with("mps-") && name.ends_with(".log");  // an MPS daemon's logs
}

bool RanUnderTrainbench(const RunRecord& run) {
  return !run.working_directory.empty();  // only the launcher records where it ran the command
}

}  // namespace tb
