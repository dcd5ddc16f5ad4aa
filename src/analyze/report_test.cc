// The experiment report's CSV as a spreadsheet or pandas reads it back.
#include "analyze/report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tb {
namespace {

// The fields of a CSV line (RFC 4180: quoted fields, doubled quotes), as pandas splits them.
std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// An experiment or workload named with a comma or a quote stays one field.
TEST(ReportCsv, NamesWithCommasAndQuotesStayInTheirColumn) {
  ExperimentReport r;
  r.experiment = "resnet \"wide\", bs sweep";
  WorkloadReport w;
  w.workload = "1,2";
  w.collocation = "mps";
  r.workloads.push_back(w);
  std::string csv = ReportCsv(r);
  std::string header = csv.substr(0, csv.find('\n'));
  std::string row = csv.substr(header.size() + 1);
  row = row.substr(0, row.find('\n'));
  std::vector<std::string> names = Fields(header), cells = Fields(row);
  ASSERT_EQ(cells.size(), names.size()) << csv;
  EXPECT_EQ(cells[0], r.experiment);
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "workload") {
      EXPECT_EQ(cells[i], "1,2");
    } else if (names[i] == "collocation") {
      EXPECT_EQ(cells[i], "mps");
    }
  }
}

}  // namespace
}  // namespace tb
