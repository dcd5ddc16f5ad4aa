// The metric histories MLflow's clients and UI read: one run's metric page after page
// (get-history), and a metric of many runs sampled to a chart's worth of steps
// (get-history-bulk-interval), each answered as MLflow's server answers.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "base/strings.h"
#include "http/api_toolkit.h"
#include "track/tracking_call.h"

namespace tb {

using namespace tracking;  // NOLINT(google-build-using-namespace): this API's own helpers

ApiResponse TrackingApi::Call::GetMetricHistory() {
  std::string run_id = RunIdField();
  std::string key = Required("metric_key");
  Exists(run_id);
  int64_t max_results = 25000;
  if (std::optional<std::string> m = Text("max_results")) {
    std::optional<int64_t> n = ParseInt(*m);
    if (!n || *n <= 0)
      throw InvalidParameter("Invalid value '" + *m + "' for parameter 'max_results': a positive integer");
    max_results = *n;
  }
  int64_t offset = 0;
  if (std::optional<std::string> token = Text("page_token"); token && !token->empty()) {
    std::optional<int64_t> n = ParseInt(*token);
    if (!n || *n < 0) throw InvalidParameter("Invalid page token '" + *token + "'");
    offset = *n;
  }
  // Written as text, not built as JSON objects: a long metric's history is read 25,000
  // points a page, and an object of four fields each cost more than reading the points.
  std::string body = "{\"metrics\":[";
  int64_t total = 0, end = 0;
  // The script's metric of that name, else a host or GPU series under MLflow's
  // system-metric name (its points numbered 0, 1, ... as MLflow's monitor logs them).
  struct Source {
    std::string key;
    int64_t id;
    double scale;
    bool numbered;
  };
  std::vector<Source> sources;
  for (const auto& [k, id] : ScriptSeriesIds(run_id, key)) sources.push_back({k, id, 1, false});
  if (sources.empty()) {
    for (const SystemSeries& s : SystemSeriesIds(run_id, key))
      sources.push_back({s.key, s.id, s.scale, true});
  }
  for (const auto& [k, id, scale, numbered] : sources) {
    // Only the chunks that hold the page are decoded: MLflow's client asks for a long
    // metric's history page after page.
    Result<std::vector<Point>> page = ReadSeriesPage(api_.store_, id, offset, max_results, total);
    ThrowIfError(page.status());
    // offset + max_results without overflow: both may be anything up to 2^63 - 1.
    end = offset >= total ? total : offset + std::min(max_results, total - offset);
    std::string key_field = "{\"key\":" + json(k).dump() + ",\"value\":";
    body.reserve(body.size() + page->size() * (key_field.size() + 64));
    char number[32];
    auto put = [&](auto v) { body.append(number, std::to_chars(number, number + sizeof number, v).ptr); };
    int64_t index = offset;
    for (const Point& p : *page) {
      double value = p.value * scale;
      body += body.back() == '[' ? "" : ",";
      body += key_field;
      if (std::isfinite(value)) {
        size_t from = body.size();
        put(value);
        // As a float, as JSON writers write one ("1.0", "-0.0"): "-0" would read back as 0.
        if (body.find_first_of(".e", from) == std::string::npos) body += ".0";
      } else {
        body += ValueJson(value).dump();
      }
      body += ",\"timestamp\":";
      put(p.time_ms);
      body += ",\"step\":";
      put(numbered ? index : p.step);
      ++index;
      body += '}';
    }
  }
  body += ']';
  if (end < total) body += ",\"next_page_token\":\"" + std::to_string(end) + "\"";
  body += '}';
  return {200, "application/json", std::move(body), nullptr, {}};
}

// The steps MLflow's server samples for get-history-bulk-interval, so a chart drawn from
// trainbench shows the points MLflow's would: of the distinct steps the runs logged inside
// start..end (0..the last step when neither is given), every (count / max_results)-th,
// truncated as Python's int() does, plus the last; then each run's first and last step
// inside the range.
static std::vector<int64_t> SampleSteps(std::vector<int64_t> all, const std::set<int64_t>& firsts_and_lasts,
                                        std::optional<int64_t> start, std::optional<int64_t> stop,
                                        int64_t max_results) {
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  int64_t from = start.value_or(0), to = stop.value_or(all.empty() ? 0 : all.back());
  auto first = std::lower_bound(all.begin(), all.end(), from);
  auto last = std::upper_bound(all.begin(), all.end(), to);
  std::set<int64_t> chosen;
  auto count = static_cast<int64_t>(last - first);
  if (count <= max_results) {
    chosen.insert(first, last);
  } else {
    double interval = static_cast<double>(count) / static_cast<double>(max_results);
    for (int64_t i = 0; i < max_results; ++i)
      chosen.insert(first[static_cast<int64_t>(static_cast<double>(i) * interval)]);
    chosen.insert(*(last - 1));
  }
  for (int64_t step : firsts_and_lasts) {
    if (step >= from && step <= to) chosen.insert(step);
  }
  return {chosen.begin(), chosen.end()};
}

// What MLflow's UI and MlflowClient.get_metric_history_bulk_interval ask for to chart a
// metric of many runs: each run's values at the steps SampleSteps picks, runs in the order
// asked, each run's points by step, then time, then value.
ApiResponse TrackingApi::Call::GetMetricHistoryBulkInterval() {
  constexpr size_t kMaxRuns = 100;
  constexpr int64_t kDefaultResults = 2500, kMaxResults = 25000;
  std::vector<std::string> run_ids;
  for (auto [it, end] = request_.query.equal_range("run_ids"); it != end; ++it) run_ids.push_back(it->second);
  if (run_ids.empty())
    throw InvalidParameter("GetMetricHistoryBulkInterval request must specify at least one run_id.");
  if (run_ids.size() > kMaxRuns) {
    throw InvalidParameter("GetMetricHistoryBulkInterval request cannot specify more than " +
                           std::to_string(kMaxRuns) + " run_ids. Received " + std::to_string(run_ids.size()) +
                           " run_ids.");
  }
  std::string key = Required("metric_key");
  auto number = [&](const char* field) -> std::optional<int64_t> {
    std::optional<std::string> text = Text(field);
    if (!text) return std::nullopt;
    std::optional<int64_t> n = ParseInt(*text);
    if (!n)
      throw InvalidParameter(Concat({"Invalid value '", *text, "' for parameter '", field, "': an integer"}));
    return n;
  };
  int64_t max_results = number("max_results").value_or(kDefaultResults);
  if (max_results < 1 || max_results > kMaxResults) {
    throw InvalidParameter("max_results must be between 1 and " + std::to_string(kMaxResults) + ".");
  }
  std::optional<int64_t> start = number("start_step"), stop = number("end_step");
  if (start.has_value() != stop.has_value()) {
    throw InvalidParameter("If either start step or end step are specified, both must be specified.");
  }
  if (start && *start > *stop) {
    throw InvalidParameter("end_step must be greater than start_step. Found start_step=" +
                           std::to_string(*start) + " and end_step=" + std::to_string(*stop) + ".");
  }
  std::vector<std::pair<std::string, std::vector<Point>>> runs;
  std::vector<int64_t> steps;
  std::set<int64_t> firsts_and_lasts;
  for (const std::string& run_id : run_ids) {
    Exists(run_id);
    std::vector<Point> points;
    for (auto& [k, series] : ScriptSeries(run_id, key))
      points.insert(points.end(), series.begin(), series.end());
    std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
      if (a.step != b.step) return a.step < b.step;
      if (a.time_ms != b.time_ms) return a.time_ms < b.time_ms;
      // MLflow's SQL stores NaN as 0 (with is_nan set), and orders it there.
      return (std::isnan(a.value) ? 0.0 : a.value) < (std::isnan(b.value) ? 0.0 : b.value);
    });
    if (!points.empty()) {
      firsts_and_lasts.insert(points.front().step);
      firsts_and_lasts.insert(points.back().step);
    }
    for (const Point& p : points) steps.push_back(p.step);
    runs.emplace_back(run_id, std::move(points));
  }
  std::vector<int64_t> chosen = SampleSteps(std::move(steps), firsts_and_lasts, start, stop, max_results);
  json metrics = json::array();
  for (auto& [run_id, points] : runs) {
    for (const Point& p : points) {
      if (!std::binary_search(chosen.begin(), chosen.end(), p.step)) continue;
      metrics.push_back({{"key", key},
                         {"value", ValueJson(p.value)},
                         {"timestamp", p.time_ms},
                         {"step", p.step},
                         {"run_id", run_id}});
    }
  }
  return JsonAnswer({{"metrics", std::move(metrics)}});
}

}  // namespace tb
