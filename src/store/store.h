// The store: experiments, runs (params, tags, status), series of samples kept as
// compressed chunks, events and artifacts. One interface, whose contract (class Store
// below) both backends keep: SQLite, the embedded default, and PostgreSQL, the shared one.
// docs/STORE-FORMAT.md gives the tables and a chunk's bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "store/format/chunk_codec.h"

namespace tb {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// Run statuses, as MLflow and radT name them.
inline constexpr const char* kRunning = "RUNNING";
inline constexpr const char* kFinished = "FINISHED";
inline constexpr const char* kFailed = "FAILED";
inline constexpr const char* kKilled = "KILLED";

struct RunRecord {
  std::string id;  // 32 hex digits, unique across machines
  std::string experiment;
  std::string workload;  // "" when the run is not part of a workload
  std::string name;
  std::string command;  // shell words, quoted where needed
  std::string working_directory;
  std::string host;
  int64_t supervisor_pid = 0;  // the trainbench process that watched the run
  int64_t start_ms = 0;
  int64_t end_ms = 0;  // 0 while running
  std::string status = kRunning;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string reason;  // why it failed or was killed, for people
  std::string listeners;
  int64_t interval_ms = 0;
  std::string devices;  // as given: "0", "1+2", UUIDs; "" for all or none
  KeyValues params;
  KeyValues tags;
};

struct ExperimentInfo {
  int64_t id = 0;
  std::string name;
  int64_t created_ms = 0;
  KeyValues tags;
};

// MLflow's default experiment, in every MLflow store (id 0): where runs go unless told.
inline constexpr std::string_view kDefaultExperiment = "Default";
// The experiment's id as MLflow's clients see it: "0" for Default, else the store's id.
inline std::string MlflowExperimentId(const ExperimentInfo& e) {
  return e.name == kDefaultExperiment ? "0" : std::to_string(e.id);
}

// A change to an experiment, applied whole or not at all: a new name, tags set or replaced,
// tags removed.
struct ExperimentChange {
  std::optional<std::string> name;
  KeyValues set_tags;
  std::vector<std::string> delete_tags;
};

struct SeriesInfo {
  int64_t id = 0;
  std::string run_id;
  std::string metric;
  std::string labels;
};

// The count, sum, lowest and highest of a series' points in chunks (a running run's
// journal not included); min and max over non-NaN values, as in ChunkRecord.
struct SeriesTotals {
  SeriesInfo series;  // whose
  int64_t count = 0;
  double sum = 0;
  std::optional<double> min, max;
  // Adds a chunk's figures (or another part's totals); a negative count adds nothing, and
  // the count stops at int64's largest.
  void Add(int64_t more_count, double more_sum, std::optional<double> lo, std::optional<double> hi);
};

// A chunk as the writer hands it over: the encoded points plus the figures kept beside
// them so that summaries and downsampling can often skip decoding.
struct ChunkRecord {
  int64_t id = 0;  // assigned by the store
  int64_t series_id = 0;
  int64_t first_ms = 0, last_ms = 0;
  int64_t count = 0;
  std::optional<double> min, max;  // over non-NaN values (infinities too)
  double sum = 0;                  // over finite values
  bool sealed = false;             // false: a provisional chunk a later sealed one replaces
  std::string data;                // EncodeChunk output
  // EncodeSummary of a sealed chunk's points ("" for none): written to its series'
  // overview; read back from chunks sealed before schema 7, whose rows keep it.
  std::string summary;
  // Series sampled on the same tick share their times (schema 8): a sealed chunk whose
  // times equal other series' chunks' is encoded without them, and they are kept once, in
  // `chunk_times` under (times_series, first_ms); times_series 0: `data` holds its times.
  // A read that brings the data brings both (`times`: EncodeChunkTimes).
  int64_t times_series = 0;
  std::string times;
};

// What of a chunk row a read brings: its figures (id, series, span, count, min, max, sum,
// sealed); those and its summary (chunks sealed before schema 7 keep one); or those, its
// data and its shared times.
enum class ChunkPart { kInfo, kSummaries, kData };

// A chunk read (Store::ReadChunks): the chunks of `series`, ordered by series id and each
// series' in time order, narrowed by `first_ms` or `reaching_ms` (not both); or, with
// `chunk`, that chunk alone by id (`series` and the rest ignored), its data and times only.
struct ChunkQuery {
  std::vector<int64_t> series = {};
  ChunkPart part = ChunkPart::kData;
  // Only the chunks whose first point's time lies between these, both included: the run of
  // chunks a zoomed chart needs point by point.
  std::optional<std::pair<int64_t, int64_t>> first_ms = std::nullopt;
  // Only the chunks not sealed yet and those with a point after this time: what a live
  // chart's refresh needs.
  std::optional<int64_t> reaching_ms = std::nullopt;
  std::optional<int64_t> chunk = std::nullopt;
};
// A run's status as trainbench shows it (ls, show, serve): "UNFINISHED" for a RUNNING run
// whose trainbench on this host is gone (killed with SIGKILL, crashed: it never wrote an
// end), else the stored status. A run on another host is shown as stored.
std::string ShownStatus(const RunRecord& r);

// Whether a chunk row read from a store holds what trainbench writes: 0 to kMaxChunkPoints
// points, first and last times within years -9999 to 9999 (Unix ms). One changed outside trainbench (an
// UPDATE on a shared PostgreSQL store, a SQLite file someone hands you: count -1, 2^62) must size nothing.
bool SoundChunk(const ChunkRecord& c);
// `chunks` without the unsound ones, each named (chunk and series) in a warning, once: every
// read of chunks goes through it, so one bad row hides its own points and nothing else.
Result<std::vector<ChunkRecord>> SoundChunks(Result<std::vector<ChunkRecord>> chunks);
// Builds a ChunkRecord (encoding and statistics) for `points` of one series; without
// their times (`times_series` names the shared times' key) when `times_series` is not 0.
ChunkRecord MakeChunk(int64_t series_id, std::span<const Point> points, bool sealed,
                      int64_t times_series = 0);
// The times several sealed chunks share (schema 8), written once in their batch.
struct SharedTimes {
  int64_t series_id = 0;  // the key: the first series of those that share them
  int64_t first_ms = 0;
  std::string data;  // EncodeChunkTimes
};

// A series' overview (schema 7): what each of its sealed chunks keeps there, in the order
// they were sealed (OverviewSegment), in rows of about kOverviewBlockPoints points. A chart
// of a long range reads these few rows instead of a row per chunk. A chunk's summary is
// kept there, not in its row (where chunks sealed before schema 7 keep theirs).
struct SeriesOverview {
  int64_t sealed_points = 0;   // the points of the series' sealed chunks
  int64_t covered_points = 0;  // of those, the overview's (fewer: chunks sealed before schema 7)
  std::vector<std::string> blocks;
  bool unsealed = false;  // the series has chunks not sealed yet (a running run's newest)
};
inline constexpr int64_t kOverviewBlockPoints = 65536;
// A SQLite store begins a series' overview when the series has this many sealed points,
// with every chunk sealed before it: a chart reads the overview only where a bucket covers
// 128 points (kSummaryGroups' finest level) or more, and the page's charts and figures ask
// for 100 buckets or more (a budget of 400 points or more), so a shorter series is drawn
// from its points whatever the overview holds. Its summaries were 0.15 bytes a point of the
// recorded DCGM trace, whose series all stay below this (docs/PERFORMANCE.md). PostgreSQL
// writes every sealed chunk's (its writes may wait in the spool, unable to read rows).
inline constexpr int64_t kOverviewMinPoints = 12800;
static_assert(kOverviewMinPoints <= kOverviewBlockPoints, "the chunks before go into the first block");
// The bytes a sealed chunk adds to its series' overview: its first and last time, its
// count and OverviewLevels (its summary, or its points when too short for one).
std::string OverviewSegment(const ChunkRecord& sealed);
// Appends the sealed chunks an overview block describes to `out`, as records without data
// or id whose `summary` holds what the chunk kept there; Corrupt when it is not one.
Status DecodeOverview(std::string_view block, int64_t series_id, std::vector<ChunkRecord>& out);

struct ChunkBatch {
  std::vector<SharedTimes> times;  // written before the inserts that name them
  std::vector<ChunkRecord> inserts;
  std::vector<int64_t> deletes;          // ids of provisional chunks the inserts supersede
  std::vector<int64_t> journal_deletes;  // ids of journal entries the inserts now hold
};

// A journal entry: the points of several series of one run that arrived in one flush,
// written as one row so that a flush costs one insert however many series there are.
// Format: varint series count, then per series: varint series id, varint byte length,
// and an EncodeChunk of its points.
struct JournalEntry {
  int64_t id = 0;
  std::string data;
};
std::string EncodeJournalEntry(const std::vector<std::pair<int64_t, std::string>>& chunks_by_series);
// Appends the points of `series_id` found in `data` to `out`.
Status DecodeJournalEntry(std::string_view data, int64_t series_id, std::vector<Point>& out);

struct EventRecord {
  std::string run_id;
  int64_t time_ms = 0;
  std::string kind;  // "listener", "signal", "phase", ...
  std::string label;
};

struct ArtifactRecord {
  std::string run_id;
  std::string name;  // "stdout.log", "manifest.json"
  int64_t size = 0;
  std::string content;  // inline content, or empty when `path` is set
  std::string path;     // file holding the content, relative to ArtifactDirectory()'s parent
};

// The artifacts trainbench writes itself for every run (its output, the manifest, the phase
// analysis, the workload's log, the MPS daemon's logs "mps-*.log"): uploads may not take
// these names in the runs trainbench launched (RanUnderTrainbench); a run a client made or
// an import brought has no such records, and its files may take any name.
bool IsRunRecordArtifact(std::string_view name);
bool RanUnderTrainbench(const RunRecord& run);

// Experiment names: 1 to kMaxExperimentName bytes without control characters (NUL cuts
// names short in C tools; newlines break experiment files and listings).
constexpr size_t kMaxExperimentName = 256;
Status CheckExperimentName(std::string_view name);
// A run id names a folder of artifacts: MLflow's shape only (a letter or digit, then
// letters, digits, '_' or '-', 256 at most); "..", "/" and the like are refused.
Status CheckRunId(std::string_view id);
// A param is logged once: the same value again is accepted, another one refused with
// MLflow's message (both stores ask this with the value they hold).
Status CheckParamUnchanged(std::string_view run_id, std::string_view key, std::string_view logged,
                           std::string_view wanted);

// The store's contract, for every method of both backends unless a method says otherwise:
//  - Threads: any method may be called from any thread at any time; calls are serialized
//    inside the store (one SQLite handle, one libpq connection, each behind a mutex).
//  - Writes are atomic (a call's rows all land or none do) and durable once OK is
//    returned: a crash of trainbench afterwards loses nothing. On PostgreSQL a write made
//    while the server is away is spooled and returns OK; it lands when the server returns.
//  - Errors: InvalidArgument (what the caller gave breaks a rule; the message names it),
//    NotFound (the run, tag, artifact, chunk or registered model named is not there),
//    Corrupt (bytes trainbench did not write), IoError (the disk), Unavailable (a
//    PostgreSQL read while the server is away). A read of ids that are not there leaves
//    them out rather than failing. No method throws.
//  - "In one read": a method taking several ids costs a fixed number of queries however
//    many ids it is given.
class Store {
 public:
  virtual ~Store() = default;

  // The store named by `uri` ("sqlite:///abs/path.db", "sqlite://relative.db", a plain
  // path, "postgresql://..."), created when missing and migrated when behind this build's
  // schema. InvalidArgument, saying what to do, when the location is not writable, is not
  // a trainbench store, or was written by a newer trainbench.
  static Result<std::unique_ptr<Store>> Open(const std::string& uri);

  // A short description for messages ("sqlite:///home/me/trainbench.db"). Never fails.
  virtual std::string Describe() const = 0;
  // The folder, created, where a run's large artifacts (logs) are written as files.
  virtual Result<std::string> ArtifactDirectory(const std::string& run_id) = 0;

  // --- write side ---
  // The id of experiment `name`, created when missing.
  virtual Result<int64_t> EnsureExperiment(const std::string& name) = 0;
  // Creates experiment `name` with id `id` (MLflow's, as radT's experiment numbers name
  // it); InvalidArgument when the id or the name is taken.
  virtual Status CreateExperimentWithId(int64_t id, const std::string& name) = 0;
  // Records a new run with its params and tags, its experiment created when missing
  // (EnsureExperiment); InvalidArgument when its id exists.
  virtual Status CreateRun(const RunRecord& run) = 0;
  // Records the run's end: its time, status (kFinished, kFailed, kKilled), exit code or
  // signal, and the reason for people.
  virtual Status FinishRun(const std::string& run_id, int64_t end_ms, const std::string& status,
                           std::optional<int> exit_code, std::optional<int> signal,
                           const std::string& reason) = 0;
  // The id of the run's series (metric, labels), created when missing; the same id on
  // every call and in every store (a hash of what names it).
  virtual Result<int64_t> EnsureSeries(const std::string& run_id, const std::string& metric,
                                       const std::string& labels) = 0;
  // Appends a journal entry (EncodeJournalEntry: one flush of the run's new points); its id.
  virtual Result<int64_t> AppendJournal(const std::string& run_id, const std::string& data) = 0;
  // Applies a checkpoint whole: its chunks inserted (their ids filled in), the provisional
  // chunks and journal entries it replaces deleted, the series' totals and overviews grown.
  virtual Status WriteChunks(ChunkBatch& batch) = 0;
  // Adds params to a run, all or none. The same value again is a no-op; another value for
  // a key already logged is InvalidArgument with MLflow's message.
  virtual Status LogParams(const std::string& run_id, const KeyValues& params) = 0;
  // Adds or replaces tags of a run, all or none.
  virtual Status SetTags(const std::string& run_id, const KeyValues& tags) = 0;
  // NotFound when the run has no such tag.
  virtual Status DeleteTag(const std::string& run_id, const std::string& key) = 0;
  // NotFound when there is no such run.
  virtual Status RenameRun(const std::string& run_id, const std::string& name) = 0;
  // Moves the run, with everything it holds, into experiment `experiment_id`, which exists.
  virtual Status MoveRun(const std::string& run_id, int64_t experiment_id) = 0;
  // Renames the experiment or changes its tags; InvalidArgument when the new name is
  // another experiment's.
  virtual Status ChangeExperiment(int64_t experiment_id, const ExperimentChange& change) = 0;
  virtual Status AddEvent(const EventRecord& event) = 0;
  // Adds or replaces an artifact of a run (inline content, or the path of its file).
  virtual Status PutArtifact(const ArtifactRecord& artifact) = 0;
  // Writes the registered model's record whole (an opaque text the tracking API shapes);
  // `record` nullopt deletes it, NotFound when there is none.
  virtual Status PutRegisteredModel(const std::string& name, const std::optional<std::string>& record) = 0;
  // Every registered model's (name, record), by name.
  virtual Result<std::vector<std::pair<std::string, std::string>>> ListRegisteredModels() = 0;

  // --- read side ---
  // Every experiment with its tags, by id.
  virtual Result<std::vector<ExperimentInfo>> ListExperiments() = 0;
  // Runs, oldest first; of one experiment when `experiment` is not empty.
  virtual Result<std::vector<RunRecord>> ListRuns(const std::string& experiment) = 0;
  // A run by full id, unique id prefix (4+ digits) or name (ChooseRun's rules); NotFound
  // naming the store and the command that lists runs, InvalidArgument for an ambiguous prefix.
  virtual Result<RunRecord> FindRun(const std::string& id_prefix_or_name) = 0;
  // Runs by their whole ids, in the order of `ids`, each once, in one read.
  virtual Result<std::vector<RunRecord>> FindRunsById(const std::vector<std::string>& ids) = 0;
  // The series of several runs in one read: by run id, a run's by metric and labels.
  virtual Result<std::vector<SeriesInfo>> ListSeriesOfRuns(const std::vector<std::string>& run_ids) = 0;
  Result<std::vector<SeriesInfo>> ListSeries(const std::string& run_id) { return ListSeriesOfRuns({run_id}); }
  // Each series of several runs with its totals (count, sum, min, max over its sealed and
  // provisional chunks), in ListSeriesOfRuns' order, in one read: no chunk is read.
  virtual Result<std::vector<SeriesTotals>> ListSeriesTotalsOfRuns(
      const std::vector<std::string>& run_ids) = 0;
  Result<std::vector<SeriesTotals>> ListSeriesTotals(const std::string& run_id) {
    return ListSeriesTotalsOfRuns({run_id});
  }
  // The chunks `query` asks for (ChunkQuery), in one read. NotFound when `query.chunk`
  // names no chunk (a checkpoint replaced it); InvalidArgument when it narrows by both
  // `first_ms` and `reaching_ms`. Unsound rows (SoundChunk) are left out, with a warning.
  virtual Result<std::vector<ChunkRecord>> ReadChunks(const ChunkQuery& query) = 0;
  // The series' overviews, one for each id in the order given (empty for an id that is no
  // series), in one read of a few rows a series. Each one's blocks only when its sealed
  // chunks hold at least `min_points` and fewer than `max_points` points; else its counts.
  virtual Result<std::vector<SeriesOverview>> ReadSeriesOverviews(
      const std::vector<int64_t>& series_ids, int64_t min_points = 0,
      int64_t max_points = std::numeric_limits<int64_t>::max()) = 0;
  Result<SeriesOverview> ReadSeriesOverview(int64_t series_id, int64_t min_points = 0) {
    Result<std::vector<SeriesOverview>> read = ReadSeriesOverviews({series_id}, min_points);
    if (!read.ok()) return read.status();
    return std::move(read->front());
  }
  // The journal entries of the run that owns `series_id`, oldest first: the points written
  // since its newest chunk.
  virtual Result<std::vector<JournalEntry>> ReadJournal(int64_t series_id) = 0;
  // The journal entries of several runs in one read: (run id, entry), by run id, each
  // run's oldest first.
  virtual Result<std::vector<std::pair<std::string, JournalEntry>>> ReadJournalsOfRuns(
      const std::vector<std::string>& run_ids) = 0;
  // A run's events in time order.
  virtual Result<std::vector<EventRecord>> ListEvents(const std::string& run_id) = 0;
  // A run's artifacts by name, without their content.
  virtual Result<std::vector<ArtifactRecord>> ListArtifacts(const std::string& run_id) = 0;
  // One artifact: its inline content, or the path of its file. NotFound when the run has none.
  virtual Result<ArtifactRecord> GetArtifact(const std::string& run_id, const std::string& name) = 0;
  // The artifact `name` of each of several runs that has one, in one read, in no order.
  virtual Result<std::vector<ArtifactRecord>> GetArtifactOfRuns(const std::vector<std::string>& run_ids,
                                                                const std::string& name) = 0;
  // How many events each of several runs holds (a run without any left out), in one read.
  virtual Result<std::vector<std::pair<std::string, int64_t>>> CountEventsOfRuns(
      const std::vector<std::string>& run_ids) = 0;
};

// FindRun's rules, the same in every store: `candidates` are the runs whose id is `key`,
// begins with it (4 digits or more) or whose name is `key`, newest first. A full id wins,
// then a unique id prefix (an ambiguous one is an error naming two), then the newest run of
// that name; NotFound names `store` and the command that lists runs.
Result<RunRecord> ChooseRun(const std::string& key, std::vector<RunRecord> candidates,
                            const std::string& store);

// A new run id: 32 random hex digits.
std::string NewRunId();
// Whether `key` has the form of a whole run id (as NewRunId makes): FindRun then looks it
// up by its index before scanning ids and names (a chart asks for every run it shows).
bool IsWholeRunId(const std::string& key);
// `found` (runs read by id, in any order) put in the order of `ids`, each once.
std::vector<RunRecord> InOrderOfIds(const std::vector<std::string>& ids, std::vector<RunRecord> found);

// All points of a series, decoded, in time order: its chunks, then its journaled points.
// For many reads of the same series, query/series_reader.h keeps them decoded.
Result<std::vector<Point>> ReadSeriesPoints(Store& store, int64_t series_id);
// The first and the last of those points (nullopt for none), decoding only the first and
// the last chunk and the journal: what a counter's increase over a run needs, at a cost that
// does not grow with the run's length.
Result<std::optional<std::pair<Point, Point>>> ReadSeriesEnds(Store& store, int64_t series_id);
// Hands a series' points to `part` a chunk at a time, in time order: its chunks read a
// slice of them a query, then its journal. What reads every point of a long series (its
// statistics, its phases, its power integrated) without holding them all.
Status ForEachSeriesPart(Store& store, int64_t series_id,
                         const std::function<void(std::span<const Point>)>& part);
// A page of a series' points: from the `offset`-th (in ReadSeriesPoints' order) on, at most
// `limit`, decoding only the chunks that hold them (and the journal when the page reaches
// it); `total` is set to how many points the series holds. What a paged history reads.
Result<std::vector<Point>> ReadSeriesPage(Store& store, int64_t series_id, int64_t offset, int64_t limit,
                                          int64_t& total);
// Appends the points of `chunks` (in order; one listed without its data is read by id)
// and then of `journal` to `out`. NotFound when a chunk is gone (a checkpoint replaced it).
Status DecodeSeriesParts(Store& store, int64_t series_id, std::span<const ChunkRecord> chunks,
                         std::span<const JournalEntry> journal, std::vector<Point>& out);

}  // namespace tb
