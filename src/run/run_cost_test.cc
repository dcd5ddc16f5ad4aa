#include "run/run_cost.h"

#include <gtest/gtest.h>

namespace tb {
namespace {

TEST(RunCost, TagsGiveBackTheCostInTheirScope) {
  RunCost cost{
      .command = 15.25, .trainbench = 0.5, .listeners = 0.01, .tracking_server = 0.05, .tools = 0.125};
  KeyValues tags = RunCostTags(cost, "node-tbnode2.");
  ASSERT_EQ(tags.size(), 5u);
  EXPECT_EQ(tags[0],
            (std::pair<std::string, std::string>{"trainbench.cpu_seconds.node-tbnode2.command", "15.2"}));
  EXPECT_TRUE(IsRunCostTag(tags[0].first));
  EXPECT_FALSE(IsRunCostTag("trainbench.nodes"));
  EXPECT_FALSE(RunCostOfTags(tags).has_value());  // another scope
  std::optional<RunCost> back = RunCostOfTags(tags, "node-tbnode2.");
  ASSERT_TRUE(back.has_value());
  EXPECT_DOUBLE_EQ(back->tools, 0.125);
  EXPECT_DOUBLE_EQ(back->total(), 0.625);
}

TEST(RunCost, MissingOrBrokenTagsAreNoCost) {
  KeyValues tags =
      RunCostTags({.command = 1, .trainbench = 0.2, .listeners = 0, .tracking_server = 0, .tools = 0});
  tags.pop_back();
  EXPECT_FALSE(RunCostOfTags(tags).has_value());
  tags.emplace_back("trainbench.cpu_seconds.tools", "many");
  EXPECT_FALSE(RunCostOfTags(tags).has_value());
}

TEST(RunCost, TheDescriptionSaysTheShareOfTheCommandAndWhereItWent) {
  RunCost cost{.command = 20, .trainbench = 0.3, .listeners = 0.05, .tracking_server = 0.1, .tools = 0.1};
  EXPECT_EQ(DescribeRunCost(cost),
            "0.400 s of CPU time, 2.0% of the command's 20.0 s: listeners 0.050 s, tracking server 0.100 s, "
            "helper tools 0.100 s, the rest 0.150 s");
}

}  // namespace
}  // namespace tb
