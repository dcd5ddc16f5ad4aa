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
  // Exactly YYYY/MM/DD HH:MM:SS.mmm, every field in its range (no sscanf: a field of 30
  // digits must be refused, not overflow).
  std::string_view t = Trim(text);
  if (t.size() != 23) return std::nullopt;
  auto field = [&](size_t at, size_t digits, int low, int high) -> std::optional<int> {
    int v = 0;
    for (size_t i = at; i < at + digits; ++i) {
      if (t[i] < '0' || t[i] > '9') return std::nullopt;
      v = v * 10 + (t[i] - '0');
    }
    if (v < low || v > high) return std::nullopt;
    return v;
  };
  for (auto [at, c] : {std::pair{4, '/'}, {7, '/'}, {10, ' '}, {13, ':'}, {16, ':'}, {19, '.'}}) {
    if (t[static_cast<size_t>(at)] != c) return std::nullopt;
  }
  std::optional<int> year = field(0, 4, 1970, 9999), month = field(5, 2, 1, 12), day = field(8, 2, 1, 31),
                     hour = field(11, 2, 0, 23), minute = field(14, 2, 0, 59), second = field(17, 2, 0, 60),
                     millis = field(20, 3, 0, 999);
  if (!year || !month || !day || !hour || !minute || !second || !millis) return std::nullopt;
  tm parts{};
  parts.tm_year = *year - 1900;
  parts.tm_mon = *month - 1;
  parts.tm_mday = *day;
  parts.tm_hour = *hour;
  parts.tm_min = *minute;
  parts.tm_sec = *second;
  parts.tm_isdst = -1;
  time_t seconds = mktime(&parts);
  if (seconds == -1) return std::nullopt;
  return int64_t{seconds} * 1000 + *millis;
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
