#include "schedule/experiment_file.h"

#include <gtest/gtest.h>

#include "base/strings.h"
#include "schedule/gpu_sharing.h"

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

// Files as editors and spreadsheets write them, and values that would break a line.
TEST(ExperimentFile, ByteOrderMarksQuotesAndLineBreaksInValues) {
  std::string bom = std::string("\xEF\xBB\xBF") + kRadtFile;
  ExperimentFile f = ParseExperimentFile(bom, "exp.csv").value();
  EXPECT_EQ(f.rows.size(), 3u);
  std::string out = UpdateStatusAndRun(f, {{3, "FINISHED bad\nname\r", "0123abcd"}});
  EXPECT_TRUE(out.starts_with("\xEF\xBB\xBF"));  // kept for the spreadsheet that wrote it
  ExperimentFile back = ParseExperimentFile(out, "exp.csv").value();
  EXPECT_EQ(back.lines.size(), f.lines.size());
  EXPECT_EQ(back.rows[0].status, "FINISHED bad name");
  Status unclosed = ParseExperimentFile(
                        "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n1,1,,,0,-,"
                        "t.py,top,\"--a 1\n",
                        "x.csv")
                        .status();
  EXPECT_NE(unclosed.message().find("x.csv:2: a quote is not closed"), std::string::npos)
      << unclosed.message();
}

// A file saved on Windows (Excel) keeps its CR LF line ends when statuses are written
// back: every other line of it is byte for byte as it was.
TEST(ExperimentFile, WriteBackKeepsWindowsLineEnds) {
  std::string crlf;
  for (std::string_view line : Split(kRadtFile, '\n')) {
    if (!line.empty()) crlf += std::string(line) + "\r\n";
  }
  ExperimentFile f = ParseExperimentFile(crlf, "exp.csv").value();
  std::string out = UpdateStatusAndRun(f, {{3, "FINISHED", "0123abcd"}});
  std::vector<std::string_view> before = Split(crlf, '\n'), after = Split(out, '\n');
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) {
    if (i == 2) {
      EXPECT_TRUE(after[i].ends_with("\r"));
      EXPECT_NE(after[i].find("FINISHED"), std::string_view::npos);
    } else {
      EXPECT_EQ(after[i], before[i]) << "line " << i + 1;
    }
  }
}

TEST(ExperimentFile, ParamsReachTheScriptAsWrittenAsRadtGivesThem) {
  EXPECT_EQ(ParamsToArguments("batch-size=64"), (std::vector<std::string>{"batch-size=64"}));
  EXPECT_EQ(ParamsToArguments("trainer.max_epochs=2 model=resnet"),
            (std::vector<std::string>{"trainer.max_epochs=2", "model=resnet"}));
  EXPECT_EQ(ParamsToArguments("--batch-size 64 --lr=0.1"),
            (std::vector<std::string>{"--batch-size", "64", "--lr=0.1"}));
  EXPECT_EQ(ParamsToArguments("--name 'two words'"), (std::vector<std::string>{"--name", "two words"}));
  EXPECT_EQ(ParamsToArguments("data.csv"), (std::vector<std::string>{"data.csv"}));
  EXPECT_TRUE(ParamsToArguments("").empty());
}

TEST(ExperimentFile, RowsAreFoundAgainAfterTheUserMovedThem) {
  const std::string header = "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n";
  ExperimentFile before =
      ParseExperimentFile(header + "e,1,,,0,-,t.py,top,--a 1\ne,1,,,0,-,t.py,top,--a 1\n", "x").value();
  ExperimentFile after =
      ParseExperimentFile(
          header + "# a note\ne,0,,,0,-,t.py,top,\ne,1,,,0,-,t.py,top,--a 1\ne,1,,,0,-,t.py,top,--a 1\n", "x")
          .value();
  std::set<size_t> taken;
  std::optional<size_t> first = MatchRow(after, before.rows[0], taken);
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, 4u);
  taken.insert(*first);
  EXPECT_EQ(MatchRow(after, before.rows[1], taken), 5u);  // identical rows map one to one
  taken.insert(5);
  EXPECT_FALSE(MatchRow(after, before.rows[1], taken));
  ExperimentFile edited = ParseExperimentFile(header + "e,1,,,0,-,t.py,top,--a 2\n", "x").value();
  EXPECT_FALSE(MatchRow(edited, before.rows[0], {}));
}

// A hung nvidia-smi mig or nvidia-cuda-mps-control never hangs the scheduler: the tool is
// killed at its deadline and the failure says so.
TEST(GpuSharing, AToolThatHangsIsKilledAtItsDeadlineAndSaidSo) {
  Result<ToolResult> r = RunTool({"sleep", "30"}, {}, 300);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("sleep 30 did not answer"), std::string::npos) << r.status().message();
  Result<ToolResult> quick = RunTool({"sh", "-c", "echo out; echo err >&2; exit 4"});
  ASSERT_TRUE(quick.ok());
  EXPECT_EQ(quick->code, 4);
  EXPECT_EQ(quick->out, "out\nerr\n");
}

TEST(GpuSharing, NvidiaSmiListingsAndMigProfilesAreRead) {
  std::vector<SmiGpu> gpus = ParseGpuQuery(
      "0, GPU-3f6c2a91-5b1e-4d0a-9c7e-1a2b3c4d5e60, Disabled\n1, GPU-8d1e7b42-0c3f-4e9a-a5b6-7c8d9e0f1a21, "
      "Enabled\n");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[1].mig_mode, "Enabled");
  AddMigDevices(
      "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-3f6c2a91-5b1e-4d0a-9c7e-1a2b3c4d5e60)\n"
      "GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-8d1e7b42-0c3f-4e9a-a5b6-7c8d9e0f1a21)\n"
      "  MIG 3g.20gb     Device  0: (UUID: MIG-5e1f0a3b-6c2d-5e8f-9a0b-1c2d3e4f5a6b)\n"
      "  MIG 1g.5gb      Device  1: (UUID: MIG-7a2b1c3d-8e4f-5a6b-7c8d-9e0f1a2b3c4d)\n",
      gpus);
  EXPECT_TRUE(gpus[0].mig.empty());
  ASSERT_EQ(gpus[1].mig.size(), 2u);
  EXPECT_EQ(gpus[1].mig[1].profile, "1g.5gb");
  EXPECT_EQ(gpus[1].mig[1].uuid, "MIG-7a2b1c3d-8e4f-5a6b-7c8d-9e0f1a2b3c4d");
  for (const char* p : {"1g.5gb", "3g.20gb", "7g.80gb", "1g.10gb+me"}) EXPECT_TRUE(IsMigProfile(p)) << p;
  for (const char* p : {"MPS", "-", "3g", "g.5gb", "3g.20", "3g.20gb+", "3g.20gbx"})
    EXPECT_FALSE(IsMigProfile(p)) << p;
}

}  // namespace
}  // namespace tb
