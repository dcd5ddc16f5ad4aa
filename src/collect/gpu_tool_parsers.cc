#include "collect/gpu_tool_parsers.h"

#include "base/strings.h"

namespace tb {

bool ParseSmiCsvLine(std::string_view line, size_t expected_fields, SmiRow& out) {
  out.values.clear();
  out.text.clear();
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(", ", start);
    fields.push_back(
        Trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 2;
  }
  if (fields.size() != expected_fields) return false;
  for (std::string_view f : fields) {
    out.text.emplace_back(f);
    if (!f.empty() && f.front() == '[') {  // [N/A], [Not Supported], [Unknown Error], ...
      out.values.push_back(std::nullopt);
    } else if (f.size() >= 2 && f[0] == 'P' && ParseUint(f.substr(1))) {  // pstate
      out.values.push_back(static_cast<double>(*ParseUint(f.substr(1))));
    } else {
      out.values.push_back(ParseDouble(f));
    }
  }
  return true;
}

DmonLine ParseDmonLine(std::string_view line, size_t expected_fields, DmonRow& out) {
  std::string_view t = Trim(line);
  if (t.find("Error") != std::string_view::npos) return DmonLine::kError;
  if (t.empty()) return DmonLine::kOther;
  if (StartsWith(t, "#") || StartsWith(t, "ID")) return DmonLine::kHeader;
  std::vector<std::string_view> f = SplitWhitespace(t);
  if (f.size() != expected_fields + 2) return DmonLine::kOther;
  std::optional<int64_t> id = ParseInt(f[1]);
  if (!id) return DmonLine::kOther;
  out.entity_kind.assign(f[0]);
  out.entity_id = static_cast<int>(*id);
  out.values.clear();
  for (size_t i = 2; i < f.size(); ++i) {
    if (f[i] == "N/A") {
      out.values.push_back(std::nullopt);
      continue;
    }
    std::optional<double> v = ParseDouble(f[i]);
    if (!v) return DmonLine::kOther;
    out.values.push_back(v);
  }
  return DmonLine::kRow;
}

}  // namespace tb
