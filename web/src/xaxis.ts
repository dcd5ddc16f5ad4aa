// The three x axes a chart can have, and how uPlot sees them: "relative" seconds since a
// run started, "wall" Unix milliseconds (uPlot's time scale counts seconds), "step".
import type uPlot from "uplot";
import type { ChartState, XKind } from "./state";
import { clock, wall } from "./format";
import { DAYS_FROM } from "./generated/axis";

// Data x to uPlot's x and back.
export function toPlotX(kind: XKind, x: number): number {
  return kind === "wall" ? x / 1000 : x;
}
export function fromPlotX(kind: XKind, x: number): number {
  return kind === "wall" ? x * 1000 : x;
}

export function xName(kind: XKind, title = false): string {
  if (title) return kind === "relative" ? "Time since start" : kind === "wall" ? "Time of day" : "Step";
  return kind === "relative" ? "time since start" : kind === "wall" ? "time" : "step";
}

// The x axis's title over lo..hi (seconds for "relative"), in the format of its labels, as the
// figures title it (figure/axis.cc XAxisTitle): "Time since start (m:ss)", "(h:mm:ss)",
// "(days)"; "(s)" where ticks fall under a second apart.
export function xTitle(kind: XKind, lo: number, hi: number, subSecond = false): string {
  if (kind !== "relative") return xName(kind, true);
  if (hi - lo >= DAYS_FROM) return "Time since start (days)";
  if (subSecond) return "Time since start (s)";
  return Math.max(Math.abs(lo), Math.abs(hi)) >= 3599.5 ? "Time since start (h:mm:ss)" : "Time since start (m:ss)";
}

// A data x in words, for a tooltip.
export function xText(kind: XKind, x: number): string {
  return kind === "relative" ? clock(x) : kind === "wall" ? wall(x) : `step ${x}`;
}

// A chart's scales. x: time since start spans the runs' whole time from 0 (charts of the
// same runs share one x axis; `longest`: the longest run's seconds) unless zoomed, when it
// is the range asked. y: linear or log, padded, or the range typed in.
export function chartScales(x: XKind, s: ChartState, longest: () => number): uPlot.Scales {
  return {
    x: {
      time: x === "wall",
      range:
        x === "relative" ? (_u, lo, hi) => (s.zoom ? [lo, hi] : [Math.min(0, lo), Math.max(hi, longest())]) : undefined,
    },
    y: {
      distr: s.logY ? 3 : 1,
      range: (_u, lo, hi) => {
        const pad = s.logY ? 0 : (hi - lo) * 0.05 || 1;
        return [s.yMin ?? lo - pad, s.yMax ?? hi + pad] as uPlot.Range.MinMax;
      },
    },
  };
}
