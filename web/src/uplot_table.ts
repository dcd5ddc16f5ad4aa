// Lines as uPlot takes them: one table of every line's points on a shared x (a band's bounds
// as two more series), and the series that draw them.
import uPlot from "uplot";
import type { ChartState, XKind } from "./state";
import { xLabel, value } from "./format";
import { lookOf, plotted, type Line } from "./lines";
import { straightLines } from "./paths";
import { toPlotX, xName } from "./xaxis";

// The series, the bands between a mean's bounds, and which line each series draws ([0]: x);
// a line's band bounds and faint unsmoothed values follow its own series, with its owner.
export interface UplotSeries {
  series: uPlot.Series[];
  bands: uPlot.Band[];
  owners: (Line | undefined)[];
}

export function uplotData(lines: Line[], state: ChartState, x: XKind): uPlot.AlignedData {
  const { series } = plotted(lines, state);
  // Per line: its values, its band's bounds, its own values when smoothed (as uplotSeries).
  const tables: uPlot.AlignedData[] = series.map((s, i) => {
    const b = lines[i].band;
    const columns = b ? [s.x, s.y, b.hi, b.lo] : [s.x, s.y];
    if (s.raw) columns.push(s.raw);
    return columns as uPlot.AlignedData;
  });
  if (!tables.length) return [[]];
  const data = (tables.length === 1 ? tables[0] : uPlot.join(tables)) as (number | null | undefined)[][];
  data[0] = (data[0] as number[]).map((v) => toPlotX(x, v));
  return data as uPlot.AlignedData;
}

// Markers along a line, about 40 pixels apart, each line's offset from the others'.
function markers(color: string, marker: string, width: number, style: number): uPlot.Series.Points {
  return {
    show: true,
    size: 5 + width,
    width: 1.5,
    stroke: color,
    fill: marker === "ring" ? "#ffffff" : color,
    // One marker near each 40 pixels: a binary search a marker, not a walk over every point.
    filter: (u, si) => {
      const xs = u.data[0] as number[];
      const ys = u.data[si];
      const out: number[] = [];
      const plotWidth = u.bbox.width / devicePixelRatio;
      for (let px = (40 * (style % 5)) / 5; px <= plotWidth; px += 40) {
        const from = u.posToVal(px, "x");
        const to = u.posToVal(px + 40, "x");
        let lo = 0;
        let hi = xs.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (xs[mid] < from) lo = mid + 1;
          else hi = mid;
        }
        while (lo < xs.length && xs[lo] < to && ys[lo] == null) lo++;
        if (lo < xs.length && xs[lo] < to && ys[lo] != null) out.push(lo);
      }
      return out;
    },
  };
}

export function uplotSeries(lines: Line[], state: ChartState, x: XKind, forOverview: boolean): UplotSeries {
  const series: uPlot.Series[] = [{ label: xName(x), value: (_u, v) => (v == null ? "-" : xLabel(x, v)) }];
  const owners: (Line | undefined)[] = [undefined];
  const bands: uPlot.Band[] = [];
  lines.forEach((l, i) => {
    const st = lookOf(l, i, state.mono);
    const shown = !state.hidden.includes(l.key);
    const width = forOverview ? 1 : l.band ? state.width + 1 : state.width;
    series.push({
      label: l.name,
      stroke: st.color,
      dash: st.dash.map((d) => d * Math.max(1, width) * 1.2),
      width,
      show: shown,
      spanGaps: false,
      points: st.marker && !forOverview ? markers(st.color, st.marker, width, l.style ?? i) : { show: false },
      value: (_u, v) => value(v),
      // A workload's mean is one of its band's edges for uPlot: its own builder then.
      paths: l.band ? undefined : straightLines,
    });
    owners.push(l);
    if (l.band) {
      const hi = series.length;
      series.push({ label: l.name + " max", stroke: "transparent", show: shown, points: { show: false } });
      series.push({ label: l.name + " min", stroke: "transparent", show: shown, points: { show: false } });
      owners.push(l, l);
      bands.push({ series: [hi, hi + 1], fill: st.color + "2e" });
    }
    if (state.smoothing > 0) {
      series.push({
        label: l.name + " unsmoothed",
        stroke: st.color + "40",
        width: 1,
        show: shown,
        spanGaps: false,
        points: { show: false },
        paths: straightLines,
      });
      owners.push(l);
    }
  });
  return { series, bands, owners };
}

// The x range a key moves the plot's [min, max] to: + or = zooms in, - out, the arrows pan
// by a fifth; undefined for any other key.
export function keyedRange(key: string, min: number, max: number): [number, number] | undefined {
  const span = max - min;
  if (key === "+" || key === "=") return [min + span / 4, max - span / 4];
  if (key === "-") return [min - span / 2, max + span / 2];
  if (key === "ArrowLeft") return [min - span / 5, max - span / 5];
  if (key === "ArrowRight") return [min + span / 5, max + span / 5];
  return undefined;
}
