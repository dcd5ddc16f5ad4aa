#include "collect/progress.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace tb {
namespace {

struct Emitted {
  std::string metric;
  int64_t time_ms, step;
  double value;
};

// A line word_language_model (pytorch/examples) prints every 200 batches.
constexpr const char* kWordLanguageLine =
    "| epoch   1 |   200/ 2983 batches | lr 20.00 | ms/batch 22.35 | loss  7.63 | ppl  2063.42";

TEST(ProgressPattern, ReadsTheNumbersOfALineAsTheScriptPrintsIt) {
  Result<ProgressPattern> p =
      ProgressPattern::Parse("| epoch {epoch} | {step}/{} batches | {} ms/batch {ms} | loss {loss}");
  ASSERT_TRUE(p.ok()) << p.status().message();
  auto values = p->Match(kWordLanguageLine);
  ASSERT_TRUE(values.has_value());
  std::map<std::string, double> got(values->begin(), values->end());
  EXPECT_EQ(got, (std::map<std::string, double>{{"epoch", 1}, {"step", 200}, {"ms", 22.35}, {"loss", 7.63}}));
  EXPECT_FALSE(p->Match("| end of epoch   1 | time: 70.20s | valid loss  5.80 | valid ppl   330.13"));
  EXPECT_FALSE(p->Match("| epoch   1 |   200/ 2983 batches | lr 20.00 | ms/batch nan"));
}

TEST(ProgressPattern, AMistakenPatternIsRefusedWithOneThatWorks) {
  for (const char* bad :
       {"loss {loss", "loss loss}", "epoch {epoch}{step}", "no numbers at all", "{step}/{}", "{2fast}"}) {
    Result<ProgressPattern> p = ProgressPattern::Parse(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_NE(p.status().message().find("e.g."), std::string::npos) << p.status().message();
  }
}

TEST(ProgressReader, LinesSplitAcrossReadsAndRedrawnBarsGiveOnePointEach) {
  Result<ProgressPattern> p = ProgressPattern::Parse("step {step} {throughput} samples/s");
  ASSERT_TRUE(p.ok());
  std::vector<Emitted> out;
  ProgressReader reader(*p, [&](std::string_view metric, int64_t time_ms, double value, int64_t step) {
    out.push_back({std::string(metric), time_ms, step, value});
  });
  reader.Feed("loading data\nstep 10 51", 1000);
  reader.Feed("2.5 samples/s\rstep 20 498 samples/s\r", 2000);
  reader.Feed("done\n", 3000);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].metric, "train.throughput_samples_per_second");
  EXPECT_EQ(out[0].step, 10);
  EXPECT_EQ(out[0].time_ms, 2000) << "a line is timed by when it was complete";
  EXPECT_DOUBLE_EQ(out[0].value, 512.5);
  EXPECT_EQ(out[1].step, 20);
  EXPECT_DOUBLE_EQ(out[1].value, 498);
  EXPECT_EQ(reader.lines_matched(), 2);
}

TEST(ProgressReader, SamplesSoFarGiveTheThroughputBetweenLinesAndStepTimesAreSeconds) {
  Result<ProgressPattern> p = ProgressPattern::Parse("seen {samples} in {ms}ms");
  ASSERT_TRUE(p.ok());
  std::map<std::string, std::vector<double>> out;
  ProgressReader reader(*p, [&](std::string_view metric, int64_t, double value, int64_t) {
    out[std::string(metric)].push_back(value);
  });
  reader.Feed("seen 1000 in 250ms\n", 10000);
  reader.Feed("seen 3000 in 240ms\n", 12000);
  EXPECT_EQ(out["train.samples"], (std::vector<double>{1000, 3000}));
  EXPECT_EQ(out["train.throughput_samples_per_second"], (std::vector<double>{1000})) << "2000 samples in 2 s";
  EXPECT_EQ(out["train.step_seconds"], (std::vector<double>{0.25, 0.24}));
}

}  // namespace
}  // namespace tb
