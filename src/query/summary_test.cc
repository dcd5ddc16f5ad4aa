#include "query/summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "store/series_writer.h"
#include "store/store.h"
#include "tests/helpers/scratch_run.h"
#include "tests/helpers/sorted_quantile.h"

namespace tb {
namespace {

constexpr int64_t kStart = 1763777000000;

TEST(SeriesSummaryTest, PercentilesAreNumpysForEverySizeAndOrder) {
  std::mt19937 random(7);
  for (size_t n = 1; n < 300; n += (n < 20 ? 1 : 37)) {
    for (int shape = 0; shape < 3; ++shape) {
      std::vector<double> values(n);
      for (size_t i = 0; i < n; ++i) {
        if (shape == 0) values[i] = std::uniform_real_distribution<double>(-5, 5)(random);
        if (shape == 1) values[i] = static_cast<double>(random() % 4);  // many equal values
        if (shape == 2) values[i] = static_cast<double>(n - i);         // descending
      }
      std::vector<Point> points;
      for (double v : values) points.push_back({kStart, v, kNoStep});
      SeriesSummary summary = Summarize(points);  // the median's selection, then the 95th's
      EXPECT_DOUBLE_EQ(summary.p50, SortedQuantile(values, 0.5)) << n << " " << shape;
      EXPECT_DOUBLE_EQ(summary.p95, SortedQuantile(values, 0.95)) << n << " " << shape;
      for (double q : {0.0, 0.5, 0.95, 1.0}) {
        std::vector<double> copy = values;
        EXPECT_DOUBLE_EQ(SelectPercentile(copy, q), SortedQuantile(values, q))
            << n << " " << shape << " " << q;
      }
    }
  }
  EXPECT_TRUE(std::isnan(SelectPercentile({}, 0.5)));
}

TEST(SeriesSummaryTest, NaNsAreCountedApartAndInfinitiesTakePart) {
  std::vector<Point> points;
  for (int i = 0; i < 100; ++i)
    points.push_back({kStart + i * 100, i % 10 == 3 ? std::nan("") : static_cast<double>(i), kNoStep});
  points.push_back({kStart + 100 * 100, std::numeric_limits<double>::infinity(), kNoStep});
  SeriesSummary s = Summarize(points);
  EXPECT_EQ(s.count, 101);
  EXPECT_EQ(s.nan_count, 10);
  EXPECT_EQ(s.min, 0);
  EXPECT_TRUE(std::isinf(s.max));
  EXPECT_TRUE(std::isinf(s.mean));
  std::vector<double> kept;
  for (const Point& p : points) {
    if (!std::isnan(p.value)) kept.push_back(p.value);
  }
  EXPECT_EQ(s.p50, SortedQuantile(kept, 0.5));
  EXPECT_EQ(s.p95, SortedQuantile(kept, 0.95));
  EXPECT_EQ(s.first_ms, kStart);
  EXPECT_EQ(s.last_ms, kStart + 100 * 100);
  // Only NaNs: counted, and no statistics.
  SeriesSummary none = Summarize(std::vector<Point>{{kStart, std::nan(""), kNoStep}});
  EXPECT_EQ(none.count, 1);
  EXPECT_TRUE(std::isnan(none.p95));
  EXPECT_EQ(Summarize({}).count, 0);
}

TEST(SeriesSummaryTest, PartsGiveTheSummaryOfTheWhole) {
  std::vector<Point> points;
  for (int i = 0; i < 5000; ++i)
    points.push_back({kStart + i * 100, std::sin(i * 0.37) * 3 + (i % 97), kNoStep});
  SummaryBuilder builder;
  for (size_t at = 0; at < points.size(); at += 333)
    builder.Add(std::span(points).subspan(at, std::min<size_t>(333, points.size() - at)));
  EXPECT_EQ(builder.Finish(), Summarize(points));
  EXPECT_EQ(builder.Finish().count, 0) << "Finish leaves the builder empty";
}

// What `trainbench show` prints of stored series: the same as of all their points read
// whole, for series in sealed chunks, provisional ones and the journal, many at once.
TEST(SeriesSummaryTest, StoredSeriesAreSummarizedChunkByChunkAsTheirPointsWhole) {
  ScratchRun scratch("tb-summary", kStart);
  std::unique_ptr<Store>& store = scratch.store;
  RunRecord& run = scratch.run;
  SeriesWriter writer(*store, run.id, /*seal_points=*/256, /*checkpoint_flushes=*/5);
  for (int i = 0; i < 3000; ++i) {
    for (int s = 0; s < 9; ++s) {
      double v =
          s == 4 && i % 13 == 0 ? std::nan("") : std::cos(i * 0.01 * (s + 1)) * (s + 1) + (i % (s + 7));
      writer.Append("m" + std::to_string(s), "", {kStart + i * 100, v, kNoStep});
    }
    if (i % 50 == 49) {
      ASSERT_TRUE(writer.Flush().ok());
    }
  }
  for (int i = 3000; i < 3020; ++i) writer.Append("m0", "", {kStart + i * 100, -1e9, kNoStep});
  ASSERT_TRUE(writer.Flush().ok());
  std::vector<int64_t> ids;
  for (const SeriesInfo& s : store->ListSeries(run.id).value()) ids.push_back(s.id);
  ASSERT_EQ(ids.size(), 9u);
  ASSERT_GT(store->ReadChunks({.series = {ids[0]}, .part = ChunkPart::kInfo})->size(), 5u);
  ASSERT_FALSE(store->ReadJournal(ids[0])->empty()) << "the newest points only in the journal";
  std::vector<SeriesSummary> summaries = SummarizeStoredSeries(*store, ids).value();
  ASSERT_EQ(summaries.size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    std::vector<Point> whole = ReadSeriesPoints(*store, ids[i]).value();
    EXPECT_EQ(summaries[i], Summarize(whole)) << i;
  }
  EXPECT_EQ(summaries[0].count, 3020);
  EXPECT_EQ(summaries[0].min, -1e9) << "the journal's points take part";
  EXPECT_GT(summaries[4].nan_count, 0);
  ASSERT_TRUE(writer.Close().ok());
  EXPECT_EQ(SummarizeStoredSeries(*store, std::vector<int64_t>{ids[0], 999999}).value()[1].count, 0)
      << "a series that is not there has no points";
}

}  // namespace
}  // namespace tb
