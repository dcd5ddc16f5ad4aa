#include "run/run_cost.h"

#include <array>
#include <cstdio>
#include <utility>

#include "base/strings.h"
#include "store/run_tags.h"

namespace tb {
namespace {

constexpr std::string_view kPrefix = kCpuSecondsTagPrefix;

std::array<std::pair<const char*, double RunCost::*>, 5> Fields() {
  return {{{"command", &RunCost::command},
           {"trainbench", &RunCost::trainbench},
           {"listeners", &RunCost::listeners},
           {"tracking_server", &RunCost::tracking_server},
           {"tools", &RunCost::tools}}};
}

std::string Seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, s < 10 ? "%.3f" : "%.1f", s);
  return text;
}

}  // namespace

KeyValues RunCostTags(const RunCost& cost, const std::string& scope) {
  KeyValues tags;
  for (const auto& [name, field] : Fields())
    tags.emplace_back(std::string(kPrefix) + scope + name, Seconds(cost.*field));
  return tags;
}

std::optional<RunCost> RunCostOfTags(const KeyValues& tags, const std::string& scope) {
  RunCost cost;
  int found = 0;
  for (const auto& [key, value] : tags) {
    for (const auto& [name, field] : Fields()) {
      if (key != std::string(kPrefix) + scope + name) continue;
      std::optional<double> v = ParseDouble(value);
      if (!v) return std::nullopt;
      cost.*field = *v;
      ++found;
    }
  }
  if (found != static_cast<int>(Fields().size())) return std::nullopt;
  return cost;
}

bool IsRunCostTag(const std::string& key) { return StartsWith(key, kPrefix); }

std::string DescribeRunCost(const RunCost& cost) {
  double rest = cost.trainbench - cost.listeners - cost.tracking_server;
  std::string text = Seconds(cost.total()) + " s of CPU time";
  if (cost.command > 0) {
    char share[64];
    std::snprintf(share, sizeof share, ", %.1f%% of the command's %s s", 100 * cost.total() / cost.command,
                  Seconds(cost.command).c_str());
    text += share;
  }
  return text + ": listeners " + Seconds(cost.listeners) + " s, tracking server " +
         Seconds(cost.tracking_server) + " s, helper tools " + Seconds(cost.tools) + " s, the rest " +
         Seconds(rest < 0 ? 0 : rest) + " s";
}

}  // namespace tb
