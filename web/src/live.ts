// A live chart's refresh, over its lines: what each run's line and each workload's mean
// lacks, fetched from the newest point it has, appended, and the lines thinned back to
// their budget as they grow (ChartPanel.update says when each is used).
import * as api from "./api";
import type { ChartState, XKind } from "./state";
import { thinned, type Line } from "./lines";

// The runs' points after the newest each line has ("reload": a line without one).
export async function newPoints(
  lines: Line[],
  state: ChartState,
  x: XKind,
  runs: string[],
  budget: number,
): Promise<api.SeriesData[] | "reload"> {
  const runLines = lines.filter((l) => l.run);
  if (state.grouping === "workloads") return [];
  const since = Math.min(...runLines.map((l) => l.lastMs ?? NaN));
  if (!runLines.length || !Number.isFinite(since)) return "reload";
  const fresh = await api.series(runs, state.metric, state.labels, x, budget, {}, since);
  const keys = new Set(runLines.map((l) => l.key));
  return fresh.some((d) => !keys.has(d.run + "|" + d.labels)) ? "reload" : fresh;
}

// Appends to each run's line the points it does not have yet; how many at most.
export function appendPoints(
  lines: Line[],
  x: XKind,
  fresh: api.SeriesData[],
  factor: number,
  startOf: (run: string) => number,
): number {
  const byKey = new Map(lines.map((l) => [l.key, l]));
  let added = 0;
  for (const d of fresh) {
    const line = byKey.get(d.run + "|" + d.labels)!;
    // A line whose newest point is later than `since` has some of these already: by
    // time on the time axes, by step on the step axis.
    const start = startOf(d.run);
    const lastX = line.x.length ? line.x[line.x.length - 1] : -Infinity;
    const known = (v: number) =>
      x === "step" ? v <= lastX : (x === "wall" ? v : start + v * 1000) <= (line.lastMs ?? -Infinity) + 0.5;
    let n = 0;
    for (let i = 0; i < d.x.length; i++) {
      if (known(d.x[i])) continue;
      line.x.push(d.x[i]);
      line.y.push(d.y[i] == null ? null : d.y[i]! * factor);
      n++;
    }
    line.lastMs = Math.max(line.lastMs ?? 0, d.last_ms);
    added = Math.max(added, n);
  }
  return added;
}

// Each workload's mean from the start of the last bucket it has on, on the grid it was
// loaded with: the server reads only the runs' chunks from there, so a refresh costs what
// is new. "reload": a line without a grid.
export async function newBuckets(
  lines: Line[],
  state: ChartState,
  x: XKind,
  workloads: number,
  budget: number,
): Promise<api.AggregateData[] | "reload"> {
  const means = lines.filter((l) => !l.run);
  if (state.grouping === "runs") return [];
  // A workload without a line yet (its runs had no such series at the last load).
  if (means.length < workloads || means.some((l) => !l.width || !l.x.length)) return "reload";
  const count = Math.round(budget / 4);
  const answers = await Promise.all(
    means.map((l) => {
      const from = l.x[l.x.length - 1] - l.width! / 2;
      return api.aggregate([l.key], state.metric, state.labels, x, count, { from, to: from + count * l.width! });
    }),
  );
  return answers.flat();
}

// Each mean's buckets from `from` on replaced by the fresh ones; how many it gained at
// most. "reload": its runs changed, or it has grown to one and a half times the buckets
// it was loaded with (loaded whole then, with buckets as wide again: the loads come ever
// further apart, so their cost per refresh does not grow with the runs).
export function replaceBuckets(
  lines: Line[],
  fresh: api.AggregateData[],
  factor: number,
  budget: number,
): number | "reload" {
  const byKey = new Map(lines.map((l) => [l.key, l]));
  let gained = 0;
  for (const w of fresh) {
    const line = byKey.get(`${w.experiment}:${w.workload}`);
    if (!line || !line.n || line.members !== w.runs.join(",")) return "reload";
    const keep = line.x.findIndex((v) => v >= w.from);
    const cut = keep < 0 ? line.x.length : keep;
    const scale = (a: (number | null)[]) => a.map((v) => (v == null ? v : v * factor));
    const before = line.x.length;
    line.x = line.x.slice(0, cut).concat(w.x);
    line.y = line.y.slice(0, cut).concat(scale(w.mean));
    line.n = line.n.slice(0, cut).concat(w.n);
    if (line.band)
      line.band = {
        lo: line.band.lo.slice(0, cut).concat(scale(w.min)),
        hi: line.band.hi.slice(0, cut).concat(scale(w.max)),
      };
    gained = Math.max(gained, line.x.length - before);
    if (line.x.length > 1.5 * Math.round(budget / 4)) return "reload";
  }
  return gained;
}

// A live chart's lines, grown by half their budget, thinned back to it by the server's
// rule over the x range they share, instead of loaded whole again (which would cost the
// server the runs' whole length every few minutes: goal 6 of issue 20). They hold every
// extreme the server gave and every point since, so each spike stays; the envelope is
// exact to within one bucket, as the server's summary levels are.
export function thinLines(lines: Line[], budget: number) {
  const runLines = lines.filter((l) => l.run);
  const from = Math.min(...runLines.map((l) => (l.x.length ? l.x[0] : Infinity)));
  const to = Math.max(...runLines.map((l) => (l.x.length ? l.x[l.x.length - 1] : -Infinity)));
  for (const l of runLines) {
    const keep = thinned(l.x, l.y, from, to, budget);
    l.x = keep.map((i) => l.x[i]);
    l.y = keep.map((i) => l.y[i]);
  }
}
