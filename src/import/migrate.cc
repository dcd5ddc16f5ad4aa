#include "import/migrate.h"

#include <algorithm>

#include "base/strings.h"
#include "store/format/chunk_codec.h"
#include "store/run_tags.h"

namespace tb {
namespace {

bool Complete(const RunRecord& r) { return HasTag(r, kMigratedTag); }

Status CopyRun(Store& from, Store& to, const RunRecord& run, int64_t& points) {
  Result<RunRecord> existing = to.FindRun(run.id);
  bool present = existing.ok() && existing->id == run.id;
  TB_RETURN_IF_ERROR(to.EnsureExperiment(run.experiment).status());
  if (!present) TB_RETURN_IF_ERROR(to.CreateRun(run));
  Result<std::vector<SeriesInfo>> series = from.ListSeries(run.id);
  if (!series.ok()) return series.status();
  for (const SeriesInfo& s : *series) {
    // Everything the source holds (sealed chunks, a provisional one, the journal).
    Result<std::vector<Point>> all = ReadSeriesPoints(from, s.id);
    if (!all.ok()) return all.status();
    points += static_cast<int64_t>(all->size());
    TB_RETURN_IF_ERROR(WriteSealedSeries(to, run.id, s.metric, s.labels, *all));
  }
  // Events only once: a run cut short in them is rare, and doubling them worse.
  Result<std::vector<EventRecord>> there = to.ListEvents(run.id);
  Result<std::vector<EventRecord>> events = from.ListEvents(run.id);
  if (!events.ok()) return events.status();
  if (there.ok() && there->empty()) {
    for (const EventRecord& e : *events) TB_RETURN_IF_ERROR(to.AddEvent(e));
  }
  Result<std::vector<ArtifactRecord>> artifacts = from.ListArtifacts(run.id);
  if (!artifacts.ok()) return artifacts.status();
  for (const ArtifactRecord& listed : *artifacts) {
    Result<ArtifactRecord> a = from.GetArtifact(run.id, listed.name);
    if (a.ok()) TB_RETURN_IF_ERROR(to.PutArtifact(*a));
  }
  if (run.end_ms > 0) {
    TB_RETURN_IF_ERROR(to.FinishRun(run.id, run.end_ms, run.status, run.exit_code, run.signal, run.reason));
  }
  return to.SetTags(run.id, {{kMigratedTag, "true"}});
}

}  // namespace

Status WriteSealedSeries(Store& to, const std::string& run_id, const std::string& metric,
                         const std::string& labels, std::span<const Point> points, int64_t after) {
  Result<int64_t> id = to.EnsureSeries(run_id, metric, labels);
  if (!id.ok()) return id.status();
  constexpr size_t kChunk = 4096;
  ChunkBatch batch;
  for (size_t at = 0, index = 0; at < points.size(); at += kChunk, ++index) {
    ChunkRecord c = MakeChunk(*id, points.subspan(at, std::min(kChunk, points.size() - at)), true);
    // An id from what the chunk is (the destination keeps the first of equal ids).
    std::string position = (after > 0 ? std::to_string(after) + "+" : "") + std::to_string(index);
    uint64_t h = Fnv1a64(Concat({run_id, "\n", metric, "\n", labels, "\n", position}));
    h ^= h >> 31;
    c.id = static_cast<int64_t>(h >> 1);
    batch.inserts.push_back(std::move(c));
  }
  return to.WriteChunks(batch);
}

Result<MigrationResult> MigrateRuns(Store& from, Store& to,
                                    const std::function<void(const RunRecord&)>& progress) {
  Result<std::vector<RunRecord>> runs = from.ListRuns("");
  if (!runs.ok()) return runs.status();
  MigrationResult result;
  for (const RunRecord& run : *runs) {
    Result<RunRecord> there = to.FindRun(run.id);
    if (there.ok() && there->id == run.id && Complete(*there)) {
      ++result.skipped;
      continue;
    }
    if (progress) progress(run);
    TB_RETURN_IF_ERROR(CopyRun(from, to, run, result.points));
    ++result.copied;
  }
  // The model registry comes along (a registered model the other store has too is left as
  // it is there).
  Result<std::vector<std::pair<std::string, std::string>>> registered = from.ListRegisteredModels();
  if (!registered.ok()) return registered.status();
  Result<std::vector<std::pair<std::string, std::string>>> held = to.ListRegisteredModels();
  if (!held.ok()) return held.status();
  for (const auto& model : *registered) {
    bool there =
        std::any_of(held->begin(), held->end(), [&](const auto& h) { return h.first == model.first; });
    if (!there) TB_RETURN_IF_ERROR(to.PutRegisteredModel(model.first, model.second));
  }
  return result;
}

}  // namespace tb
