#include "store/series_writer.h"

#include <algorithm>
#include <map>
#include <span>
#include <tuple>

#include "base/strings.h"
#include "store/format/chunk_summary.h"

namespace tb {

SeriesWriter::SeriesWriter(Store& store, std::string run_id, size_t seal_points, int checkpoint_flushes)
    : store_(store),
      run_id_(std::move(run_id)),
      seal_points_(seal_points),
      checkpoint_flushes_(checkpoint_flushes) {}

SeriesWriter::SeriesHandle SeriesWriter::HandleLocked(std::string_view metric, std::string_view labels) {
  std::string key = Concat({metric, "\n", labels});
  auto [it, inserted] = index_.try_emplace(key, series_.size());
  if (inserted) {
    series_.emplace_back();
    series_.back().key = std::move(key);
  }
  return it->second;
}

SeriesWriter::SeriesHandle SeriesWriter::Handle(std::string_view metric, std::string_view labels) {
  std::lock_guard lock(mu_);
  return HandleLocked(metric, labels);
}

void SeriesWriter::Add(const Sample& sample) {
  Point point{sample.time_ms, sample.value, kNoStep};
  if (sample_labels_.empty()) return Append(sample.metric, sample.labels.text(), point);
  Append(sample.metric, sample.labels.With(sample_labels_).text(), point);
}

void SeriesWriter::Append(std::string_view metric, std::string_view labels, const Point& point) {
  std::lock_guard lock(mu_);
  series_[HandleLocked(metric, labels)].open.push_back(point);
}

void SeriesWriter::Append(SeriesHandle series, const Point& point) {
  std::lock_guard lock(mu_);
  series_[series].open.push_back(point);
}

size_t SeriesWriter::pending_points() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const SeriesState& s : series_) n += s.open.size() - s.journaled;
  return n;
}

Status SeriesWriter::Flush() {
  std::lock_guard lock(mu_);
  TB_RETURN_IF_ERROR(WriteJournalLocked());
  bool full = false;
  for (const SeriesState& s : series_) full |= s.open.size() >= seal_points_;
  if (++flushes_since_checkpoint_ >= checkpoint_flushes_ || full) return CheckpointLocked(false);
  return Status::Ok();
}

Status SeriesWriter::Close() {
  std::lock_guard lock(mu_);
  return CheckpointLocked(true);
}

Status SeriesWriter::ResolveIds() {
  for (SeriesState& s : series_) {
    if (s.id != 0 || s.open.empty()) continue;
    size_t nl = s.key.find('\n');
    Result<int64_t> id = store_.EnsureSeries(run_id_, s.key.substr(0, nl), s.key.substr(nl + 1));
    if (!id.ok()) return id.status();
    s.id = *id;
  }
  return Status::Ok();
}

Status SeriesWriter::WriteJournalLocked() {
  TB_RETURN_IF_ERROR(ResolveIds());
  std::vector<std::pair<int64_t, std::string>> chunks;
  for (SeriesState& s : series_) {
    if (s.open.size() == s.journaled) continue;
    // In pieces a chunk may hold (a flush may bring more: a batch, an import).
    for (size_t at = s.journaled; at < s.open.size(); at += kMaxChunkPoints) {
      std::span<const Point> fresh(s.open.data() + at, std::min(kMaxChunkPoints, s.open.size() - at));
      chunks.emplace_back(s.id, EncodeChunk(fresh, /*compress=*/false));
    }
  }
  if (chunks.empty()) return Status::Ok();
  Result<int64_t> id = store_.AppendJournal(run_id_, EncodeJournalEntry(chunks));
  if (!id.ok()) return id.status();
  journal_ids_.push_back(*id);
  for (SeriesState& s : series_) s.journaled = s.open.size();
  return Status::Ok();
}

namespace {

// The chunks a checkpoint writes, before they are encoded.
struct Piece {
  int64_t series_id;
  std::span<const Point> points;
  bool sealed;
};

// For each piece, the key of the times it shares (the first series of those sealed on the
// same ticks), or 0; adds each shared set of times to `times`. Only sealed chunks long
// enough for a summary share: their overview entry never needs their data.
std::vector<int64_t> ShareTimes(const std::vector<Piece>& pieces, std::vector<SharedTimes>& times) {
  std::vector<int64_t> key(pieces.size(), 0);
  std::map<std::tuple<int64_t, int64_t, size_t>, size_t> first_of;  // (first, last, count) -> piece
  auto same_time = [](const Point& a, const Point& b) { return a.time_ms == b.time_ms; };
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::span<const Point> p = pieces[i].points;
    if (!pieces[i].sealed || p.size() < 2 * static_cast<size_t>(kSummaryGroups[0])) continue;
    auto [it, first] = first_of.try_emplace({p.front().time_ms, p.back().time_ms, p.size()}, i);
    if (first) continue;
    const Piece& lead = pieces[it->second];
    if (!std::equal(p.begin(), p.end(), lead.points.begin(), same_time)) continue;
    key[i] = key[it->second] = lead.series_id;
  }
  for (const auto& [ends, i] : first_of) {
    if (key[i] != 0) times.push_back({key[i], std::get<0>(ends), EncodeChunkTimes(pieces[i].points)});
  }
  return key;
}

}  // namespace

Status SeriesWriter::CheckpointLocked(bool seal_all) {
  TB_RETURN_IF_ERROR(ResolveIds());
  ChunkBatch batch;
  // Per series written: how many of its open points went into sealed chunks, and whether
  // the batch's last insert is its new provisional chunk.
  struct Written {
    SeriesState* series;
    size_t sealed_points;
    bool provisional;
  };
  std::vector<Written> written;
  std::vector<Piece> pieces;
  for (SeriesState& s : series_) {
    bool seal = s.open.size() >= seal_points_ || (seal_all && !s.open.empty());
    if (!seal && s.open.size() == s.in_chunk) continue;
    // Sealed chunks of seal_points each (a flush may bring many more points than that: a
    // bulk import, a fast sampler), then the rest sealed at the end or kept provisional.
    size_t done = 0;
    while (s.open.size() - done >= seal_points_ || (seal_all && done < s.open.size())) {
      size_t n = std::min(seal_points_, s.open.size() - done);
      pieces.push_back({s.id, std::span<const Point>(s.open.data() + done, n), true});
      done += n;
    }
    bool provisional = done < s.open.size();
    if (provisional) {
      pieces.push_back({s.id, std::span<const Point>(s.open.data() + done, s.open.size() - done), false});
    }
    if (s.provisional_id != 0) batch.deletes.push_back(s.provisional_id);
    written.push_back({&s, done, provisional});
  }
  std::vector<int64_t> times_key = ShareTimes(pieces, batch.times);
  for (size_t i = 0; i < pieces.size(); ++i)
    batch.inserts.push_back(MakeChunk(pieces[i].series_id, pieces[i].points, pieces[i].sealed, times_key[i]));
  batch.journal_deletes = journal_ids_;
  if (batch.inserts.empty() && batch.journal_deletes.empty()) return Status::Ok();
  TB_RETURN_IF_ERROR(store_.WriteChunks(batch));
  journal_ids_.clear();
  flushes_since_checkpoint_ = 0;
  size_t insert = 0;
  for (const Written& w : written) {
    SeriesState& s = *w.series;
    insert += (w.sealed_points + seal_points_ - 1) / seal_points_ + (w.provisional ? 1 : 0);
    s.open.erase(s.open.begin(), s.open.begin() + static_cast<std::ptrdiff_t>(w.sealed_points));
    s.journaled = s.in_chunk = s.open.size();
    s.provisional_id = w.provisional ? batch.inserts[insert - 1].id : 0;
  }
  return Status::Ok();
}

}  // namespace tb
