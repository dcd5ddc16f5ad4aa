// Pure parsers for the text of NVIDIA's tools, tested on their real formats.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tb {

// One line of `nvidia-smi --query-gpu=... --format=csv,noheader,nounits`: fields are
// separated by ", "; "[N/A]", "[Not Supported]" and the like are absent values. Text
// fields (timestamp, uuid, pstate "P0" becomes 0) are kept in `text`. Returns false when
// the line does not have `expected_fields` fields.
struct SmiRow {
  std::vector<std::optional<double>> values;
  std::vector<std::string> text;
};
bool ParseSmiCsvLine(std::string_view line, size_t expected_fields, SmiRow& out);

// One data row of `dcgmi dmon`: "GPU 0     52.183    356133763110    0.000" (or "GPU-I 1"
// under MIG). Header lines ("#Entity", "ID") are not rows. "N/A" is an absent value.
struct DmonRow {
  std::string entity_kind;  // "GPU", "GPU-I", ...
  int entity_id = 0;
  std::vector<std::optional<double>> values;
};
enum class DmonLine { kRow, kHeader, kError, kOther };
DmonLine ParseDmonLine(std::string_view line, size_t expected_fields, DmonRow& out);

}  // namespace tb
