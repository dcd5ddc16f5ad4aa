// The text nvidia-smi and dcgmi print, line by line, and dcgmi's MIG hierarchy.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/strings.h"
#include "collect/gpu_tool_parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  tb::SmiRow smi;
  tb::DmonRow dmon;
  for (std::string_view line : tb::Split(text, '\n')) {
    for (size_t fields : {size_t{1}, size_t{7}, size_t{12}}) {
      (void)tb::ParseSmiCsvLine(line, fields, smi);
      (void)tb::ParseDmonLine(line, fields, dmon);
    }
    (void)tb::ParseSmiTimestamp(line);
  }
  (void)tb::FindDcgmInstanceEntity(text, 0, 1);
  (void)tb::FindDcgmInstanceEntity(text, 7, 13);
  return 0;
}
