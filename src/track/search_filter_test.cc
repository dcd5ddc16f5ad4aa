#include "track/search_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tb::tracking {
namespace {

const std::vector<std::string> kAttributes = {"run_id", "run_name", "status", "start_time", "end_time"};
const std::vector<std::string> kNumbers = {"start_time", "end_time"};

Searchable RunOf(double loss, const std::string& lr, const std::string& status, int64_t start) {
  Searchable s;
  s.attributes = {{"run_id", "r" + std::to_string(start)},
                  {"run_name", "resnet-" + lr},
                  {"status", status},
                  {"start_time", std::to_string(start)}};
  s.metrics = {{"loss", loss}};
  s.params = {{"lr", lr}, {"model name", "ResNet50"}};
  s.tags = {{"mlflow.runName", "resnet-" + lr}};
  return s;
}

bool Match(const std::string& filter, const Searchable& s) {
  Result<std::vector<Clause>> c = ParseFilter(filter, kAttributes, kNumbers);
  EXPECT_TRUE(c.ok()) << filter << ": " << c.status().message();
  return c.ok() && Matches(*c, s, kNumbers);
}

TEST(SearchFilterTest, MlflowsGrammarWithItsAliasesAndQuotes) {
  Searchable a = RunOf(0.3, "0.1", "FINISHED", 1000);
  EXPECT_TRUE(Match("", a));
  EXPECT_TRUE(Match("metrics.loss < 0.5", a));
  EXPECT_FALSE(Match("metric.loss>=0.5", a));
  EXPECT_TRUE(Match("params.lr = '0.1' and attributes.status = \"FINISHED\"", a));
  EXPECT_TRUE(Match("param.`model name` LIKE 'Res%'", a));
  EXPECT_FALSE(Match("params.\"model name\" LIKE 'res%'", a));
  EXPECT_TRUE(Match("params.\"model name\" ILIKE 'res%50'", a));
  EXPECT_TRUE(Match("tags.\"mlflow.runName\" = 'resnet-0.1'", a));
  EXPECT_TRUE(Match("attributes.run_id IN ('r1000', 'r2')", a));
  EXPECT_FALSE(Match("attr.run_id NOT IN ('r1000')", a));
  EXPECT_TRUE(Match("attributes.start_time >= 1000 AND attributes.created < 2000", a));
  EXPECT_TRUE(Match("run.run_name != 'x'", a));
  // A run without the metric or param never matches, as in MLflow.
  EXPECT_FALSE(Match("metrics.accuracy > 0", a));
  EXPECT_FALSE(Match("params.batch = '1'", a));
}

TEST(SearchFilterTest, MistakesAreNamed) {
  auto error = [](const std::string& filter) {
    Result<std::vector<Clause>> c = ParseFilter(filter, kAttributes, kNumbers);
    return c.ok() ? std::string() : c.status().message();
  };
  EXPECT_NE(error("attributes.colour = 'red'").find("Invalid attribute key 'colour'"), std::string::npos);
  EXPECT_NE(error("metrics.loss < 'low'").find("Expected numeric value"), std::string::npos);
  EXPECT_NE(error("params.lr > '0.1'").find("Invalid comparator '>'"), std::string::npos);
  EXPECT_NE(error("metrics.loss < 1 OR metrics.loss > 2").find("joined by AND"), std::string::npos);
  EXPECT_NE(error("params.lr = 'open").find("not closed"), std::string::npos);
  EXPECT_NE(error("params.lr").find("comparator"), std::string::npos);
}

TEST(SearchFilterTest, LikeIsSqlsLike) {
  EXPECT_TRUE(Like("resnet50", "res%", false));
  EXPECT_TRUE(Like("resnet50", "%net%", false));
  EXPECT_TRUE(Like("resnet50", "resnet5_", false));
  EXPECT_FALSE(Like("resnet50", "resnet5", false));
  EXPECT_FALSE(Like("ResNet", "resnet", false));
  EXPECT_TRUE(Like("ResNet", "resnet", true));
  EXPECT_TRUE(Like("", "%", false));
  EXPECT_TRUE(Like("a%b", "a%%b", false));
}

TEST(SearchFilterTest, OrderByNumbersAndTextWithMissingValuesLast) {
  Searchable a = RunOf(0.3, "0.1", "FINISHED", 1000), b = RunOf(0.1, "0.01", "FAILED", 2000),
             c = RunOf(0, "1", "X", 3);
  c.metrics.clear();
  std::vector<OrderKey> by_loss = {ParseOrderBy("metrics.loss", kAttributes).value()};
  EXPECT_TRUE(Before(b, a, by_loss, kNumbers));
  EXPECT_TRUE(Before(a, c, by_loss, kNumbers));  // no loss: last
  std::vector<OrderKey> newest = {ParseOrderBy("attributes.start_time DESC", kAttributes).value()};
  EXPECT_TRUE(Before(b, a, newest, kNumbers));
  EXPECT_FALSE(ParseOrderBy("metrics.loss sideways", kAttributes).ok());
}

// runs/search's order_by metrics.acc DESC over 2,000 runs of which some logged NaN and some
// no acc at all: the real values in order (the true top five first), then the NaN and the
// missing ones, by the next keys (newest first), as MLflow's stores sort them.
TEST(SearchFilterTest, OrderByAMetricThatIsNanInSomeRunsSortsItsValuesAndPutsNanLast) {
  std::vector<Searchable> runs;
  std::vector<double> real;
  uint64_t state = 42;
  for (int i = 0; i < 2000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    double acc = static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53);
    Searchable r = RunOf(0, "0.1", "FINISHED", 1000 + i);
    r.metrics = {{"acc", acc}};
    if (i % 7 == 3) r.metrics["acc"] = std::nan("");
    if (i % 11 == 5) r.metrics.clear();
    if (r.metrics.count("acc") != 0 && !std::isnan(r.metrics["acc"])) real.push_back(r.metrics["acc"]);
    runs.push_back(r);
  }
  std::vector<OrderKey> order = {ParseOrderBy("metrics.acc DESC", kAttributes).value(),
                                 ParseOrderBy("attributes.start_time DESC", kAttributes).value()};
  std::stable_sort(runs.begin(), runs.end(),
                   [&](const Searchable& x, const Searchable& y) { return Before(x, y, order, kNumbers); });
  std::sort(real.rbegin(), real.rend());
  for (size_t i = 0; i < real.size(); ++i) ASSERT_EQ(runs[i].metrics.at("acc"), real[i]) << "place " << i;
  int64_t previous_start = std::numeric_limits<int64_t>::max();
  for (size_t i = real.size(); i < runs.size(); ++i) {
    auto acc = runs[i].metrics.find("acc");
    EXPECT_TRUE(acc == runs[i].metrics.end() || std::isnan(acc->second)) << "place " << i;
    int64_t start = std::stoll(runs[i].attributes.at("start_time"));
    EXPECT_LT(start, previous_start) << "NaN and missing alike, newest first";
    previous_start = start;
  }
}

}  // namespace
}  // namespace tb::tracking
