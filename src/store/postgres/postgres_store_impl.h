// PostgresStore: the Store in a PostgreSQL database through pg::Link (its connection,
// reconnects and spool), internal to store/. Its runs, experiments and artifacts are in
// postgres_store.cc, its series, chunks and journal in postgres_series.cc.
#pragma once

#include <sys/random.h>

#include <string>
#include <vector>

#include "store/postgres/pg_link.h"
#include "store/postgres/postgres_store.h"
#include "store/schema.h"
#include "store/store.h"
#include "store/store_rows.h"

namespace tb {

inline constexpr int64_t kInlineArtifactBytes = int64_t{8} << 20;

inline int64_t RandomId() {
  uint64_t v = 0;
  while (getrandom(&v, sizeof v, 0) != sizeof v) {
  }
  return static_cast<int64_t>(v >> 1);
}

// A text[] literal of `items`, each quoted, a quote or backslash in one escaped: {"a","b\"c"}.
inline std::string TextArray(const std::vector<std::string>& items) {
  std::string out = "{";
  for (const std::string& item : items) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (char c : item) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

// A bigint[] literal of `ids`: {1,2,3}.
inline std::string BigintArray(const std::vector<int64_t>& ids) {
  std::string out = "{";
  for (int64_t id : ids) out += (out.size() > 1 ? "," : "") + std::to_string(id);
  return out + "}";
}

// Each row made into a T.
template <typename T, typename Make>
std::vector<T> Collect(const pg::Rows& rows, Make make) {
  std::vector<T> out;
  out.reserve(static_cast<size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) out.push_back(make(i));
  return out;
}

class PostgresStore : public Store {
 public:
  PostgresStore(const std::string& uri, PostgresOptions options)
      : options_(std::move(options)), link_(uri, options_.spool_directory, Migrations(Dialect::kPostgres)) {}

  Status Initialize() { return link_.Open(); }

  std::string Describe() const override { return link_.Describe(); }

  Result<std::string> ArtifactDirectory(const std::string& run_id) override;
  Result<int64_t> EnsureExperiment(const std::string& name) override;
  Status CreateExperimentWithId(int64_t id, const std::string& name) override;
  Status CreateRun(const RunRecord& run) override;
  Status FinishRun(const std::string& run_id, int64_t end_ms, const std::string& status,
                   std::optional<int> exit_code, std::optional<int> signal,
                   const std::string& reason) override;
  Result<int64_t> EnsureSeries(const std::string& run_id, const std::string& metric,
                               const std::string& labels) override;
  Result<int64_t> AppendJournal(const std::string& run_id, const std::string& data) override;
  Status WriteChunks(ChunkBatch& batch) override;
  Status LogParams(const std::string& run_id, const KeyValues& params) override;
  Status SetTags(const std::string& run_id, const KeyValues& tags) override;
  Status DeleteTag(const std::string& run_id, const std::string& key) override;
  Status RenameRun(const std::string& run_id, const std::string& name) override;
  Status MoveRun(const std::string& run_id, int64_t experiment_id) override;
  Status ChangeExperiment(int64_t id, const ExperimentChange& change) override;
  Status AddEvent(const EventRecord& e) override;
  Status PutArtifact(const ArtifactRecord& a) override;
  Status PutRegisteredModel(const std::string& name, const std::optional<std::string>& record) override;
  Result<std::vector<std::pair<std::string, std::string>>> ListRegisteredModels() override;
  Result<std::vector<ExperimentInfo>> ListExperiments() override;
  Result<std::vector<RunRecord>> ListRuns(const std::string& experiment) override;
  Result<RunRecord> FindRun(const std::string& key) override;
  Result<std::vector<RunRecord>> FindRunsById(const std::vector<std::string>& ids) override;
  Result<std::vector<SeriesInfo>> ListSeriesOfRuns(const std::vector<std::string>& run_ids) override;
  Result<std::vector<SeriesTotals>> ListSeriesTotalsOfRuns(const std::vector<std::string>& run_ids) override;
  Result<std::vector<ChunkRecord>> ReadChunks(const ChunkQuery& query) override;
  Result<std::vector<SeriesOverview>> ReadSeriesOverviews(const std::vector<int64_t>& series_ids,
                                                          int64_t min_points, int64_t max_points) override;
  Result<std::vector<JournalEntry>> ReadJournal(int64_t series_id) override;
  Result<std::vector<std::pair<std::string, JournalEntry>>> ReadJournalsOfRuns(
      const std::vector<std::string>& run_ids) override;
  Result<std::vector<EventRecord>> ListEvents(const std::string& run_id) override;
  Result<std::vector<ArtifactRecord>> ListArtifacts(const std::string& run_id) override;
  Result<ArtifactRecord> GetArtifact(const std::string& run_id, const std::string& name) override;
  Result<std::vector<ArtifactRecord>> GetArtifactOfRuns(const std::vector<std::string>& run_ids,
                                                        const std::string& name) override;
  Result<std::vector<std::pair<std::string, int64_t>>> CountEventsOfRuns(
      const std::vector<std::string>& run_ids) override;

 private:
  static pg::Stmt InsertParam(const std::string& run_id, const std::string& k, const std::string& v);
  static pg::Stmt UpsertTag(const std::string& run_id, const std::string& k, const std::string& v);

  // One chunk by id: its data and times (ChunkQuery::chunk).
  Result<std::vector<ChunkRecord>> ChunkById(int64_t chunk_id);

  Result<std::vector<RunRecord>> ReadRuns(const pg::Stmt& select);

  Result<pg::Rows> Query(const pg::Stmt& s) { return link_.Query(s); }
  Status Write(const pg::Batch& batch, std::vector<int64_t>* changed = nullptr);

  PostgresOptions options_;
  pg::Link link_;
};

}  // namespace tb
