// The metric catalog: every metric trainbench records, with its unit, kind and the
// listener that produces it. Names follow `<source>.<subject>.<property>_<unit>` and are
// never reused with another meaning. Device-like subjects (core, disk, interface, thread)
// are labels such as "device=sda", never part of the name. Immutable; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace tb {

enum class MetricKind { kGauge, kCounter };

struct MetricInfo {
  std::string_view name;   // a metric:: constant of names.h, never a literal
  std::string_view title;  // for people: "GPU utilization", "SM active"
  std::string_view unit;   // "ratio", "bytes", "bytes/s", "1/s", "cores", "s", "1"
  MetricKind kind;
  std::string_view listener;
  std::string_view labels;  // label keys it carries, "" for none
  std::string_view description;
  std::string_view radt_name;  // what radT showed for it, "" when radT had none
};

std::span<const MetricInfo> MetricCatalog();
// nullptr for metrics not in the catalog (a script's own metrics, for example).
const MetricInfo* FindMetric(std::string_view name);
// The metric's name for people ("GPU utilization", "SM active", "Loss"): the catalog's
// title, or a script's metric without its "train." prefix, underscores as spaces.
std::string MetricTitle(std::string_view metric);
// The metric's unit: the catalog's, a script metric's from its name's unit suffix
// (train.throughput_samples_per_second: "samples/s"), else "".
std::string_view MetricUnit(std::string_view name);
// Which source of a quantity measured several times a reader sees first, by the series'
// labels: nvml's (the driver's own, no label `listener`) 0, nvidia-smi's 1, dcgmi's 2,
// another listener's 3.
int SourceRank(std::string_view labels);

}  // namespace tb
