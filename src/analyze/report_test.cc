// The experiment report: its CSV as a spreadsheet or pandas reads it back, and what it calls
// a workload's collocation.
#include "analyze/report.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store/run_tags.h"
#include "tests/helpers/scratch_directory.h"

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

// Runs of one workload on different GPUs share nothing: the report says so rather than
// calling them a naive collocation.
TEST(ReportCollocation, RunsOnSeparateGpusAreNotACollocation) {
  ScratchDirectory scratch("tb-report");
  std::unique_ptr<Store> store = Store::Open((scratch.path() / "r.db").string()).value();
  ASSERT_TRUE(store->EnsureExperiment("e").ok());
  auto add = [&](const std::string& workload, const std::string& devices) {
    RunRecord r;
    r.id = NewRunId();
    r.experiment = "e";
    r.workload = workload;
    r.devices = devices;
    r.start_ms = 1763777000000;
    r.tags = {{std::string(kCollocationTag), "-"}};
    ASSERT_TRUE(store->CreateRun(r).ok());
    ASSERT_TRUE(store->FinishRun(r.id, r.start_ms + 1000, kFinished, 0, std::nullopt, "").ok());
  };
  add("separate", "0");
  add("separate", "1+2");
  add("shared", "0");
  add("shared", "0+1");
  ExperimentReport report = BuildReport(*store, "e").value();
  std::map<std::string, std::string> collocation;
  for (const WorkloadReport& w : report.workloads) collocation[w.workload] = w.collocation;
  EXPECT_EQ(collocation["separate"], "separate GPUs");
  EXPECT_EQ(collocation["shared"], "naive");
}

}  // namespace
}  // namespace tb
