#include "collect/gpu_tool_parsers.h"

#include <time.h>

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

std::optional<int64_t> ParseSmiTimestamp(std::string_view text) {
  // YYYY/MM/DD HH:MM:SS.mmm
  std::string t(Trim(text));
  tm parts{};
  int millis = 0;
  if (std::sscanf(t.c_str(), "%d/%d/%d %d:%d:%d.%d", &parts.tm_year, &parts.tm_mon, &parts.tm_mday,
                  &parts.tm_hour, &parts.tm_min, &parts.tm_sec, &millis) != 7) {
    return std::nullopt;
  }
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  parts.tm_isdst = -1;
  time_t seconds = mktime(&parts);
  if (seconds == -1) return std::nullopt;
  return int64_t{seconds} * 1000 + millis;
}

std::optional<int> FindDcgmInstanceEntity(std::string_view hierarchy, unsigned gpu,
                                          unsigned gpu_instance_id) {
  std::string want = "I " + std::to_string(gpu) + "/" + std::to_string(gpu_instance_id);
  for (std::string_view line : Split(hierarchy, '\n')) {
    size_t arrow = line.find("-> ");
    if (arrow == std::string_view::npos) continue;
    std::string_view rest = Trim(line.substr(arrow + 3));
    size_t end = rest.find_first_of(" |");
    if (rest.substr(0, end) != "I" || Trim(rest.substr(0, rest.find('|'))) != want) continue;
    size_t at = line.find("(EntityID: ");
    if (at == std::string_view::npos) continue;
    std::string_view id = line.substr(at + 11);
    id = id.substr(0, id.find(')'));
    if (std::optional<uint64_t> v = ParseUint(Trim(id))) return static_cast<int>(*v);
  }
  return std::nullopt;
}

}  // namespace tb
