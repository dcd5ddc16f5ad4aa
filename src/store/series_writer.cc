#include "store/series_writer.h"

#include <algorithm>
#include <span>

#include "base/strings.h"

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
    std::span<const Point> fresh(s.open.data() + s.journaled, s.open.size() - s.journaled);
    chunks.emplace_back(s.id, EncodeChunk(fresh, /*compress=*/false));
  }
  if (chunks.empty()) return Status::Ok();
  Result<int64_t> id = store_.AppendJournal(run_id_, EncodeJournalEntry(chunks));
  if (!id.ok()) return id.status();
  journal_ids_.push_back(*id);
  for (SeriesState& s : series_) s.journaled = s.open.size();
  return Status::Ok();
}

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
  for (SeriesState& s : series_) {
    bool seal = s.open.size() >= seal_points_ || (seal_all && !s.open.empty());
    if (!seal && s.open.size() == s.in_chunk) continue;
    // Sealed chunks of seal_points each (a flush may bring many more points than that: a
    // bulk import, a fast sampler), then the rest sealed at the end or kept provisional.
    size_t done = 0;
    while (s.open.size() - done >= seal_points_ || (seal_all && done < s.open.size())) {
      size_t n = std::min(seal_points_, s.open.size() - done);
      batch.inserts.push_back(MakeChunk(s.id, std::span<const Point>(s.open.data() + done, n), true));
      done += n;
    }
    bool provisional = done < s.open.size();
    if (provisional) {
      batch.inserts.push_back(
          MakeChunk(s.id, std::span<const Point>(s.open.data() + done, s.open.size() - done), false));
    }
    if (s.provisional_id != 0) batch.deletes.push_back(s.provisional_id);
    written.push_back({&s, done, provisional});
  }
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
