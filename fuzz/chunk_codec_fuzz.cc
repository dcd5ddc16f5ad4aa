// Stored chunks (with times of their own or kept apart) and journal entries as a damaged
// disk or a hostile writer may hand them back: an error, never a crash or a huge allocation; what decodes
// encodes and decodes to the same bits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "store/format/chunk_codec.h"
#include "store/store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<tb::Point> points;
  if (tb::DecodeChunk(bytes, points).ok()) {
    // Never more than a chunk trainbench writes, whatever the bytes claim (a zstd bomb).
    if (points.size() > tb::kMaxChunkPoints) std::abort();
    std::string again = tb::EncodeChunk(points);
    std::vector<tb::Point> back;
    if (!tb::DecodeChunk(again, back).ok() || back.size() != points.size()) std::abort();
    for (size_t i = 0; i < points.size(); ++i) {
      if (back[i].time_ms != points[i].time_ms || back[i].step != points[i].step ||
          std::memcmp(&back[i].value, &points[i].value, sizeof(double)) != 0)
        std::abort();
    }
  }
  // A chunk whose times are kept apart, with those times (both as damaged as the rest): the
  // first byte says where the chunk ends and its times begin.
  if (size > 0) {
    size_t cut = static_cast<size_t>(data[0]) * (size - 1) / 255;
    points.clear();
    if (tb::DecodeChunk(bytes.substr(1, cut), points, bytes.substr(1 + cut)).ok()) {
      std::string apart = tb::EncodeChunk(points, true, /*with_times=*/false);
      std::vector<tb::Point> back;
      if (!tb::DecodeChunk(apart, back, tb::EncodeChunkTimes(points)).ok() || back.size() != points.size())
        std::abort();
      for (size_t i = 0; i < points.size(); ++i) {
        if (back[i].time_ms != points[i].time_ms) std::abort();
      }
    }
  }
  points.clear();
  (void)tb::DecodeJournalEntry(bytes, 1, points);
  return 0;
}
