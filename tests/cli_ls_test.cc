// `trainbench ls` end to end: what a user scanning the list of runs sees.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "base/strings.h"
#include "store/run_tags.h"
#include "store/store.h"
#include "tests/helpers/cli_fixture.h"

namespace tb {
namespace {

// The line of `out` that holds `text` ("" when none).
std::string LineWith(const std::string& out, const std::string& text) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.find(text) != std::string::npos) return line;
  }
  return "";
}

// The terminal column the run's start time begins at on its line.
size_t StartColumn(const std::string& line) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(line, m, std::regex("\\d{4}-\\d\\d-\\d\\d \\d\\d:"))) << line;
  return DisplayWidth(line.substr(0, static_cast<size_t>(m.position(0))));
}

// Runs and experiments deleted through the tracking API (as MLflow's delete_run and
// delete_experiment do) are left out of the list, said in one line; --all shows them
// marked. Names in any script keep the columns aligned.
TEST_F(CliTest, LsLeavesOutWhatWasDeletedAndAlignsNamesInAnyScript) {
  for (const char* args :
       {"-n plain", "-n '\xe8\xae\xad\xe7\xbb\x83-r\xc3\xa9sum\xc3\xa9'", "-n gone", "-e old -n in-old"}) {
    Shell r = Trainbench(std::string("run -q -l top ") + args + " -- true");
    ASSERT_EQ(r.code, 0) << args << ": " << r.err;
  }
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->SetTags(store->FindRun("gone")->id, {{kDeletedTag, "true"}}).ok());
    for (const ExperimentInfo& e : store->ListExperiments().value()) {
      if (e.name != "old") continue;
      ExperimentChange deleted{.name = std::nullopt, .set_tags = {{kDeletedTag, "true"}}, .delete_tags = {}};
      ASSERT_TRUE(store->ChangeExperiment(e.id, deleted).ok());
    }
  }
  Shell ls = Trainbench("ls");
  ASSERT_EQ(ls.code, 0) << ls.err;
  EXPECT_EQ(ls.out.find("gone"), std::string::npos) << ls.out;
  EXPECT_EQ(ls.out.find("in-old"), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find("(1 deleted experiment and 1 deleted run not shown; --all shows them)"),
            std::string::npos)
      << ls.out;
  std::string plain = LineWith(ls.out, "plain"), wide = LineWith(ls.out, "r\xc3\xa9sum\xc3\xa9");
  ASSERT_FALSE(plain.empty() || wide.empty()) << ls.out;
  EXPECT_EQ(StartColumn(plain), StartColumn(wide)) << ls.out;

  Shell all = Trainbench("ls --all");
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_NE(LineWith(all.out, "gone").find("DELETED"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("experiment old  (1 run)  [deleted]"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("in-old"), std::string::npos) << all.out;
  // Asked for by name, a deleted experiment is listed.
  Shell old = Trainbench("ls old");
  EXPECT_EQ(old.code, 0);
  EXPECT_NE(old.out.find("in-old"), std::string::npos) << old.out;
}

}  // namespace
}  // namespace tb
