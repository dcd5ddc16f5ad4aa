// Pure parsers for the text of NVIDIA's tools, tested on their real formats.
#pragma once

#include <cstdint>
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

// "2022/08/29 21:41:17.905" (nvidia-smi's timestamp field, local time) as Unix ms.
std::optional<int64_t> ParseSmiTimestamp(std::string_view text);

// `dcgmi discovery -c`: the DCGM entity id of GPU instance `gpu_instance_id` on GPU `gpu`,
// from lines such as "| -> I 0/1          | GPU Instance (EntityID: 0)   |".
std::optional<int> FindDcgmInstanceEntity(std::string_view hierarchy, unsigned gpu, unsigned gpu_instance_id);

}  // namespace tb
