// One chart: a metric over time for its own selection of runs, each run on its own, each
// workload as a mean with a min-max band, or both; with zoom (drag, or the overview strip
// below), finer data fetched for the zoomed range, legend toggles, smoothing, line width,
// a monochrome mode, event markers, live updates, and exports.
import uPlot from "uplot";
import * as api from "./api";
import { isRunId, type ChartState, type Grouping, type XKind } from "./state";
import type { PlotEvent } from "./scene";
import { displayUnit, esc, niceTicks, plural, timeTicks, value, xLabel } from "./format";
import { chartFrame, runDetails } from "./details";
import { download } from "./download";
import { eventMarks, largestOf, lineStyle, phaseSpans, plotted, scaleInPlace, styleLines, thinned, type Line, type PhaseSpan } from "./lines";
import { drawOverlay } from "./overlay";
import { fromPlotX, toPlotX, xName, xText } from "./xaxis";

export interface ChartHost {
  run(id: string): api.RunInfo | undefined;
  metricInfo(metric: string): api.MetricInfo | undefined;
  changed(): void; // the chart's state changed: save the view
  remove(chart: ChartPanel): void;
  selection(): string[];
  message(text: string): void;
}

// Up to this many lines the overview strip draws each; past it, their envelope.
const kOverviewLines = 8;

// A line through a series' points on linear scales, drawn as uPlot's own linear path
// builder draws lines with fewer points than pixels, in one loop with the scale arithmetic
// inline (uPlot's calls six functions per point, which a page that has just opened runs
// in the interpreter: a chart of 50 runs is 40,000 points). A null value breaks the line
// (a gap); an undefined one (another series' x) is stepped over. Log scales and the bounds
// of bands keep uPlot's builder.
const uplotLine = uPlot.paths.linear!();
function straightLines(u: uPlot, si: number, i0: number, i1: number): uPlot.Series.Paths | null {
  const sx = u.scales.x;
  const sy = u.scales[u.series[si].scale ?? "y"];
  if (sx.distr !== 1 || sy.distr !== 1 || sx.ori !== 0 || sx.dir !== 1 || sy.dir !== 1) return uplotLine(u, si, i0, i1);
  const xs = u.data[0];
  const ys = u.data[si];
  const x0 = sx.min!;
  const y0 = sy.min!;
  const { left, top, width, height } = u.bbox;
  const kx = width / (sx.max! - x0);
  const ky = height / (sy.max! - y0);
  const bottom = top + height;
  const stroke = new Path2D();
  let down = false;
  for (let i = i0; i <= i1; i++) {
    const v = ys[i];
    if (v === undefined) continue;
    if (v === null) {
      down = false;
      continue;
    }
    const px = left + (xs[i] - x0) * kx;
    const py = bottom - (v - y0) * ky;
    if (down) stroke.lineTo(px, py);
    else stroke.moveTo(px, py);
    down = true;
  }
  return { stroke, fill: null, clip: null, band: null, flags: 0 };
}

export class ChartPanel {
  readonly el: HTMLElement;
  private plot?: uPlot;
  private overview?: uPlot;
  private overviewTimer?: number;
  private overviewFrame?: number;
  private lines: Line[] = [];
  private full: Line[] = []; // the whole range, for the overview
  private events: PlotEvent[] = [];
  private phases: PhaseSpan[] = [];
  // Which line each uPlot series draws (a band's bounds are series too); [0] is x.
  private seriesLines: (Line | undefined)[] = [];
  private runPhases = new Map<string, api.PhaseInfo[]>();
  private unit = ""; // as shown ("%", "GiB")
  private factor = 1; // from the stored unit to the one shown
  private largest = 0; // the largest magnitude among the lines, in the stored unit
  private shared = ""; // what every line shares and their names leave out: " of exp/w (gpu=0)"
  private appended = 0; // points a live chart added to its lines since it last loaded them whole
  private timer = 0;
  private fetching = 0;
  private body: HTMLElement;
  private over: HTMLElement;
  private info: HTMLElement;
  private details: HTMLElement;
  private tooltip: HTMLElement;
  onDrawn?: () => void; // after each draw (for measurements)
  private unready?: uPlot; // built, its lines not drawn yet (a task later)
  private superseded?: () => void; // tells the waiters of that draw it will not happen

  // `width`: the plot's width when known without laying the page out (0: measured when needed).
  constructor(
    readonly state: ChartState,
    private host: ChartHost,
    private width = 0,
  ) {
    this.el = document.createElement("section");
    this.el.className = "chart";
    this.el.dataset.chart = state.id;
    this.el.setAttribute("aria-label", `Chart of ${state.metric}`);
    const info = host.metricInfo(state.metric);
    this.el.innerHTML = chartFrame(state, info?.title ?? "", info?.labels ?? []);
    this.body = this.el.querySelector(".plot")!;
    this.over = this.el.querySelector(".overview")!;
    this.info = this.el.querySelector(".chart-info")!;
    this.details = this.el.querySelector(".run-details")!;
    this.tooltip = this.el.querySelector(".tooltip")!;
    this.bindControls();
  }

  private bindControls() {
    const s = this.state;
    for (const input of this.el.querySelectorAll<HTMLInputElement | HTMLSelectElement>("[data-k]")) {
      const k = input.dataset.k as keyof ChartState;
      if (input instanceof HTMLInputElement && input.type === "checkbox") input.checked = !!s[k];
      else input.value = s[k] == null ? "" : String(s[k]);
      input.addEventListener(input.type === "range" ? "input" : "change", () => {
        if (k === "grouping") s.grouping = input.value as Grouping;
        if (k === "x") {
          s.x = input.value as XKind;
          s.zoom = null;
        }
        if (k === "smoothing") s.smoothing = Number(input.value);
        if (k === "width") s.width = Number(input.value);
        if (k === "mono") s.mono = (input as HTMLInputElement).checked;
        if (k === "logY") s.logY = (input as HTMLInputElement).checked;
        if (k === "yMin" || k === "yMax") s[k] = input.value === "" ? null : Number(input.value);
        if (k === "labels") s.labels = input.value;
        this.host.changed();
        if (k === "grouping" || k === "x" || k === "labels") void this.load();
        else this.draw();
      });
    }
    // The exported figure's look.
    for (const input of this.el.querySelectorAll<HTMLInputElement>("[data-f]")) {
      const k = input.dataset.f as keyof ChartState["figure"];
      if (input.type === "checkbox") input.checked = !!s.figure[k];
      else input.value = String(s.figure[k]);
      input.addEventListener("change", () => {
        const f = s.figure as unknown as Record<string, string | number | boolean>;
        f[k] = input.type === "checkbox" ? input.checked : input.type === "number" ? Number(input.value) : input.value;
        this.host.changed();
      });
    }
    this.el.querySelector('[data-a="selection"]')!.addEventListener("click", () => {
      s.runs = this.host.selection();
      s.hidden = [];
      this.host.changed();
      void this.load();
    });
    this.el.querySelector('[data-a="reset"]')!.addEventListener("click", () => this.resetZoom());
    this.el.querySelector('[data-a="remove"]')!.addEventListener("click", () => this.host.remove(this));
    for (const kind of ["png", "svg", "pdf", "csv"] as const) {
      this.el.querySelector(`[data-a="${kind}"]`)!.addEventListener("click", () => this.export(kind));
    }
    this.body.addEventListener("keydown", (e) => this.key(e));
    this.body.addEventListener("mouseleave", () => (this.tooltip.hidden = true));
  }

  destroy() {
    clearInterval(this.timer);
    clearTimeout(this.overviewTimer);
    cancelAnimationFrame(this.overviewFrame ?? 0);
    this.plot?.destroy();
    this.unready?.destroy();
    this.overview?.destroy();
    this.el.remove();
  }

  private effectiveX(): XKind {
    // Workload means align runs on the time since their start, or on the step.
    return this.state.grouping === "runs" || this.state.x !== "wall" ? this.state.x : "relative";
  }

  private budget(): number {
    // ?budget=N overrides the points per series (benchmarks compare against full resolution).
    const forced = Number(new URLSearchParams(location.search).get("budget"));
    if (forced >= 4) return forced;
    return Math.max(400, Math.min(4000, Math.round((this.plotWidth() || 800) * 2)));
  }

  // The plot's width in CSS pixels: as last drawn, or as given, or measured.
  plotWidth(): number {
    if (!this.width) this.width = this.body.clientWidth;
    return this.width;
  }

  // The chart's runs that are run ids (a view file may hold anything).
  private runIds(): string[] {
    return this.state.runs.filter(isRunId);
  }

  // "2 runs of exp/w (3 selected), 900 points shown": the runs drawn, which are fewer than
  // those selected when some have no series of the chart's metric.
  private showCount(selected: number) {
    const points = this.lines.reduce((n, l) => n + l.x.length, 0);
    const runs = this.lines.flatMap((l) => (l.run !== undefined ? [l.run] : (l.members ?? "").split(",")));
    const drawn = new Set(runs.filter((r) => r !== "")).size;
    const fewer = drawn < selected ? ` (${selected} selected)` : "";
    this.info.textContent = `${plural(drawn, "run")}${this.shared}${fewer}, ${points.toLocaleString()} points shown`;
  }

  // Fetches the data for the chart's runs (the zoomed range when `zoomed`) and draws.
  async load(zoomedOnly = false): Promise<void> {
    const s = this.state;
    const token = ++this.fetching;
    const runs = this.runIds();
    if (!runs.length) {
      this.info.textContent = "no runs: select some and press Use selection";
      this.lines = [];
      this.full = [];
      this.draw();
      return;
    }
    const x = this.effectiveX();
    const range: api.Range = s.zoom ? { from: s.zoom[0], to: s.zoom[1] } : {};
    try {
      const lines = await this.fetchLines(runs, x, range);
      // The overview always shows the whole range.
      const full = !s.zoom ? lines : zoomedOnly && this.full.length ? this.full : await this.fetchLines(runs, x, {});
      if (token !== this.fetching) return; // a newer request won
      const aligned = this.uplotData(lines);
      this.lines = lines;
      this.full = full;
      this.appended = 0;
      this.el.dataset.appended = "0";
      this.showCount(runs.length);
      const drawn = this.draw(aligned);
      this.live();
      // Events and phases come after the lines are drawn: the chart is there without waiting
      // for them, and their answers are not read before it.
      if (!zoomedOnly) {
        await drawn;
        await Promise.all([this.loadEvents(runs, x), this.loadPhases(runs, x)]);
        if (token !== this.fetching) return;
        this.el.dataset.phases = String(this.phases.length);
        this.el.dataset.events = String(this.events.length);
        this.plot?.redraw(false);
      }
    } catch (e) {
      if (token !== this.fetching) return;
      this.info.textContent = "";
      this.host.message(`${s.metric}: ${(e as Error).message}`);
    }
  }

  // The workloads (EXPERIMENT:WORKLOAD) of those of `runs` that belong to one.
  private workloadKeys(runs: string[]): string[] {
    const keys = new Set<string>();
    for (const id of runs) {
      const r = this.host.run(id);
      if (r && r.workload) keys.add(`${r.experiment}:${r.workload}`);
    }
    return [...keys];
  }

  private async fetchLines(runs: string[], x: XKind, range: api.Range): Promise<Line[]> {
    const s = this.state;
    const lines: Line[] = [];
    this.shared = "";
    const keys = s.grouping === "runs" ? [] : this.workloadKeys(runs);
    if (keys.length) {
      const agg = await api.aggregate(keys, s.metric, s.labels, x, Math.round(this.budget() / 4), range);
      for (const w of agg) {
        lines.push({
          key: `${w.experiment}:${w.workload}`,
          name: `${w.experiment}/${w.workload} ${w.runs.length === 1 ? "(1 run)" : `mean of ${w.runs.length} runs`}`,
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
      const data = await api.series(runs, s.metric, s.labels, x, this.budget(), range);
      // A line is named by its run, and by its workload and labels where the chart's lines
      // differ in them: 50 runs of one workload read "b45", not "b45 (bench/w) gpu=0".
      const workloadOf = (id: string) => {
        const r = this.host.run(id);
        return r?.workload ? `${r.experiment}/${r.workload}` : "";
      };
      const oneWorkload = data.length > 1 && new Set(data.map((d) => workloadOf(d.run))).size === 1;
      const oneLabels = data.length > 1 && new Set(data.map((d) => d.labels)).size === 1;
      const common = oneWorkload ? workloadOf(data[0].run) : "";
      this.shared = (common ? ` of ${common}` : "") + (oneLabels && data[0].labels ? ` (${data[0].labels})` : "");
      for (const d of data) {
        const r = this.host.run(d.run);
        const workload = oneWorkload ? "" : workloadOf(d.run);
        const base = r ? `${r.name}${workload ? ` (${workload})` : ""}` : d.run.slice(0, 8);
        const name = base + (d.labels && !oneLabels ? ` ${d.labels}` : "");
        lines.push({ key: d.run + "|" + d.labels, name, run: d.run, x: d.x, y: d.y, lastMs: d.last_ms });
      }
    }
    styleLines(lines, runs, keys);
    // Values in the unit people read them in: ratios as percent, bytes as MiB or GiB.
    const largest = largestOf(lines.map((l) => l.y));
    const shown = displayUnit(this.host.metricInfo(s.metric)?.unit ?? "", largest);
    this.unit = shown.unit;
    this.factor = shown.factor;
    this.largest = largest;
    if (shown.factor !== 1) {
      for (const l of lines) {
        scaleInPlace(l.y, shown.factor);
        if (l.band) {
          scaleInPlace(l.band.lo, shown.factor);
          scaleInPlace(l.band.hi, shown.factor);
        }
      }
    }
    return lines;
  }

  // The runs' phases (warm-up, idle, stalls, ...) as shaded spans; the steady state is not shaded.
  private async loadPhases(runs: string[], x: XKind) {
    this.phases = [];
    if (x === "step" || this.state.grouping === "workloads") return;
    const shown = runs.slice(0, 12);
    const all = await Promise.all(shown.map((id) => api.phasesOf(id).catch(() => [] as api.PhaseInfo[])));
    all.forEach((phases, i) => {
      this.runPhases.set(shown[i], phases);
      this.phases.push(...phaseSpans(shown[i], this.host.run(shown[i])?.start_ms, phases, x));
    });
  }

  private async loadEvents(runs: string[], x: XKind) {
    this.events = [];
    if (x === "step" || this.state.grouping === "workloads") return;
    const shown = runs.slice(0, 12);
    const all = await api.eventsOf(shown).catch(() => shown.map(() => [] as api.EventInfo[]));
    this.events = eventMarks(
      all.map((events, i) => ({ letter: this.host.run(shown[i])?.letter || shown[i].slice(0, 4), events })),
      x,
    );
  }

  // Charts of running runs fetch again every few seconds.
  private live() {
    const running = this.state.runs.some((id) => this.host.run(id)?.status === "RUNNING");
    clearInterval(this.timer);
    if (running) this.timer = window.setInterval(() => void this.update(), 3000);
  }

  // A live refresh. Each run's line asks only for the points after its newest (the server
  // reads the chunks that hold them), so a refresh costs what is new, not the run's length.
  // Once the lines have grown by half their budget, the page thins them itself (thin).
  // A workload's mean asks for its buckets from its last one on, on the grid it has
  // (newBuckets). A new series, or values that move the unit shown, load the chart whole
  // again; so do zoomed charts, and means by step.
  private async update(): Promise<void> {
    const s = this.state;
    const lines = this.lines;
    const running = s.runs.some((id) => this.host.run(id)?.status === "RUNNING");
    const x = this.effectiveX();
    // Once the runs have ended, loaded whole one last time (and no longer refreshed).
    if (!running || s.zoom || !lines.length || (s.grouping !== "runs" && x !== "relative")) return this.load();
    const token = ++this.fetching;
    try {
      const runs = this.runIds();
      const [points, buckets] = await Promise.all([this.newPoints(x, runs), this.newBuckets(x)]);
      if (token !== this.fetching) return;
      if (points === "reload" || buckets === "reload") return this.load();
      const largest = Math.max(this.largest, largestOf(points.map((d) => d.y)), largestOf(buckets.map((w) => w.mean)));
      if (displayUnit(this.host.metricInfo(s.metric)?.unit ?? "", largest).factor !== this.factor) return this.load();
      this.largest = largest;
      const added = this.appendPoints(x, points);
      const replaced = this.replaceBuckets(buckets);
      if (replaced === "reload") return this.load();
      this.appended += added;
      if (!added && !replaced) return;
      if (replaced) this.el.dataset.meanRefreshes = String(Number(this.el.dataset.meanRefreshes ?? 0) + 1);
      if (this.appended * 2 > this.budget()) this.thin();
      this.showCount(runs.length);
      this.el.dataset.appended = String(this.appended);
      await this.draw();
      await Promise.all([this.loadEvents(runs, x), this.loadPhases(runs, x)]);
      if (token !== this.fetching) return;
      this.plot?.redraw(false);
    } catch (e) {
      if (token !== this.fetching) return;
      this.host.message(`${s.metric}: ${(e as Error).message}`);
    }
  }

  // The runs' points after the newest each line has ("reload": a line without one).
  private async newPoints(x: XKind, runs: string[]): Promise<api.SeriesData[] | "reload"> {
    const runLines = this.lines.filter((l) => l.run);
    if (this.state.grouping === "workloads") return [];
    const since = Math.min(...runLines.map((l) => l.lastMs ?? NaN));
    if (!runLines.length || !Number.isFinite(since)) return "reload";
    const fresh = await api.series(runs, this.state.metric, this.state.labels, x, this.budget(), {}, since);
    const keys = new Set(runLines.map((l) => l.key));
    return fresh.some((d) => !keys.has(d.run + "|" + d.labels)) ? "reload" : fresh;
  }

  // Appends to each run's line the points it does not have yet; how many at most.
  private appendPoints(x: XKind, fresh: api.SeriesData[]): number {
    const byKey = new Map(this.lines.map((l) => [l.key, l]));
    let added = 0;
    for (const d of fresh) {
      const line = byKey.get(d.run + "|" + d.labels)!;
      // A line whose newest point is later than `since` has some of these already: by
      // time on the time axes, by step on the step axis.
      const start = this.host.run(d.run)?.start_ms ?? 0;
      const lastX = line.x.length ? line.x[line.x.length - 1] : -Infinity;
      const known = (v: number) =>
        x === "step" ? v <= lastX : (x === "wall" ? v : start + v * 1000) <= (line.lastMs ?? -Infinity) + 0.5;
      let n = 0;
      for (let i = 0; i < d.x.length; i++) {
        if (known(d.x[i])) continue;
        line.x.push(d.x[i]);
        line.y.push(d.y[i] == null ? null : d.y[i]! * this.factor);
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
  private async newBuckets(x: XKind): Promise<api.AggregateData[] | "reload"> {
    const means = this.lines.filter((l) => !l.run);
    if (this.state.grouping === "runs") return [];
    // A workload without a line yet (its runs had no such series at the last load).
    if (means.length < this.workloadKeys(this.runIds()).length || means.some((l) => !l.width || !l.x.length)) return "reload";
    const count = Math.round(this.budget() / 4);
    const answers = await Promise.all(
      means.map((l) => {
        const from = l.x[l.x.length - 1] - l.width! / 2;
        return api.aggregate([l.key], this.state.metric, this.state.labels, x, count, { from, to: from + count * l.width! });
      }),
    );
    return answers.flat();
  }

  // Each mean's buckets from `from` on replaced by the fresh ones; how many it gained at
  // most. "reload": its runs changed, or it has grown to one and a half times the buckets
  // it was loaded with (loaded whole then, with buckets as wide again: the loads come ever
  // further apart, so their cost per refresh does not grow with the runs).
  private replaceBuckets(fresh: api.AggregateData[]): number | "reload" {
    const byKey = new Map(this.lines.map((l) => [l.key, l]));
    let gained = 0;
    for (const w of fresh) {
      const line = byKey.get(`${w.experiment}:${w.workload}`);
      if (!line || !line.n || line.members !== w.runs.join(",")) return "reload";
      const keep = line.x.findIndex((v) => v >= w.from);
      const cut = keep < 0 ? line.x.length : keep;
      const scale = (a: (number | null)[]) => a.map((v) => (v == null ? v : v * this.factor));
      const before = line.x.length;
      line.x = line.x.slice(0, cut).concat(w.x);
      line.y = line.y.slice(0, cut).concat(scale(w.mean));
      line.n = line.n.slice(0, cut).concat(w.n);
      if (line.band) line.band = { lo: line.band.lo.slice(0, cut).concat(scale(w.min)), hi: line.band.hi.slice(0, cut).concat(scale(w.max)) };
      gained = Math.max(gained, line.x.length - before);
      if (line.x.length > 1.5 * Math.round(this.budget() / 4)) return "reload";
    }
    return gained;
  }

  // A live chart's lines, grown by half their budget, thinned back to it by the server's
  // rule over the x range they share, instead of loaded whole again (which would cost the
  // server the runs' whole length every few minutes: goal 6 of issue 20). They hold every
  // extreme the server gave and every point since, so each spike stays; the envelope is
  // exact to within one bucket, as the server's summary levels are.
  private thin() {
    const runLines = this.lines.filter((l) => l.run);
    const from = Math.min(...runLines.map((l) => (l.x.length ? l.x[0] : Infinity)));
    const to = Math.max(...runLines.map((l) => (l.x.length ? l.x[l.x.length - 1] : -Infinity)));
    for (const l of runLines) {
      const keep = thinned(l.x, l.y, from, to, this.budget());
      l.x = keep.map((i) => l.x[i]);
      l.y = keep.map((i) => l.y[i]);
    }
    this.appended = 0;
    this.el.dataset.thinned = String(Number(this.el.dataset.thinned ?? 0) + 1);
  }

  private uplotData(lines: Line[]): uPlot.AlignedData {
    const { series } = plotted(lines, this.state);
    const tables: uPlot.AlignedData[] = series.map((s, i) => {
      const b = lines[i].band;
      return (b ? [s.x, s.y, b.hi, b.lo] : [s.x, s.y]) as uPlot.AlignedData;
    });
    if (!tables.length) return [[]];
    const data = (tables.length === 1 ? tables[0] : uPlot.join(tables)) as (number | null | undefined)[][];
    const x = this.effectiveX();
    data[0] = (data[0] as number[]).map((v) => toPlotX(x, v));
    return data as uPlot.AlignedData;
  }

  private uplotSeries(lines: Line[], forOverview: boolean): { series: uPlot.Series[]; bands: uPlot.Band[]; owners: (Line | undefined)[] } {
    const x = this.effectiveX();
    const series: uPlot.Series[] = [{ label: xName(x), value: (_u, v) => (v == null ? "-" : xLabel(x, v)) }];
    const owners: (Line | undefined)[] = [undefined];
    const bands: uPlot.Band[] = [];
    lines.forEach((l, i) => {
      const st = lineStyle(l.style ?? i, this.state.mono);
      const shown = !this.state.hidden.includes(l.key);
      series.push({
        label: l.name,
        stroke: st.color,
        dash: st.dash,
        width: forOverview ? 1 : l.band ? this.state.width + 1 : this.state.width,
        show: shown,
        spanGaps: false,
        points: { show: false },
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
    });
    return { series, bands, owners };
  }

  // `aligned`: this.lines as uPlot's table, when the caller made it already. Resolves when
  // the lines are on screen.
  draw(aligned?: uPlot.AlignedData): Promise<void> {
    this.width = this.body.clientWidth || this.width;
    const width = Math.max(320, this.width || 800);
    const { series, bands, owners } = this.uplotSeries(this.lines, false);
    this.seriesLines = owners;
    const data = aligned ?? this.uplotData(this.lines);
    const x = this.effectiveX();
    const opts: uPlot.Options = {
      width,
      height: 300,
      series,
      bands,
      scales: {
        x: { time: x === "wall" },
        y: {
          distr: this.state.logY ? 3 : 1,
          range: (_u, lo, hi) => {
            const pad = this.state.logY ? 0 : (hi - lo) * 0.05 || 1;
            return [this.state.yMin ?? lo - pad, this.state.yMax ?? hi + pad] as uPlot.Range.MinMax;
          },
        },
      },
      axes: [
        {
          label: xName(x, true),
          // Round durations (0:30, 5:00, 1:00:00), not uPlot's decimal steps.
          splits: x === "relative" ? (_u, _i, lo, hi) => timeTicks(lo, hi, Math.max(2, Math.floor(width / 110))) : undefined,
          values: x === "wall" ? undefined : (_u, ticks) => ticks.map((t) => xLabel(x, t, ticks.length > 1 ? ticks[1] - ticks[0] : 1)),
        },
        {
          label: this.yTitle(),
          splits: this.state.logY ? undefined : (_u, _i, lo, hi) => niceTicks(lo, hi, 5),
          values: (_u, ticks) => ticks.map((t) => value(t)),
          size: 60,
        },
      ],
      // A drag selects a range; the chart then fetches it (rather than uPlot rescaling).
      cursor: { drag: { x: true, y: false, setScale: false } },
      legend: { live: true },
      hooks: {
        setSelect: [(u) => this.selected(u)],
        setSeries: [(u, idx) => idx != null && this.toggled(u, idx)],
        setCursor: [(u) => this.hover(u)],
        draw: [(u) => drawOverlay(u, this.effectiveX(), this.phases, this.events)],
      },
    };
    this.plot?.destroy();
    this.plot = undefined;
    this.unready?.destroy();
    this.unready = undefined;
    this.superseded?.(); // the draw it replaces will not happen: its waiters go on
    this.body.innerHTML = "";
    const same = this.full === this.lines ? data : undefined;
    clearTimeout(this.overviewTimer);
    cancelAnimationFrame(this.overviewFrame ?? 0);
    // uPlot builds the chart's elements and legend now (in the task that read the answer,
    // when loading), and scales and draws the lines in a task of its own, the overview
    // strip once they are on screen: the page handles input in between. A chart of 50 runs held the main
    // thread 100 to 200 ms in one piece (goal 4 of issue 20: never over 200 ms).
    let drawn = () => {};
    const done = new Promise<void>((resolve) => (drawn = resolve));
    this.superseded = drawn;
    this.unready = new uPlot(opts, data, (u, init) => {
      this.body.appendChild(u.root);
      // A band's bounds are series to uPlot, but not legend entries.
      const rows = u.root.querySelectorAll<HTMLElement>(".u-legend .u-series");
      series.forEach((sr, i) => {
        if (sr.stroke === "transparent" && rows[i]) rows[i].style.display = "none";
      });
      u.over.addEventListener("click", () => this.showDetails());
      u.over.addEventListener("dblclick", () => this.resetZoom());
      this.overviewTimer = window.setTimeout(() => {
        init();
        this.plot = u;
        this.unready = undefined;
        if (this.state.zoom) {
          const [a, b] = this.state.zoom;
          u.setScale("x", { min: toPlotX(x, a), max: toPlotX(x, b) });
        }
        this.el.dataset.series = String(this.lines.length);
        this.el.dataset.phases = String(this.phases.length);
        this.el.dataset.drawn = String(Number(this.el.dataset.drawn || 0) + 1);
        this.onDrawn?.();
        // The rest waits for the frame that shows the lines (a task queued from an animation
        // frame callback runs after that frame): the draw's waiters (the events' and phases'
        // requests), then the overview strip, unzoomed from the chart's own data. Drawn
        // before that frame, the strip held the chart off the screen 30-60 ms.
        this.overviewFrame = requestAnimationFrame(() => {
          this.overviewTimer = window.setTimeout(() => {
            this.superseded = undefined;
            drawn();
            this.overviewTimer = window.setTimeout(() => this.drawOverview(width, same), 0);
          }, 0);
        });
      }, 0);
    });
    return done;
  }

  private drawOverview(width: number, lines?: uPlot.AlignedData) {
    let { series, bands } = this.uplotSeries(this.full, true);
    let data = lines ?? this.uplotData(this.full);
    // Many lines in a 70-pixel strip are a smear that costs as much to draw as the chart:
    // past a few, the strip shows their envelope (the lowest and highest shown value at each
    // x), which is what choosing a range needs.
    const envelope = this.full.length > kOverviewLines;
    if (envelope) {
      data = this.envelope(data, this.uplotSeries(this.full, true).owners);
      const line = { stroke: "#7a8ca3", width: 1, spanGaps: false, points: { show: false } };
      series = [{}, { ...line, label: "highest" }, { ...line, label: "lowest" }];
      bands = [{ series: [1, 2], fill: "#7a8ca340" }];
    }
    this.over.dataset.lines = envelope ? "envelope" : String(this.full.length);
    this.overview?.destroy();
    this.over.innerHTML = "";
    this.overview = new uPlot(
      {
        width,
        height: 70,
        series,
        bands,
        legend: { show: false },
        axes: [{ show: false }, { show: false }],
        scales: { x: { time: this.effectiveX() === "wall" } },
        cursor: { drag: { x: true, y: false, setScale: false }, points: { show: false }, y: false },
        select: { show: true, left: 0, top: 0, width: 0, height: 0 },
        hooks: {
          // Scales have their range once the strip is first drawn; the zoomed range is
          // marked then.
          ready: [() => this.markOverview()],
          setSelect: [
            (u) => {
              if (u.select.width < 2) return;
              const a = u.posToVal(u.select.left, "x");
              const b = u.posToVal(u.select.left + u.select.width, "x");
              this.setZoom([fromPlotX(this.effectiveX(), a), fromPlotX(this.effectiveX(), b)]);
            },
          ],
        },
      },
      data,
      this.over,
    );
  }

  // The highest and lowest value of the shown lines at each x of `data` (uPlot's table;
  // `owners` says which line each of its series draws).
  private envelope(data: uPlot.AlignedData, owners: (Line | undefined)[]): uPlot.AlignedData {
    const n = data[0].length;
    const hi: (number | null)[] = new Array(n).fill(null);
    const lo: (number | null)[] = new Array(n).fill(null);
    for (let s = 1; s < data.length; s++) {
      const line = owners[s];
      if (!line || this.state.hidden.includes(line.key)) continue;
      const ys = data[s] as (number | null | undefined)[];
      for (let i = 0; i < n; i++) {
        const v = ys[i];
        if (v == null || !Number.isFinite(v)) continue;
        if (hi[i] === null || v > hi[i]!) hi[i] = v;
        if (lo[i] === null || v < lo[i]!) lo[i] = v;
      }
    }
    return [data[0], hi, lo] as uPlot.AlignedData;
  }

  // The zoomed range as a rectangle on the overview strip.
  private markOverview() {
    const o = this.overview;
    if (!o || !this.state.zoom) return;
    const x = this.effectiveX();
    const left = o.valToPos(toPlotX(x, this.state.zoom[0]), "x");
    const right = o.valToPos(toPlotX(x, this.state.zoom[1]), "x");
    o.setSelect({ left, width: Math.max(2, right - left), top: 0, height: o.bbox.height / devicePixelRatio }, false);
  }

  // A range dragged on the plot: zoom to it.
  private selected(u: uPlot) {
    if (u.select.width < 3) return;
    const x = this.effectiveX();
    const a = fromPlotX(x, u.posToVal(u.select.left, "x"));
    const b = fromPlotX(x, u.posToVal(u.select.left + u.select.width, "x"));
    u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    this.setZoom([a, b]);
  }

  setZoom(range: [number, number] | null) {
    this.state.zoom = range;
    this.host.changed();
    void this.load(range !== null);
  }

  resetZoom() {
    this.setZoom(null);
  }

  private key(e: KeyboardEvent) {
    if (e.key === "0") {
      e.preventDefault();
      return this.setZoom(null);
    }
    // The keys that move the range need the drawn chart's scales: a chart being redrawn
    // (built, its lines drawn in the next task) lets them pass.
    const u = this.plot;
    if (!u) return;
    const min = u.scales.x.min ?? 0;
    const max = u.scales.x.max ?? 1;
    const span = max - min;
    const x = this.effectiveX();
    let next: [number, number] | null | undefined;
    if (e.key === "+" || e.key === "=") next = [min + span / 4, max - span / 4];
    else if (e.key === "-") next = [min - span / 2, max + span / 2];
    else if (e.key === "ArrowLeft") next = [min - span / 5, max - span / 5];
    else if (e.key === "ArrowRight") next = [min + span / 5, max + span / 5];
    if (next === undefined) return;
    e.preventDefault();
    this.setZoom(next && [fromPlotX(x, next[0]), fromPlotX(x, next[1])]);
  }

  private toggled(u: uPlot, idx: number) {
    const line = this.seriesLines[idx];
    if (!line) return;
    const shown = u.series[idx].show;
    const hidden = new Set(this.state.hidden);
    if (shown) hidden.delete(line.key);
    else hidden.add(line.key);
    this.state.hidden = [...hidden];
    // A workload's band follows its mean.
    if (line.band) {
      for (let i = idx + 1; i <= idx + 2 && i < u.series.length; i++) {
        if (u.series[i].show !== shown) u.setSeries(i, { show: shown });
      }
    }
    this.host.changed();
  }

  // The nearest line at the cursor, for the tooltip and the details.
  private nearest(u: uPlot): { line: Line; value: number; x: number } | null {
    const idx = u.cursor.idx;
    const top = u.cursor.top;
    if (idx == null || top == null || top < 0) return null;
    let best: { line: Line; value: number; x: number } | null = null;
    let bestDist = Infinity;
    this.seriesLines.forEach((line, si) => {
      // A line's own series, not its band's bounds.
      if (!line || this.seriesLines[si - 1] === line) return;
      const v = u.data[si]?.[idx];
      if (!u.series[si].show || v == null) return;
      const dist = Math.abs(u.valToPos(v, "y") - top);
      if (dist < bestDist) {
        bestDist = dist;
        best = { line, value: v, x: u.data[0][idx] };
      }
    });
    return best;
  }

  private hover(u: uPlot) {
    const n = this.nearest(u);
    if (!n) {
      this.tooltip.hidden = true;
      return;
    }
    const x = xText(this.effectiveX(), fromPlotX(this.effectiveX(), n.x));
    const behind = n.line.n ? n.line.n[n.line.x.indexOf(fromPlotX(this.effectiveX(), n.x))] : undefined;
    this.tooltip.innerHTML = `<b>${esc(n.line.name)}</b><br>${esc(value(n.value))}${this.unit ? " " + esc(this.unit) : ""} at ${esc(x)}${behind ? `<br>mean of ${plural(behind, "run")} here` : ""}${n.line.run ? "<br><i>click for the run's details</i>" : ""}`;
    this.tooltip.hidden = false;
    this.tooltip.style.left = `${Math.min((u.cursor.left ?? 0) + 70, u.width - 180)}px`;
    this.tooltip.style.top = `${(u.cursor.top ?? 0) + 40}px`;
  }

  private showDetails() {
    if (!this.plot) return;
    const n = this.nearest(this.plot);
    const r = n?.line.run ? this.host.run(n.line.run) : undefined;
    this.details.hidden = !r;
    if (!r) return;
    this.details.innerHTML = runDetails(r, this.runPhases.get(r.id) ?? []);
    this.details.querySelector(".close")!.addEventListener("click", () => (this.details.hidden = true));
  }

  // "GPU utilization (%)": the metric's name for people and the unit shown.
  private yTitle(): string {
    const title = this.host.metricInfo(this.state.metric)?.title || this.state.metric;
    return title + (this.unit ? ` (${this.unit})` : "");
  }

  // The chart on screen as a figure description (figure/figure_spec.h): the server draws
  // the exports with the renderer `trainbench plot` uses.
  figureSpec(): Record<string, unknown> {
    const s = this.state;
    const x = this.effectiveX();
    // The workloads in the order the page numbers their colours (styleLines), which the
    // server's figure follows.
    const workloads = s.grouping === "runs" ? [] : this.workloadKeys(s.runs);
    const u = this.plot;
    const from = u?.scales.x.min != null && s.zoom ? fromPlotX(x, u.scales.x.min) : undefined;
    const to = u?.scales.x.max != null && s.zoom ? fromPlotX(x, u.scales.x.max) : undefined;
    return {
      runs: s.grouping === "workloads" ? [] : s.runs,
      workloads,
      metric: s.metric,
      labels: s.labels || null,
      x,
      from: from ?? null,
      to: to ?? null,
      smoothing: s.smoothing,
      width: s.figure.width,
      font_size: s.figure.font,
      line_width: s.width,
      legend: s.figure.legend,
      show_legend: !s.figure.noLegend,
      hidden: s.hidden,
      mono: s.mono,
      events: s.figure.events,
      phases: s.figure.phases,
      y_min: s.yMin,
      y_max: s.yMax,
      log_y: s.logY,
      utc_offset_min: -new Date().getTimezoneOffset(),
    };
  }

  async export(kind: "png" | "svg" | "pdf" | "csv") {
    const name = `trainbench-${this.state.metric.replace(/[^\w.-]+/g, "_")}`;
    try {
      download(`${name}.${kind}`, await api.figure(this.figureSpec(), kind));
    } catch (e) {
      this.host.message(`${this.state.metric}: ${(e as Error).message}`);
    }
  }
}
