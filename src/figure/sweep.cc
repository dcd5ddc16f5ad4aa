#include "figure/sweep.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "base/strings.h"
#include "figure/axis.h"

namespace tb {

double FigureSweep::At(double v) const {
  if (hi <= lo) return 0.5;
  if (log) return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  return (v - lo) / (hi - lo);
}

Status ShadeBySweep(const std::string& param, const std::vector<RunRecord>& runs, Figure& figure) {
  std::map<std::string, double> value_of;  // run id -> value
  std::set<std::string> others;
  for (const RunRecord& r : runs) {
    for (const auto& [name, v] : r.params) others.insert(name);
    auto it =
        std::find_if(r.params.begin(), r.params.end(), [&](const auto& kv) { return kv.first == param; });
    if (it == r.params.end()) continue;
    std::optional<double> v = ParseDouble(Trim(it->second));
    if (!v || !std::isfinite(*v)) {
      return Status::InvalidArgument(
          Concat({"colour by '", param, "': run ", r.name.empty() ? r.id : r.name, " has ", param, "=",
                  it->second, ", not a number; a sweep is coloured by a numeric param"}));
    }
    value_of[r.id] = *v;
  }
  if (value_of.empty()) {
    std::string list;
    for (const std::string& name : others) list += (list.empty() ? "" : ", ") + name;
    return Status::InvalidArgument(
        Concat({"colour by '", param, "': no run of the figure has that param",
                list.empty() ? "; its runs have no params" : Concat({"; its runs have: ", list})}));
  }
  FigureSweep sweep;
  sweep.param = param;
  for (const FigureLine& l : figure.lines) {
    auto it = value_of.find(l.run_id);
    if (it != value_of.end()) sweep.values.push_back(it->second);
  }
  std::sort(sweep.values.begin(), sweep.values.end());
  sweep.values.erase(std::unique(sweep.values.begin(), sweep.values.end()), sweep.values.end());
  if (sweep.values.empty()) return Status::Ok();  // none of the lines is a run's
  sweep.lo = sweep.values.front();
  sweep.hi = sweep.values.back();
  sweep.log = sweep.lo > 0 && sweep.hi / sweep.lo >= 8;
  for (FigureLine& l : figure.lines) {
    auto it = value_of.find(l.run_id);
    if (it != value_of.end()) l.shade = sweep.At(it->second);
  }
  // In order of value, the lines without one (workload means) first.
  std::stable_sort(figure.lines.begin(), figure.lines.end(), [](const FigureLine& a, const FigureLine& b) {
    return a.shade.value_or(-1) < b.shade.value_or(-1);
  });
  figure.sweep = std::move(sweep);
  return Status::Ok();
}

std::vector<double> SweepTicks(const FigureSweep& sweep) {
  if (sweep.values.size() <= 8) return sweep.values;
  std::vector<double> out;
  for (const Tick& t : sweep.log ? LogTicks(sweep.lo, sweep.hi) : NumberTicks(sweep.lo, sweep.hi, 5)) {
    if (!t.label.empty() && t.at >= sweep.lo && t.at <= sweep.hi) out.push_back(t.at);
  }
  return out;
}

}  // namespace tb
