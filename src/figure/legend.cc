#include "figure/legend.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "base/strings.h"
#include "store/run_tags.h"

namespace tb {
namespace {

std::string Param(const RunRecord& r, std::string_view key) {
  for (const auto& [k, v] : r.params) {
    if (k == key) return v;
  }
  return "";
}

}  // namespace

std::vector<size_t> StylesBySpec(const std::vector<Source>& sources,
                                 const std::vector<std::string>& workloads,
                                 const std::vector<RunRecord>& runs) {
  std::vector<size_t> styles(sources.size());
  std::set<std::string> seen;
  bool repeated = false;
  for (const Source& s : sources) repeated = repeated || (s.run != nullptr && !seen.insert(s.run->id).second);
  for (size_t i = 0; i < sources.size(); ++i) {
    const Source& s = sources[i];
    size_t at =
        s.run == nullptr
            ? std::find(workloads.begin(), workloads.end(), s.workload) - workloads.begin()
            : workloads.size() + (std::find_if(runs.begin(), runs.end(),
                                               [&](const RunRecord& r) { return r.id == s.run->id; }) -
                                  runs.begin());
    bool known = s.run == nullptr ? at < workloads.size() : at < workloads.size() + runs.size();
    styles[i] = repeated || !known ? i : at;
  }
  return styles;
}

std::string FillLegend(std::string_view pattern, const Source& s) {
  std::string out;
  size_t i = 0;
  while (i < pattern.size()) {
    size_t open = pattern.find('{', i);
    size_t close = open == std::string_view::npos ? open : pattern.find('}', open);
    if (close == std::string_view::npos) {
      out.append(pattern.substr(i));
      break;
    }
    out.append(pattern.substr(i, open - i));
    std::string key(pattern.substr(open + 1, close - open - 1));
    std::string value;
    if (s.run == nullptr) {
      std::string_view w = s.workload;
      size_t colon = w.rfind(':');
      if (key == "workload") value = std::string(w.substr(colon + 1));
      if (key == "experiment") value = std::string(w.substr(0, colon));
      if (key == "runs") value = std::to_string(s.run_count);
      if (key == "name") value = std::string(w.substr(colon + 1)) + " mean";
    } else {
      const RunRecord& r = *s.run;
      if (key == "name")
        value = r.name;
      else if (key == "letter")
        value = TagValue(r, kLetterTag);
      else if (key == "workload")
        value = r.workload;
      else if (key == "experiment")
        value = r.experiment;
      else if (key == "labels")
        value = s.labels;
      else if (key == "id")
        value = r.id.substr(0, 8);
      else
        value = Param(r, key);
    }
    out += value;
    i = close + 1;
  }
  return out;
}

namespace {

// Lines of runs still named alike (a GPU that each repeat of one pair shared: "GPU 0, shared
// by 0A- and 0B-" once a repeat): each with its repeat ("(repeat 2/3)") where they all have a
// different one, else its place in start order ("#2").
void TellApart(const std::vector<Source>& sources, std::vector<std::string>& names) {
  std::map<std::string, std::vector<size_t>> same;
  for (size_t i = 0; i < names.size(); ++i) {
    if (sources[i].run != nullptr) same[names[i]].push_back(i);
  }
  for (auto& [name, at] : same) {
    if (at.size() < 2) continue;
    std::set<std::string> repeats;
    for (size_t i : at) repeats.insert(TagValue(*sources[i].run, kRepeatTag));
    bool by_repeat = repeats.size() == at.size() && repeats.count("") == 0;
    std::sort(at.begin(), at.end(), [&](size_t a, size_t b) {
      return std::tie(sources[a].run->start_ms, sources[a].run->id) <
             std::tie(sources[b].run->start_ms, sources[b].run->id);
    });
    for (size_t k = 0; k < at.size(); ++k) {
      names[at[k]] += by_repeat ? Concat({" (repeat ", TagValue(*sources[at[k]].run, kRepeatTag), ")"})
                                : Concat({" #", std::to_string(k + 1)});
    }
  }
}

}  // namespace

std::vector<std::string> DefaultLegend(const std::vector<Source>& sources) {
  std::vector<const RunRecord*> runs;
  std::set<std::string> labels;
  for (const Source& s : sources) {
    if (s.run == nullptr) continue;
    for (const RunRecord* r : s.sharing) {
      if (std::find(runs.begin(), runs.end(), r) == runs.end()) runs.push_back(r);
    }
    if (std::find(runs.begin(), runs.end(), s.run) == runs.end()) runs.push_back(s.run);
    labels.insert(s.labels);
  }
  // The run's name; where names repeat, its workload and letter; where those repeat too,
  // its place among its repeats. The web page names its lines by the same rule.
  auto distinct = [&](auto name_of) {
    std::set<std::string> names;
    for (const RunRecord* r : runs) {
      std::string n = name_of(*r);
      if (n.empty() || !names.insert(n).second) return false;
    }
    return true;
  };
  auto workload_letter = [](const RunRecord& r) {
    std::string letter = TagValue(r, kLetterTag);
    return r.workload.empty() || letter.empty() ? std::string() : Concat({r.workload, " ", letter});
  };
  int rule = distinct([](const RunRecord& r) { return r.name; }) ? 0 : distinct(workload_letter) ? 1 : 2;
  // Rule 2, repeats of one configuration: workload and letter (else the name) and the run's
  // place among the runs so named, in start order ("pair 0A- #2"), never a hex id.
  auto base = [&](const RunRecord& r) {
    std::string wl = workload_letter(r);
    return wl.empty() ? r.name : wl;
  };
  std::map<const RunRecord*, size_t> ordinal;
  if (rule == 2) {
    std::vector<const RunRecord*> by_start = runs;
    std::sort(by_start.begin(), by_start.end(), [](const RunRecord* x, const RunRecord* y) {
      return std::tie(x->start_ms, x->id) < std::tie(y->start_ms, y->id);
    });
    std::map<std::string, size_t> seen;
    for (const RunRecord* r : by_start) ordinal[r] = ++seen[base(*r)];
  }
  std::vector<std::string> out;
  for (const Source& s : sources) {
    if (s.run == nullptr) {
      std::string_view w = std::string_view(s.workload).substr(s.workload.rfind(':') + 1);
      bool number = !w.empty() && w.find_first_not_of("0123456789") == std::string_view::npos;
      out.push_back(FillLegend(Concat({number ? "workload " : "", "{workload}, ",
                                       s.run_count == 1 ? "1 run" : "mean of {runs} runs"}),
                               s));
      continue;
    }
    auto name_of = [&](const RunRecord& r) {
      if (rule == 2) return Concat({base(r), " #", std::to_string(ordinal[&r])});
      return rule == 0 ? r.name : workload_letter(r);
    };
    std::string name = name_of(*s.run);
    if (!s.sharing.empty()) {  // "GPU 0, shared by A and B"
      std::string gpu = s.labels;
      for (std::string_view part : Split(s.labels, ',')) {
        if (StartsWith(part, "gpu=")) gpu = Concat({"GPU ", part.substr(4)});
      }
      // Each run by its letter where all have one ("0AMPS"): the names would not fit a column.
      std::vector<const RunRecord*> all = {s.run};
      all.insert(all.end(), s.sharing.begin(), s.sharing.end());
      bool letters =
          std::all_of(all.begin(), all.end(), [](const RunRecord* r) { return HasTag(*r, kLetterTag); });
      name = Concat({gpu, ", shared by "});
      for (size_t k = 0; k < all.size(); ++k) {
        name += Concat({k == 0                ? ""
                        : k + 1 == all.size() ? " and "
                                              : ", ",
                        letters ? TagValue(*all[k], kLetterTag) : name_of(*all[k])});
      }
    } else if (labels.size() > 1 && !s.labels.empty()) {
      name += " [" + s.labels + "]";
    }
    out.push_back(name);
  }
  TellApart(sources, out);
  return out;
}

}  // namespace tb
