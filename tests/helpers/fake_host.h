// What tests of a host listener on a fake /proc and /sys share: a scratch root the files are
// written under (ScratchDirectory), and a sink that keeps each series' last value by
// "metric{labels}".
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "metrics/sample.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {

class CollectingSink : public SampleSink {
 public:
  void Add(const Sample& s) override { last[std::string(s.metric) + "{" + s.labels.text() + "}"] = s.value; }
  std::map<std::string, double> last;
};

class FakeHostTest : public ::testing::Test {
 protected:
  // Writes `text` and a newline to `path` (relative, "sys/class/...") under the root.
  void Write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text << "\n";
  }

  ScratchDirectory scratch_{"tb-host"};
  const std::filesystem::path& root_ = scratch_.path();
};

}  // namespace tb
