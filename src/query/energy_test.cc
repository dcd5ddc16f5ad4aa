#include "query/energy.h"

#include <gtest/gtest.h>

#include <cmath>

#include "store/series_writer.h"
#include "tests/helpers/counting_store.h"
#include "tests/helpers/scratch_run.h"

namespace tb {
namespace {

constexpr int64_t kStart = 1763777000000;

// A GPU without an energy counter (a listener or a GPU that has none): its power is
// integrated over time, trapezoid by trapezoid across its chunks and its journal, a pair
// with a missing (NaN) sample adding nothing, without the series read whole.
TEST(RunGpuEnergyTest, PowerWithoutACounterIsIntegratedChunkByChunk) {
  ScratchRun scratch("tb-energy", kStart);
  std::unique_ptr<Store>& store = scratch.store;
  RunRecord& run = scratch.run;
  double expected = 0;
  {
    SeriesWriter writer(*store, run.id, /*seal_points=*/256, /*checkpoint_flushes=*/5);
    Point last;
    for (int i = 0; i < 5000; ++i) {
      // 10 Hz with a gap of a second now and then, a missing sample every 97th.
      int64_t t = kStart + i * 100 + (i / 700) * 1000;
      Point p{t, i % 97 == 5 ? std::nan("") : 200 + 50 * std::sin(i * 0.01), kNoStep};
      if (i > 0 && !std::isnan(p.value) && !std::isnan(last.value))
        expected += (p.value + last.value) / 2 * static_cast<double>(p.time_ms - last.time_ms) / 1000;
      last = p;
      writer.Append("gpu.power.draw_watts", "gpu=0", p);
      if (i % 50 == 49) {
        ASSERT_TRUE(writer.Flush().ok());
      }
    }
    ASSERT_TRUE(writer.Flush().ok());
    int64_t id = store->EnsureSeries(run.id, "gpu.power.draw_watts", "gpu=0").value();
    ASSERT_GT(store->ReadChunks({.series = {id}, .part = ChunkPart::kInfo})->size(), 10u);
    ASSERT_FALSE(store->ReadJournal(id)->empty()) << "the newest points only in the journal";
    CountingStore reads(*store);
    std::optional<GpuEnergy> e = RunGpuEnergy(reads, run.id).value();
    ASSERT_TRUE(e.has_value());
    EXPECT_TRUE(e->integrated);
    EXPECT_EQ(e->gpus, 1);
    EXPECT_NEAR(e->joules, expected, 1e-9 * expected);
    EXPECT_EQ(reads.whole_series_reads, 0) << "read a slice of chunks at a time";
    ASSERT_TRUE(writer.Close().ok());
  }
}

}  // namespace
}  // namespace tb
