#include "figure/axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tb {

std::string Clock(double seconds) {
  bool negative = seconds < 0;
  auto total = static_cast<int64_t>(std::llround(std::fabs(seconds)));
  int64_t h = total / 3600, m = total / 60 % 60, s = total % 60;
  char buf[48];
  if (h > 0)
    std::snprintf(buf, sizeof buf, "%s%lld:%02lld:%02lld", negative ? "-" : "", static_cast<long long>(h),
                  static_cast<long long>(m), static_cast<long long>(s));
  else
    std::snprintf(buf, sizeof buf, "%s%lld:%02lld", negative ? "-" : "", static_cast<long long>(m),
                  static_cast<long long>(s));
  return buf;
}

std::string ShortNumber(double v) {
  if (!std::isfinite(v)) return "-";
  double a = std::fabs(v);
  char buf[32];
  if (a != 0 && (a >= 1e6 || a < 1e-3))
    std::snprintf(buf, sizeof buf, "%.3g", v);
  else
    std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

namespace {

// The step of round ticks: 1, 2 or 5 times a power of ten, about (hi - lo) / count.
double NiceStep(double lo, double hi, int count) {
  double raw = (hi - lo) / std::max(1, count);
  double mag = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw * 0.999) return m * mag;
  }
  return 10 * mag;
}

template <typename Label>
std::vector<Tick> TicksEvery(double lo, double hi, double step, double origin, Label label) {
  std::vector<Tick> out;
  double first = origin + std::ceil((lo - origin) / step - 1e-9) * step;
  for (int i = 0; i < 200; ++i) {
    double t = first + i * step;
    if (t > hi + step * 1e-9) break;
    if (std::fabs(t) < step * 1e-9) t = 0;
    out.push_back({t, label(t)});
  }
  return out;
}

}  // namespace

std::vector<Tick> NumberTicks(double lo, double hi, int count) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi <= lo) return {{lo, ShortNumber(lo)}};
  double step = NiceStep(lo, hi, count);
  return TicksEvery(lo, hi, step, 0, [](double t) { return ShortNumber(t); });
}

std::vector<Tick> LogTicks(double lo, double hi) {
  std::vector<Tick> out;
  if (!(lo > 0) || !(hi > lo)) return out;
  int a = static_cast<int>(std::floor(std::log10(lo))), b = static_cast<int>(std::ceil(std::log10(hi)));
  bool fine = b - a <= 2;
  for (int e = a; e <= b; ++e) {
    for (double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      double t = m * std::pow(10, e);
      if (t >= lo * 0.999 && t <= hi * 1.001) out.push_back({t, ShortNumber(t)});
    }
  }
  return out;
}

std::vector<Tick> XTicks(XAxis axis, double lo, double hi, int count, int utc_offset_min) {
  if (axis == XAxis::kStep) {
    if (!(hi > lo)) return {{lo, ShortNumber(lo)}};
    double step = std::max(1.0, NiceStep(lo, hi, count));
    return TicksEvery(lo, hi, step, 0, [](double t) { return ShortNumber(t); });
  }
  // Round durations: seconds, minutes, hours, days.
  static constexpr double kSteps[] = {1,   2,    5,    10,   15,    30,    60,    120,   300,    600,
                                      900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800};
  double seconds_lo = axis == XAxis::kWall ? lo / 1000 : lo,
         seconds_hi = axis == XAxis::kWall ? hi / 1000 : hi;
  double span = seconds_hi - seconds_lo;
  if (!(span > 0)) return {};
  double raw = span / std::max(1, count);
  double step = kSteps[std::size(kSteps) - 1];
  for (double s : kSteps) {
    if (s >= raw) {
      step = s;
      break;
    }
  }
  if (raw < 1) step = NiceStep(seconds_lo, seconds_hi, count);  // sub-second spans
  if (axis == XAxis::kRelative) {
    bool fraction = step < 1;
    return TicksEvery(seconds_lo, seconds_hi, step, 0, [fraction](double t) {
      if (!fraction) return Clock(t);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3gs", t);
      return std::string(buf);
    });
  }
  // Wall clock: ticks at round local times of day.
  double offset = utc_offset_min * 60.0;
  std::vector<Tick> ticks = TicksEvery(seconds_lo + offset, seconds_hi + offset, step, 0, [step](double t) {
    auto local = static_cast<int64_t>(std::floor(t));
    int64_t day = ((local % 86400) + 86400) % 86400;
    char buf[32];
    if (step < 60)
      std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(day / 3600),
                    static_cast<long long>(day / 60 % 60), static_cast<long long>(day % 60));
    else
      std::snprintf(buf, sizeof buf, "%02lld:%02lld", static_cast<long long>(day / 3600),
                    static_cast<long long>(day / 60 % 60));
    return std::string(buf);
  });
  for (Tick& t : ticks) t.at = (t.at - offset) * 1000;
  return ticks;
}

DisplayUnit ChooseDisplayUnit(std::string_view unit, double largest, bool percent) {
  double a = std::fabs(largest);
  if (unit == "ratio") return percent ? DisplayUnit{100, "%"} : DisplayUnit{1, ""};
  auto binary = [&](std::string_view suffix) {
    static constexpr std::pair<double, const char*> kPrefixes[] = {{1024.0 * 1024 * 1024 * 1024, "TiB"},
                                                                   {1024.0 * 1024 * 1024, "GiB"},
                                                                   {1024.0 * 1024, "MiB"},
                                                                   {1024.0, "KiB"}};
    for (const auto& [factor, name] : kPrefixes) {
      if (a >= factor) return DisplayUnit{1 / factor, std::string(name) + std::string(suffix)};
    }
    return DisplayUnit{1, "bytes" + std::string(suffix)};
  };
  if (unit == "bytes") return binary("");
  if (unit == "bytes/s") return binary("/s");
  if (unit == "Hz") {
    if (a >= 1e9) return {1e-9, "GHz"};
    if (a >= 1e6) return {1e-6, "MHz"};
    if (a >= 1e3) return {1e-3, "kHz"};
    return {1, "Hz"};
  }
  if (unit == "1") return {1, ""};
  if (unit == "1/s") return {1, "per second"};
  return {1, std::string(unit)};
}

std::string AxisTitle(std::string_view title, std::string_view unit) {
  std::string out(title);
  if (!unit.empty()) out.append(" (").append(unit).append(")");
  return out;
}

std::string XAxisTitle(XAxis axis, double span, int utc_offset_min) {
  switch (axis) {
    case XAxis::kStep:
      return "Step";
    case XAxis::kRelative:
      return span >= 3600 ? "Time since start (h:mm:ss)" : "Time since start (m:ss)";
    case XAxis::kWall: {
      char buf[48];
      int m = std::abs(utc_offset_min);
      std::snprintf(buf, sizeof buf, "Time of day (UTC%c%02d:%02d)", utc_offset_min < 0 ? '-' : '+', m / 60,
                    m % 60);
      return buf;
    }
  }
  return "";
}

}  // namespace tb
