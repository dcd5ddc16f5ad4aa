// The call behind one request to serve's /api/v1 (serve_api.h): its parameters, lookups,
// and the handlers the route table (serve_api.cc) dispatches to, one a route. Private to
// serve/. A handler answers or throws ApiError (http/api_toolkit.h), which the API turns
// into its JSON error answer.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "figure/figure_spec.h"
#include "http/http_server.h"
#include "query/chart_series.h"
#include "serve/serve_api.h"
#include "store/store.h"

namespace tb {

// A number as JSON; null for NaN and infinities (JSON has no such numbers).
inline nlohmann::json FiniteOrNull(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

class ServeApi::Call {
  friend struct ServeRouteTable;

 public:
  using json = nlohmann::json;

  Call(ServeApi& api, const ApiRequest& request) : api_(api), store_(api.store_), request_(request) {}

  ApiResponse Dispatch();

 private:
  // --- parameters ---
  std::optional<std::string> Param(const char* name);

  std::optional<double> Number(const char* name);

  size_t Budget(size_t fallback);

  std::string Metric(bool required);

  std::optional<std::string> Labels();

  XAxis Axis();

  // x_form=places: series on a shared grid give their x as steps between its places.
  bool XAsPlaces();

  // The runs `name` lists by id (separated by commas, each once, at most
  // kMaxRunsPerRequest), in its order. `known_only`: ids the store does not hold are left
  // out, else each is an error.
  std::vector<RunRecord> RunsParam(const char* name = "runs", bool known_only = false);

  // --- lookups ---
  RunRecord Run(std::string_view id);

  // The run's phases and steady-state figures (computed from its samples; cached while
  // nothing changes: a finished run's).
  ApiResponse Phases(const RunRecord& run);
  // The same as JSON text; runs asked for at once by several calls are analysed once.
  Result<std::string> AnalysisText(const RunRecord& run);

  // A figure (figure/figure.h) for ?spec=<figure description as JSON>&format=pdf|svg|png|csv:
  // the web UI's exports, drawn as `trainbench plot` draws them.
  ApiResponse FigureFile();

  // `trainbench report` for the web: ?format=html (default), csv or json (the table's rows).
  ApiResponse Report(const ExperimentInfo& e);
  ApiResponse Bars(const ExperimentInfo& e);
  // A figure as an answer: `csv` for format=csv, else `draw` in the format asked (pdf, svg,
  // png; InvalidParameter for another, or for what the renderer refuses); a file named
  // `name` (letters, digits, '-' and '.' kept) unless it is an SVG and `svg_inline`.
  static ApiResponse FigureAnswer(const std::string& format, const std::string& name, bool svg_inline,
                                  const std::function<std::string()>& csv,
                                  const std::function<Result<std::string>(FigureFormat)>& draw);

  ExperimentInfo Experiment(std::string_view key);

  std::vector<RunRecord> RunsOf(const std::string& experiment);

  // --- JSON of things ---
  json RunJson(const RunRecord& r, bool with_summary);

  // Per run, per series, from the statistics kept beside each chunk (no decoding): what the
  // run table shows. Points still in the journal of a running run are not counted yet.
  // Each run's list of objects as JSON text without its brackets ("" for none).
  std::map<std::string, std::string> Summaries(const std::vector<std::string>& run_ids);

  // The run's GPU energy as `show` and the report compute it (query/energy.h); null without
  // GPU energy or power samples.
  json Energy(const std::string& run_id);

  // --- resources ---
  ApiResponse Experiments();

  ApiResponse Workloads(const ExperimentInfo& e);

  ApiResponse Runs();

  // runs?format=columns|columnar: the listed runs as one table, a column a field, as JSON or
  // with the numbers as arrays (run_table.cc).
  ApiResponse RunTable(const std::vector<RunRecord>& runs, bool columnar);

  ApiResponse RunDetail(const RunRecord& r);

  ApiResponse Events(const RunRecord& r);

  // events?runs=A,B: each run's events as runs/{id}/events gives them, in one answer.
  ApiResponse ManyEvents();
  json EventsJson(const RunRecord& r);

  ApiResponse Artifacts(const RunRecord& r);

  // The store names the artifact and where it is: request text never becomes a path.
  ApiResponse Artifact(const RunRecord& r, const std::string& name);

  ApiResponse Metrics();

  struct Selected {
    const RunRecord* run;
    SeriesInfo series;
  };

  // The series of `metric` (with `labels` when given) of each run; 404 when none has it.
  std::vector<Selected> Select(const std::vector<RunRecord>& runs, const std::string& metric,
                               const std::optional<std::string>& labels);

  // Each one's (series, whether its run has ended): what SeriesReader reads ahead.
  static std::vector<std::pair<SeriesInfo, bool>> WithRuns(const std::vector<Selected>& selected);

  ApiResponse Series();

  ApiResponse AggregateWorkloads();

  ApiResponse Export();

  // Every point of a series (a finished run's from the reader's cache when it has them).
  std::shared_ptr<const std::vector<Point>> Load(int64_t series_id, bool finished);

  ServeApi& api_;
  Store& store_;
  const ApiRequest& request_;
};

}  // namespace tb
