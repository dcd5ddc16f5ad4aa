#include "store/chunk_codec.h"

#include <zstd.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "store/varint.h"

namespace tb {
namespace {

constexpr uint8_t kFormatVersion = 1;
constexpr uint8_t kFlagZstd = 1;
constexpr uint8_t kFlagTimesApart = 2;  // no time column: the times are in another blob
constexpr uint8_t kValuesDecimal = 0;
constexpr uint8_t kValuesXor = 1;
constexpr int kMaxExponent = 15;
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53
constexpr int kZstdLevel = 3;
constexpr size_t kMinCompressBytes = 128;

// Powers of ten that are exact doubles.
constexpr double kPow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                             1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

double FromBits(uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

// Whether `v` is exactly `m / 10^e` for an integer |m| <= 2^53; sets m.
bool ScalesExactly(double v, int e, int64_t& m) {
  if (v == 0 && std::signbit(v)) return false;  // -0.0 has no integer: its bits are kept
  double scaled = v * kPow10[e];
  if (!(std::fabs(scaled) <= kMaxExactInteger)) return false;  // also rejects NaN
  double rounded = std::nearbyint(scaled);
  double back = e == 0 ? rounded : rounded / kPow10[e];
  if (Bits(back) != Bits(v)) return false;
  m = static_cast<int64_t>(rounded);
  return true;
}

// The smallest exponent at which every value scales exactly, or -1.
int FindDecimalExponent(std::span<const Point> points) {
  int e = 0;
  int64_t m;
  for (const Point& p : points) {
    while (e <= kMaxExponent && !ScalesExactly(p.value, e, m)) ++e;
    if (e > kMaxExponent) return -1;
  }
  // A value that scaled at a smaller exponent may not at the final one: check them all.
  for (const Point& p : points) {
    if (!ScalesExactly(p.value, e, m)) return -1;
  }
  return e;
}

// Differences and sums that wrap as two's complement: any int64 times and mantissas
// round-trip, and corrupt input cannot overflow (which C++ leaves undefined).
int64_t Minus(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t Plus(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

void EncodeColumns(std::span<const Point> points, bool with_times, std::string& out) {
  int64_t prev_t = 0, prev_delta = 0;
  for (const Point& p : with_times ? points : points.first(0)) {
    int64_t delta = Minus(p.time_ms, prev_t);
    PutVarint(out, ZigZag(Minus(delta, prev_delta)));
    prev_delta = delta;
    prev_t = p.time_ms;
  }
  int e = FindDecimalExponent(points);
  if (e >= 0) {
    out.push_back(static_cast<char>(kValuesDecimal));
    out.push_back(static_cast<char>(e));
    int64_t prev = 0, m = 0;
    for (const Point& p : points) {
      ScalesExactly(p.value, e, m);
      PutVarint(out, ZigZag(Minus(m, prev)));
      prev = m;
    }
  } else {
    out.push_back(static_cast<char>(kValuesXor));
    uint64_t prev = 0;
    for (const Point& p : points) {
      uint64_t x = Bits(p.value) ^ prev;
      prev = Bits(p.value);
      for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(x >> (8 * i)));
    }
  }
  bool has_steps = false;
  for (const Point& p : points) has_steps |= p.step != kNoStep;
  out.push_back(static_cast<char>(has_steps ? 1 : 0));
  if (has_steps) {
    int64_t prev = 0;
    for (const Point& p : points) {
      PutVarint(out, ZigZag(Minus(p.step, prev)));
      prev = p.step;
    }
  }
}

}  // namespace

std::string EncodeChunk(std::span<const Point> points, bool compress, bool with_times) {
  std::string columns;
  columns.reserve(points.size() * 3 + 16);
  EncodeColumns(points, with_times, columns);

  std::string out;
  out.push_back(static_cast<char>(kFormatVersion));
  // A few points (a journal entry of one flush) are not worth a zstd frame.
  bool use_zstd = false;
  std::string compressed;
  size_t n = 0;
  if (compress && columns.size() >= kMinCompressBytes) {
    struct ContextDeleter {
      void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
    };
    thread_local std::unique_ptr<ZSTD_CCtx, ContextDeleter> context(ZSTD_createCCtx());
    compressed.resize(ZSTD_compressBound(columns.size()));
    n = ZSTD_compressCCtx(context.get(), compressed.data(), compressed.size(), columns.data(), columns.size(),
                          kZstdLevel);
    use_zstd = !ZSTD_isError(n) && n < columns.size();
  }
  out.push_back(static_cast<char>((use_zstd ? kFlagZstd : 0) | (with_times ? 0 : kFlagTimesApart)));
  PutVarint(out, points.size());
  PutVarint(out, columns.size());
  if (use_zstd) {
    out.append(compressed.data(), n);
  } else {
    out.append(columns);
  }
  return out;
}

std::string EncodeChunkTimes(std::span<const Point> points) {
  std::vector<Point> times(points.size());
  for (size_t i = 0; i < points.size(); ++i) times[i].time_ms = points[i].time_ms;
  return EncodeChunk(times);
}

Status DecodeChunk(std::string_view data, std::vector<Point>& out, std::string_view times) {
  auto corrupt = [](const char* why) { return Status::Corrupt(std::string("corrupt chunk: ") + why); };
  if (data.size() < 2 || static_cast<uint8_t>(data[0]) != kFormatVersion) {
    return corrupt("unknown format version");
  }
  uint8_t flags = static_cast<uint8_t>(data[1]);
  size_t pos = 2;
  uint64_t count = 0, raw_size = 0;
  // Every point takes at least two bytes of the columns (its time and its value; its value
  // and the shared times' own bytes when they are apart), so the count is checked against
  // the sizes before anything is allocated for it.
  bool apart = (flags & kFlagTimesApart) != 0;
  if (!GetVarint(data, pos, count) || !GetVarint(data, pos, raw_size) || raw_size > (1u << 30) ||
      count > (apart ? raw_size : raw_size / 2)) {
    return corrupt("bad header");
  }
  if (apart && times.empty()) return corrupt("its times are kept apart and were not given");
  std::string buffer;
  std::string_view columns = data.substr(pos);
  if (!(flags & kFlagZstd) && columns.size() != raw_size) return corrupt("size does not match the header");
  if (flags & kFlagZstd) {
    if (ZSTD_getFrameContentSize(columns.data(), columns.size()) != raw_size) {
      return corrupt("zstd frame size does not match the header");
    }
    buffer.resize(raw_size);
    // One context per thread: ZSTD_decompress makes a new one (about 160 KB, fresh pages)
    // for every chunk, which cost more than decoding a chunk of 4,096 points.
    struct ContextDeleter {
      void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
    };
    thread_local std::unique_ptr<ZSTD_DCtx, ContextDeleter> context(ZSTD_createDCtx());
    size_t n = ZSTD_decompressDCtx(context.get(), buffer.data(), raw_size, columns.data(), columns.size());
    if (ZSTD_isError(n) || n != raw_size) return corrupt("zstd payload does not decompress");
    columns = buffer;
  }
  size_t first = out.size();
  if (apart) {
    // The shared times decode straight into the points' places; their values and steps
    // are written over below.
    TB_RETURN_IF_ERROR(DecodeChunk(times, out));
    if (out.size() - first != count) {
      out.resize(first);
      return corrupt("its times are not as many as its points");
    }
  } else {
    out.resize(first + count);
  }
  Point* points = out.data() + first;
  pos = 0;
  int64_t t = 0, delta = 0;
  for (uint64_t i = 0; i < count && !apart; ++i) {
    uint64_t v;
    if (!GetVarint(columns, pos, v)) return corrupt("times truncated");
    delta = Plus(delta, UnZigZag(v));
    t = Plus(t, delta);
    points[i].time_ms = t;
  }
  if (pos >= columns.size()) return corrupt("value mode missing");
  uint8_t mode = static_cast<uint8_t>(columns[pos++]);
  if (mode == kValuesDecimal) {
    if (pos >= columns.size()) return corrupt("exponent missing");
    int e = static_cast<unsigned char>(columns[pos++]);
    if (e < 0 || e > kMaxExponent) return corrupt("bad exponent");
    int64_t m = 0;
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t v;
      if (!GetVarint(columns, pos, v)) return corrupt("values truncated");
      m = Plus(m, UnZigZag(v));
      double d = static_cast<double>(m);
      points[i].value = e == 0 ? d : d / kPow10[e];
    }
  } else if (mode == kValuesXor) {
    if (columns.size() - pos < count * 8) return corrupt("values truncated");
    uint64_t prev = 0;
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t x = 0;
      for (int b = 0; b < 8; ++b) x |= static_cast<uint64_t>(static_cast<uint8_t>(columns[pos++])) << (8 * b);
      prev ^= x;
      points[i].value = FromBits(prev);
    }
  } else {
    return corrupt("unknown value mode");
  }
  if (pos >= columns.size()) return corrupt("step flag missing");
  if (columns[pos++] != 0) {
    int64_t step = 0;
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t v;
      if (!GetVarint(columns, pos, v)) return corrupt("steps truncated");
      step = Plus(step, UnZigZag(v));
      points[i].step = step;
    }
  } else {
    for (uint64_t i = 0; i < count; ++i) points[i].step = kNoStep;
  }
  return Status::Ok();
}

}  // namespace tb
