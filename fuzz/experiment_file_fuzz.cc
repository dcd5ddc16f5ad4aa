// Experiment files as users and spreadsheets write them: parsed, written back, parsed again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "schedule/experiment_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  tb::Result<tb::ExperimentFile> file = tb::ParseExperimentFile(text, "fuzz.csv");
  if (!file.ok()) return 0;
  std::vector<tb::CellUpdate> updates;
  for (const tb::ExperimentRow& row : file->rows) {
    (void)tb::SplitWords(row.params);
    (void)tb::ParamsToArguments(row.params);
    updates.push_back({row.line, "FINISHED a\nname, \"quoted\"", "0123456789abcdef"});
  }
  // What is written back reads again, with the same rows.
  std::string written = tb::UpdateStatusAndRun(*file, updates);
  tb::Result<tb::ExperimentFile> again = tb::ParseExperimentFile(written, "fuzz.csv");
  if (!again.ok() || again->rows.size() != file->rows.size()) std::abort();
  std::set<size_t> taken;
  for (const tb::ExperimentRow& row : file->rows) (void)tb::MatchRow(*again, row, taken);
  return 0;
}
