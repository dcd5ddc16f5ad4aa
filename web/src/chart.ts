// One chart: a metric over time for its own selection of runs, each run on its own, each
// workload as a mean with a min-max band, or both; with zoom (drag, or the overview strip
// below), finer data fetched for the zoomed range, legend toggles, smoothing, line width,
// a monochrome mode, event markers, live updates, and exports.
import uPlot from "uplot";
import * as api from "./api";
import { isRunId, type ChartState, type XKind } from "./state";
import type { PlotEvent } from "./scene";
import { displayUnit } from "./format";
import { axisTitle, chartAxes, logNote } from "./chart_axes";
import { bindChartControls } from "./chart_controls";
import { chartFrame, countCaption, runDetails, syncXChoice } from "./details";
import { download } from "./download";
import { fetchEvents, fetchLines, workloadKeys } from "./fetch_lines";
import { exportName, figureSpec } from "./figure_spec";
import { largestOf, longestRun, type Line, type PhaseSpan } from "./lines";
import { appendPoints, newBuckets, newPoints, replaceBuckets, thinLines } from "./live";
import { drawOverlay } from "./overlay";
import { OverviewStrip } from "./overview";
import { keyedRange, uplotData, uplotSeries } from "./uplot_table";
import { loadPhaseSpans, phaseOptions } from "./phase_choice";
import { colourByOptions, showColourBar } from "./colour_bar";
import { pointedAt, tooltipHtml } from "./tooltip";
import { chartScales, fromPlotX, toPlotX } from "./xaxis";

export interface ChartHost {
  run(id: string): api.RunInfo | undefined;
  metricInfo(metric: string): api.MetricInfo | undefined;
  changed(): void; // the chart's state changed: save the view
  remove(chart: ChartPanel): void;
  selection(): string[];
  message(text: string): void;
}

export class ChartPanel {
  readonly el: HTMLElement;
  private plot?: uPlot;
  private overview: OverviewStrip;
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
    this.overview = new OverviewStrip(this.over, (range) => this.setZoom(range));
    this.bindControls();
  }

  private bindControls() {
    bindChartControls(this.el, this.state, {
      changed: () => this.host.changed(),
      reload: () => void this.load(),
      redraw: () => void this.draw(),
      phasesChosen: () => void this.loadPhases(this.runIds(), this.effectiveX()).then(() => this.plot?.redraw(false)),
      eventsChosen: () =>
        void this.loadEvents(this.runIds(), this.effectiveX()).then(() => {
          this.el.dataset.events = String(this.events.length);
          this.plot?.redraw(false);
        }),
      selection: () => this.host.selection(),
      resetZoom: () => this.resetZoom(),
      remove: () => this.host.remove(this),
      export: (kind) => void this.export(kind),
    });
    this.body.addEventListener("keydown", (e) => this.key(e));
    this.body.addEventListener("mouseleave", () => (this.tooltip.hidden = true));
  }

  destroy() {
    clearInterval(this.timer);
    clearTimeout(this.overviewTimer);
    cancelAnimationFrame(this.overviewFrame ?? 0);
    this.plot?.destroy();
    this.unready?.destroy();
    this.overview.destroy();
    this.el.remove();
  }

  private effectiveX(): XKind {
    // Workload means align runs on the time since their start, or on the step (a view saved
    // with wall time opens so too).
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

  private showCount(selected: number) {
    this.info.textContent = countCaption(this.lines, this.shared, selected);
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
      const fetched = await fetchLines(this.host, s, runs, x, range, this.budget());
      const lines = fetched.lines;
      // The overview always shows the whole range.
      const full = !s.zoom
        ? lines
        : zoomedOnly && this.full.length
          ? this.full
          : (await fetchLines(this.host, s, runs, x, {}, this.budget())).lines;
      if (token !== this.fetching) return; // a newer request won
      // A script's metric logged without steps (the step timer's): over time instead.
      if (x === "step" && s.metric.startsWith("train.") && lines.every((l) => l.x.length === 0)) {
        s.x = "relative";
        syncXChoice(this.el, s);
        this.host.changed();
        return this.load();
      }
      ({ shared: this.shared, unit: this.unit, factor: this.factor, largest: this.largest } = fetched);
      colourByOptions(
        this.el.querySelector<HTMLSelectElement>('[data-k="colorBy"]')!,
        runs.map((id) => this.host.run(id)?.params),
        s.colorBy,
      );
      showColourBar(this.el.querySelector<HTMLElement>(".colour-bar")!, this.el, fetched.sweep, lines);
      const aligned = uplotData(lines, s, x);
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

  // One run's phases (warm-up, idle, stalls, ...) as shaded spans, and the list to choose whose.
  private async loadPhases(runs: string[], x: XKind) {
    const list = this.el.querySelector<HTMLSelectElement>('[data-k="phasesOf"]')!;
    const chosen = await loadPhaseSpans(this.state, runs, x, (id) => this.host.run(id)?.start_ms);
    this.phases = chosen.spans;
    if (chosen.run) this.runPhases.set(chosen.run, chosen.phases);
    list.innerHTML = phaseOptions(this.state, this.lines, runs);
    list.disabled = this.state.grouping === "workloads" || x === "step";
    this.el.dataset.phasesOf = chosen.run ?? "";
    this.el.dataset.phases = String(this.phases.length);
  }

  // The runs' events as markers, when asked for (as in the figures: off by default).
  private async loadEvents(runs: string[], x: XKind) {
    this.events = [];
    if (!this.state.figure.events) return;
    this.events = await fetchEvents(this.host, this.state, runs, x);
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
      const workloads = workloadKeys(runs, (id) => this.host.run(id)).length;
      const [points, buckets] = await Promise.all([
        newPoints(lines, s, x, runs, this.budget()),
        newBuckets(lines, s, x, workloads, this.budget()),
      ]);
      if (token !== this.fetching) return;
      if (points === "reload" || buckets === "reload") return this.load();
      const largest = Math.max(this.largest, largestOf(points.map((d) => d.y)), largestOf(buckets.map((w) => w.mean)));
      if (displayUnit(this.host.metricInfo(s.metric)?.unit ?? "", largest).factor !== this.factor) return this.load();
      this.largest = largest;
      const added = appendPoints(lines, x, points, this.factor, (run) => this.host.run(run)?.start_ms ?? 0);
      const replaced = replaceBuckets(lines, buckets, this.factor, this.budget());
      if (replaced === "reload") return this.load();
      this.appended += added;
      if (!added && !replaced) return;
      if (replaced) this.el.dataset.meanRefreshes = String(Number(this.el.dataset.meanRefreshes ?? 0) + 1);
      if (this.appended * 2 > this.budget()) {
        thinLines(lines, this.budget());
        this.appended = 0;
        this.el.dataset.thinned = String(Number(this.el.dataset.thinned ?? 0) + 1);
      }
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

  // `aligned`: this.lines as uPlot's table, when the caller made it already. Resolves when
  // the lines are on screen.
  draw(aligned?: uPlot.AlignedData): Promise<void> {
    this.width = this.body.clientWidth || this.width;
    const width = Math.max(320, this.width || 800);
    const x = this.effectiveX();
    const { series, bands, owners } = uplotSeries(this.lines, this.state, x, false);
    this.seriesLines = owners;
    const data = aligned ?? uplotData(this.lines, this.state, x);
    const opts: uPlot.Options = {
      width,
      height: 300,
      series,
      bands,
      scales: chartScales(x, this.state, () => longestRun(this.runIds().map((id) => this.host.run(id)))),
      // x titled over the zoomed range, else its runs' whole time.
      axes: chartAxes(
        x,
        this.state.logY,
        width,
        axisTitle(x, this.state.zoom ?? [0, longestRun(this.runIds().map((id) => this.host.run(id)))], width),
        this.yTitle(),
      ),
      // A drag selects a range; the chart then fetches it (rather than uPlot rescaling).
      cursor: { drag: { x: true, y: false, setScale: false } },
      legend: { live: true },
      hooks: {
        setSelect: [(u) => this.selected(u)],
        setSeries: [(u, idx) => idx != null && this.toggled(u, idx)],
        setCursor: [(u) => this.hover(u)],
        draw: [
          (u) =>
            drawOverlay(
              u,
              this.effectiveX(),
              this.phases,
              this.events,
              logNote(
                this.state.logY,
                this.lines.filter((l) => !this.state.hidden.includes(l.key)),
                this.state.zoom,
              ),
            ),
        ],
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
      series.forEach((_sr, i) => {
        if (i > 0 && owners[i] === owners[i - 1] && rows[i]) rows[i].style.display = "none";
      });
      u.over.addEventListener("click", () => void this.showDetails());
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
            this.overviewTimer = window.setTimeout(() => this.overview.draw(width, this.full, this.state, x, same), 0);
          }, 0);
        });
      }, 0);
    });
    return done;
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
    const x = this.effectiveX();
    const next = keyedRange(e.key, u.scales.x.min ?? 0, u.scales.x.max ?? 1);
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
    // A workload's band, and a smoothed line's faint values, follow the line.
    for (let i = idx + 1; i < u.series.length && this.seriesLines[i] === line; i++) {
      if (u.series[i].show !== shown) u.setSeries(i, { show: shown });
    }
    this.host.changed();
  }

  private hover(u: uPlot) {
    const p = pointedAt(u, this.seriesLines);
    this.tooltip.hidden = !p;
    if (!p) return;
    this.tooltip.innerHTML = tooltipHtml(p, this.effectiveX(), this.unit);
    this.tooltip.style.left = `${Math.min((u.cursor.left ?? 0) + 70, u.width - 180)}px`;
    this.tooltip.style.top = `${(u.cursor.top ?? 0) + 40}px`;
  }

  private async showDetails() {
    if (!this.plot) return;
    const run = pointedAt(this.plot, this.seriesLines)?.line.run;
    const r = run ? this.host.run(run) : undefined;
    if (!r) return void (this.details.hidden = true);
    const phases = this.runPhases.get(r.id) ?? (await api.phasesOf(r.id).catch(() => [] as api.PhaseInfo[]));
    this.runPhases.set(r.id, phases);
    this.details.innerHTML = runDetails(r, phases); // filled, then shown
    this.details.hidden = false;
    this.details.querySelector(".close")!.addEventListener("click", () => (this.details.hidden = true));
  }

  // "GPU utilization (%)": the metric's name for people and the unit shown.
  private yTitle(): string {
    const title = this.host.metricInfo(this.state.metric)?.title || this.state.metric;
    return title + (this.unit ? ` (${this.unit})` : "");
  }

  figureSpec(): Record<string, unknown> {
    const s = this.state;
    const x = this.effectiveX();
    const u = this.plot;
    const from = u?.scales.x.min != null && s.zoom ? fromPlotX(x, u.scales.x.min) : undefined;
    const to = u?.scales.x.max != null && s.zoom ? fromPlotX(x, u.scales.x.max) : undefined;
    const workloads = s.grouping === "runs" ? [] : workloadKeys(s.runs, (id) => this.host.run(id));
    return figureSpec(s, x, workloads, from, to, this.el.dataset.phasesOf || undefined);
  }

  async export(kind: "png" | "svg" | "pdf" | "csv") {
    const spec = this.figureSpec();
    const name = exportName(this.state, this.effectiveX(), (id) => this.host.run(id)?.name ?? "", spec);
    try {
      download(`${name}.${kind}`, await api.figure(spec, kind));
    } catch (e) {
      this.host.message(`${this.state.metric}: ${(e as Error).message}`);
    }
  }
}
