#include "figure/axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

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
  char buf[48];
  if (a >= 1e6) {  // SI prefixes, as a reader says them: 1.5M, 20G
    static constexpr char kPrefixes[] = "kMGTPE";
    double x = v / 1000;
    size_t prefix = 0;
    while (std::fabs(x) >= 999.95 && prefix + 1 < sizeof kPrefixes - 1) {
      x /= 1000;
      ++prefix;
    }
    std::snprintf(buf, sizeof buf, "%.3g%c", x, kPrefixes[prefix]);
  } else if (a >= 1000) {
    std::snprintf(buf, sizeof buf, "%.0f", v);  // 36940, never 3.694e+04
  } else if (a >= 1e-3 || a == 0) {
    std::snprintf(buf, sizeof buf, "%.4g", v);
  } else {  // 0.00005: three significant digits, written out
    int decimals = std::min(15, 2 - static_cast<int>(std::floor(std::log10(a))));
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    std::string out = buf;
    while (out.back() == '0') out.pop_back();
    return out;
  }
  return buf;
}

namespace {

// Whether local seconds lo and hi fall on different days.
bool CrossesDays(double lo, double hi) { return std::floor(lo / 86400) != std::floor(hi / 86400); }

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
  // Each decade labelled, the 2..9 between unlabelled (minor) when few decades show.
  bool minor = b - a <= 4;
  for (int e = a; e <= b; ++e) {
    double decade = std::pow(10, e);
    for (int m = 1; m <= (minor ? 9 : 1); ++m) {
      double t = m * decade;
      if (t >= lo * 0.999 && t <= hi * 1.001) out.push_back({t, m == 1 ? ShortNumber(t) : ""});
    }
  }
  // Less than a decade: the round values inside it are labelled, so the axis still reads.
  if (std::none_of(out.begin(), out.end(), [](const Tick& t) { return !t.label.empty(); })) {
    for (Tick& t : out) t.label = ShortNumber(t.at);
  }
  return out;
}

std::vector<Tick> XTicks(XAxis axis, double lo, double hi, int count, int utc_offset_min) {
  if (axis == XAxis::kStep) {
    if (!(hi > lo)) return {{lo, ShortNumber(lo)}};
    double step = std::max(1.0, NiceStep(lo, hi, count));
    return TicksEvery(lo, hi, step, 0, [](double t) { return ShortNumber(t); });
  }
  double seconds_lo = axis == XAxis::kWall ? lo / 1000 : lo,
         seconds_hi = axis == XAxis::kWall ? hi / 1000 : hi;
  double span = seconds_hi - seconds_lo;
  if (!(span > 0)) return {};
  double raw = span / std::max(1, count);
  // Round durations: seconds, minutes, hours; whole days for long spans.
  bool days = span >= kDaysFrom;
  double step = kDaySteps[std::size(kDaySteps) - 1] * 86400;
  for (double s : kTimeSteps) {
    if (s >= raw && !days) {
      step = s;
      break;
    }
  }
  for (double d : kDaySteps) {
    if (d * 86400 >= raw && (days || step > kTimeSteps[std::size(kTimeSteps) - 1])) {
      step = d * 86400;
      break;
    }
  }
  if (raw < 1) step = NiceStep(seconds_lo, seconds_hi, count);  // sub-second spans
  if (axis == XAxis::kRelative && days)
    return TicksEvery(seconds_lo, seconds_hi, step, 0, [](double t) { return ShortNumber(t / 86400); });
  if (axis == XAxis::kRelative) {
    bool fraction = step < 1;
    return TicksEvery(seconds_lo, seconds_hi, step, 0, [fraction](double t) {
      if (!fraction) return Clock(t);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3gs", t);
      return std::string(buf);
    });
  }
  // Wall clock: ticks at round local times of day, with the date where the range crosses
  // days (runs a year apart are not 53 ticks all reading "00:00").
  double offset = utc_offset_min * 60.0;
  bool dates = CrossesDays(seconds_lo + offset, seconds_hi + offset);
  bool years = std::floor((seconds_lo + offset) / (365.25 * 86400)) !=
               std::floor((seconds_hi + offset) / (365.25 * 86400));
  std::vector<Tick> ticks =
      TicksEvery(seconds_lo + offset, seconds_hi + offset, step, 0, [step, dates, years](double t) {
        auto local = static_cast<time_t>(std::floor(t));
        tm parts{};
        gmtime_r(&local, &parts);
        char buf[48];
        const char* format = step < 60      ? "%H:%M:%S"
                             : !dates       ? "%H:%M"
                             : step < 86400 ? "%m-%d %H:%M"
                             : years        ? "%Y-%m-%d"
                                            : "%m-%d";
        std::strftime(buf, sizeof buf, format, &parts);
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

std::string XAxisTitle(XAxis axis, double lo, double hi, int utc_offset_min) {
  switch (axis) {
    case XAxis::kStep:
      return "Step";
    case XAxis::kRelative:  // as Clock writes the labels: h:mm:ss from the first hour on; days when long
      if (hi - lo >= kDaysFrom) return "Time since start (days)";
      return std::max(std::fabs(lo), std::fabs(hi)) >= 3599.5 ? "Time since start (h:mm:ss)"
                                                              : "Time since start (m:ss)";
    case XAxis::kWall: {
      char buf[64];
      int m = std::abs(utc_offset_min);
      bool dates = CrossesDays(lo / 1000 + utc_offset_min * 60.0, hi / 1000 + utc_offset_min * 60.0);
      std::snprintf(buf, sizeof buf, "%s (UTC%c%02d:%02d)", dates ? "Date and time" : "Time of day",
                    utc_offset_min < 0 ? '-' : '+', m / 60, m % 60);
      return buf;
    }
  }
  return "";
}

}  // namespace tb
