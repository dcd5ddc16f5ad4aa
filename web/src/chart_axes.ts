// A chart's axes as the figures draw theirs (src/figure/axis.cc): x at round durations (whole
// days for a run of four days or more, read in days), titled in the format of its labels; y
// at round values, or on a log scale its decades labelled and the 2..9 between them not; and
// the note of the values a log axis cannot draw.
import type uPlot from "uplot";
import { logTicks, niceTicks, readsInDays, timeTicks, value, xLabel } from "./format";
import { notDrawnOnLog, type Line } from "./lines";
import type { XKind } from "./state";
import { xName, xTitle } from "./xaxis";

// About one x tick per 110 pixels of a chart `width` wide.
const xTickCount = (width: number) => Math.max(2, Math.floor(width / 110));

export function chartAxes(
  x: XKind,
  logY: boolean,
  width: number,
  xAxisTitle: string,
  yAxisTitle: string,
): uPlot.Axis[] {
  return [
    {
      label: xAxisTitle,
      // Round durations (0:30, 5:00, 1:00:00; days for long runs), not uPlot's decimal steps.
      splits: x === "relative" ? (_u, _i, lo, hi) => timeTicks(lo, hi, xTickCount(width)) : undefined,
      values:
        x === "wall"
          ? undefined
          : (u, ticks) => {
              const days = x === "relative" && readsInDays((u.scales.x.max ?? 0) - (u.scales.x.min ?? 0));
              return ticks.map((t) => xLabel(x, t, ticks.length > 1 ? ticks[1] - ticks[0] : 1, days));
            },
    },
    {
      label: yAxisTitle,
      splits: logY ? (_u, _i, lo, hi) => logTicks(lo, hi).map((t) => t.at) : (_u, _i, lo, hi) => niceTicks(lo, hi, 5),
      values: logY
        ? (u, ticks) => {
            const labelled = logTicks(u.scales.y.min ?? 1, u.scales.y.max ?? 10);
            return ticks.map((t) => labelled.find((l) => Math.abs(l.at - t) <= t * 1e-9)?.label ?? "");
          }
        : (_u, ticks) => ticks.map((t) => value(t)),
      size: 60,
    },
  ];
}

// The x axis's title over `range` (data x) on a chart `width` wide.
export function axisTitle(x: XKind, range: [number, number], width: number): string {
  if (x !== "relative") return xName(x, true);
  const ticks = timeTicks(range[0], range[1], xTickCount(width));
  return xTitle(x, range[0], range[1], ticks.length > 1 && ticks[1] - ticks[0] < 1);
}

// On a log axis, how many of the shown lines' values within `zoom` it cannot draw (at or
// below 0), said as the figures say it; "" when none or on a linear axis.
export function logNote(logY: boolean, shown: Line[], zoom: [number, number] | null): string {
  if (!logY) return "";
  const n = notDrawnOnLog(shown, zoom);
  return n ? `${n} ${n === 1 ? "value" : "values"} at or below 0 not drawn (log scale)` : "";
}
