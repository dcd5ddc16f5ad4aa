// A Store that hands every call to another one: tests derive from it and change the
// calls they are about (a full disk, counting what is read).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace tb {

class ForwardingStore : public Store {
 public:
  explicit ForwardingStore(Store& inner) : inner_(inner) {}
  std::string Describe() const override { return inner_.Describe(); }
  Result<std::string> ArtifactDirectory(const std::string& id) override {
    return inner_.ArtifactDirectory(id);
  }
  Result<int64_t> EnsureExperiment(const std::string& n) override { return inner_.EnsureExperiment(n); }
  Status CreateExperimentWithId(int64_t id, const std::string& n) override {
    return inner_.CreateExperimentWithId(id, n);
  }
  Status CreateRun(const RunRecord& r) override { return inner_.CreateRun(r); }
  Status FinishRun(const std::string& id, int64_t e, const std::string& s, std::optional<int> c,
                   std::optional<int> g, const std::string& r) override {
    return inner_.FinishRun(id, e, s, c, g, r);
  }
  Result<int64_t> EnsureSeries(const std::string& r, const std::string& m, const std::string& l) override {
    return inner_.EnsureSeries(r, m, l);
  }
  Status WriteChunks(ChunkBatch& b) override { return inner_.WriteChunks(b); }
  Result<int64_t> AppendJournal(const std::string& r, const std::string& d) override {
    return inner_.AppendJournal(r, d);
  }
  Result<std::vector<JournalEntry>> ReadJournal(int64_t s) override { return inner_.ReadJournal(s); }
  Result<std::vector<std::pair<std::string, JournalEntry>>> ReadJournalsOfRuns(
      const std::vector<std::string>& r) override {
    return inner_.ReadJournalsOfRuns(r);
  }
  Status LogParams(const std::string& r, const KeyValues& p) override { return inner_.LogParams(r, p); }
  Status SetTags(const std::string& r, const KeyValues& t) override { return inner_.SetTags(r, t); }
  Status DeleteTag(const std::string& r, const std::string& k) override { return inner_.DeleteTag(r, k); }
  Status RenameRun(const std::string& r, const std::string& n) override { return inner_.RenameRun(r, n); }
  Status MoveRun(const std::string& r, int64_t e) override { return inner_.MoveRun(r, e); }
  Status AddEvent(const EventRecord& e) override { return inner_.AddEvent(e); }
  Status PutArtifact(const ArtifactRecord& a) override { return inner_.PutArtifact(a); }
  Status PutRegisteredModel(const std::string& n, const std::optional<std::string>& r) override {
    return inner_.PutRegisteredModel(n, r);
  }
  Result<std::vector<std::pair<std::string, std::string>>> ListRegisteredModels() override {
    return inner_.ListRegisteredModels();
  }
  Result<std::vector<ExperimentInfo>> ListExperiments() override { return inner_.ListExperiments(); }
  Status ChangeExperiment(int64_t id, const ExperimentChange& c) override {
    return inner_.ChangeExperiment(id, c);
  }
  Result<std::vector<RunRecord>> ListRuns(const std::string& e) override { return inner_.ListRuns(e); }
  Result<RunRecord> FindRun(const std::string& k) override { return inner_.FindRun(k); }
  Result<std::vector<RunRecord>> FindRunsById(const std::vector<std::string>& ids) override {
    return inner_.FindRunsById(ids);
  }
  Result<std::vector<SeriesInfo>> ListSeriesOfRuns(const std::vector<std::string>& r) override {
    return inner_.ListSeriesOfRuns(r);
  }
  Result<std::vector<ChunkRecord>> ReadChunks(const ChunkQuery& q) override { return inner_.ReadChunks(q); }
  Result<std::vector<SeriesTotals>> ListSeriesTotalsOfRuns(const std::vector<std::string>& r) override {
    return inner_.ListSeriesTotalsOfRuns(r);
  }
  Result<std::vector<SeriesOverview>> ReadSeriesOverviews(const std::vector<int64_t>& s, int64_t min_points,
                                                          int64_t max_points) override {
    return inner_.ReadSeriesOverviews(s, min_points, max_points);
  }
  Result<std::vector<EventRecord>> ListEvents(const std::string& r) override { return inner_.ListEvents(r); }
  Result<std::vector<ArtifactRecord>> ListArtifacts(const std::string& r) override {
    return inner_.ListArtifacts(r);
  }
  Result<ArtifactRecord> GetArtifact(const std::string& r, const std::string& n) override {
    return inner_.GetArtifact(r, n);
  }
  Result<std::vector<ArtifactRecord>> GetArtifactOfRuns(const std::vector<std::string>& r,
                                                        const std::string& n) override {
    return inner_.GetArtifactOfRuns(r, n);
  }
  Result<std::vector<std::pair<std::string, int64_t>>> CountEventsOfRuns(
      const std::vector<std::string>& r) override {
    return inner_.CountEventsOfRuns(r);
  }

 protected:
  Store& inner_;
};

}  // namespace tb
