#include "schedule/sweep_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <set>
#include <vector>

#include "base/strings.h"

namespace tb {
namespace {

constexpr const char* kFields[] = {"name",      "experiment", "collocation", "devices",
                                   "listeners", "file",       "method",      "parameters"};

// A scalar as radT's Python writes it into a command line: YAML 1.1's booleans and null
// as Python prints them, any other value as written.
std::string PythonText(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() != "?") return s;  // quoted: a string
  static const std::set<std::string> kTrue = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
  static const std::set<std::string> kFalse = {"false", "False", "FALSE", "no", "No",
                                               "NO",    "off",   "Off",   "OFF"};
  if (kTrue.count(s) != 0) return "True";
  if (kFalse.count(s) != 0) return "False";
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return "None";
  return s;
}

Status Wrong(const std::string& path, const YAML::Node& at, const std::string& what) {
  return Status::InvalidArgument(Concat({path, ":", std::to_string(at.Mark().line + 1), ": ", what}));
}

// A field that must be one value.
Result<std::string> ScalarField(const std::string& path, const YAML::Node& doc, const char* key) {
  const YAML::Node n = doc[key];
  if (!n.IsScalar()) {
    return Wrong(path, n,
                 Concat({"'", key, "' must be one value (radT's sweeps give one ", key, " for every run)"}));
  }
  return PythonText(n);
}

// The parameters' names and values, in the file's order.
Status ReadParameters(const std::string& path, const YAML::Node& parameters, std::vector<std::string>& keys,
                      std::vector<std::vector<std::string>>& values) {
  if (!parameters.IsMap() || parameters.size() == 0) {
    return Wrong(path, parameters,
                 "'parameters' must map each parameter to its values: batch-size: {values: [8, 16]}");
  }
  for (const auto& kv : parameters) {
    std::string key = kv.first.Scalar();
    const YAML::Node list = kv.second.IsMap() ? kv.second["values"] : YAML::Node();
    if (!list.IsSequence() || list.size() == 0) {
      return Wrong(path, kv.second,
                   Concat({"parameter '", key, "' needs its values: ", key, ": {values: [...]}"}));
    }
    std::vector<std::string> texts;
    for (const YAML::Node& v : list) {
      if (!v.IsScalar())
        return Wrong(path, v, Concat({"a value of '", key, "' must be one value, not a list or map"}));
      texts.push_back(PythonText(v));
    }
    keys.push_back(key);
    values.push_back(std::move(texts));
  }
  return Status::Ok();
}

// What was written back: the parent run and each workload's outcome.
Status ReadOutcomes(const std::string& path, const YAML::Node& doc, SweepFile& sweep) {
  if (const YAML::Node parent = doc["parent"]; parent && parent.IsScalar()) sweep.parent = parent.Scalar();
  const YAML::Node status = doc["status"];
  if (!status || !status.IsMap()) return Status::Ok();  // radT starts again from none
  for (const auto& kv : status) {
    std::optional<int64_t> key = kv.first.IsScalar() ? ParseInt(kv.first.Scalar()) : std::nullopt;
    if (!key || !kv.second.IsScalar()) {
      return Wrong(path, kv.first,
                   "'status' maps workload numbers to outcomes (1: FINISHED RUN_ID (PARAMS))");
    }
    sweep.status[*key] = kv.second.Scalar();
  }
  return Status::Ok();
}

// The params of the combinations a FINISHED outcome names ("FINISHED RUN_ID (PARAMS)").
std::set<std::string> FinishedParams(const std::map<int64_t, std::string>& status) {
  std::set<std::string> done;
  for (const auto& [key, outcome] : status) {
    if (outcome.find("FINISHED") == std::string::npos) continue;
    std::vector<std::string_view> words = SplitWhitespace(outcome);
    std::string rest;
    for (size_t i = 2; i < words.size(); ++i) rest += (rest.empty() ? "" : " ") + std::string(words[i]);
    if (rest.size() >= 2) done.insert(rest.substr(1, rest.size() - 2));
  }
  return done;
}

// YAML's double-quoted form of `s`.
std::string Quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

bool IsSweepPath(std::string_view path) { return path.ends_with(".yaml") || path.ends_with(".yml"); }

Result<SweepFile> ParseSweep(std::string_view text, const std::string& path) {
  YAML::Node doc;
  try {
    doc = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(
        Concat({path, ":", std::to_string(e.mark.line + 1), ": not a YAML sweep: ", e.msg}));
  }
  if (!doc.IsMap()) {
    return Status::InvalidArgument(path +
                                   ": a sweep is a YAML mapping of name, experiment, collocation, devices, "
                                   "listeners, file, method and parameters (radT's form)");
  }
  const YAML::Node& fields = doc;
  for (const char* key : kFields) {
    if (!fields[key]) {
      return Status::InvalidArgument(
          Concat({path, ": the sweep has no '", key,
                  "' field; radT's sweeps give name, experiment, collocation, devices, "
                  "listeners, file, method and parameters"}));
    }
  }
  SweepFile sweep;
  ExperimentRow base;
  base.line = fields["file"].Mark().line + 1;
  std::string method;
  for (auto [key, into] : {std::pair<const char*, std::string*>{"name", &sweep.name},
                           {"experiment", &base.experiment},
                           {"collocation", &base.collocation},
                           {"devices", &base.devices},
                           {"listeners", &base.listeners},
                           {"file", &base.file},
                           {"method", &method}}) {
    Result<std::string> value = ScalarField(path, fields, key);
    if (!value.ok()) return value.status();
    *into = *value;
  }
  if (method != "grid" && method != "random") {
    return Wrong(path, fields["method"],
                 "method '" + method +
                     "' is neither grid (every combination in order) "
                     "nor random (every combination, shuffled)");
  }
  base.name = sweep.name;
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values;
  TB_RETURN_IF_ERROR(ReadParameters(path, fields["parameters"], keys, values));
  TB_RETURN_IF_ERROR(ReadOutcomes(path, fields, sweep));

  // Every combination, the last parameter changing fastest (Python's itertools.product).
  std::vector<std::string> combinations = {""};
  for (size_t k = 0; k < keys.size(); ++k) {
    std::vector<std::string> longer;
    for (const std::string& prefix : combinations) {
      for (const std::string& v : values[k])
        longer.push_back(Concat({prefix, prefix.empty() ? "" : " ", "--", keys[k], " ", v}));
    }
    combinations = std::move(longer);
  }
  if (method == "random")
    std::shuffle(combinations.begin(), combinations.end(), std::mt19937(std::random_device()()));
  std::set<std::string> finished = FinishedParams(sweep.status);
  int64_t highest = sweep.status.empty() ? -1 : sweep.status.rbegin()->first;
  for (size_t i = 0; i < combinations.size(); ++i) {
    ExperimentRow row = base;
    char number[24];
    long long workload = highest + 1;
    workload += static_cast<long long>(i);
    std::snprintf(number, sizeof number, "%03lld", workload);
    row.workload = number;
    row.params = combinations[i];
    row.status = finished.count(row.params) != 0 ? "FINISHED" : "";
    sweep.rows.rows.push_back(std::move(row));
  }
  return sweep;
}

std::string SweepOutcome(const std::string& status, const std::string& run_id, const std::string& params) {
  return Concat({status, " ", run_id, " (", params, ")"});
}

std::string SweepWithOutcomes(std::string_view text, const std::string& parent,
                              const std::map<int64_t, std::string>& status) {
  std::string out;
  bool skipping = false;  // inside a top-level parent or status entry
  for (std::string_view line : Split(text, '\n')) {
    bool top_level = !line.empty() && line[0] != ' ' && line[0] != '\t' && line[0] != '-' && line[0] != '#';
    if (top_level) {
      std::string_view key = Trim(line.substr(0, line.find(':')));
      skipping = line.find(':') != std::string_view::npos && (key == "parent" || key == "status");
    }
    if (skipping) continue;
    out.append(line).push_back('\n');
  }
  while (out.ends_with("\n\n")) out.pop_back();
  if (out == "\n") out.clear();
  if (!parent.empty()) out += "parent: " + Quoted(parent) + "\n";
  if (!status.empty()) {
    out += "status:\n";
    for (const auto& [key, outcome] : status)
      out += Concat({"  ", std::to_string(key), ": ", Quoted(outcome), "\n"});
  }
  return out;
}

}  // namespace tb
