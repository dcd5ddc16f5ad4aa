// The three x axes a chart can have, and how uPlot sees them: "relative" seconds since a
// run started, "wall" Unix milliseconds (uPlot's time scale counts seconds), "step".
import type { XKind } from "./state";
import { clock, wall } from "./format";

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

// A data x in words, for a tooltip.
export function xText(kind: XKind, x: number): string {
  return kind === "relative" ? clock(x) : kind === "wall" ? wall(x) : `step ${x}`;
}
