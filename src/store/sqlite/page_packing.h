// The order to insert a checkpoint's chunks in so that they fill SQLite's pages (its file
// format's leaf and overflow rules): pure arithmetic, no database. Used by the SQLite store.
#pragma once

#include <cstddef>
#include <vector>

#include "store/store.h"

namespace tb {

// The bytes a row takes on a table's leaf page for a record of `data` bytes and between
// `least` and `most` more; never under what SQLite takes.
size_t LeafBytes(size_t data, size_t least, size_t most, size_t page_size);
// An order to append rows of `bytes` (LeafBytes) in so that they fill their pages.
std::vector<size_t> PackedOrder(const std::vector<size_t>& bytes, size_t page_size);
// The sealed chunks packed (PackedOrder), then the provisional ones.
std::vector<size_t> ChunkInsertOrder(const std::vector<ChunkRecord>& inserts, size_t page_size);

}  // namespace tb
