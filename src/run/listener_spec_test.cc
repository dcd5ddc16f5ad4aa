#include <gtest/gtest.h>

#include "run/launcher.h"

namespace tb {
namespace {

using Names = std::vector<std::string>;

// radT 0.2.29's listener names: its default set (with free), none (no listener at all, not
// trainbench's default set), macmon (macOS only: skipped, the run goes on).
TEST(ListenerSpec, RadtsDefaultSetNoneAndMacmonAreTaken) {
  EXPECT_EQ(ParseListeners("smi+top+dcgmi+iostat+free").value(),
            (Names{"smi", "top", "dcgmi", "iostat", "free"}));
  EXPECT_EQ(ParseListeners("SMI+Top").value(), (Names{"smi", "top"}));
  EXPECT_EQ(ParseListeners("none").value(), (Names{"none"}));
  EXPECT_EQ(ParseListeners("none+top").value(), (Names{"top"}));
  EXPECT_EQ(ParseListeners("macmon").value(), (Names{"none"}));
  EXPECT_EQ(ParseListeners("top+macmon").value(), (Names{"top"}));
  EXPECT_TRUE(ParseListeners("").value().empty()) << "nothing given: the default set";
  Result<Names> bad = ParseListeners("top+bogus");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("free"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace tb
