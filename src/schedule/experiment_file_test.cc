#include "schedule/experiment_file.h"

#include <gtest/gtest.h>

namespace tb {
namespace {

// radT's shape, File before Listeners, with a quoted Params cell and a comment.
const char* kRadtFile =
    "Experiment,Workload,Status,Run,Devices,Collocation,    File,    Listeners,Params\n"
    "# bs sweep\n"
    "         7,       1,      ,   ,      0,          -,train.py,smi+top+dcgmi,--batch-size 64\n"
    "         7,       2,      ,   ,      0,        MPS,train.py,smi+top,\"--note 'a, b'\"\n"
    "         7,       2,      ,   ,      0,        MPS,train.py,smi+top,--batch-size 64\n";

TEST(ExperimentFile, ParsesRadtFilesByHeaderName) {
  ExperimentFile f = ParseExperimentFile(kRadtFile, "exp.csv").value();
  ASSERT_EQ(f.rows.size(), 3u);
  EXPECT_EQ(f.rows[0].line, 3u);
  EXPECT_EQ(f.rows[0].experiment, "7");
  EXPECT_EQ(f.rows[0].file, "train.py");
  EXPECT_EQ(f.rows[0].listeners, "smi+top+dcgmi");
  EXPECT_EQ(f.rows[1].collocation, "MPS");
  EXPECT_EQ(f.rows[1].params, "--note 'a, b'");
  EXPECT_EQ(SplitWords(f.rows[1].params), (std::vector<std::string>{"--note", "a, b"}));
}

TEST(ExperimentFile, WriteBackChangesStatusAndRunOnly) {
  ExperimentFile f = ParseExperimentFile(kRadtFile, "exp.csv").value();
  std::string out = UpdateStatusAndRun(f, {{3, "FINISHED", "0123abcd"}, {5, "FAILED", "99"}});
  ExperimentFile back = ParseExperimentFile(out, "exp.csv").value();
  EXPECT_EQ(back.rows[0].status, "FINISHED");
  EXPECT_EQ(back.rows[0].run, "0123abcd");
  EXPECT_EQ(back.rows[1].status, "");
  EXPECT_EQ(back.rows[2].status, "FAILED");
  // Every other line is byte for byte what it was; padded cells keep their width.
  EXPECT_EQ(back.lines[0], f.lines[0]);
  EXPECT_EQ(back.lines[1], "# bs sweep");
  EXPECT_EQ(back.lines[3], f.lines[3]);
  EXPECT_EQ(back.lines[4],
            "         7,       2,FAILED, 99,      0,        MPS,train.py,smi+top,--batch-size 64");
}

TEST(ExperimentFile, ErrorsNameTheLineAndColumn) {
  Status missing =
      ParseExperimentFile("Experiment,Workload,Status,Run,Devices,File,Listeners,Params\n1,1,,,0,t.py,top,\n",
                          "x.csv")
          .status();
  EXPECT_NE(missing.message().find("x.csv:1: no column 'Collocation'"), std::string::npos)
      << missing.message();
  Status cells =
      ParseExperimentFile(
          "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n1,1,,,0,-,t.py,top\n",
          "x.csv")
          .status();
  EXPECT_NE(cells.message().find("x.csv:2: 8 cells, but the header has 9"), std::string::npos)
      << cells.message();
  Status file =
      ParseExperimentFile(
          "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n1,1,,,0,-, ,top,\n",
          "x.csv")
          .status();
  EXPECT_NE(file.message().find("x.csv:2: column File"), std::string::npos) << file.message();
}

}  // namespace
}  // namespace tb
