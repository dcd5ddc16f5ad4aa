// trainbench's web UI: experiments, workloads and runs in a tree with checkboxes, the
// selected runs side by side in a table, and charts (src/chart.ts). The view (selection
// and charts) is kept in this browser, downloadable as JSON and shareable as a link.
import * as api from "./api";
import { ChartPanel, download, type ChartHost } from "./chart";
import { ago, duration, esc, value } from "./format";
import { initialView, newId, parseView, saveView, viewLink, type ChartState, type ViewState } from "./state";
import * as metric from "./generated/metric_names";

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

class App implements ChartHost {
  view: ViewState = initialView();
  runs = new Map<string, api.RunInfo>(); // every run loaded so far
  experiments: api.ExperimentInfo[] = [];
  expanded = new Set<string>();
  charts: ChartPanel[] = [];
  summaries = new Map<string, api.RunInfo>();
  sortKey = "start";
  sortDir = 1;

  async start() {
    for (const id of ["filter-text", "filter-status", "filter-param"]) {
      $(id).addEventListener("input", () => this.renderTree());
    }
    $("add-chart").addEventListener("click", () => this.addChart());
    $("share-download").addEventListener("click", () =>
      download("trainbench-view.json", new Blob([JSON.stringify(this.view, null, 2)], { type: "application/json" })),
    );
    $<HTMLInputElement>("share-upload").addEventListener("change", (e) => this.upload(e.target as HTMLInputElement));
    $("share-link").addEventListener("click", () => this.copyLink());
    $("table-csv").addEventListener("click", () => this.tableCsv());
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

  // --- the tree -------------------------------------------------------------------------

  private matches(r: api.RunInfo): boolean {
    const text = $<HTMLInputElement>("filter-text").value.trim().toLowerCase();
    const status = $<HTMLSelectElement>("filter-status").value;
    const param = $<HTMLInputElement>("filter-param").value.trim();
    if (status && r.status !== status) return false;
    if (text && ![r.name, r.command, r.id, r.letter, r.workload].some((s) => s && s.toLowerCase().includes(text))) {
      return false;
    }
    if (param) {
      const [k, v] = param.split("=", 2).map((s) => s.trim());
      if (!(k in r.params)) return false;
      if (v !== undefined && r.params[k] !== v) return false;
    }
    return true;
  }

  renderTree() {
    const tree = $("tree");
    const selected = new Set(this.view.selected);
    const parts: string[] = [];
    for (const e of this.experiments) {
      const open = this.expanded.has(e.name);
      parts.push(`<div class="exp" role="treeitem" aria-expanded="${open}">
        <button type="button" class="toggle" data-exp="${esc(e.name)}" aria-label="${open ? "Collapse" : "Expand"} ${esc(e.name)}">${open ? "▾" : "▸"}</button>
        <span class="exp-name">${esc(e.name)}</span> <small>${e.runs} runs${e.running ? `, ${e.running} running` : ""}</small>
        <a class="report" href="${esc(api.reportUrl(e.name))}" target="_blank" rel="noopener" title="Throughput, steady-state GPU figures, energy and collocation speed-up per workload">report</a>`);
      if (open) {
        const runs = [...this.runs.values()].filter((r) => r.experiment === e.name && this.matches(r));
        const workloads = new Map<string, api.RunInfo[]>();
        for (const r of runs.sort((a, b) => a.start_ms - b.start_ms)) {
          const w = r.workload || "";
          if (!workloads.has(w)) workloads.set(w, []);
          workloads.get(w)!.push(r);
        }
        parts.push('<div role="group">');
        for (const [w, rs] of workloads) {
          const all = rs.every((r) => selected.has(r.id));
          const some = rs.some((r) => selected.has(r.id));
          parts.push(`<div class="workload" role="treeitem">
            <label><input type="checkbox" data-workload="${esc(e.name)}:${esc(w)}" ${all ? "checked" : ""} ${!all && some ? 'data-mixed="1"' : ""}>
            ${w ? `workload ${esc(w)}` : "<i>no workload</i>"}</label> <small>${rs.length} runs</small><div role="group">`);
          for (const r of rs) parts.push(this.runItem(r, selected.has(r.id)));
          parts.push("</div></div>");
        }
        if (!runs.length) parts.push('<div class="empty">no runs match</div>');
        parts.push("</div>");
      }
      parts.push("</div>");
    }
    tree.innerHTML = parts.join("") || '<p class="empty">No experiments in this store yet.</p>';
    for (const cb of tree.querySelectorAll<HTMLInputElement>("input[data-mixed]")) cb.indeterminate = true;
    tree.querySelectorAll<HTMLButtonElement>("button[data-exp]").forEach((b) =>
      b.addEventListener("click", async () => {
        const name = b.dataset.exp!;
        if (this.expanded.has(name)) this.expanded.delete(name);
        else {
          this.expanded.add(name);
          await this.loadExperiment(name);
        }
        this.renderTree();
      }),
    );
    tree.querySelectorAll<HTMLInputElement>("input[data-workload]").forEach((cb) =>
      cb.addEventListener("change", () => {
        const [exp, w] = splitOnce(cb.dataset.workload!, ":");
        const ids = [...this.runs.values()].filter((r) => r.experiment === exp && (r.workload || "") === w && this.matches(r)).map((r) => r.id);
        this.select(ids, cb.checked);
      }),
    );
    tree.querySelectorAll<HTMLInputElement>("input[data-run]").forEach((cb) =>
      cb.addEventListener("change", () => this.select([cb.dataset.run!], cb.checked)),
    );
  }

  private runItem(r: api.RunInfo, checked: boolean): string {
    const params = Object.entries(r.params).map(([k, v]) => `${k}=${v}`).join(" ");
    const title = [
      r.command,
      params && `params: ${params}`,
      r.devices && `devices: ${r.devices}`,
      r.collocation && `collocation: ${r.collocation}`,
      r.simulated_gpu ? "simulated GPU" : "",
    ].filter(Boolean).join("\n");
    return `<div class="run" role="treeitem" title="${esc(title)}">
      <label><input type="checkbox" data-run="${r.id}" ${checked ? "checked" : ""}>
      <span class="status ${r.status}" title="${r.status}" aria-label="${r.status}"></span>
      <b>${esc(r.letter || r.name)}</b> <span class="run-name">${esc(r.letter ? r.name : "")}</span></label>
      <small>${ago(r.start_ms)}, ${duration(r.duration_ms)}</small></div>`;
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

  renderSelected() {
    const list = $("selected");
    $("selected-count").textContent = String(this.view.selected.length);
    list.innerHTML = this.view.selected
      .map((id) => {
        const r = this.runs.get(id);
        const label = r ? `${r.experiment}/${r.workload || "-"} ${r.letter || r.name}` : id.slice(0, 8);
        return `<li><span class="status ${r?.status ?? ""}"></span> ${esc(label)}
          <button type="button" data-remove="${id}" aria-label="Remove ${esc(label)} from the selection">✕</button></li>`;
      })
      .join("");
    list.querySelectorAll<HTMLButtonElement>("button[data-remove]").forEach((b) =>
      b.addEventListener("click", () => this.select([b.dataset.remove!], false)),
    );
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

  // --- the comparison table -----------------------------------------------------------------

  private columns(): { key: string; title: string; get: (r: api.RunInfo) => string | number }[] {
    // A metric's series from one listener only: several listeners reading the same GPU
    // (nvml and dcgmi both give energy) must not count it twice.
    const series = (r: api.RunInfo, metric: string) => {
      const all = r.summary?.filter((x) => x.metric === metric) ?? [];
      const listenerOf = (x: api.SeriesSummary) => /(^|,)listener=([^,]*)/.exec(x.labels)?.[2] ?? "";
      const first = all.some((x) => listenerOf(x) === "") ? "" : all.length ? listenerOf(all[0]) : "";
      return all.filter((x) => listenerOf(x) === first);
    };
    const mean = (metric: string) => (r: api.RunInfo) => {
      const s = series(r, metric);
      if (!s.length) return "";
      return s.reduce((a, x) => a + x.mean * x.count, 0) / Math.max(1, s.reduce((a, x) => a + x.count, 0));
    };
    // Energy as the server computes it (runs/{id}): the run's attributed share where NVML
    // recorded one (runs sharing a GPU split its energy), else its GPUs' whole energy.
    const energy = (r: api.RunInfo) => (r.energy ? (r.energy.run_joules ?? r.energy.gpu_joules) : "");
    const gpuEnergy = (r: api.RunInfo) => (r.energy ? r.energy.gpu_joules : "");
    const keys = [...new Set(this.view.selected.flatMap((id) => Object.keys(this.runs.get(id)?.params ?? {})))].sort();
    return [
      { key: "run", title: "run", get: (r) => `${r.experiment}/${r.workload || "-"} ${r.letter || r.name}` },
      { key: "status", title: "status", get: (r) => r.status },
      { key: "start", title: "started", get: (r) => r.start_ms },
      { key: "duration", title: "duration", get: (r) => r.duration_ms },
      ...keys.map((k) => ({ key: "param." + k, title: k, get: (r: api.RunInfo) => r.params[k] ?? "" })),
      { key: "gpu", title: "GPU util (mean)", get: mean(metric.kGpuUtilizationGpuRatio) },
      { key: "sm", title: "SM active (mean)", get: mean(metric.kGpuSmActiveRatio) },
      { key: "energy", title: "energy J", get: energy },
      { key: "gpu_energy", title: "GPU energy J (device)", get: gpuEnergy },
      { key: "throughput", title: "samples/s (mean)", get: mean(metric.kTrainThroughputSamplesPerSecond) },
      { key: "loss", title: "final loss", get: (r) => this.finalLoss.get(r.id) ?? "" },
    ];
  }

  finalLoss = new Map<string, number>();

  async renderTable() {
    const ids = this.view.selected;
    const need = ids.filter((id) => !this.summaries.has(id) || this.runs.get(id)?.status === "RUNNING");
    const fetched = await Promise.all(need.map((id) => api.get<api.RunInfo>("runs/" + id).catch(() => null)));
    for (const r of fetched) if (r) this.summaries.set(r.id, r);
    // The final loss: the last point of train.loss, where a run has it.
    const withLoss = ids.filter((id) => this.summaries.get(id)?.summary?.some((s) => s.metric === metric.kTrainLoss));
    if (withLoss.length) {
      const loss = await api.series(withLoss, metric.kTrainLoss, "", "relative", 4, {}).catch(() => []);
      for (const s of loss) {
        const last = s.y.filter((v) => v !== null).pop();
        if (last != null) this.finalLoss.set(s.run, last);
      }
    }
    const rows = ids.map((id) => this.summaries.get(id) ?? this.runs.get(id)).filter((r): r is api.RunInfo => !!r);
    const cols = this.columns();
    const col = cols.find((c) => c.key === this.sortKey) ?? cols[0];
    rows.sort((a, b) => {
      const x = col.get(a);
      const y = col.get(b);
      return (typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y))) * this.sortDir;
    });
    const cell = (c: (typeof cols)[0], r: api.RunInfo) => {
      const v = c.get(r);
      if (c.key === "start") return ago(Number(v));
      if (c.key === "duration") return duration(Number(v));
      if (c.key === "status") return `<span class="status ${v}"></span>${v}`;
      return typeof v === "number" ? value(v) : esc(String(v));
    };
    $("table").innerHTML = rows.length
      ? `<table><thead><tr>${cols
          .map(
            (c) =>
              `<th aria-sort="${c.key === this.sortKey ? (this.sortDir > 0 ? "ascending" : "descending") : "none"}"><button type="button" data-sort="${esc(c.key)}">${esc(c.title)}${c.key === this.sortKey ? (this.sortDir > 0 ? " ▲" : " ▼") : ""}</button></th>`,
          )
          .join("")}</tr></thead><tbody>${rows.map((r) => `<tr data-run="${r.id}">${cols.map((c) => `<td>${cell(c, r)}</td>`).join("")}</tr>`).join("")}</tbody></table>`
      : '<p class="empty">Select runs in the tree to compare them.</p>';
    $("table").querySelectorAll<HTMLButtonElement>("button[data-sort]").forEach((b) =>
      b.addEventListener("click", () => {
        if (this.sortKey === b.dataset.sort) this.sortDir = -this.sortDir;
        else [this.sortKey, this.sortDir] = [b.dataset.sort!, 1];
        void this.renderTable();
      }),
    );
  }

  tableCsv() {
    const cols = this.columns();
    const quote = (v: string | number) => (typeof v === "string" && /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : String(v));
    const lines = [cols.map((c) => quote(c.title)).join(",")];
    for (const id of this.view.selected) {
      const r = this.summaries.get(id) ?? this.runs.get(id);
      if (r) lines.push(cols.map((c) => quote(c.get(r))).join(","));
    }
    download("trainbench-runs.csv", new Blob([lines.join("\n") + "\n"], { type: "text/csv" }));
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

function splitOnce(s: string, sep: string): [string, string] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, ""] : [s.slice(0, i), s.slice(i + 1)];
}

const app = new App();
(window as unknown as { trainbench: App }).trainbench = app;
app.start().catch((e) => {
  document.body.dataset.ready = "error";
  $("message").textContent = `Cannot reach the trainbench server: ${(e as Error).message}`;
});
