// What an axis shows: ticks at round values (time at 0:05, 1:00, 5:00, 1:00:00; numbers at
// 1, 2, 5 times a power of ten; powers of ten on a log scale) and units scaled the way people
// read them (ratios as percent, bytes as MiB or GiB, hertz as MHz). Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "query/chart_series.h"

namespace tb {

// The round steps of a time axis in seconds, up to half a day; a span of kDaysFrom seconds or
// more steps in whole days (kDaySteps), and a relative axis then reads in days ("Time since
// start (days)": 0, 30, 60), not in thousands of hours. The web UI's axes take the same
// steps (web/build.mjs reads them from this file).
inline constexpr double kTimeSteps[] = {1,   2,   5,    10,   15,   30,    60,    120,  300,
                                        600, 900, 1800, 3600, 7200, 10800, 21600, 43200};
inline constexpr double kDaySteps[] = {1, 2, 5, 7, 14, 30, 60, 90, 180, 365, 730, 1825, 3650};
inline constexpr double kDaysFrom = 4 * 86400;

struct Tick {
  double at;
  std::string label;
};

// About `count` ticks between lo and hi at 1, 2 or 5 times a power of ten.
std::vector<Tick> NumberTicks(double lo, double hi, int count);
// Ticks at powers of ten, labelled, with unlabelled minor ticks at 2..9 times them when
// few decades show (a range inside one decade labels its round values); lo > 0.
std::vector<Tick> LogTicks(double lo, double hi);
// Ticks for an x axis: seconds since the start at round durations ("0:30", "1:00:00"),
// wall-clock Unix ms at round times of day in the zone `utc_offset_min` ("14:05"; with the
// date where the range crosses days: "11-27 14:00", "11-27", "2025-11-27"), or steps.
std::vector<Tick> XTicks(XAxis axis, double lo, double hi, int count, int utc_offset_min = 0);

// "1:05", "12:00", "1:00:00": seconds as h:mm:ss, or m:ss under an hour.
std::string Clock(double seconds);
// A number as a tick or a bar's label: at most 4 significant digits, never an exponent
// ("0.25", "36940", "1.5G" with SI prefixes from a million, "0.00005").
std::string ShortNumber(double v);

// How a metric's values are shown: multiplied by `factor`, in `unit` ("%", "GiB", "MHz").
struct DisplayUnit {
  double factor = 1;
  std::string unit;
};
// `unit` is the catalog's ("ratio", "bytes", "bytes/s", "Hz", "W", "cores", "1"); `largest`
// the largest absolute value shown, which picks the prefix.
DisplayUnit ChooseDisplayUnit(std::string_view unit, double largest, bool percent = true);

// "GPU utilization (%)".
std::string AxisTitle(std::string_view title, std::string_view unit);
// The x axis's title for the range lo..hi (seconds, Unix ms or steps), in the format of its
// labels: "Time since start (h:mm:ss)", "Time of day (UTC+01:00)", "Date and time
// (UTC+01:00)" across days, "Step".
std::string XAxisTitle(XAxis axis, double lo, double hi, int utc_offset_min);

}  // namespace tb
