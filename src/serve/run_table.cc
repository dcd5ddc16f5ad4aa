// runs?format=columns: the listed runs as one table, a column a field, what a notebook's
// `store.runs()` turns into a DataFrame without building a row a run:
//
//   {"count": N, "columns": {"id": [...], "name": [...], ...}, "units": {column: unit}}
//
// (a number column is named in "units", "" when its metric has no unit; the others hold text)
//
// or with format=columnar the numbers as arrays, read without parsing (what store.runs()
// asks for: 10,000 runs of 30 metrics are a million numbers, 0.16 s of JSON in Python):
//
//   "TBRUNS1\n", u32 n, n bytes of JSON {"count", "columns": [names, in order], "text":
//   {name: [...]}, "units": {name: unit}}, zeros to a multiple of 8 bytes, then for each
//   number column (those in "units") in order, `count` little-endian float64 (NaN: none).
//
// Columns, in this order: id, name, experiment, workload, letter, status, lifecycle
// ("active", or "deleted" through MLflow's API), start and end (Unix ms; null while
// running), duration (s), command, devices, collocation, host, nodes; params.K and tags.K
// (the user's and MLflow's tags, mlflow.parentRunId among them; not trainbench's records;
// null where a run lacks one); per metric M the run's M.mean, M.min, M.max from the totals
// kept beside its chunks, from one source (nvml, else nvidia-smi, else dcgmi: SourceRank)
// over all its devices (the mean weighted by points; +-inf when the values reach it); a
// script's metric K by the name it logged (K.mean, K.min, K.max over its points, NaN left
// out, and metrics.K, MLflow's latest value: the highest step, then the newest time);
// then from the run's analysis (analyze/phases.h):
// steady_seconds, throughput, epoch_seconds, energy_joules (its GPUs'), cpu_energy_joules, samples,
// energy_per_sample_joules, training_seconds and per key metric M.steady_mean, M.steady_p50, M.steady_p95.
//
// Reads: the runs, their series' totals, their kept analyses and event counts, a handful
// of store reads whatever their number. A run without a current kept analysis (running,
// or analysed by an older trainbench) is analysed as its phases are, and a finished one's
// analysis kept: that store's first table takes longer.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <unordered_map>
#include <variant>
#include <vector>

#include "analyze/phases.h"
#include "base/strings.h"
#include "base/time.h"
#include "http/api_toolkit.h"
#include "metrics/catalog.h"
#include "metrics/names.h"
#include "query/series_reader.h"
#include "serve/serve_call.h"
#include "store/run_tags.h"

namespace tb {
namespace {

constexpr double kNull = std::numeric_limits<double>::quiet_NaN();
constexpr std::string_view kRunTableMagic = "TBRUNS1\n";

// The table being built: columns in the order they were first named, each a number or a
// text a run (NaN and "no text" are null).
class Table {
 public:
  explicit Table(size_t rows) : rows_(rows) {}

  // Names a column before any value (a table of no runs still has the run's fields).
  void Declare(const std::string& column, bool text, std::string_view unit = "") { Find(column, text, unit); }

  void Number(const std::string& column, size_t row, double v, std::string_view unit = "") {
    Column& c = Find(column, false, unit);
    std::get<std::vector<double>>(c.values)[row] = v;
  }
  void Text(const std::string& column, size_t row, std::string v) {
    Column& c = Find(column, true, "");
    std::get<std::vector<std::optional<std::string>>>(c.values)[row] = std::move(v);
  }

  std::string Columnar() const {
    std::string names, text, units;
    for (const Column& c : columns_) {
      names += (names.empty() ? "" : ",") + JsonQuote(c.name);
      if (std::holds_alternative<std::vector<double>>(c.values)) {
        units += (units.empty() ? "" : ",") + JsonQuote(c.name) + ":" + JsonQuote(c.unit);
        continue;
      }
      text += (text.empty() ? "" : ",") + JsonQuote(c.name) + ":[";
      const auto& texts = std::get<std::vector<std::optional<std::string>>>(c.values);
      for (size_t i = 0; i < texts.size(); ++i)
        text += (i > 0 ? "," : "") + (texts[i] ? JsonQuote(*texts[i]) : "null");
      text += ']';
    }
    std::string head = "{\"count\":" + std::to_string(rows_) + ",\"columns\":[" + names + "],\"text\":{" +
                       text + "},\"units\":{" + units + "}}";
    auto length = static_cast<uint32_t>(head.size());
    std::string out(kRunTableMagic);
    for (int shift = 0; shift < 32; shift += 8) out += static_cast<char>((length >> shift) & 0xff);
    out += head;
    out.resize((out.size() + 7) / 8 * 8, '\0');
    static_assert(std::endian::native == std::endian::little, "the arrays are written as they lie in memory");
    for (const Column& c : columns_) {
      if (const auto* numbers = std::get_if<std::vector<double>>(&c.values))
        out.append(reinterpret_cast<const char*>(numbers->data()), numbers->size() * sizeof(double));
    }
    return out;
  }

  std::string Json() const {
    std::string out = "{\"count\":" + std::to_string(rows_) + ",\"columns\":{";
    std::string units;
    for (const Column& c : columns_) {
      if (out.back() != '{') out += ',';
      out += JsonQuote(c.name) + ":[";
      if (const auto* numbers = std::get_if<std::vector<double>>(&c.values)) {
        for (size_t i = 0; i < numbers->size(); ++i) {
          if (i > 0) out += ',';
          AppendJsonNumber(out, (*numbers)[i]);
        }
      } else {
        const auto& texts = std::get<std::vector<std::optional<std::string>>>(c.values);
        for (size_t i = 0; i < texts.size(); ++i) {
          if (i > 0) out += ',';
          out += texts[i] ? JsonQuote(*texts[i]) : "null";
        }
      }
      out += ']';
      if (std::holds_alternative<std::vector<double>>(c.values))
        units += (units.empty() ? "" : ",") + JsonQuote(c.name) + ":" + JsonQuote(c.unit);
    }
    return out + "},\"units\":{" + units + "}}";
  }

 private:
  struct Column {
    std::string name, unit;
    std::variant<std::vector<double>, std::vector<std::optional<std::string>>> values;
  };

  Column& Find(const std::string& name, bool text, std::string_view unit) {
    auto [it, added] = index_.try_emplace(name, columns_.size());
    if (added) {
      Column c{name, std::string(unit), {}};
      if (text)
        c.values = std::vector<std::optional<std::string>>(rows_);
      else
        c.values = std::vector<double>(rows_, kNull);
      columns_.push_back(std::move(c));
    }
    return columns_[it->second];
  }

  size_t rows_;
  std::vector<Column> columns_;
  std::unordered_map<std::string, size_t> index_;
};

// A metric's totals over a run from its best source: [rank, points, sum, min, max].
struct Best {
  int rank = 4;
  int64_t count = 0;
  double sum = 0, min = 0, max = 0;
};

// A tag the user or MLflow gave (mlflow.parentRunId, mlflow.source.name ...), not one of
// trainbench's own records.
bool UsersTag(std::string_view key) { return !key.starts_with("trainbench."); }

// A mean from chunk totals (sum and count over finite values... and the count over all):
// +inf or -inf when the values reach one of them and not the other, NaN when both.
double MeanOf(const Best& b) {
  bool up = b.max == std::numeric_limits<double>::infinity();
  bool down = b.min == -std::numeric_limits<double>::infinity();
  if (up || down)
    return up && down ? kNull : b.max == std::numeric_limits<double>::infinity() ? b.max : b.min;
  return b.sum / static_cast<double>(b.count);
}

// A script's metric over its points: the mean of its values but NaN (+-inf as MeanOf),
// lowest, highest, and MLflow's latest value.
struct ScriptFigures {
  double mean = kNull, min = kNull, max = kNull, latest = kNull;
};

Result<ScriptFigures> FiguresOf(Store& store, int64_t series_id) {
  double sum = 0;
  int64_t count = 0;
  bool up = false, down = false;
  std::optional<Point> latest;
  ScriptFigures f;
  Status read = ForEachSeriesPart(store, series_id, [&](std::span<const Point> part) {
    for (const Point& p : part) {
      if (!latest || std::tie(p.step, p.time_ms) >= std::tie(latest->step, latest->time_ms)) latest = p;
      if (std::isnan(p.value)) continue;
      up |= p.value == std::numeric_limits<double>::infinity();
      down |= p.value == -std::numeric_limits<double>::infinity();
      if (std::isfinite(p.value)) sum += p.value;
      ++count;
      f.min = std::isnan(f.min) ? p.value : std::min(f.min, p.value);
      f.max = std::isnan(f.max) ? p.value : std::max(f.max, p.value);
    }
  });
  if (!read.ok()) return read;
  if (count > 0)
    f.mean = up || down ? (up && down ? kNull : up ? f.max : f.min) : sum / static_cast<double>(count);
  if (latest) f.latest = latest->value;
  return f;
}

// A script's metrics by the names it logged, unless a listener's metric has that name: for
// each (row, series), K.mean, K.min, K.max and metrics.K from its points.
void AddScriptMetrics(Table& t, Store& store, std::vector<std::pair<size_t, SeriesInfo>>& script,
                      const std::unordered_map<std::string, std::vector<Best>>& best) {
  std::sort(script.begin(), script.end(),
            [](const auto& a, const auto& b) { return a.second.metric < b.second.metric; });
  for (const auto& [i, s] : script) {
    std::string key = s.metric.substr(metric::kScriptPrefix.size());
    if (best.contains(key)) key = s.metric;
    Result<ScriptFigures> f = FiguresOf(store, s.id);
    ThrowIfError(f.status());
    t.Number(key + ".mean", i, f->mean);
    t.Number(key + ".min", i, f->min);
    t.Number(key + ".max", i, f->max);
    t.Number("metrics." + key, i, f->latest);
  }
}

void AddAnalysis(Table& t, size_t row, const RunAnalysis& a) {
  t.Number("steady_seconds", row, a.steady_samples, "s");
  auto opt = [&](const char* column, const std::optional<double>& v, std::string_view unit) {
    t.Number(column, row, v ? *v : kNull, unit);
  };
  opt("throughput", a.throughput, "samples/s");
  opt("epoch_seconds", a.epoch_seconds, "s");
  opt("energy_joules", a.energy_joules, "J");
  opt("cpu_energy_joules", a.cpu_energy_joules, "J");
  opt("samples", a.samples, "samples");
  opt("energy_per_sample_joules", a.energy_per_sample_joules, "J");
  // How long it trained (training_window.h): what the report compares runs that log no steps by.
  opt("training_seconds",
      a.training ? std::optional<double>(static_cast<double>(a.training->length_ms()) / 1000) : std::nullopt,
      "s");
  for (const auto& [metric, mean] : a.steady) {
    std::string_view unit = MetricUnit(metric);
    t.Number(metric + ".steady_mean", row, mean, unit);
    auto spread = a.steady_spread.find(metric);
    t.Number(metric + ".steady_p50", row, spread == a.steady_spread.end() ? kNull : spread->second.p50, unit);
    t.Number(metric + ".steady_p95", row, spread == a.steady_spread.end() ? kNull : spread->second.p95, unit);
  }
}

}  // namespace

ApiResponse ServeApi::Call::RunTable(const std::vector<RunRecord>& runs, bool columnar) {
  std::vector<std::string> ids;
  ids.reserve(runs.size());
  for (const RunRecord& r : runs) ids.push_back(r.id);
  Result<std::vector<SeriesTotals>> totals = store_.ListSeriesTotalsOfRuns(ids);
  ThrowIfError(totals.status());
  Result<std::map<std::string, RunAnalysis>> analyses = KeptAnalyses(store_, runs, *totals);
  ThrowIfError(analyses.status());

  Table t(runs.size());
  for (const char* text : {"id", "name", "experiment", "workload", "letter", "status", "lifecycle"})
    t.Declare(text, true);
  t.Declare("start", false, "ms");
  t.Declare("end", false, "ms");
  t.Declare("duration", false, "s");
  for (const char* text : {"command", "devices", "collocation", "host", "nodes"}) t.Declare(text, true);
  std::unordered_map<std::string, size_t> row_of;
  std::vector<std::string> params, tags;  // the keys any run has, sorted below
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunRecord& r = runs[i];
    row_of.emplace(r.id, i);
    t.Text("id", i, r.id);
    t.Text("name", i, r.name);
    t.Text("experiment", i, r.experiment);
    t.Text("workload", i, r.workload);
    t.Text("letter", i, TagValue(r, kLetterTag));
    t.Text("status", i, ShownStatus(r));
    t.Text("lifecycle", i, IsDeleted(r) ? "deleted" : "active");
    t.Number("start", i, static_cast<double>(r.start_ms), "ms");
    t.Number("end", i, r.end_ms > 0 ? static_cast<double>(r.end_ms) : kNull, "ms");
    int64_t end = r.end_ms > 0 ? r.end_ms : WallMillis();
    t.Number("duration", i, static_cast<double>(end - r.start_ms) / 1000.0, "s");
    t.Text("command", i, r.command);
    t.Text("devices", i, r.devices);
    t.Text("collocation", i, TagValue(r, kCollocationTag));
    t.Text("host", i, r.host);
    std::string nodes;
    for (const auto& [k, v] : r.tags) {
      if (k.starts_with(kNodeTagPrefix)) nodes.append(nodes.empty() ? "" : " ").append(v);
    }
    t.Text("nodes", i, nodes.empty() ? r.host : nodes);
    for (const auto& [k, v] : r.params) params.push_back(k);
    for (const auto& [k, v] : r.tags) {
      if (UsersTag(k)) tags.push_back(k);
    }
  }
  // The params' and tags' columns in name order, then each run's values.
  for (std::vector<std::string>* keys : {&params, &tags}) {
    std::sort(keys->begin(), keys->end());
    keys->erase(std::unique(keys->begin(), keys->end()), keys->end());
  }
  for (const std::string& k : params) t.Declare("params." + k, true);
  for (const std::string& k : tags) t.Declare("tags." + k, true);
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& [k, v] : runs[i].params) t.Text("params." + k, i, v);
    for (const auto& [k, v] : runs[i].tags) {
      if (UsersTag(k)) t.Text("tags." + k, i, v);
    }
  }

  // Per run and metric, the totals of its best source; metrics in name order. A script's
  // metrics (few points, where NaN and the latest value matter) are read point by point.
  std::unordered_map<std::string, std::vector<Best>> best;
  std::vector<std::pair<size_t, SeriesInfo>> script;
  size_t row = runs.size();
  const std::string* run = nullptr;
  for (const SeriesTotals& x : *totals) {
    const SeriesInfo& s = x.series;
    if (run == nullptr || *run != s.run_id) {  // a run's series come together
      run = &s.run_id;
      auto it = row_of.find(s.run_id);
      row = it == row_of.end() ? runs.size() : it->second;
    }
    if (row == runs.size() || x.count == 0 || !x.min) continue;
    if (s.labels.empty() && s.metric.starts_with(metric::kScriptPrefix)) {
      script.push_back({row, s});
      continue;
    }
    std::vector<Best>& of_metric = best[s.metric];
    if (of_metric.empty()) of_metric.resize(runs.size());
    Best& b = of_metric[row];
    int rank = SourceRank(s.labels);
    if (rank < b.rank)
      b = {rank, x.count, x.sum, *x.min, *x.max};
    else if (rank == b.rank)
      b = {rank, b.count + x.count, b.sum + x.sum, std::min(b.min, *x.min), std::max(b.max, *x.max)};
  }
  std::vector<std::string> metrics;
  metrics.reserve(best.size());
  for (const auto& [metric, of_runs] : best) metrics.push_back(metric);
  std::sort(metrics.begin(), metrics.end());
  for (const std::string& metric : metrics) {
    const std::vector<Best>& of_runs = best[metric];
    std::string_view unit = MetricUnit(metric);
    for (size_t i = 0; i < of_runs.size(); ++i) {
      const Best& b = of_runs[i];
      bool has = b.count > 0;
      t.Number(metric + ".mean", i, has ? MeanOf(b) : kNull, unit);
      t.Number(metric + ".min", i, has ? b.min : kNull, unit);
      t.Number(metric + ".max", i, has ? b.max : kNull, unit);
    }
  }

  AddScriptMetrics(t, store_, script, best);

  for (size_t i = 0; i < runs.size(); ++i) {
    if (auto kept = analyses->find(runs[i].id); kept != analyses->end()) {
      AddAnalysis(t, i, kept->second);
      continue;
    }
    // Running, or no current copy kept: analysed as its phases are (and kept when finished).
    Result<std::string> text = AnalysisText(runs[i]);
    ThrowIfError(text.status());
    Result<RunAnalysis> made = AnalysisFromJson(*text);
    ThrowIfError(made.status());
    AddAnalysis(t, i, *made);
  }
  if (columnar) return {200, "application/octet-stream", t.Columnar(), nullptr, {}};
  return {200, "application/json", t.Json(), nullptr, {}};
}

}  // namespace tb
