#include "store/format/chunk_codec.h"

#include <zstd.h>

#include <algorithm>
#include <cmath>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <cstring>
#include <memory>

#include "store/format/varint.h"

namespace tb {
namespace {

constexpr uint8_t kFormatVersion = 1;
constexpr uint8_t kFlagZstd = 1;
constexpr uint8_t kFlagTimesApart = 2;  // no time column: the times are in another blob
constexpr uint8_t kValuesDecimal = 0;
constexpr uint8_t kValuesXor = 1;
constexpr uint8_t kValuesDecimalPlanes = 2;
constexpr uint8_t kValuesXorPlanes = 3;
constexpr int kMaxDifferences = 2;
// Below this many points a chunk keeps the varint forms: a journal entry of a few points
// is smaller as varints than as whole bytes, and a summary level (at most 136 points a
// chunk) gains little as planes while paying their fixed costs per chunk in decoding,
// which the chart of a server just started pays for every chunk it draws.
constexpr size_t kMinPlanePoints = 256;
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

// Byte planes: `width` runs of `values.size()` bytes, the lowest byte of every value first.
// zstd's entropy coder sees each byte position of the values apart (a ratio's low byte, its
// nearly constant high byte), where interleaved varints mix them: on the recorded DCGM trace
// 0.99 bytes a value against 1.22.
int PlaneWidth(std::span<const uint64_t> values) {
  uint64_t all = 0;
  for (uint64_t v : values) all |= v;
  int width = 0;
  while (width < 8 && (all >> (8 * width)) != 0) ++width;
  return width;
}

void PutPlanes(std::span<const uint64_t> values, int width, std::string& out) {
  size_t at = out.size();
  out.resize(at + values.size() * static_cast<size_t>(width));
  char* plane = out.data() + at;
  for (int b = 0; b < width; ++b, plane += values.size()) {
    for (size_t i = 0; i < values.size(); ++i) plane[i] = static_cast<char>(values[i] >> (8 * b));
  }
}

// What the planes of `values` cost under an order-0 entropy coder, in bits: how a form is
// picked without compressing each.
double PlaneBits(std::span<const uint64_t> values, int width) {
  // c * log2(c) for the counts a chunk of 4,096 points can have, computed once.
  constexpr size_t kTable = 4097;
  static const std::vector<double> c_log_c = [] {
    std::vector<double> t(kTable);
    for (size_t c = 1; c < kTable; ++c) t[c] = static_cast<double>(c) * std::log2(static_cast<double>(c));
    return t;
  }();
  auto c_log2_c = [&](size_t c) {
    return c < kTable ? c_log_c[c] : static_cast<double>(c) * std::log2(static_cast<double>(c));
  };
  // Sum over planes of n log2 n - sum of c log2 c over each plane's byte counts.
  double bits = 0;
  for (int b = 0; b < width; ++b) {
    uint32_t counts[256] = {};
    for (uint64_t v : values) ++counts[(v >> (8 * b)) & 0xff];
    bits += c_log2_c(values.size());
    for (uint32_t c : counts) bits -= c_log2_c(c);
  }
  return bits;
}

// Decimal mantissas as planes, after 0, 1 or 2 passes of differences, whichever the
// entropy estimate finds smallest: 0 keeps each value less the chunk's lowest (a GPU's
// utilization, which jumps between a few levels), 1 its delta from the previous (a slow
// temperature), 2 the change of that delta (an energy counter). Layout: the pass count;
// the base (the lowest, or the first `passes` values of the last pass) as zigzag varints;
// the plane width; the planes of the rest.
struct PlaneForm {
  int passes = 0;
  std::vector<int64_t> base;
  std::vector<uint64_t> planes;
  int width = 0;  // PlaneWidth(planes)
};

PlaneForm DecimalPlaneForm(std::span<const int64_t> mantissas, int passes) {
  PlaneForm form;
  form.passes = passes;
  std::vector<int64_t> d(mantissas.begin(), mantissas.end());
  for (int pass = 1; pass <= passes; ++pass) {
    for (size_t i = d.size(); i-- > static_cast<size_t>(pass);) d[i] = Minus(d[i], d[i - 1]);
  }
  if (passes == 0) {
    int64_t lowest = d.empty() ? 0 : *std::min_element(d.begin(), d.end());
    form.base = {lowest};
    for (int64_t v : d) form.planes.push_back(static_cast<uint64_t>(Minus(v, lowest)));
  } else {
    size_t start = std::min(static_cast<size_t>(passes), d.size());
    form.base.assign(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(start));
    for (size_t i = start; i < d.size(); ++i) form.planes.push_back(ZigZag(d[i]));
  }
  form.width = PlaneWidth(form.planes);
  return form;
}

void PutDecimalPlanes(std::span<const int64_t> mantissas, std::string& out) {
  PlaneForm best;
  double best_bits = 0;
  for (int passes = 0; passes <= kMaxDifferences; ++passes) {
    PlaneForm form = DecimalPlaneForm(mantissas, passes);
    double bits = PlaneBits(form.planes, form.width);
    if (passes == 0 || bits < best_bits) {
      best_bits = bits;
      best = std::move(form);
    }
  }
  out.push_back(static_cast<char>(best.passes));
  for (int64_t b : best.base) PutVarint(out, ZigZag(b));
  out.push_back(static_cast<char>(best.width));
  PutPlanes(best.planes, best.width, out);
}

void EncodeColumns(std::span<const Point> points, bool with_times, bool planes, std::string& out) {
  int64_t prev_t = 0, prev_delta = 0;
  for (const Point& p : with_times ? points : points.first(0)) {
    int64_t delta = Minus(p.time_ms, prev_t);
    PutVarint(out, ZigZag(Minus(delta, prev_delta)));
    prev_delta = delta;
    prev_t = p.time_ms;
  }
  int e = FindDecimalExponent(points);
  if (e >= 0) {
    out.push_back(static_cast<char>(planes ? kValuesDecimalPlanes : kValuesDecimal));
    out.push_back(static_cast<char>(e));
    std::vector<int64_t> mantissas(points.size());
    for (size_t i = 0; i < points.size(); ++i) ScalesExactly(points[i].value, e, mantissas[i]);
    if (planes) {
      PutDecimalPlanes(mantissas, out);
    } else {
      int64_t prev = 0;
      for (int64_t m : mantissas) {
        PutVarint(out, ZigZag(Minus(m, prev)));
        prev = m;
      }
    }
  } else {
    out.push_back(static_cast<char>(planes ? kValuesXorPlanes : kValuesXor));
    std::vector<uint64_t> xors(points.size());
    uint64_t prev = 0;
    for (size_t i = 0; i < points.size(); ++i) {
      xors[i] = Bits(points[i].value) ^ prev;
      prev = Bits(points[i].value);
    }
    // The XOR form is always 8 planes, so that its older interleaved layout is the same
    // bytes transposed.
    if (planes) {
      PutPlanes(xors, 8, out);
    } else {
      for (uint64_t x : xors) {
        for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(x >> (8 * i)));
      }
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

// The loops below keep their position in a local: written through a reference while
// 64-bit integers are stored, it would be reloaded from memory after every store (the
// types may alias), a load in the innermost loop.

// The times of `count` points, as deltas of deltas.
bool GetTimes(std::string_view in, size_t& pos, Point* points, size_t count) {
  size_t at = pos;
  int64_t t = 0, delta = 0;
  for (size_t i = 0; i < count; ++i) {
    uint64_t v;
    if (!GetVarint(in, at, v)) return false;
    delta = Plus(delta, UnZigZag(v));
    t = Plus(t, delta);
    points[i].time_ms = t;
  }
  pos = at;
  return true;
}

// points[i].value = m / 10^e for the mantissas `next()` gives in order, exactly as the
// encoder checked them (a division, not a multiplication by the inexact 10^-e). The
// mantissas are made and divided in blocks on the stack, two divisions at a time through
// SSE2, and each value is written to its point once: one at a time, the divisions were
// half of decoding a chunk, and a pass through a buffer of mantissas cost a sixth more.
// Inlined into each caller, so that the state `next` keeps (a position, running sums)
// stays in registers; called through a function, it was reloaded for every value.
template <typename Next>
[[gnu::always_inline]] inline void PutDecimals(size_t count, int e, Point* points, Next&& next) {
  constexpr size_t kBlock = 256;
  double block[kBlock];
  for (size_t first = 0; first < count; first += kBlock) {
    size_t n = std::min(kBlock, count - first);
    for (size_t i = 0; i < n; ++i) block[i] = static_cast<double>(static_cast<int64_t>(next()));
    if (e != 0) {
      size_t i = 0;
#ifdef __SSE2__
      __m128d scale = _mm_set1_pd(kPow10[e]);
      for (; i + 2 <= n; i += 2) _mm_storeu_pd(block + i, _mm_div_pd(_mm_loadu_pd(block + i), scale));
#endif
      for (; i < n; ++i) block[i] /= kPow10[e];
    }
    for (size_t i = 0; i < n; ++i) points[first + i].value = block[i];
  }
}

// The value of `Width` byte planes of `stride` values each at index i.
template <int Width>
uint64_t PlaneValue(const uint8_t* planes, size_t stride, size_t i) {
  uint64_t v = 0;
  for (int b = 0; b < Width; ++b) v |= static_cast<uint64_t>(planes[b * stride + i]) << (8 * b);
  return v;
}

// The mantissas of PutDecimalPlanes, undone as they stream: each level of differences
// keeps its last value, and a point's value at a level is that plus the level above.
template <int Width>
void PutPlaneDecimals(const uint8_t* planes, int passes, const int64_t* base, size_t count, int e,
                      Point* points) {
  size_t start = passes == 0 ? 0 : std::min(static_cast<size_t>(passes), count);
  size_t stride = count - start, i = 0;
  if (passes == 0) {
    auto lowest = static_cast<uint64_t>(base[0]);
    PutDecimals(count, e, points, [&] { return lowest + PlaneValue<Width>(planes, stride, i++); });
    return;
  }
  uint64_t last[kMaxDifferences] = {};
  PutDecimals(count, e, points, [&] {
    uint64_t v = i < start ? static_cast<uint64_t>(base[i])
                           : static_cast<uint64_t>(UnZigZag(PlaneValue<Width>(planes, stride, i - start)));
    for (int level = passes - 1; level >= 0; --level) {
      if (i > static_cast<size_t>(level)) v += last[level];
      last[level] = v;
    }
    ++i;
    return v;
  });
}

// The inverse of PutDecimalPlanes for `count` points: their values.
bool GetDecimalPlanes(std::string_view in, size_t& pos, size_t count, int e, Point* points) {
  if (pos >= in.size()) return false;
  int passes = static_cast<uint8_t>(in[pos++]);
  if (passes > kMaxDifferences) return false;
  size_t start = passes == 0 ? 0 : std::min(static_cast<size_t>(passes), count);
  int64_t base[kMaxDifferences] = {};
  for (size_t i = 0; i < (passes == 0 ? 1 : start); ++i) {
    uint64_t v;
    if (!GetVarint(in, pos, v)) return false;
    base[i] = UnZigZag(v);
  }
  if (pos >= in.size()) return false;
  int width = static_cast<uint8_t>(in[pos++]);
  if (width > 8 || (width > 0 && (in.size() - pos) / static_cast<size_t>(width) < count - start))
    return false;
  const auto* planes = reinterpret_cast<const uint8_t*>(in.data() + pos);
  // One instance a width, so each gathers its bytes without a loop over the width.
  using Put = void (*)(const uint8_t*, int, const int64_t*, size_t, int, Point*);
  static constexpr Put kPutByWidth[] = {PutPlaneDecimals<0>, PutPlaneDecimals<1>, PutPlaneDecimals<2>,
                                        PutPlaneDecimals<3>, PutPlaneDecimals<4>, PutPlaneDecimals<5>,
                                        PutPlaneDecimals<6>, PutPlaneDecimals<7>, PutPlaneDecimals<8>};
  kPutByWidth[width](planes, passes, base, count, e, points);
  pos += (count - start) * static_cast<size_t>(width);
  return true;
}

// The varint form of decimals: running sums of zigzag deltas. One loop, each division
// beside the next varint's decoding, as before byte planes (blocks of divisions did not
// pay here: the varints are the slower part).
bool GetVarintDecimals(std::string_view in, size_t& pos, size_t count, int e, Point* points) {
  size_t at = pos;
  int64_t m = 0;
  for (size_t i = 0; i < count; ++i) {
    uint64_t v;
    if (!GetVarint(in, at, v)) return false;
    m = Plus(m, UnZigZag(v));
    double d = static_cast<double>(m);
    points[i].value = e == 0 ? d : d / kPow10[e];
  }
  pos = at;
  return true;
}

}  // namespace

std::string EncodeChunk(std::span<const Point> points, bool compress, bool with_times) {
  std::string columns;
  columns.reserve(points.size() * 3 + 16);
  EncodeColumns(points, with_times, compress && points.size() >= kMinPlanePoints, columns);

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
  // A point whose time is in the columns takes at least a byte of them, so the count is
  // checked against the sizes before anything is allocated for it; a chunk whose times
  // are apart (whose values may take no byte at all: planes of width 0) is checked
  // against its times' own count before its values are allocated.
  bool apart = (flags & kFlagTimesApart) != 0;
  if (!GetVarint(data, pos, count) || !GetVarint(data, pos, raw_size) || (!apart && count > raw_size)) {
    return corrupt("bad header");
  }
  if (count > kMaxChunkPoints || raw_size > kMaxChunkColumnBytes) {
    return Status::Corrupt("corrupt chunk: it says it holds " + std::to_string(count) + " points in " +
                           std::to_string(raw_size) + " bytes; trainbench writes at most " +
                           std::to_string(kMaxChunkPoints) + " points a chunk, so it was not written by it");
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
  if (!apart && !GetTimes(columns, pos, points, count)) return corrupt("times truncated");
  if (pos >= columns.size()) return corrupt("value mode missing");
  uint8_t mode = static_cast<uint8_t>(columns[pos++]);
  if (mode == kValuesDecimal || mode == kValuesDecimalPlanes) {
    if (pos >= columns.size()) return corrupt("exponent missing");
    int e = static_cast<unsigned char>(columns[pos++]);
    if (e < 0 || e > kMaxExponent) return corrupt("bad exponent");
    bool ok = mode == kValuesDecimalPlanes ? GetDecimalPlanes(columns, pos, count, e, points)
                                           : GetVarintDecimals(columns, pos, count, e, points);
    if (!ok) return corrupt("values truncated");
  } else if (mode == kValuesXor || mode == kValuesXorPlanes) {
    if (columns.size() - pos < count * 8) return corrupt("values truncated");
    // Planes: byte b of value i at b * count + i; interleaved: at 8 * i + b.
    const auto* bytes = reinterpret_cast<const uint8_t*>(columns.data() + pos);
    bool planes = mode == kValuesXorPlanes;
    uint64_t prev = 0;
    for (uint64_t i = 0; i < count; ++i) {
      prev ^= planes ? PlaneValue<8>(bytes, count, i) : PlaneValue<8>(bytes + 8 * i, 1, 0);
      points[i].value = FromBits(prev);
    }
    pos += count * 8;
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
