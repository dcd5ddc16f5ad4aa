#include "store/sqlite/page_packing.h"

#include <gtest/gtest.h>

namespace tb {
namespace {

// Pages SQLite uses when rows of `bytes` are appended in `order`: a new page whenever the
// next row does not fit on the last one (a leaf's header aside).
size_t PagesAppended(const std::vector<size_t>& bytes, const std::vector<size_t>& order, size_t page_size) {
  size_t pages = 0, free = 0;
  for (size_t i : order) {
    if (pages == 0 || bytes[i] > free) {
      ++pages;
      free = page_size - 8;
    }
    free -= bytes[i];
  }
  return pages;
}

TEST(PagePacking, RowsAppendedInThePackedOrderFillFewerPages) {
  std::vector<size_t> bytes{3000, 3000, 1000, 1000, 2000, 2000};
  std::vector<size_t> arrival{0, 1, 2, 3, 4, 5};
  std::vector<size_t> packed = PackedOrder(bytes, 4096);
  ASSERT_EQ(packed.size(), bytes.size());
  EXPECT_EQ(PagesAppended(bytes, arrival, 4096), 4u);
  EXPECT_EQ(PagesAppended(bytes, packed, 4096), 3u);
}

TEST(PagePacking, ARecordOverflowingItsPageKeepsOnlyPartOfItOnTheLeaf) {
  EXPECT_EQ(LeafBytes(100, 0, 0, 4096), 100u + 20u);  // fits: the record, a pointer, two varints
  // 5,000 bytes on a 4,096-byte page: most goes to overflow pages.
  EXPECT_LT(LeafBytes(5000, 0, 0, 4096), 4096u - 35u);
  EXPECT_GE(LeafBytes(100, 20, 80, 4096), 180u + 20u);  // the most over the range
}

TEST(PagePacking, SealedChunksComeFirstPackedThenTheProvisionalOnes) {
  std::vector<ChunkRecord> chunks(4);
  chunks[0].sealed = false;
  chunks[1].sealed = true;
  chunks[1].data.assign(3000, 'x');
  chunks[2].sealed = true;
  chunks[2].data.assign(500, 'x');  // fits beside a 3,000-byte chunk, which the other does not
  chunks[3].sealed = true;
  chunks[3].data.assign(3000, 'x');
  std::vector<size_t> order = ChunkInsertOrder(chunks, 4096);
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(order.back(), 0u);
  EXPECT_EQ(std::vector<size_t>(order.begin(), order.end() - 1), (std::vector<size_t>{1, 2, 3}));
}

}  // namespace
}  // namespace tb
