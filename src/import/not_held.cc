#include "import/not_held.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

namespace tb {

Result<std::vector<Point>> NotHeld(Store& to, int64_t series_id, const std::vector<Point>& values) {
  Result<std::vector<Point>> stored = ReadSeriesPoints(to, series_id);
  if (!stored.ok()) return stored.status();
  auto key = [](const Point& p) {
    uint64_t bits = 0x7ff8000000000000;  // every NaN one (MLflow keeps is_nan, not its bits)
    if (!std::isnan(p.value)) std::memcpy(&bits, &p.value, sizeof bits);
    return std::tuple(p.time_ms, p.step, bits);
  };
  std::vector<std::tuple<int64_t, int64_t, uint64_t>> held;
  held.reserve(stored->size());
  for (const Point& p : *stored) held.push_back(key(p));
  std::sort(held.begin(), held.end());
  std::vector<bool> taken(held.size(), false);
  std::vector<Point> fresh;
  for (const Point& p : values) {
    auto k = key(p);
    auto it = std::lower_bound(held.begin(), held.end(), k);
    while (it != held.end() && *it == k && taken[static_cast<size_t>(it - held.begin())]) ++it;
    if (it != held.end() && *it == k) {
      taken[static_cast<size_t>(it - held.begin())] = true;
    } else {
      fresh.push_back(p);
    }
  }
  return fresh;
}

}  // namespace tb
