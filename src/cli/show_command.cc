// `trainbench show RUN`: one run in full, its record, energy, params, tags, events,
// artifacts, phases and steady state, and a summary of every series.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "analyze/phases.h"
#include "base/strings.h"
#include "base/time.h"
#include "cli/cli.h"
#include "metrics/catalog.h"
#include "query/energy.h"
#include "query/summary.h"
#include "run/run_cost.h"
#include "store/run_tags.h"
#include "store/store.h"

namespace tb::cli {
namespace {

void PrintRecord(const RunRecord& r) {
  std::string status = ShownStatus(r);
  if (r.exit_code) status += " (exit code " + std::to_string(*r.exit_code) + ")";
  if (r.signal) status += " (signal " + std::to_string(*r.signal) + ")";
  std::string duration = RunDuration(r, ShownStatus(r));
  std::printf("run         %s  %s\n", r.id.c_str(), Printable(r.name).c_str());
  std::printf("experiment  %s   workload %s\n", Printable(r.experiment).c_str(),
              r.workload.empty() ? "-" : Printable(r.workload).c_str());
  std::printf("status      %s\n", status.c_str());
  if (!r.reason.empty()) std::printf("reason      %s\n", Printable(r.reason).c_str());
  std::printf("command     %s\n", Printable(r.command).c_str());
  std::printf("directory   %s\n", Printable(r.working_directory).c_str());
  std::printf("host        %s\n", Printable(r.host).c_str());
  bool imported_running = r.end_ms == 0 && HasTag(r, kImportedTag);
  std::printf("started     %s   duration %s%s\n", FormatWallTime(r.start_ms).c_str(), duration.c_str(),
              imported_running
                  ? " (RUNNING in MLflow when imported: `trainbench import` again brings its end)"
              : r.end_ms > 0 || duration == "-" ? ""
                                                : " so far");
  // Runs imported or made by a client record no listeners, or (radT's) no interval.
  if (!r.listeners.empty() && r.interval_ms > 0) {
    std::printf("listeners   %s every %gs\n", Printable(r.listeners).c_str(),
                static_cast<double>(r.interval_ms) / 1000);
  } else if (!r.listeners.empty()) {
    std::printf("listeners   %s\n", Printable(r.listeners).c_str());
  }
  if (!r.devices.empty()) std::printf("devices     %s\n", Printable(r.devices).c_str());
  if (std::optional<RunCost> cost = RunCostOfTags(r.tags)) {
    std::printf("trainbench  %s\n", DescribeRunCost(*cost).c_str());
  }
  for (const auto& [k, node] : r.tags) {  // each part of a run across nodes
    if (!StartsWith(k, kNodeTagPrefix)) continue;
    if (std::optional<RunCost> cost = RunCostOfTags(r.tags, "node-" + node + "."))
      std::printf("trainbench  on %s: %s\n", Printable(node).c_str(), DescribeRunCost(*cost).c_str());
  }
}

void PrintEnergy(Store& store, const RunRecord& r) {
  bool simulated = TagValue(r, kSimulatedGpuTag) == "true";
  Result<std::optional<GpuEnergy>> energy = RunGpuEnergy(store, r.id);
  if (energy.ok() && energy->has_value()) {
    const GpuEnergy& e = **energy;
    std::printf("GPU energy  %.1f J over %d GPU%s%s%s\n", e.joules, e.gpus, e.gpus == 1 ? "" : "s",
                e.integrated ? " (power integrated over time where no energy counter)" : "",
                simulated ? "  [simulated GPU]" : "");
    bool mps = TagValue(r, kCollocationTag).starts_with("MPS");
    if (e.run_share_joules)
      std::printf(
          "run energy  %.1f J, this run's share of the GPU energy by its share of the GPUs' activity%s\n",
          *e.run_share_joules,
          mps ? " (under MPS, the server's split equally among its clients: NVML cannot tell them apart)"
              : "");
  }
  Result<std::optional<double>> cpu = RunCpuEnergy(store, r.id);
  if (cpu.ok() && cpu->has_value())
    std::printf(
        "CPU energy  %.1f J, this run's share of the CPUs' RAPL energy by its share of their CPU time\n",
        **cpu);
  if (simulated)
    std::printf("note        GPU metrics of this run come from the simulated GPU (sim/), not hardware\n");
}

// Params, tags (the cost, said above, left out), events and artifacts.
void PrintLists(Store& store, const RunRecord& r) {
  if (!r.params.empty()) {
    std::printf("\nparams\n");
    for (const auto& [k, v] : r.params)
      std::printf("  %s = %s\n", Printable(k).c_str(), Printable(v).c_str());
  }
  KeyValues tags;
  std::vector<std::string> models, datasets;
  // The records are JSON the run's tags hold; a forged one shows what of it is text.
  auto text = [](const nlohmann::json& o, const char* key) {
    auto it = o.is_object() ? o.find(key) : o.end();
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  for (const auto& tag : r.tags) {
    if (StartsWith(tag.first, kModelTagPrefix)) {
      nlohmann::json m = nlohmann::json::parse(tag.second, nullptr, false);
      if (m.is_object())
        models.push_back(
            Concat({text(m, "name"), "  ", tag.first.substr(kModelTagPrefix.size()), "  ", text(m, "status"),
                    "  (files: artifacts models/", tag.first.substr(kModelTagPrefix.size()), "/)"}));
    } else if (StartsWith(tag.first, kDatasetTagPrefix)) {
      nlohmann::json d = nlohmann::json::parse(tag.second, nullptr, false);
      if (!d.is_object()) continue;
      std::string context;
      auto tags_of = d.find("tags");
      for (const auto& t : tags_of != d.end() && tags_of->is_array() ? *tags_of : nlohmann::json::array()) {
        if (text(t, "key") == "mlflow.data.context") context = "  (" + text(t, "value") + ")";
      }
      auto set = d.find("dataset");
      nlohmann::json none;
      const nlohmann::json& ds = set != d.end() ? *set : none;
      datasets.push_back(Concat(
          {text(ds, "name"), "  digest ", text(ds, "digest"), "  ", text(ds, "source_type"), context}));
    } else if (!IsRunCostTag(tag.first) && !IsRecordTag(tag.first)) {
      tags.push_back(tag);
    }
  }
  if (!tags.empty()) {
    std::printf("\ntags\n");
    for (const auto& [k, v] : tags) std::printf("  %s = %s\n", Printable(k).c_str(), Printable(v).c_str());
  }
  // What the script logged through MLflow's log_model and log_input.
  for (const auto& [title, lines] : {std::pair{"models", &models}, std::pair{"datasets", &datasets}}) {
    if (lines->empty()) continue;
    std::printf("\n%s\n", title);
    for (const std::string& line : *lines) std::printf("  %s\n", Printable(line).c_str());
  }
  Result<std::vector<EventRecord>> events = store.ListEvents(r.id);
  if (events.ok() && !events->empty()) {
    std::printf("\nevents\n");
    for (const EventRecord& e : *events) {
      std::printf("  +%-9s %-9s %s\n", FormatDuration(e.time_ms - r.start_ms).c_str(),
                  Printable(e.kind).c_str(), Printable(e.label).c_str());
    }
  }
  Result<std::vector<ArtifactRecord>> artifacts = store.ListArtifacts(r.id);
  if (artifacts.ok() && !artifacts->empty()) {
    std::printf("\nartifacts\n");
    for (const ArtifactRecord& a : *artifacts) {
      std::printf("  %-14s %10s  %s\n", Printable(a.name).c_str(),
                  FormatValue(static_cast<double>(a.size), "bytes").c_str(),
                  a.path.empty() ? "(in the store)" : a.path.c_str());
    }
  }
}

// Phases and the steady state.
void PrintAnalysis(Store& store, const RunRecord& r) {
  Result<RunAnalysis> a = KeptOrStoredAnalysis(store, r);
  if (!a.ok() || a->phases.empty()) return;
  std::printf("\nphases (found in %s)\n", a->activity.empty() ? "-" : a->activity.c_str());
  for (const Phase& p : a->phases) {
    std::printf("  +%-9s %9s  %-13s %s\n", FormatDuration(p.start_ms - r.start_ms).c_str(),
                FormatDuration(p.end_ms - p.start_ms).c_str(), p.kind.c_str(), p.detail.c_str());
  }
  if (a->training)
    std::printf(
        "\ntraining    +%s to +%s (%s), by %s\n", FormatDuration(a->training->start_ms - r.start_ms).c_str(),
        FormatDuration(a->training->end_ms - r.start_ms).c_str(),
        FormatDuration(a->training->length_ms()).c_str(), TrainingWindowSource(a->training->source).c_str());
  if (a->samples) std::printf("samples     %.0f trained\n", *a->samples);
  std::printf("\nsteady state (%d s)\n", a->steady_samples);
  for (const auto& [metric, mean] : a->steady) {
    const MetricInfo* info = FindMetric(metric);
    std::printf("  %-44s %11s\n", metric.c_str(), FormatValue(mean, info ? info->unit : "").c_str());
  }
  if (a->epoch_seconds) std::printf("  %-44s %11.2f s\n", "time per epoch", *a->epoch_seconds);
  if (a->energy_per_sample_joules)
    std::printf("  %-44s %11.4g J\n", "energy per training sample", *a->energy_per_sample_joules);
  for (const std::string& c : a->caveats) std::printf("  note: %s\n", c.c_str());
}

// Every series: count, min, mean, max, p50, p95.
Status PrintMetrics(Store& store, const RunRecord& r) {
  Result<std::vector<SeriesInfo>> series = store.ListSeries(r.id);
  if (!series.ok()) return series.status();
  std::printf("\nmetrics (%zu series)\n", series->size());
  std::vector<int64_t> ids;
  for (const SeriesInfo& s : *series) ids.push_back(s.id);
  Result<std::vector<SeriesSummary>> summaries = SummarizeStoredSeries(store, ids);
  if (!summaries.ok()) return summaries.status();
  // The name columns as wide as their longest entry, so that a thread's labels
  // (pid=...,tid=...,name=...) do not push its row's figures out of their columns.
  std::vector<std::pair<std::string, std::string>> names;
  int metric_width = 6, labels_width = 6;
  for (const SeriesInfo& s : *series) {
    names.emplace_back(Printable(s.metric), s.labels.empty() ? "-" : Printable(s.labels));
    metric_width = std::max(metric_width, static_cast<int>(names.back().first.size()));
    labels_width = std::max(labels_width, static_cast<int>(names.back().second.size()));
  }
  std::printf("  %-*s %-*s %7s %11s %11s %11s %11s %11s\n", metric_width, "metric", labels_width, "labels",
              "count", "min", "mean", "max", "p50", "p95");
  for (size_t i = 0; i < series->size(); ++i) {
    const SeriesSummary& sum = (*summaries)[i];
    const MetricInfo* info = FindMetric((*series)[i].metric);
    std::string_view unit = info ? info->unit : "";
    std::printf("  %-*s %-*s %7lld %11s %11s %11s %11s %11s\n", metric_width, names[i].first.c_str(),
                labels_width, names[i].second.c_str(), static_cast<long long>(sum.count),
                FormatValue(sum.min, unit).c_str(), FormatValue(sum.mean, unit).c_str(),
                FormatValue(sum.max, unit).c_str(), FormatValue(sum.p50, unit).c_str(),
                FormatValue(sum.p95, unit).c_str());
  }
  return Status::Ok();
}

}  // namespace

int CommandShow(const std::string& store_uri, const std::string& key) {
  Result<std::unique_ptr<Store>> store = OpenStoreToRead(store_uri);
  if (!store.ok()) return Fail(store.status());
  Result<RunRecord> found = (*store)->FindRun(key);
  if (!found.ok()) return Fail(found.status());
  PrintRecord(*found);
  PrintEnergy(**store, *found);
  PrintLists(**store, *found);
  PrintAnalysis(**store, *found);
  if (Status printed = PrintMetrics(**store, *found); !printed.ok()) return Fail(printed);
  return 0;
}

}  // namespace tb::cli
