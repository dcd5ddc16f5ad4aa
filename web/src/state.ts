// The view: what is selected and which charts are open, with their settings. It survives
// a reload (localStorage), travels as a small JSON file and as a link (#view=...).

export type Grouping = "runs" | "workloads" | "mixed";

// A run id as the server makes them (32 hex digits): what a view file or link may name.
export const isRunId = (s: unknown): s is string => typeof s === "string" && /^[0-9a-f]{32}$/.test(s);
export type XKind = "relative" | "wall" | "step";

export interface ChartState {
  id: string;
  metric: string;
  labels: string; // "" : every label set
  runs: string[]; // the chart's own selection
  grouping: Grouping;
  x: XKind;
  smoothing: number; // 0..99 (% weight of the previous smoothed value)
  width: number; // line width in px
  mono: boolean; // black lines with dash patterns, for print
  zoom: [number, number] | null;
  hidden: string[]; // legend entries switched off
  logY: boolean;
  yMin: number | null; // in the units shown (percent for ratios)
  yMax: number | null;
  figure: FigureLook; // how the exports look
  phasesOf: string | null; // the run whose phases are shaded: "" none, null the chart's only run
  colorBy: string; // a sweep: the numeric param that colours the runs' lines; "" none
}

// The exported figure's look (the server draws it: figure/figure_spec.h).
export interface FigureLook {
  width: string; // "3.3in", "8.4cm", "240pt"
  font: number; // points
  fontFamily: string; // "DejaVu Sans", "DejaVu Serif" (a paper's serif), "serif"
  legend: string; // "{batch-size}"; "" names lines by what differs
  noLegend: boolean; // the figure without its legend (many runs' names leave no room)
  events: boolean;
  phases: boolean;
}

export function defaultFigure(): FigureLook {
  return {
    width: "3.3in",
    font: 8,
    fontFamily: "DejaVu Sans",
    legend: "",
    noLegend: false,
    events: false,
    phases: false,
  };
}

export interface ViewState {
  version: 1;
  selected: string[];
  charts: ChartState[];
}

const KEY = "trainbench.view";

export function emptyView(): ViewState {
  return { version: 1, selected: [], charts: [] };
}

// A view read from JSON, checked field by field; throws with what is wrong.
export function parseView(text: string): ViewState {
  const v = JSON.parse(text);
  if (!v || typeof v !== "object" || v.version !== 1 || !Array.isArray(v.selected) || !Array.isArray(v.charts)) {
    throw new Error("not a trainbench view (expected {version: 1, selected: [...], charts: [...]})");
  }
  const ids = (a: unknown) => (Array.isArray(a) ? a.filter(isRunId) : []);
  const view: ViewState = { version: 1, selected: ids(v.selected), charts: [] };
  for (const c of v.charts) {
    if (!c || typeof c.metric !== "string") continue;
    view.charts.push({
      id: typeof c.id === "string" ? c.id : newId(),
      metric: c.metric,
      labels: typeof c.labels === "string" ? c.labels : "",
      runs: ids(c.runs),
      grouping: ["runs", "workloads", "mixed"].includes(c.grouping) ? c.grouping : "runs",
      x: ["relative", "wall", "step"].includes(c.x) ? c.x : "relative",
      smoothing: Math.min(99, Math.max(0, Number(c.smoothing) || 0)),
      width: Math.min(4, Math.max(1, Number(c.width) || 1)),
      mono: !!c.mono,
      zoom:
        Array.isArray(c.zoom) && c.zoom.length === 2 && c.zoom.every((n: unknown) => typeof n === "number")
          ? [c.zoom[0], c.zoom[1]]
          : null,
      hidden: Array.isArray(c.hidden) ? c.hidden.filter((s: unknown) => typeof s === "string") : [],
      logY: !!c.logY,
      yMin: typeof c.yMin === "number" && Number.isFinite(c.yMin) ? c.yMin : null,
      yMax: typeof c.yMax === "number" && Number.isFinite(c.yMax) ? c.yMax : null,
      figure: parseFigure(c.figure),
      phasesOf: c.phasesOf === "" || isRunId(c.phasesOf) ? c.phasesOf : null,
      colorBy: typeof c.colorBy === "string" ? c.colorBy : "",
    });
  }
  return view;
}

function parseFigure(f: unknown): FigureLook {
  const d = defaultFigure();
  if (!f || typeof f !== "object") return d;
  const o = f as Record<string, unknown>;
  return {
    width: typeof o.width === "string" && /^\s*[0-9.]+\s*(in|cm|mm|pt)?\s*$/.test(o.width) ? o.width : d.width,
    font: typeof o.font === "number" && o.font >= 4 && o.font <= 48 ? o.font : d.font,
    fontFamily: typeof o.fontFamily === "string" && /^[\w .-]{1,60}$/.test(o.fontFamily) ? o.fontFamily : d.fontFamily,
    legend: typeof o.legend === "string" ? o.legend : d.legend,
    noLegend: typeof o.noLegend === "boolean" ? o.noLegend : d.noLegend,
    events: typeof o.events === "boolean" ? o.events : d.events,
    phases: typeof o.phases === "boolean" ? o.phases : d.phases,
  };
}

export function newId(): string {
  return Math.random().toString(36).slice(2, 10);
}

function toBase64Url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(s: string): string {
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

export function viewLink(view: ViewState): string {
  const url = new URL(location.href);
  url.hash = "view=" + toBase64Url(JSON.stringify(view));
  return url.toString();
}

// The view to open with: a #view= link first, then the last one this browser showed.
export function initialView(): ViewState {
  const m = location.hash.match(/view=([A-Za-z0-9_-]+)/);
  if (m) {
    try {
      return parseView(fromBase64Url(m[1]));
    } catch {
      // a damaged link: fall back to the saved view
    }
  }
  try {
    const saved = localStorage.getItem(KEY);
    if (saved) return parseView(saved);
  } catch {
    // no storage
  }
  return emptyView();
}

export function saveView(view: ViewState): void {
  try {
    localStorage.setItem(KEY, JSON.stringify(view));
  } catch {
    // storage full or disabled: the view still works
  }
}
