#include "store/series_writer.h"

namespace tb {

SeriesWriter::SeriesWriter(Store& store, std::string run_id, size_t seal_points)
    : store_(store), run_id_(std::move(run_id)), seal_points_(seal_points) {}

void SeriesWriter::SetTime(int64_t time_ms) {
  std::lock_guard lock(mu_);
  time_ms_ = time_ms;
}

void SeriesWriter::Add(std::string_view metric, std::string_view labels, double value) {
  std::lock_guard lock(mu_);
  std::string key;
  key.reserve(metric.size() + labels.size() + 1);
  key.append(metric).append(1, '\n').append(labels);
  series_[key].open.push_back(Point{time_ms_, value, kNoStep});
}

void SeriesWriter::Append(std::string_view metric, std::string_view labels, const Point& point) {
  std::lock_guard lock(mu_);
  std::string key = std::string(metric) + "\n" + std::string(labels);
  series_[key].open.push_back(point);
}

size_t SeriesWriter::pending_points() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [key, s] : series_) n += s.open.size() - s.written;
  return n;
}

Status SeriesWriter::Flush() {
  std::lock_guard lock(mu_);
  return FlushLocked(false);
}

Status SeriesWriter::Close() {
  std::lock_guard lock(mu_);
  return FlushLocked(true);
}

Status SeriesWriter::FlushLocked(bool seal_all) {
  ChunkBatch batch;
  std::vector<SeriesState*> owners;  // owners[i] wrote batch.inserts[i]
  for (auto& [key, s] : series_) {
    bool seal = s.open.size() >= seal_points_ || (seal_all && !s.open.empty());
    if (!seal && s.open.size() == s.written) continue;
    if (s.id == 0) {
      size_t nl = key.find('\n');
      Result<int64_t> id = store_.EnsureSeries(run_id_, key.substr(0, nl), key.substr(nl + 1));
      if (!id.ok()) return id.status();
      s.id = *id;
    }
    if (seal) {
      batch.inserts.push_back(MakeChunk(s.id, s.open, true));
      batch.deletes.insert(batch.deletes.end(), s.provisional_ids.begin(), s.provisional_ids.end());
    } else {
      std::span<const Point> fresh(s.open.data() + s.written, s.open.size() - s.written);
      batch.inserts.push_back(MakeChunk(s.id, fresh, false));
    }
    owners.push_back(&s);
  }
  if (batch.inserts.empty()) return Status::Ok();
  TB_RETURN_IF_ERROR(store_.WriteChunks(batch));
  for (size_t i = 0; i < owners.size(); ++i) {
    SeriesState& s = *owners[i];
    if (batch.inserts[i].sealed) {
      s.open.clear();
      s.written = 0;
      s.provisional_ids.clear();
    } else {
      s.written = s.open.size();
      s.provisional_ids.push_back(batch.inserts[i].id);
    }
  }
  return Status::Ok();
}

}  // namespace tb
