#include "store/sqlite/page_packing.h"

#include <algorithm>
#include <numeric>

namespace tb {

// The bytes a row takes on a table's leaf page in SQLite's file format, for a record of
// `data` bytes and between `least` and `most` more (its other columns and its header): a
// record larger than the page less 35 bytes keeps a part of it on the leaf (the least
// part, plus what is left over after filling whole overflow pages; only the least part
// when that would be too large) and the rest in overflow pages, so a few bytes more can
// take thousands fewer on the leaf. The most over that range, counted with the cell's
// pointer, its length and rowid varints at their largest and the overflow page number:
// an estimate that is never under.
size_t LeafBytes(size_t data, size_t least, size_t most, size_t page_size) {
  size_t max_local = page_size - 35, min_local = (page_size - 12) * 32 / 255 - 23, out = 0;
  for (size_t record = data + least; record <= data + most; ++record) {
    if (record <= max_local) {
      out = std::max(out, record + 2 + 9 + 9);
      continue;
    }
    size_t local = min_local + (record - min_local) % (page_size - 4);
    out = std::max(out, (local > max_local ? min_local : local) + 4 + 2 + 9 + 9);
  }
  return out;
}

// An order to append rows of `bytes` on a leaf (LeafBytes) in so that they fill their
// pages. SQLite appends rows to a table's last leaf page and starts a new page when the
// next row does not fit, so rows of one to four kilobytes appended as they come leave
// much of each page empty. The rows go by first-fit decreasing into pages, appended page
// by page: no row of a later page fits in an earlier one, so SQLite fills them the same way.
std::vector<size_t> PackedOrder(const std::vector<size_t>& bytes, size_t page_size) {
  std::vector<size_t> by_size(bytes.size());
  std::iota(by_size.begin(), by_size.end(), size_t{0});
  std::stable_sort(by_size.begin(), by_size.end(), [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
  struct Page {
    size_t free;
    std::vector<size_t> rows;
  };
  std::vector<Page> pages;
  for (size_t i : by_size) {
    auto page = std::find_if(pages.begin(), pages.end(), [&](const Page& p) { return p.free >= bytes[i]; });
    if (page == pages.end())
      page = pages.insert(pages.end(), Page{page_size - 8, {}});  // less a leaf's header
    page->free -= std::min(page->free, bytes[i]);
    page->rows.push_back(i);
  }
  std::vector<size_t> order;
  for (const Page& page : pages) order.insert(order.end(), page.rows.begin(), page.rows.end());
  return order;
}

// The order to insert a checkpoint's chunks in: the sealed ones packed (PackedOrder; the
// columns beside a chunk's data take 20 to 80 bytes of its record), then the provisional
// ones, which the next checkpoint deletes.
std::vector<size_t> ChunkInsertOrder(const std::vector<ChunkRecord>& inserts, size_t page_size) {
  std::vector<size_t> sealed, bytes, order;
  for (size_t i = 0; i < inserts.size(); ++i) {
    if (!inserts[i].sealed) continue;
    sealed.push_back(i);
    bytes.push_back(LeafBytes(inserts[i].data.size(), 20, 80, page_size));
  }
  for (size_t k : PackedOrder(bytes, page_size)) order.push_back(sealed[k]);
  for (size_t i = 0; i < inserts.size(); ++i) {
    if (!inserts[i].sealed) order.push_back(i);
  }
  return order;
}

}  // namespace tb
