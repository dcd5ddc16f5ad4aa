// trainbench's web UI: experiments, workloads and runs in a tree with checkboxes, the
// selected runs side by side in a table, and charts (src/chart.ts). The view (selection
// and charts) is kept in this browser, downloadable as JSON and shareable as a link.
import * as api from "./api";
import { ChartPanel, type ChartHost } from "./chart";
import { download } from "./download";
import { esc } from "./format";
import { initialView, newId, parseView, saveView, viewLink, type ChartState, type ViewState } from "./state";
import { TableView } from "./table";
import { splitOnce, TreeView } from "./tree";

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

class App implements ChartHost {
  view: ViewState = initialView();
  runs = new Map<string, api.RunInfo>(); // every run loaded so far
  experiments: api.ExperimentInfo[] = [];
  expanded = new Set<string>();
  charts: ChartPanel[] = [];
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
    $("share-download").addEventListener("click", () =>
      download("trainbench-view.json", new Blob([JSON.stringify(this.view, null, 2)], { type: "application/json" })),
    );
    $<HTMLInputElement>("share-upload").addEventListener("change", (e) => this.upload(e.target as HTMLInputElement));
    $("share-link").addEventListener("click", () => this.copyLink());
    window.addEventListener("hashchange", () => this.openLink());
    await this.refresh();
    // Runs named by the view (a link, a reload) are loaded with their experiments.
    await this.loadRuns(this.view.selected.concat(this.view.charts.flatMap((c) => c.runs)));
    this.renderTree();
    this.renderSelected();
    for (const c of this.view.charts) this.mountChart(c);
    await this.renderMetrics();
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
    const found = await Promise.all(missing.map((id) => api.get<api.RunInfo>("runs/" + id).catch(() => null)));
    for (const r of found) {
      if (!r || this.expanded.has(r.experiment)) continue;
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
    const previous = select.value;
    if (!this.view.selected.length) {
      select.innerHTML = "<option value=''>select runs first</option>";
      return;
    }
    const metrics = await api.metricsOf(this.view.selected).catch(() => [] as api.MetricInfo[]);
    const groups = new Map<string, string[]>();
    for (const m of metrics) {
      const source = m.source || m.metric.split(".")[0];
      if (!groups.has(source)) groups.set(source, []);
      const options = groups.get(source)!;
      const labels = m.labels.filter((l) => l !== "");
      options.push(`<option value="${esc(m.metric)}|" title="${esc(m.description)}">${esc(m.metric)}${labels.length ? " (all)" : ""}</option>`);
      if (m.labels.length > 1) {
        for (const l of labels) options.push(`<option value="${esc(m.metric)}|${esc(l)}">${esc(m.metric)} ${esc(l)}</option>`);
      }
    }
    select.innerHTML = [...groups].map(([g, opts]) => `<optgroup label="${esc(g)}">${opts.join("")}</optgroup>`).join("");
    if ([...select.options].some((o) => o.value === previous)) select.value = previous;
  }

  // --- charts -------------------------------------------------------------------------------

  addChart() {
    const [metric, labels] = splitOnce($<HTMLSelectElement>("metric").value, "|");
    if (!metric) return this.message("Select runs, then pick a metric.");
    const state: ChartState = {
      id: newId(),
      metric,
      labels,
      runs: [...this.view.selected],
      grouping: "runs",
      x: "relative",
      smoothing: 0,
      width: 1,
      mono: false,
      zoom: null,
      hidden: [],
    };
    performance.mark("chart-add");
    this.view.charts.push(state);
    this.changed();
    const panel = this.mountChart(state);
    panel.el.scrollIntoView({ block: "nearest" });
  }

  mountChart(state: ChartState): ChartPanel {
    const panel = new ChartPanel(state, this);
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
  }

  run(id: string) {
    return this.runs.get(id);
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
    for (const c of view.charts) this.mountChart(c);
    await this.renderMetrics();
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

const app = new App();
(window as unknown as { trainbench: App }).trainbench = app;
app.start().catch((e) => {
  document.body.dataset.ready = "error";
  $("message").textContent = `Cannot reach the trainbench server: ${(e as Error).message}`;
});
