// The JSON API of `trainbench serve` (docs/API.md). On a server with a token, the page was
// opened once as /?token=...; the server answered with a cookie that every request carries.
import { isRunId } from "./state";

export interface RunInfo {
  id: string;
  name: string;
  experiment: string;
  workload: string;
  status: string;
  start_ms: number;
  end_ms: number;
  duration_ms: number;
  command: string;
  host: string;
  devices: string;
  collocation: string;
  letter: string;
  simulated_gpu: boolean;
  params: Record<string, string>;
  tags: Record<string, string>;
  summary?: SeriesSummary[];
  // runs/{id} only: the server's figures (query/energy.h).
  energy?: {
    gpu_joules: number | null;
    run_joules: number | null;
    gpus: number;
    integrated: boolean;
    cpu_joules: number | null;
  } | null;
}

export interface SeriesSummary {
  metric: string;
  labels: string;
  unit: string;
  count: number;
  min: number;
  max: number;
  mean: number;
}

export interface ExperimentInfo {
  id: number;
  name: string;
  runs: number;
  running: number;
  failed: number;
  workloads: number;
  first_start_ms: number;
  last_start_ms: number;
  duration_ms: number;
}

export interface MetricInfo {
  metric: string;
  unit: string;
  source: string;
  title: string;
  description: string;
  labels: string[];
  runs: number;
}

export interface SeriesData {
  run: string;
  metric: string;
  labels: string;
  unit: string;
  total_points: number;
  last_ms: number;
  x: number[];
  // Instead of x on a grid the series share (asked with x_form=places): the first point's
  // place, then the places from each point to the next.
  x_place_steps?: number[];
  y: (number | null)[];
}

// The grid of places the series of one answer share: x = origin + place * place_width.
interface Grid {
  origin: number;
  place_width: number;
}

export interface AggregateData {
  experiment: string;
  workload: string;
  runs: string[];
  from: number; // the buckets start there on x
  bucket_width: number;
  x: number[];
  mean: (number | null)[];
  min: (number | null)[];
  max: (number | null)[];
  n: number[];
}

export interface EventInfo {
  time_ms: number;
  relative_s: number;
  kind: string;
  label: string;
}

export function apiUrl(path: string, params: Record<string, string | number | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return "/api/v1/" + path + (s ? "?" + s : "");
}

// Fetches an API resource; a refusal throws with the server's message.
async function fetchOk(url: string): Promise<Response> {
  const r = await fetch(url, { cache: "no-store" });
  if (!r.ok) {
    let message = r.statusText;
    try {
      message = (await r.json()).message;
    } catch {
      // not JSON: keep the status text
    }
    throw new Error(message);
  }
  return r;
}

export async function get<T>(path: string, params: Record<string, string | number | undefined> = {}): Promise<T> {
  return (await fetchOk(apiUrl(path, params))).json() as Promise<T>;
}

export const experiments = () => get<{ experiments: ExperimentInfo[] }>("experiments").then((r) => r.experiments);
export const runsOf = (experiment: string) =>
  get<{ runs: RunInfo[] }>("runs", { experiment, summary: 0 }).then((r) => r.runs);
// Runs by id, `details` with their summaries and energy (as runs/{id} gives them), in the
// order asked; ids the store does not hold are left out. One request for up to 100 runs
// (the table of 50 selected runs made 50 requests, again at each refresh while they ran).
export async function runsById(ids: string[], details: boolean): Promise<RunInfo[]> {
  ids = ids.filter(isRunId);
  const parts: Promise<{ runs: RunInfo[] }>[] = [];
  for (let i = 0; i < ids.length; i += 100) {
    const part = ids.slice(i, i + 100).join(",");
    parts.push(get<{ runs: RunInfo[] }>("runs", details ? { ids: part, energy: 1 } : { ids: part, summary: 0 }));
  }
  return (await Promise.all(parts)).flatMap((r) => r.runs);
}
export const metricsOf = (runs: string[]) =>
  get<{ metrics: MetricInfo[] }>("metrics", { runs: runs.join(",") }).then((r) => r.metrics);
export interface PhaseInfo {
  kind: string;
  start_ms: number;
  end_ms: number;
  detail: string;
}
export const phasesOf = (run: string) => get<{ phases: PhaseInfo[] }>(`runs/${run}/phases`).then((r) => r.phases);
export const reportUrl = (experiment: string, format?: "pdf") =>
  apiUrl(`experiments/${encodeURIComponent(experiment)}/report`, { format });
// The report's collocation bars as one figure (as `trainbench plot --bars` draws them).
export const barsUrl = (experiment: string, format: "svg" | "pdf" | "png" | "csv" = "svg") =>
  apiUrl(`experiments/${encodeURIComponent(experiment)}/bars`, { format, width: "7in" });
// The events of each of `runs` (in that order), in one request.
export const eventsOf = (runs: string[]) =>
  get<{ runs: { run: string; events: EventInfo[] }[] }>("events", { runs: runs.join(",") }).then((r) =>
    r.runs.map((e) => e.events),
  );

export interface Range {
  from?: number;
  to?: number;
}

// `since` (Unix ms): only the points stored after it, for a live chart's refresh.
// Series on a shared grid come as steps between its places (a digit where a number takes
// four to ten: a third fewer bytes for a chart of many runs) and get their x here.
export function series(
  runs: string[],
  metric: string,
  labels: string,
  x: string,
  budget: number,
  range: Range,
  since?: number,
) {
  return get<{ series: SeriesData[]; grid?: Grid }>("series", {
    runs: runs.join(","),
    metric,
    labels,
    x,
    budget,
    from: range.from,
    to: range.to,
    since,
    x_form: "places",
  }).then((r) => {
    for (const s of r.series) {
      if (s.x_place_steps && r.grid) s.x = placesToX(s.x_place_steps, r.grid);
      delete s.x_place_steps;
    }
    return r.series;
  });
}

export function placesToX(steps: number[], grid: Grid): number[] {
  const x = new Array<number>(steps.length);
  let place = 0;
  for (let i = 0; i < steps.length; i++) {
    place += steps[i];
    x[i] = grid.origin + place * grid.place_width;
  }
  return x;
}

export function aggregate(
  workloads: string[],
  metric: string,
  labels: string,
  x: string,
  budget: number,
  range: Range,
) {
  return get<{ workloads: AggregateData[] }>("aggregate", {
    workloads: workloads.join(","),
    metric,
    labels,
    x,
    budget,
    from: range.from,
    to: range.to,
  }).then((r) => r.workloads);
}

// A figure drawn by the server (figure/figure_spec.h describes `spec`): PDF, SVG, PNG or CSV.
export async function figure(spec: object, format: string): Promise<Blob> {
  return (await fetchOk(apiUrl("figure", { spec: JSON.stringify(spec), format }))).blob();
}
