#include "collect/collector.h"

#include <cmath>

namespace tb {

double RoundForStorage(double value) {
  if (!std::isfinite(value) || value == std::nearbyint(value) || value == 0) return value;
  int digits = 6 - static_cast<int>(std::ceil(std::log10(std::fabs(value))));
  if (digits <= 0) return std::nearbyint(value);
  if (digits > 15) return value;
  double scale = std::pow(10.0, digits);
  return std::nearbyint(value * scale) / scale;
}

}  // namespace tb
