// A chart's lines fetched from the server: each workload's mean (with its min-max band)
// and each run's series, named, styled and scaled to the unit people read them in.
import * as api from "./api";
import type { ChartHost } from "./chart";
import type { ChartState, XKind } from "./state";
import { displayUnit } from "./format";
import {
  eventMarks,
  largestOf,
  oneSourcePerQuantity,
  scaleInPlace,
  shadeLines,
  styleLines,
  type Line,
  type SweepScale,
} from "./lines";
import type { PlotEvent } from "./scene";
import { eachDeviceOnce, sharedName } from "./shared_devices";

// The lines, what every line shares and their names leave out (" of exp/w (gpu=0)"), the
// unit shown and its factor from the stored unit, and the largest magnitude (stored unit).
export interface FetchedLines {
  lines: Line[];
  shared: string;
  unit: string;
  factor: number;
  largest: number;
  sweep?: SweepScale; // the lines coloured by a param (ChartState.colorBy)
}

// Run lines still named alike (the GPU each repeat of one pair shared, once a repeat): each
// with its repeat, "(repeat 2/3)", where they all have a different one, else its place in
// start order, "#2"; as the figures name them (src/figure/legend.cc).
export function tellApart(lines: Line[], run: (id: string) => api.RunInfo | undefined): void {
  const same = new Map<string, Line[]>();
  for (const l of lines) if (l.run !== undefined) same.set(l.name, [...(same.get(l.name) ?? []), l]);
  for (const group of same.values()) {
    if (group.length < 2) continue;
    const repeat = (l: Line) => run(l.run!)?.tags?.["trainbench.repeat"] ?? "";
    const repeats = new Set(group.map(repeat));
    const byRepeat = repeats.size === group.length && !repeats.has("");
    group.sort((a, b) => (run(a.run!)?.start_ms ?? 0) - (run(b.run!)?.start_ms ?? 0) || a.run!.localeCompare(b.run!));
    group.forEach((l, k) => (l.name += byRepeat ? ` (repeat ${repeat(l)})` : ` #${k + 1}`));
  }
}

// The workloads (EXPERIMENT:WORKLOAD) of those of `runs` that belong to one.
export function workloadKeys(runs: string[], run: (id: string) => api.RunInfo | undefined): string[] {
  const keys = new Set<string>();
  for (const id of runs) {
    const r = run(id);
    if (r && r.workload) keys.add(`${r.experiment}:${r.workload}`);
  }
  return [...keys];
}

// A workload mean's name: "pair, mean of 3 runs", "workload 1, 1 run".
export function meanName(workload: string, runs: number): string {
  const numbered = /^[0-9]+$/.test(workload);
  return `${numbered ? "workload " : ""}${workload}, ${runs === 1 ? "1 run" : `mean of ${runs} runs`}`;
}

// Each run's line name: its name where the runs' names differ, else its workload and letter
// where those do, else that (or its name) and its place among the runs so named: "pair 0A- #2".
export function runNames(ids: string[], run: (id: string) => api.RunInfo | undefined): Map<string, string> {
  const distinct = (nameOf: (id: string) => string) => {
    const seen = new Set<string>();
    return ids.every((id) => {
      const n = nameOf(id);
      if (!n || seen.has(n)) return false;
      seen.add(n);
      return true;
    });
  };
  const byName = (id: string) => run(id)?.name ?? "";
  const byWorkload = (id: string) => {
    const r = run(id);
    return r?.workload && r.letter ? `${r.workload} ${r.letter}` : "";
  };
  // Repeats of one configuration: workload and letter (else the name) and the run's place
  // among the runs so named, in start order ("pair 0A- #2"), never a hex id.
  const base = (id: string) => byWorkload(id) || byName(id);
  const place = new Map<string, number>();
  const seen = new Map<string, number>();
  const byStart = [...ids].sort((a, b) => (run(a)?.start_ms ?? 0) - (run(b)?.start_ms ?? 0) || a.localeCompare(b));
  for (const id of byStart) {
    const n = (seen.get(base(id)) ?? 0) + 1;
    seen.set(base(id), n);
    place.set(id, n);
  }
  const rule = distinct(byName)
    ? byName
    : distinct(byWorkload)
      ? byWorkload
      : (id: string) => `${base(id)} #${place.get(id)}`;
  return new Map(ids.map((id) => [id, rule(id)]));
}

export async function fetchLines(
  host: ChartHost,
  state: ChartState,
  runs: string[],
  x: XKind,
  range: api.Range,
  budget: number,
): Promise<FetchedLines> {
  const s = state;
  const lines: Line[] = [];
  let shared = "";
  const keys = s.grouping === "runs" ? [] : workloadKeys(runs, (id) => host.run(id));
  if (keys.length) {
    const agg = await api.aggregate(keys, s.metric, s.labels, x, Math.round(budget / 4), range);
    for (const w of agg) {
      lines.push({
        key: `${w.experiment}:${w.workload}`,
        name: meanName(w.workload, w.runs.length),
        x: w.x,
        y: w.mean,
        band: w.runs.length > 1 ? { lo: w.min, hi: w.max } : undefined,
        n: w.n,
        width: w.bucket_width,
        members: w.runs.join(","),
      });
    }
  }
  if (s.grouping !== "workloads") {
    const fetched = await api.series(runs, s.metric, s.labels, x, budget, range);
    const { kept: data, sharing } = eachDeviceOnce(
      s.metric,
      s.labels ? fetched : oneSourcePerQuantity(fetched),
      runs,
      (id) => host.run(id),
    );
    // Lines named as the server's figures name them (figure/legend.h), so that an export's
    // legend reads as the screen's: the run's name, else its workload and letter, else its
    // name and id's start; the labels where the lines' differ.
    const workloadOf = (id: string) => {
      const r = host.run(id);
      return r?.workload ? `${r.experiment}/${r.workload}` : "";
    };
    const oneWorkload = data.length > 1 && new Set(data.map((d) => workloadOf(d.run))).size === 1;
    const oneLabels = data.length > 1 && new Set(data.map((d) => d.labels)).size === 1;
    const common = oneWorkload ? workloadOf(data[0].run) : "";
    shared = (common ? ` of ${common}` : "") + (oneLabels && data[0].labels ? ` (${data[0].labels})` : "");
    const named = [...new Set(data.map((d) => d.run))];
    for (const others of sharing.values()) named.push(...others.filter((id) => !named.includes(id)));
    const names = runNames(named, (id) => host.run(id));
    const nameOf = (id: string) => names.get(id) ?? id.slice(0, 8);
    for (const d of data) {
      const others = sharing.get(d.run + "|" + d.labels);
      const name = others
        ? sharedName(d.labels, [d.run, ...others], (id) => host.run(id), nameOf)
        : nameOf(d.run) + (d.labels && !oneLabels ? ` [${d.labels}]` : "");
      lines.push({ key: d.run + "|" + d.labels, name, run: d.run, x: d.x, y: d.y, lastMs: d.last_ms });
    }
  }
  tellApart(lines, (id) => host.run(id));
  styleLines(lines, runs, keys);
  const sweep = shadeLines(lines, s.colorBy, (id) => host.run(id)?.params);
  // Values in the unit people read them in: ratios as percent, bytes as MiB or GiB.
  const largest = largestOf(lines.map((l) => l.y));
  const shown = displayUnit(host.metricInfo(s.metric)?.unit ?? "", largest);
  if (shown.factor !== 1) {
    for (const l of lines) {
      scaleInPlace(l.y, shown.factor);
      if (l.band) {
        scaleInPlace(l.band.lo, shown.factor);
        scaleInPlace(l.band.hi, shown.factor);
      }
    }
  }
  return { lines, shared, unit: shown.unit, factor: shown.factor, largest, sweep };
}

// The events of the chart's first 12 runs as markers, each labelled with its run's letter;
// none on a step axis or for workload means.
export async function fetchEvents(host: ChartHost, state: ChartState, runs: string[], x: XKind): Promise<PlotEvent[]> {
  if (x === "step" || state.grouping === "workloads") return [];
  const shown = runs.slice(0, 12);
  const all = await api.eventsOf(shown).catch(() => shown.map(() => [] as api.EventInfo[]));
  return eventMarks(
    all.map((events, i) => ({ letter: host.run(shown[i])?.letter || shown[i].slice(0, 4), events })),
    x,
  );
}
