// What a chart shows, as plain data and pure functions (no DOM, no uPlot): the lines it
// fetched, smoothed and styled for drawing, the value ranges of what is visible, and the
// runs' events and phases placed on its x axis.
import type * as api from "./api";
import type { PlotBand, PlotEvent, PlotSeries } from "./scene";
import type { XKind } from "./state";
import { LINE_COLORS, LINE_DASHES, LINE_MARKERS, MONO_DASHES, SEQUENTIAL_STOPS } from "./generated/palette";

export interface Line {
  key: string; // legend identity: run id + labels, or "EXP:W"
  name: string;
  run?: string;
  x: number[];
  y: (number | null)[];
  band?: { lo: (number | null)[]; hi: (number | null)[] };
  n?: number[]; // a workload mean: how many runs stand behind each point
  width?: number; // a workload mean: its buckets' width on x (a live chart asks for more on that grid)
  members?: string; // a workload mean: its runs, comma-separated
  lastMs?: number; // a run's line: the time of its series' newest point (for live updates)
  style?: number; // its colour and dash (lineStyle); the line's position when not given
  shade?: number; // a sweep: its place 0-1 on the sequential map, by its parameter's value
}

export interface PhaseSpan {
  from: number;
  to: number;
  kind: string;
  run: string;
}

export interface LineLook {
  smoothing: number; // 0-99: the weight of an exponential moving average
  width: number;
  mono: boolean;
  hidden?: string[]; // keys of the lines switched off (they do not set the smoothing's step)
}

// Smoothing: an exponential moving average, debiased at the start (TensorBoard's), gaps
// kept, and weighted by time: a point `dx` after the one before keeps weight^(dx / step) of
// the average, so a loss logged every 10 s among GPU samples every 0.5 s does not lag its
// own values. The figure renderer smooths the same way (src/figure/figure_data.cc).
export function ema(x: number[], y: (number | null)[], weight: number, step: number): (number | null)[] {
  if (weight <= 0) return y;
  const w = weight / 100;
  let last = 0;
  let debias = 0;
  let prev = NaN;
  return y.map((v, i) => {
    if (v === null || !Number.isFinite(v)) return v;
    const keep = Number.isFinite(prev) && step > 0 ? Math.pow(w, (x[i] - prev) / step) : w;
    prev = x[i];
    last = last * keep + (1 - keep) * v;
    debias = debias * keep + (1 - keep);
    return last / debias;
  });
}

// One step of smoothing on x: the shown lines' x span over their densest line's points, at
// most 400 of them (the fewest a chart draws a line with, so the screen and the exports agree).
export function smoothingStep(lines: Line[]): number {
  let lo = Infinity;
  let hi = -Infinity;
  let densest = 0;
  for (const l of lines) {
    if (!l.x.length) continue;
    lo = Math.min(lo, l.x[0]);
    hi = Math.max(hi, l.x[l.x.length - 1]);
    densest = Math.max(densest, l.x.length);
  }
  return densest > 1 && hi > lo ? (hi - lo) / Math.min(densest, 400) : 0;
}

export interface LineLookStyle {
  color: string;
  dash: number[]; // in multiples of the line's width
  marker: string; // "", "dot" or "ring"
}

// The i-th line's look, as the figures give it (src/figure/palette.h): five colours that
// step in lightness, then dashes, then markers; in monochrome black and grey with dashes.
export function lineStyle(i: number, mono: boolean): LineLookStyle {
  const colors = LINE_COLORS.length;
  const dashes = LINE_DASHES.length;
  if (mono) {
    const n = MONO_DASHES.length;
    return {
      color: Math.floor(i / n) % 2 ? "#666666" : "#000000",
      dash: MONO_DASHES[i % n],
      marker: LINE_MARKERS[Math.floor(i / (2 * n)) % LINE_MARKERS.length],
    };
  }
  return {
    color: LINE_COLORS[i % colors],
    dash: LINE_DASHES[Math.floor(i / colors) % dashes],
    marker: LINE_MARKERS[Math.floor(i / (colors * dashes)) % LINE_MARKERS.length],
  };
}

// A sweep's colour: t from 0 (the least value) to 1 (the greatest) on the sequential map.
export function sweepColor(t: number): string {
  const n = SEQUENTIAL_STOPS.length;
  const at = Math.min(1, Math.max(0, t)) * (n - 1);
  const i = Math.min(Math.floor(at), n - 2);
  const f = at - i;
  const channel = (hex: string, k: number) => parseInt(hex.slice(1 + 2 * k, 3 + 2 * k), 16);
  const mix = [0, 1, 2].map((k) =>
    Math.round(channel(SEQUENTIAL_STOPS[i], k) * (1 - f) + channel(SEQUENTIAL_STOPS[i + 1], k) * f),
  );
  return "#" + mix.map((v) => v.toString(16).padStart(2, "0")).join("");
}

// A line's look: its sweep colour where the chart is coloured by a parameter, else its style's.
export function lookOf(l: Line, i: number, mono: boolean): LineLookStyle {
  if (l.shade !== undefined) return { color: sweepColor(l.shade), dash: [], marker: "" };
  return lineStyle(l.style ?? i, mono);
}

// How many values of `lines` within `zoom` (all when null) a log axis cannot draw: at or below 0.
export function notDrawnOnLog(lines: Line[], zoom: [number, number] | null): number {
  let n = 0;
  for (const l of lines) {
    l.y.forEach((v, i) => {
      if (v !== null && v <= 0 && (!zoom || (l.x[i] >= zoom[0] && l.x[i] <= zoom[1]))) n++;
    });
  }
  return n;
}

// A sweep: each run line's shade on the sequential map by the run's value of `param`, dark
// for the least, light for the greatest (on a log scale where the values are positive and
// span 8x or more), and the lines in order of value, those without one first; as the
// figures do (src/figure/sweep.cc). The scale drawn as the colour bar, or undefined where
// no line's run has a numeric value.
export interface SweepScale {
  param: string;
  lo: number;
  hi: number;
  log: boolean;
  values: number[]; // the lines' distinct values, ascending
}
export function sweepPlace(s: SweepScale, v: number): number {
  if (s.hi <= s.lo) return 0.5;
  return s.log
    ? (Math.log10(v) - Math.log10(s.lo)) / (Math.log10(s.hi) - Math.log10(s.lo))
    : (v - s.lo) / (s.hi - s.lo);
}
export function shadeLines(
  lines: Line[],
  param: string,
  paramsOf: (run: string) => Record<string, string> | undefined,
): SweepScale | undefined {
  for (const l of lines) delete l.shade;
  if (!param) return undefined;
  const valueOf = (l: Line) => {
    const v = l.run === undefined ? undefined : paramsOf(l.run)?.[param];
    return v === undefined || v.trim() === "" || !Number.isFinite(Number(v)) ? undefined : Number(v);
  };
  const values = [...new Set(lines.map(valueOf).filter((v): v is number => v !== undefined))].sort((a, b) => a - b);
  if (!values.length) return undefined;
  const lo = values[0];
  const hi = values[values.length - 1];
  const scale = { param, lo, hi, log: lo > 0 && hi / lo >= 8, values };
  for (const l of lines) {
    const v = valueOf(l);
    if (v !== undefined) l.shade = sweepPlace(scale, v);
  }
  lines.sort((a, b) => (a.shade ?? -1) - (b.shade ?? -1));
  return scale;
}

// The params that can colour a sweep: those with a number for at least two of the runs and
// more than one value among them.
export function sweepParams(params: (Record<string, string> | undefined)[]): string[] {
  const values = new Map<string, Set<string>>();
  for (const p of params) {
    for (const [k, v] of Object.entries(p ?? {})) {
      if (v.trim() === "" || !Number.isFinite(Number(v))) continue;
      if (!values.has(k)) values.set(k, new Set());
      values.get(k)!.add(v);
    }
  }
  return [...values]
    .filter(([, vs]) => vs.size > 1)
    .map(([k]) => k)
    .sort();
}

// Colours that follow the runs, not the lines: `runs` (the chart's runs, in order) and
// `workloads` (their EXPERIMENT:WORKLOAD keys, in order) number every line that can be
// drawn, workloads' means first; each line takes its run's or workload's number, so a run
// keeps its colour in every chart of the same runs, whichever of the runs before it have
// the chart's metric. Where a run has several lines (its GPUs' labels), the chart's lines
// take their positions instead, and every line a colour of its own.
export function styleLines(lines: Line[], runs: string[], workloads: string[]): void {
  const runLines = lines.filter((l) => l.run !== undefined).map((l) => l.run);
  const repeated = new Set(runLines).size < runLines.length;
  lines.forEach((l, i) => {
    const index = l.run !== undefined ? runs.indexOf(l.run) : workloads.indexOf(l.key);
    l.style = repeated || index < 0 ? i : l.run !== undefined ? workloads.length + index : index;
  });
}

// What is drawn: smoothed lines and bands, in the chart's styles.
// A smoothed line keeps its own values (`raw`), drawn faint behind it.
export function plotted(lines: Line[], look: LineLook): { series: PlotSeries[]; bands: PlotBand[] } {
  const series: PlotSeries[] = [];
  const bands: PlotBand[] = [];
  const step = look.smoothing > 0 ? smoothingStep(lines.filter((l) => !look.hidden?.includes(l.key))) : 0;
  lines.forEach((l, i) => {
    const st = lookOf(l, i, look.mono);
    const width = l.band ? look.width + 1 : look.width;
    const y = ema(l.x, l.y, look.smoothing, step);
    series.push({ name: l.name, color: st.color, dash: st.dash, width, x: l.x, y, raw: y === l.y ? undefined : l.y });
    if (l.band)
      bands.push({ name: l.name.replace(" mean", " min-max"), color: st.color, x: l.x, lo: l.band.lo, hi: l.band.hi });
  });
  return { series, bands };
}

// The runs' events on the x axis. Listener and tracking notices are left out; the same
// event of several runs at about the same time (the same second) is one marker, named
// with the runs that had it unless all did.
export function eventMarks(perRun: { letter: string; events: api.EventInfo[] }[], x: XKind): PlotEvent[] {
  const seen = new Map<string, { x: number; label: string; runs: string[] }>();
  for (const { letter, events } of perRun) {
    for (const e of events) {
      if (e.kind === "listener" || e.kind === "tracking") continue;
      const at = x === "wall" ? e.time_ms : e.relative_s;
      const key = `${e.label}@${Math.round(x === "wall" ? at / 1000 : at)}`;
      if (!seen.has(key)) seen.set(key, { x: at, label: e.label, runs: [] });
      const runs = seen.get(key)!.runs;
      if (!runs.includes(letter)) runs.push(letter); // a run's two evals in one second: named once
    }
  }
  return [...seen.values()].map((e) => ({
    x: e.x,
    label: (perRun.length > 1 && e.runs.length < perRun.length ? e.runs.join(",") + " " : "") + e.label,
  }));
}

// A run's phases other than the steady state, on the x axis (seconds since the run started,
// or wall milliseconds).
export function phaseSpans(run: string, startMs: number | undefined, phases: api.PhaseInfo[], x: XKind): PhaseSpan[] {
  return phases
    .filter((p) => p.kind !== "steady")
    .map((p) => {
      const at = (t: number) => (x === "wall" ? t : (t - (startMs ?? p.start_ms)) / 1000);
      return { from: at(p.start_ms), to: at(p.end_ms), kind: p.kind, run };
    });
}

// Where labels go so that none overprints another: each label (its left edge `at` and its
// width, in pixels, in drawing order) takes the first of `rows` text rows in which it clears
// the label before it by `gap` and ends before `right`; -1 leaves it out (its marker stays).
export function labelRows(labels: { at: number; width: number }[], right: number, rows: number, gap: number): number[] {
  const rowEnd: number[] = new Array(rows).fill(-Infinity);
  return labels.map(({ at, width }) => {
    if (at + width > right) return -1;
    const row = rowEnd.findIndex((end) => at >= end);
    if (row >= 0) rowEnd[row] = at + width + gap;
    return row;
  });
}

// A live line thinned on the page, by the server's rule (src/query/downsample.h): the x
// range from..to split into budget / 4 equal buckets, each keeping its first, lowest,
// highest and last points in x order, each once. Every point kept is one the line had, so
// a spike the line holds stays, at its own time and value; nulls are gaps (a bucket holding
// only nulls keeps one). Returns the indices kept; all of them when they fit.
export function thinned(x: number[], y: (number | null)[], from: number, to: number, budget: number): number[] {
  const keep: number[] = [];
  if (x.length <= budget) return x.map((_, i) => i);
  const buckets = Math.max(1, Math.floor(budget / 4));
  const width = (to - from) / buckets;
  const bucketOf = (v: number) => (width > 0 ? Math.min(buckets - 1, Math.max(0, Math.floor((v - from) / width))) : 0);
  let i = 0;
  while (i < x.length) {
    const b = bucketOf(x[i]);
    const first = i;
    let lo = -1;
    let hi = -1;
    for (; i < x.length && bucketOf(x[i]) === b; i++) {
      const v = y[i];
      if (v === null || !Number.isFinite(v)) continue;
      if (lo < 0 || v < (y[lo] as number)) lo = i;
      if (hi < 0 || v > (y[hi] as number)) hi = i;
    }
    const picks = lo < 0 ? [first] : [first, lo, hi, i - 1].sort((a, c) => a - c);
    for (let k = 0; k < picks.length; k++) {
      const p = picks[k];
      if (k > 0 && p === picks[k - 1]) continue;
      if (lo >= 0 && (y[p] === null || !Number.isFinite(y[p] as number))) continue; // a gap's edge beside real values
      keep.push(p);
    }
  }
  return keep;
}

// The largest magnitude of the finite values in `arrays`; 0 for none. Plain index loops
// with as few operations a value as can be: a page that has just opened runs this in the
// interpreter, where for-of over a 50-run chart's values took 19 ms, and a loop calling
// Number.isFinite and Math.abs on each 8-9 ms. A null, NaN or undefined compares false.
export function largestOf(arrays: (number | null)[][]): number {
  let largest = 0;
  for (let k = 0; k < arrays.length; k++) {
    const a = arrays[k] as number[];
    for (let i = 0, n = a.length; i < n; i++) {
      const v = a[i];
      if (v > largest) {
        if (v !== Infinity) largest = v;
      } else if (-v > largest && v !== -Infinity) {
        largest = -v;
      }
    }
  }
  return largest;
}

// Multiplies the values of `a` (nulls stay) by `factor` in place: no second array of a
// chart's 100,000 values for the collector.
export function scaleInPlace(a: (number | null)[], factor: number) {
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    if (v != null) a[i] = v * factor;
  }
}

// The longest of some ended runs, in seconds (a run still going, or imported while it was,
// has no end to count: its data decides).
export function longestRun(runs: (api.RunInfo | undefined)[]): number {
  let longest = 0;
  for (const r of runs) if (r && r.duration_ms > 0) longest = Math.max(longest, r.duration_ms / 1000);
  return longest;
}

// Where nvml, nvidia-smi and dcgmi each measured a quantity, the one a reader should see:
// nvml's (no label `listener`), else smi's, else dcgmi's, per run and per device; the
// figures pick the same (src/figure/figure_data.cc). The others stay a "Series" choice away.
export function oneSourcePerQuantity<T extends { run: string; labels: string }>(series: T[]): T[] {
  const split = (labels: string) => {
    let rank = 0;
    const rest = labels.split(",").filter((part) => {
      if (!part.startsWith("listener=")) return part !== "";
      const l = part.slice(9);
      rank = l === "nvml" ? 0 : l === "smi" ? 1 : l === "dcgmi" ? 2 : 3;
      return false;
    });
    return { key: rest.join(","), rank };
  };
  const best = new Map<string, number>();
  for (const s of series) {
    const { key, rank } = split(s.labels);
    const k = s.run + "|" + key;
    best.set(k, Math.min(rank, best.get(k) ?? rank));
  }
  return series.filter((s) => {
    const { key, rank } = split(s.labels);
    return best.get(s.run + "|" + key) === rank;
  });
}
