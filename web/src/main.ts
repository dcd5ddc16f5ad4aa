// trainbench's web UI: experiments, workloads and runs in a tree with checkboxes, the
// selected runs side by side in a table, and charts (src/chart.ts). The view (selection
// and charts) is kept in this browser, downloadable as JSON and shareable as a link.
import * as api from "./api";
import * as metric from "./generated/metric_names";
import { ChartPanel, type ChartHost } from "./chart";
import { download } from "./download";
import { ago, duration, esc } from "./format";
import {
  defaultFigure,
  initialView,
  newId,
  parseView,
  saveView,
  viewLink,
  type ChartState,
  type ViewState,
} from "./state";
import { TableView } from "./table";
import { splitOnce, TreeView } from "./tree";

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

class App implements ChartHost {
  view: ViewState = initialView();
  runs = new Map<string, api.RunInfo>(); // every run loaded so far
  experiments: api.ExperimentInfo[] = [];
  expanded = new Set<string>();
  charts: ChartPanel[] = [];
  metrics = new Map<string, api.MetricInfo>(); // of the selected runs
  private tree = new TreeView({
    experiments: () => this.experiments,
    runs: () => this.runs.values(),
    selected: () => this.view.selected,
    expanded: this.expanded,
    loadExperiment: (name) => this.loadExperiment(name),
    select: (ids, on) => this.select(ids, on),
    run: (id) => this.runs.get(id),
  });
  private table = new TableView(
    () => this.view.selected,
    (id) => this.runs.get(id),
  );

  async start() {
    $("add-chart").addEventListener("click", () => this.addChart());
    $("quick-compare").addEventListener("click", () => this.quickComparison());
    $("clear-selection").addEventListener("click", () => this.select([...this.view.selected], false));
    $<HTMLInputElement>("metric-search").addEventListener("input", () => this.filterMetrics());
    $("share-download").addEventListener("click", () =>
      download("trainbench-view.json", new Blob([JSON.stringify(this.view, null, 2)], { type: "application/json" })),
    );
    $<HTMLInputElement>("share-upload").addEventListener("change", (e) => this.upload(e.target as HTMLInputElement));
    $("share-link").addEventListener("click", () => this.copyLink());
    window.addEventListener("hashchange", () => this.openLink());
    await this.refresh();
    this.renderOverview();
    // Runs named by the view (a link, a reload) are loaded with their experiments.
    await this.loadRuns(this.view.selected.concat(this.view.charts.flatMap((c) => c.runs)));
    this.renderTree();
    this.renderSelected();
    await this.renderMetrics();
    for (const c of this.view.charts) this.mountChart(c);
    void this.renderTable();
    window.setInterval(() => void this.poll(), 5000);
    document.body.dataset.ready = "1";
  }

  async refresh() {
    this.experiments = await api.experiments();
    for (const name of this.expanded) await this.loadExperiment(name);
  }

  async loadExperiment(name: string) {
    for (const r of await api.runsOf(name)) this.runs.set(r.id, r);
  }

  // The experiments holding these runs, loaded and expanded.
  async loadRuns(ids: string[]) {
    const missing = ids.filter((id) => !this.runs.has(id));
    if (!missing.length) return;
    const found = await api.runsById(missing, false).catch(() => [] as api.RunInfo[]);
    for (const r of found) {
      if (this.expanded.has(r.experiment)) continue;
      this.expanded.add(r.experiment);
      await this.loadExperiment(r.experiment);
    }
  }

  // Running runs change: their status, duration and charts.
  async poll() {
    const running = [...this.runs.values()].some((r) => r.status === "RUNNING");
    const before = this.experiments.map((e) => `${e.name}:${e.runs}:${e.running}`).join();
    this.experiments = await api.experiments().catch(() => this.experiments);
    const after = this.experiments.map((e) => `${e.name}:${e.runs}:${e.running}`).join();
    if (!running && before === after) return;
    for (const name of this.expanded) await this.loadExperiment(name).catch(() => undefined);
    this.renderTree();
    this.renderSelected();
    this.renderOverview();
    // Running runs gain metrics (a script's first log) and summary figures.
    if (this.view.selected.some((id) => this.runs.get(id)?.status === "RUNNING")) {
      await this.renderMetrics();
      await this.renderTable();
    }
  }

  // --- the selection -------------------------------------------------------------------

  renderTree() {
    this.tree.render();
  }

  renderSelected() {
    this.tree.renderSelected();
    $("clear-selection").hidden = !this.view.selected.length;
  }

  // The experiments at a glance, newest first: one click selects an experiment's runs and
  // opens the quick comparison.
  renderOverview() {
    const section = $("overview");
    section.hidden = this.view.charts.length > 0;
    const rows = [...this.experiments].sort((a, b) => (b.last_start_ms || 0) - (a.last_start_ms || 0));
    const table = $("overview-table");
    if (!rows.length) {
      table.innerHTML =
        "<tr><td>No experiments in this store yet: <code>trainbench run</code> or <code>trainbench schedule</code> records some.</td></tr>";
      return;
    }
    const status = (e: api.ExperimentInfo) =>
      [
        e.running ? `${e.running} running` : "",
        e.failed ? `${e.failed} failed or killed` : "",
        !e.running && !e.failed ? "all finished" : "",
      ]
        .filter(Boolean)
        .join(", ");
    table.innerHTML =
      "<thead><tr><th>experiment</th><th>workloads</th><th>runs</th><th>status</th><th>last run started</th><th>took</th><th></th></tr></thead><tbody>" +
      rows
        .map(
          (e) => `<tr><td><b>${esc(e.name)}</b></td><td>${e.workloads}</td><td>${e.runs}</td><td>${esc(status(e))}</td>
          <td>${e.last_start_ms ? ago(e.last_start_ms) : "-"}</td><td>${duration(e.duration_ms)}</td>
          <td>${e.runs ? `<button type="button" data-compare="${esc(e.name)}">Compare its runs</button>` : ""}</td></tr>`,
        )
        .join("") +
      "</tbody>";
    table
      .querySelectorAll<HTMLButtonElement>("button[data-compare]")
      .forEach((b) => b.addEventListener("click", () => void this.compareExperiment(b.dataset.compare!)));
  }

  async compareExperiment(name: string) {
    this.expanded.add(name);
    await this.loadExperiment(name);
    const ids = [...this.runs.values()].filter((r) => r.experiment === name).map((r) => r.id);
    this.view.selected = ids;
    this.changed();
    this.renderTree();
    this.renderSelected();
    await this.renderMetrics();
    void this.renderTable();
    this.quickComparison();
  }

  // The charts every benchmark needs, for the selected runs, in a grid: the GPU's activity,
  // power, memory, the script's throughput and loss (or the run's CPU and memory without a GPU).
  quickComparison() {
    if (!this.view.selected.length) return this.message("Select runs first (or press Compare on an experiment).");
    const wanted = [
      [metric.kGpuSmActiveRatio, metric.kGpuUtilizationGpuRatio, metric.kProcCpuUtilizationRatio],
      [metric.kGpuPowerDrawWatts],
      [metric.kGpuMemoryUsedBytes, metric.kProcMemoryRssBytes],
      [metric.kTrainThroughputSamplesPerSecond],
      [metric.kTrainLoss],
    ];
    const open = new Set(this.view.charts.map((c) => c.metric));
    let added = 0;
    for (const choices of wanted) {
      const m = choices.find((c) => this.metrics.has(c));
      if (!m || open.has(m)) continue;
      const workloads = new Set(this.view.selected.map((id) => this.runs.get(id)?.workload).filter(Boolean));
      // One time axis for the grid: the loss beside the GPU's activity at the same moment.
      this.addChart(m, workloads.size > 1 && this.view.selected.length > 6 ? "workloads" : "runs", "relative");
      added++;
    }
    if (!added)
      this.message("The quick comparison's charts are open already (or the runs have none of their metrics).");
  }

  renderTable() {
    return this.table.render();
  }

  select(ids: string[], on: boolean) {
    const set = new Set(this.view.selected);
    for (const id of ids) on ? set.add(id) : set.delete(id);
    this.view.selected = [...set];
    this.changed();
    this.renderTree();
    this.renderSelected();
    void this.renderMetrics();
    void this.renderTable();
  }

  async renderMetrics() {
    const select = $<HTMLSelectElement>("metric");
    if (!this.view.selected.length) {
      select.innerHTML = "<option value=''>select runs first</option>";
      return;
    }
    const metrics = await api.metricsOf(this.view.selected).catch(() => [] as api.MetricInfo[]);
    this.metrics = new Map(metrics.map((m) => [m.metric, m]));
    this.filterMetrics();
  }

  // The metric picker: one entry per quantity (its sources and GPUs are chosen in the chart),
  // grouped by where it comes from, readable names with units, filtered by the search box.
  filterMetrics() {
    const select = $<HTMLSelectElement>("metric");
    const previous = select.value;
    const words = $<HTMLInputElement>("metric-search").value.toLowerCase().split(/\s+/).filter(Boolean);
    const groups = new Map<string, string[]>();
    const order = [
      "GPU",
      "GPU profiling (DCGM)",
      "Training script",
      "Run",
      "Host",
      "Disk",
      "Network",
      "Per process and thread",
      "trainbench",
    ];
    for (const g of order) groups.set(g, []);
    for (const m of this.metrics.values()) {
      const text = `${m.title} ${m.metric} ${m.description}`.toLowerCase();
      if (!words.every((w) => text.includes(w))) continue;
      const g = metricGroup(m);
      const unit = unitName(m.unit);
      groups
        .get(g)!
        .push(
          `<option value="${esc(m.metric)}" title="${esc(m.metric + (m.description ? ": " + m.description : ""))}">${esc(m.title || m.metric)}${unit ? ` (${esc(unit)})` : ""}</option>`,
        );
    }
    const html = [...groups]
      .filter(([, o]) => o.length)
      .map(([g, o]) => `<optgroup label="${esc(g)}">${o.join("")}</optgroup>`);
    select.innerHTML = html.join("") || "<option value=''>no metric matches</option>";
    const values = [...select.options].map((o) => o.value);
    const preferred = [
      metric.kGpuSmActiveRatio,
      metric.kGpuUtilizationGpuRatio,
      metric.kTrainLoss,
      metric.kProcCpuUtilizationRatio,
    ];
    if (values.includes(previous)) select.value = previous;
    else select.value = preferred.find((p) => values.includes(p)) ?? values[0] ?? "";
  }

  // --- charts -------------------------------------------------------------------------------

  // A chart of `chosen` (the metric picker's choice by default); `x` by default: a script's
  // own metric (loss, accuracy) over its steps, as `trainbench plot` draws it, else the time
  // since each run started.
  addChart(chosen?: string, grouping: ChartState["grouping"] = "runs", x?: ChartState["x"]) {
    const [metric, labels] = splitOnce(chosen ?? $<HTMLSelectElement>("metric").value, "|");
    if (!metric) return this.message("Select runs, then pick a metric.");
    const state: ChartState = {
      id: newId(),
      metric,
      labels,
      runs: [...this.view.selected],
      grouping,
      x: x ?? (metric.startsWith("train.") ? "step" : "relative"),
      smoothing: 0,
      width: 1,
      mono: false,
      zoom: null,
      hidden: [],
      logY: false,
      yMin: null,
      yMax: null,
      figure: defaultFigure(),
      phasesOf: null,
      colorBy: "",
    };
    performance.mark("chart-add");
    const width = this.plotWidth(); // before the page changes: read from the current layout
    this.view.charts.push(state);
    this.changed();
    $("overview").hidden = true;
    const panel = this.mountChart(state, width);
    panel.el.scrollIntoView({ block: "nearest" });
  }

  // The width a new chart's plot gets, from the layout as it is: an open chart's plot, or the
  // first column of the charts' grid less a chart's padding and border (style.css: .chart).
  // A new chart asks for its data with it, without waiting for the page to be laid out anew
  // with the chart in it (on a 2-core machine that layout delayed the request by 20-60 ms).
  // 0 when the grid is not laid out (the chart then measures itself).
  plotWidth(): number {
    const open = this.charts.find((c) => c.plotWidth() > 0);
    if (open) return open.plotWidth();
    const track = parseFloat(getComputedStyle($("charts")).gridTemplateColumns);
    return track > 0 ? Math.round(track) - 2 * (8 + 1) : 0;
  }

  mountChart(state: ChartState, width = this.plotWidth()): ChartPanel {
    const panel = new ChartPanel(state, this, width);
    $("charts").appendChild(panel.el);
    this.charts.push(panel);
    void panel.load();
    return panel;
  }

  remove(chart: ChartPanel) {
    chart.destroy();
    this.charts = this.charts.filter((c) => c !== chart);
    this.view.charts = this.view.charts.filter((c) => c !== chart.state);
    this.changed();
    if (!this.view.charts.length) this.renderOverview();
  }

  run(id: string) {
    return this.runs.get(id);
  }

  metricInfo(metric: string) {
    return this.metrics.get(metric);
  }

  selection() {
    return [...this.view.selected];
  }

  changed() {
    saveView(this.view);
  }

  message(text: string) {
    const m = $("message");
    m.textContent = text;
    m.hidden = !text;
    if (text) window.setTimeout(() => m.textContent === text && (m.textContent = ""), 8000);
  }

  // --- sharing ------------------------------------------------------------------------------

  async restore(view: ViewState) {
    for (const c of this.charts) c.destroy();
    this.charts = [];
    this.view = view;
    this.changed();
    await this.loadRuns(view.selected.concat(view.charts.flatMap((c) => c.runs)));
    this.renderTree();
    this.renderSelected();
    await this.renderMetrics();
    for (const c of view.charts) this.mountChart(c);
    this.renderOverview();
    await this.renderTable();
  }

  async upload(input: HTMLInputElement) {
    const file = input.files?.[0];
    input.value = "";
    if (!file) return;
    try {
      await this.restore(parseView(await file.text()));
      this.message(`Restored the view from ${file.name}.`);
    } catch (e) {
      this.message(`${file.name}: ${(e as Error).message}`);
    }
  }

  async copyLink() {
    const link = viewLink(this.view);
    history.replaceState(null, "", link);
    try {
      await navigator.clipboard.writeText(link);
      this.message("Link copied: it reopens these charts.");
    } catch {
      this.message("The address bar now holds a link to this view.");
    }
  }

  async openLink() {
    if (!location.hash.includes("view=")) return;
    await this.restore(initialView());
  }
}

// Where a metric comes from, for the picker's groups.
function metricGroup(m: api.MetricInfo): string {
  const name = m.metric;
  if (
    name.startsWith("proc.thread.") ||
    name.startsWith("proc.gpu.memory_used") ||
    name.startsWith("proc.gpu.sm_utilization")
  )
    return "Per process and thread";
  if (name.startsWith("train.")) return "Training script";
  if (m.source === "dcgmi" || /^gpu\.(sm|pipe|dram|graphics|nvlink)\./.test(name) || /_total_bytes/.test(name))
    return "GPU profiling (DCGM)";
  if (name.startsWith("gpu.")) return "GPU";
  if (name.startsWith("proc.")) return "Run";
  if (name.startsWith("host.")) return "Host";
  if (name.startsWith("disk.")) return "Disk";
  if (name.startsWith("net.")) return "Network";
  return "trainbench";
}

function unitName(unit: string): string {
  return (
    ({ ratio: "%", bytes: "bytes", "bytes/s": "bytes/s", "1": "", "1/s": "per second" } as Record<string, string>)[
      unit
    ] ?? unit
  );
}

const app = new App();
(window as unknown as { trainbench: App }).trainbench = app;
app.start().catch((e) => {
  document.body.dataset.ready = "error";
  $("message").textContent = `Cannot reach the trainbench server: ${(e as Error).message}`;
});
