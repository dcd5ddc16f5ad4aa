// A run's analysis as JSON, and the copy kept with a finished run (its phases.json
// artifact): what `show` and the report read instead of analysing a long run again.
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "analyze/phases.h"
#include "base/spare_thread.h"

namespace tb {

std::string AnalysisJson(const RunAnalysis& a) {
  nlohmann::json phases = nlohmann::json::array();
  for (const Phase& p : a.phases)
    phases.push_back(
        {{"kind", p.kind}, {"start_ms", p.start_ms}, {"end_ms", p.end_ms}, {"detail", p.detail}});
  nlohmann::json j = {{"phases", phases},
                      {"activity", a.activity},
                      {"steady_level", a.steady_level},
                      {"steady_samples", a.steady_samples},
                      {"steady", a.steady},
                      {"steady_p50", nlohmann::json::object()},
                      {"steady_p95", nlohmann::json::object()},
                      {"caveats", a.caveats},
                      {"version", kAnalysisVersion}};
  for (const auto& [metric, spread] : a.steady_spread) {
    j["steady_p50"][metric] = spread.p50;
    j["steady_p95"][metric] = spread.p95;
  }
  auto opt = [&](const char* k, const std::optional<double>& v) {
    j[k] = v ? nlohmann::json(*v) : nlohmann::json();
  };
  opt("throughput", a.throughput);
  opt("epoch_seconds", a.epoch_seconds);
  opt("energy_joules", a.energy_joules);
  opt("cpu_energy_joules", a.cpu_energy_joules);
  opt("samples", a.samples);
  opt("energy_per_sample_joules", a.energy_per_sample_joules);
  if (a.extent) j["extent"] = {{"points", a.extent->points}, {"events", a.extent->events}};
  if (a.training)
    j["training"] = {
        {"start_ms", a.training->start_ms}, {"end_ms", a.training->end_ms}, {"source", a.training->source}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<RunAnalysis> AnalysisFromJson(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("version", 0) != kAnalysisVersion)
    return Status::Corrupt("not an analysis of this trainbench's method");
  try {
    RunAnalysis a;
    for (const nlohmann::json& p : j.at("phases"))
      a.phases.push_back({p.at("kind").get<std::string>(), p.at("start_ms").get<int64_t>(),
                          p.at("end_ms").get<int64_t>(), p.at("detail").get<std::string>()});
    a.activity = j.at("activity").get<std::string>();
    // NaN (a run with no activity sampled) is written as null.
    a.steady_level = j.at("steady_level").is_null() ? std::nan("") : j.at("steady_level").get<double>();
    a.steady_samples = j.at("steady_samples").get<int>();
    for (const auto& [metric, mean] : j.at("steady").items()) a.steady[metric] = mean.get<double>();
    for (const auto& [metric, p50] : j.at("steady_p50").items())
      a.steady_spread[metric] = {p50.get<double>(), j.at("steady_p95").at(metric).get<double>()};
    a.caveats = j.at("caveats").get<std::vector<std::string>>();
    auto opt = [&](const char* k, std::optional<double>& v) {
      if (j.contains(k) && !j[k].is_null()) v = j[k].get<double>();
    };
    opt("throughput", a.throughput);
    opt("epoch_seconds", a.epoch_seconds);
    opt("energy_joules", a.energy_joules);
    opt("cpu_energy_joules", a.cpu_energy_joules);
    opt("samples", a.samples);
    opt("energy_per_sample_joules", a.energy_per_sample_joules);
    if (j.contains("training"))
      a.training = TrainingWindow{j["training"].at("start_ms").get<int64_t>(),
                                  j["training"].at("end_ms").get<int64_t>(),
                                  j["training"].at("source").get<std::string>()};
    if (j.contains("extent"))
      a.extent = RunAnalysis::Extent{j["extent"].at("points").get<int64_t>(),
                                     j["extent"].at("events").get<int64_t>()};
    return a;
  } catch (const nlohmann::json::exception& e) {
    return Status::Corrupt(std::string("an analysis with a field missing or of another type: ") + e.what());
  }
}

Result<RunAnalysis> KeptOrStoredAnalysis(Store& store, const RunRecord& run) {
  if (std::optional<std::string> kept = KeptAnalysisJson(store, run)) {
    if (Result<RunAnalysis> a = AnalysisFromJson(*kept); a.ok()) return a;
  }
  return AnalyzeStoredRun(store, run);
}

std::optional<std::string> KeptAnalysisJson(Store& store, const RunRecord& run) {
  if (run.end_ms <= 0) return std::nullopt;
  Result<std::vector<SeriesTotals>> totals = store.ListSeriesTotals(run.id);
  if (!totals.ok()) return std::nullopt;
  Result<std::map<std::string, RunAnalysis>> kept = KeptAnalyses(store, {run}, *totals);
  if (!kept.ok() || kept->empty()) return std::nullopt;
  return AnalysisJson(kept->begin()->second);
}

Result<std::map<std::string, RunAnalysis>> KeptAnalyses(Store& store, const std::vector<RunRecord>& runs,
                                                        const std::vector<SeriesTotals>& totals) {
  std::map<std::string, RunAnalysis> out;
  std::vector<std::string> ids;
  for (const RunRecord& r : runs) {
    if (r.end_ms > 0) ids.push_back(r.id);  // a running run's analysis is never its last
  }
  if (ids.empty()) return out;
  Result<std::vector<ArtifactRecord>> kept = store.GetArtifactOfRuns(ids, "phases.json");
  if (!kept.ok()) return kept.status();
  Result<std::vector<std::pair<std::string, int64_t>>> events = store.CountEventsOfRuns(ids);
  if (!events.ok()) return events.status();
  std::map<std::string, int64_t> points = AnalysedPoints(totals);
  std::unordered_map<std::string, int64_t> event_count(events->begin(), events->end());
  // Parsed on this thread and the spare one (10,000 took 0.16 s on one).
  std::vector<std::optional<RunAnalysis>> parsed(kept->size());
  SpareThread::OfProcess().ForEachItem(kept->size(), [&](size_t i, int) {
    const ArtifactRecord& a = (*kept)[i];
    if (!a.path.empty()) return;  // a file the script logged under that name
    Result<RunAnalysis> analysis = AnalysisFromJson(a.content);
    if (!analysis.ok() || !analysis->extent) return;
    auto it = points.find(a.run_id);
    auto ev = event_count.find(a.run_id);
    if (analysis->extent->points != (it == points.end() ? 0 : it->second) ||
        analysis->extent->events != (ev == event_count.end() ? 0 : ev->second))
      return;
    parsed[i] = std::move(*analysis);
  });
  for (size_t i = 0; i < parsed.size(); ++i) {
    if (parsed[i]) out.emplace((*kept)[i].run_id, std::move(*parsed[i]));
  }
  return out;
}

Status KeepAnalysisJson(Store& store, const RunRecord& run, const std::string& json) {
  if (Result<ArtifactRecord> earlier = store.GetArtifact(run.id, "phases.json"); earlier.ok()) {
    nlohmann::json j = nlohmann::json::parse(earlier->content, nullptr, /*allow_exceptions=*/false);
    if (!earlier->path.empty() || !j.is_object() || !j.contains("phases"))
      return Status::InvalidArgument("run " + run.id +
                                     " has an artifact phases.json that is not its analysis");
  }
  return store.PutArtifact({run.id, "phases.json", static_cast<int64_t>(json.size()), json, ""});
}

Status AnalyseAndKeep(Store& store, const RunRecord& run) {
  Result<RunAnalysis> analysis = AnalyzeStoredRun(store, run);
  if (!analysis.ok()) return analysis.status();
  return KeepAnalysisJson(store, run, AnalysisJson(*analysis));
}

}  // namespace tb
