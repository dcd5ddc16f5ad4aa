#include "store/format/chunk_summary.h"

#include <algorithm>
#include <cmath>

#include "store/format/varint.h"

namespace tb {

std::vector<Point> SummarizeGroups(std::span<const Point> points, int64_t group) {
  std::vector<Point> out;
  size_t g = static_cast<size_t>(std::max<int64_t>(group, 1));
  out.reserve(points.size() / g * 4 + 4);
  for (size_t begin = 0; begin < points.size(); begin += g) {
    size_t end = std::min(points.size(), begin + g);
    size_t lo = end, hi = end;  // NaN is neither lowest nor highest
    for (size_t i = begin; i < end; ++i) {
      double v = points[i].value;
      if (std::isnan(v)) continue;
      if (lo == end || v < points[lo].value) lo = i;
      if (hi == end || v > points[hi].value) hi = i;
    }
    size_t picks[4] = {begin, lo, hi, end - 1};
    std::sort(picks, picks + 4);
    size_t last = end;
    for (size_t i : picks) {
      if (i == end || i == last) continue;
      out.push_back(points[i]);
      last = i;
    }
  }
  return out;
}

std::vector<Point> GroupMeans(std::span<const Point> points, int64_t group) {
  std::vector<Point> out;
  size_t g = static_cast<size_t>(std::max<int64_t>(group, 1));
  out.reserve(points.size() / g + 1);
  for (size_t begin = 0; begin < points.size(); begin += g) {
    size_t end = std::min(points.size(), begin + g);
    double sum = 0;
    int64_t count = 0;
    for (size_t i = begin; i < end; ++i) {
      if (std::isnan(points[i].value)) continue;
      sum += points[i].value;
      ++count;
    }
    int64_t middle = points[begin].time_ms + (points[end - 1].time_ms - points[begin].time_ms) / 2;
    out.push_back({middle, count > 0 ? sum / static_cast<double>(count) : std::nan(""), count});
  }
  return out;
}

std::string EncodeSummary(std::span<const Point> points) {
  std::string blob;
  std::vector<std::string> levels;
  std::vector<int64_t> groups;
  for (int64_t group : kSummaryGroups) {
    // A level is worth its bytes when it has at least two groups of points.
    if (static_cast<int64_t>(points.size()) < 2 * group) break;
    levels.push_back(EncodeChunk(SummarizeGroups(points, group)));
    groups.push_back(group);
  }
  if (levels.empty()) return blob;
  for (int64_t group : kMeanGroups) {
    if (static_cast<int64_t>(points.size()) < 2 * group) break;
    levels.push_back(EncodeChunk(GroupMeans(points, group)));
    groups.push_back(kMeansEntry + group);
  }
  PutVarint(blob, levels.size());
  for (size_t i = 0; i < levels.size(); ++i) {
    PutVarint(blob, static_cast<uint64_t>(groups[i]));
    PutVarint(blob, levels[i].size());
    blob += levels[i];
  }
  return blob;
}

Status DecodeSummaryUpTo(std::string_view blob, int64_t group, std::vector<Point>& out) {
  int64_t best = 0;
  for (int64_t g : SummaryLevels(blob)) {
    if (g <= group) best = std::max(best, g);
  }
  if (best == 0) return Status::NotFound("no summary level of " + std::to_string(group) + " points or fewer");
  return DecodeSummaryLevel(blob, best, out);
}

namespace {

// Calls `level(group, bytes)` for each level of the blob until it returns true.
template <typename Fn>
Status WalkLevels(std::string_view blob, Fn level) {
  size_t pos = 0;
  uint64_t count = 0;
  if (!GetVarint(blob, pos, count) || count > 16) return Status::Corrupt("not a chunk summary");
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t group = 0, size = 0;
    if (!GetVarint(blob, pos, group) || !GetVarint(blob, pos, size) || size > blob.size() - pos)
      return Status::Corrupt("chunk summary cut short");
    if (level(static_cast<int64_t>(group), blob.substr(pos, size))) return Status::Ok();
    pos += size;
  }
  return Status::NotFound("no such level");
}

}  // namespace

std::vector<int64_t> SummaryLevels(std::string_view blob) {
  std::vector<int64_t> out;
  if (blob.empty()) return out;
  (void)WalkLevels(blob, [&](int64_t group, std::string_view) {
    if (group < kMeansEntry) out.push_back(group);
    return false;
  });
  return out;
}

Result<int64_t> DecodeSummaryMeans(std::string_view blob, int64_t group, std::vector<Point>& out) {
  int64_t best = 0;
  Status walked = WalkLevels(blob, [&](int64_t g, std::string_view) {
    if (g > kMeansEntry && g - kMeansEntry <= group) best = std::max(best, g - kMeansEntry);
    return false;
  });
  if (walked.code() == Status::Code::kCorrupt) return walked;
  if (best == 0) return Status::NotFound("no group means of " + std::to_string(group) + " points or fewer");
  TB_RETURN_IF_ERROR(DecodeSummaryLevel(blob, kMeansEntry + best, out));
  return best;
}

Status DecodeSummaryLevel(std::string_view blob, int64_t group, std::vector<Point>& out) {
  Status decoded = Status::Ok();
  Status found = WalkLevels(blob, [&](int64_t g, std::string_view bytes) {
    if (g != group) return false;
    decoded = DecodeChunk(bytes, out);
    return true;
  });
  return found.ok() ? decoded : found;
}

std::string OverviewLevels(std::string_view summary, std::string_view data) {
  if (!summary.empty()) return std::string(summary);
  std::string blob;
  PutVarint(blob, 1);  // one entry: every point, as a level of group 1
  PutVarint(blob, 1);
  PutVarint(blob, data.size());
  blob += data;
  return blob;
}

std::optional<int64_t> SummaryLevelFor(double points_per_bucket) {
  std::optional<int64_t> chosen;
  for (int64_t group : kSummaryGroups) {
    if (points_per_bucket >= static_cast<double>(group)) chosen = group;
  }
  return chosen;
}

}  // namespace tb
