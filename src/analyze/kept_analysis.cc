// A run's analysis as JSON, and the copy kept with a finished run (its phases.json
// artifact): what `show` and the report read instead of analysing a long run again.
#include <nlohmann/json.hpp>

#include "analyze/phases.h"

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
                      {"caveats", a.caveats},
                      {"version", kAnalysisVersion}};
  auto opt = [&](const char* k, const std::optional<double>& v) {
    j[k] = v ? nlohmann::json(*v) : nlohmann::json();
  };
  opt("throughput", a.throughput);
  opt("epoch_seconds", a.epoch_seconds);
  opt("energy_joules", a.energy_joules);
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
    a.steady_level = j.at("steady_level").get<double>();
    a.steady_samples = j.at("steady_samples").get<int>();
    for (const auto& [metric, mean] : j.at("steady").items()) a.steady[metric] = mean.get<double>();
    a.caveats = j.at("caveats").get<std::vector<std::string>>();
    auto opt = [&](const char* k, std::optional<double>& v) {
      if (j.contains(k) && !j[k].is_null()) v = j[k].get<double>();
    };
    opt("throughput", a.throughput);
    opt("epoch_seconds", a.epoch_seconds);
    opt("energy_joules", a.energy_joules);
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
  Result<ArtifactRecord> kept = store.GetArtifact(run.id, "phases.json");
  if (!kept.ok() || !kept->path.empty()) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(kept->content, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("version", 0) != kAnalysisVersion || !j.contains("extent"))
    return std::nullopt;
  Result<std::vector<SeriesInfo>> series = store.ListSeries(run.id);
  if (!series.ok()) return std::nullopt;
  Result<int64_t> points = AnalysedPoints(store, run, *series);
  Result<std::vector<EventRecord>> events = store.ListEvents(run.id);
  if (!points.ok() || !events.ok()) return std::nullopt;
  const nlohmann::json& extent = j["extent"];
  if (extent.value("points", int64_t{-1}) != *points ||
      extent.value("events", int64_t{-1}) != static_cast<int64_t>(events->size()))
    return std::nullopt;
  return std::move(kept->content);
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

}  // namespace tb
