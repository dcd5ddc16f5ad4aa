// What the cursor points at: the nearest point of a drawn line, at that point's own x. Lines
// share uPlot's table of every line's x, so a sparse line (a loss logged every 10 s among
// GPU samples every 0.5 s) has nothing at most rows; its nearest point is looked for on both
// sides of the cursor's row, and the tooltip gives that point's time, not the cursor's.
import type uPlot from "uplot";
import { esc, plural, value } from "./format";
import type { Line } from "./lines";
import type { XKind } from "./state";
import { fromPlotX, xText } from "./xaxis";

const REACH_PX = 48; // how far from the cursor, across, a point still counts

export interface Pointed {
  line: Line;
  value: number;
  x: number; // the point's own x, on the plot's scale
}

// The point nearest the cursor, by distance on screen, among the shown lines (`seriesLines`:
// the line each series draws; a band's bounds are skipped).
export function pointedAt(u: uPlot, seriesLines: (Line | undefined)[]): Pointed | null {
  const idx = u.cursor.idx;
  const left = u.cursor.left;
  const top = u.cursor.top;
  if (idx == null || left == null || top == null || top < 0) return null;
  const xs = u.data[0] as number[];
  let best: Pointed | null = null;
  let bestDist = Infinity;
  seriesLines.forEach((line, si) => {
    if (!line || seriesLines[si - 1] === line || !u.series[si].show) return;
    const ys = u.data[si] as (number | null | undefined)[];
    const at = (i: number) => {
      const v = ys[i];
      if (v == null) return;
      const dx = u.valToPos(xs[i], "x") - left;
      const dist = Math.hypot(dx, u.valToPos(v, "y") - top);
      if (dist < bestDist) {
        bestDist = dist;
        best = { line, value: v, x: xs[i] };
      }
    };
    // The nearest point on each side within reach (rows are in x order).
    for (let i = idx; i >= 0 && left - u.valToPos(xs[i], "x") <= REACH_PX; i--) {
      if (ys[i] != null) {
        at(i);
        break;
      }
    }
    for (let i = idx + 1; i < xs.length && u.valToPos(xs[i], "x") - left <= REACH_PX; i++) {
      if (ys[i] != null) {
        at(i);
        break;
      }
    }
  });
  return best;
}

// The tooltip's text for a point: the line, its value and unit, its own time or step, how
// many runs a workload's mean stands for there.
export function tooltipHtml(p: Pointed, x: XKind, unit: string): string {
  const own = fromPlotX(x, p.x);
  const behind = p.line.n ? p.line.n[p.line.x.indexOf(own)] : undefined;
  return (
    `<b>${esc(p.line.name)}</b><br>${esc(value(p.value))}${unit ? " " + esc(unit) : ""} at ${esc(xText(x, own))}` +
    (behind ? `<br>mean of ${plural(behind, "run")} here` : "") +
    (p.line.run ? "<br><i>click for the run's details</i>" : "")
  );
}
