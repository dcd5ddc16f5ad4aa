// The left-hand tree: experiments, a sweep's parent run, workloads and runs with checkboxes, filtered by
// text, status and a param, and the list of selected runs under it.
import * as api from "./api";
import { ago, duration, esc, plural } from "./format";

export interface TreeHost {
  experiments(): api.ExperimentInfo[];
  runs(): Iterable<api.RunInfo>;
  selected(): string[];
  expanded: Set<string>;
  loadExperiment(name: string): Promise<void>;
  select(ids: string[], on: boolean): void;
  run(id: string): api.RunInfo | undefined;
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export class TreeView {
  constructor(private host: TreeHost) {
    for (const id of ["filter-text", "filter-status", "filter-param"]) {
      $(id).addEventListener("input", () => this.render());
    }
  }

  // Whether a run passes the filters above the tree.
  matches(r: api.RunInfo): boolean {
    const text = $<HTMLInputElement>("filter-text").value.trim().toLowerCase();
    const status = $<HTMLSelectElement>("filter-status").value;
    const param = $<HTMLInputElement>("filter-param").value.trim();
    if (status && r.status !== status) return false;
    if (
      text &&
      ![r.name, r.command, r.id, r.letter, r.workload, r.host].some((s) => s && s.toLowerCase().includes(text))
    ) {
      return false;
    }
    if (param) {
      const [k, v] = param.split("=", 2).map((s) => s.trim());
      if (!(k in r.params)) return false;
      if (v !== undefined && r.params[k] !== v) return false;
    }
    return true;
  }

  render() {
    const tree = $("tree");
    const selected = new Set(this.host.selected());
    const parts: string[] = [];
    for (const e of this.host.experiments()) {
      const open = this.host.expanded.has(e.name);
      parts.push(`<div class="exp" role="treeitem" aria-expanded="${open}">
        <button type="button" class="toggle" data-exp="${esc(e.name)}" aria-label="${open ? "Collapse" : "Expand"} ${esc(e.name)}">${open ? "▾" : "▸"}</button>
        <label><input type="checkbox" data-experiment="${esc(e.name)}" aria-label="Select every run of ${esc(e.name)}" ${this.experimentState(e.name, selected)}>
        <span class="exp-name">${esc(e.name)}</span></label> <small>${plural(e.runs, "run")}${e.running ? `, ${e.running} running` : ""}</small>
        <a class="report" href="${esc(api.reportUrl(e.name))}" target="_blank" rel="noopener" title="Throughput, steady-state GPU figures, energy and collocation speed-up per workload">report</a>
        <a class="report-pdf" href="${esc(api.reportUrl(e.name, "pdf"))}" download="${esc(e.name)}-report.pdf" title="The report as a PDF (A4, fonts embedded)">PDF</a>
        <a class="bars" href="${esc(api.barsUrl(e.name))}" target="_blank" rel="noopener" title="The collocation bars as one figure for a paper: each workload's mean over its repeats with its 95 % interval (trainbench plot --bars)">bars</a>
        <a class="bars-pdf" href="${esc(api.barsUrl(e.name, "pdf"))}" download="${esc(e.name)}-bars.pdf" title="The collocation bars as a PDF figure, 7 in wide">PDF</a>`);
      if (open) parts.push(this.experimentRuns(e.name, selected));
      parts.push("</div>");
    }
    tree.innerHTML = parts.join("") || '<p class="empty">No experiments in this store yet.</p>';
    for (const cb of tree.querySelectorAll<HTMLInputElement>("input[data-mixed]")) cb.indeterminate = true;
    tree.querySelectorAll<HTMLButtonElement>("button[data-exp]").forEach((b) =>
      b.addEventListener("click", async () => {
        const name = b.dataset.exp!;
        if (this.host.expanded.has(name)) this.host.expanded.delete(name);
        else {
          this.host.expanded.add(name);
          await this.host.loadExperiment(name);
        }
        this.render();
      }),
    );
    tree.querySelectorAll<HTMLInputElement>("input[data-experiment]").forEach((cb) =>
      cb.addEventListener("change", async () => {
        const name = cb.dataset.experiment!;
        if (!this.host.expanded.has(name)) {
          this.host.expanded.add(name);
          await this.host.loadExperiment(name);
        }
        const { parents } = this.nesting(name);
        const ids = [...this.host.runs()]
          .filter((r) => r.experiment === name && this.matches(r) && !parents.has(r.id))
          .map((r) => r.id);
        this.host.select(ids, cb.checked);
      }),
    );
    tree.querySelectorAll<HTMLInputElement>("input[data-workload]").forEach((cb) =>
      cb.addEventListener("change", () => {
        const [exp, w] = splitOnce(cb.dataset.workload!, ":");
        const { parents, parentOf } = this.nesting(exp);
        const ids = [...this.host.runs()]
          .filter((r) => r.experiment === exp && (r.workload || "") === w && this.matches(r))
          .filter((r) => !parents.has(r.id) && parentOf(r) === (cb.dataset.under ?? ""))
          .map((r) => r.id);
        this.host.select(ids, cb.checked);
      }),
    );
    tree.querySelectorAll<HTMLInputElement>("input[data-parent]").forEach((cb) =>
      cb.addEventListener("change", () => {
        const parent = cb.dataset.parent!;
        const ids = [...this.host.runs()]
          .filter((r) => r.tags?.["mlflow.parentRunId"] === parent && this.matches(r))
          .map((r) => r.id);
        this.host.select(ids, cb.checked);
      }),
    );
    tree
      .querySelectorAll<HTMLInputElement>("input[data-run]")
      .forEach((cb) => cb.addEventListener("change", () => this.host.select([cb.dataset.run!], cb.checked)));
  }

  // An experiment's checkbox: checked when all of its loaded runs are selected.
  private experimentState(experiment: string, selected: Set<string>): string {
    const { parents } = this.nesting(experiment);
    const runs = [...this.host.runs()].filter((r) => r.experiment === experiment && !parents.has(r.id));
    const n = runs.filter((r) => selected.has(r.id)).length;
    if (!runs.length || !n) return "";
    return n === runs.length ? "checked" : 'data-mixed="1"';
  }

  // The runs of an experiment that others are nested under (a radT sweep's parent run:
  // mlflow.parentRunId), and which of them a run is nested under ("" for none).
  private nesting(experiment: string): { parents: Set<string>; parentOf: (r: api.RunInfo) => string } {
    const runs = [...this.host.runs()].filter((r) => r.experiment === experiment);
    const ids = new Set(runs.map((r) => r.id));
    const parentOf = (r: api.RunInfo) => {
      const p = r.tags?.["mlflow.parentRunId"] ?? "";
      return ids.has(p) ? p : "";
    };
    return { parents: new Set(runs.map(parentOf).filter(Boolean)), parentOf };
  }

  // An open experiment's runs: a sweep's under its parent run, then the others, each set
  // by workload, their runs in the order they started.
  private experimentRuns(experiment: string, selected: Set<string>): string {
    const { parents, parentOf } = this.nesting(experiment);
    const all = [...this.host.runs()]
      .filter((r) => r.experiment === experiment)
      .sort((a, b) => a.start_ms - b.start_ms);
    const runs = all.filter((r) => this.matches(r) && !parents.has(r.id));
    const parts = ['<div role="group">'];
    for (const p of all.filter((r) => parents.has(r.id))) {
      const nested = runs.filter((r) => parentOf(r) === p.id);
      if (!nested.length) continue;
      const every = nested.every((r) => selected.has(r.id));
      const some = nested.some((r) => selected.has(r.id));
      parts.push(`<div class="parent" role="treeitem">
        <label><input type="checkbox" data-parent="${esc(p.id)}" aria-label="Select every run nested under ${esc(p.name)}" ${every ? "checked" : ""} ${!every && some ? 'data-mixed="1"' : ""}>
        parent run <b>${esc(p.name)}</b></label> <small>${plural(nested.length, "run")}</small>`);
      parts.push(workloadItems(experiment, p.id, nested, selected), "</div>");
    }
    parts.push(
      workloadItems(
        experiment,
        "",
        runs.filter((r) => !parentOf(r)),
        selected,
      ),
    );
    if (!runs.length) parts.push('<div class="empty">no runs match</div>');
    parts.push("</div>");
    return parts.join("");
  }

  renderSelected() {
    const list = $("selected");
    const ids = this.host.selected();
    $("selected-count").textContent = String(ids.length);
    list.innerHTML = ids
      .map((id) => {
        const r = this.host.run(id);
        const label = r ? `${r.experiment}/${r.workload || "-"} ${r.letter || r.name}` : id.slice(0, 8);
        return `<li><span class="status ${r?.status ?? ""}"></span> ${esc(label)}
          <button type="button" data-remove="${id}" aria-label="Remove ${esc(label)} from the selection">✕</button></li>`;
      })
      .join("");
    list
      .querySelectorAll<HTMLButtonElement>("button[data-remove]")
      .forEach((b) => b.addEventListener("click", () => this.host.select([b.dataset.remove!], false)));
  }
}

// Runs by workload; `under` is the parent run they are nested under ("" for none).
function workloadItems(experiment: string, under: string, runs: api.RunInfo[], selected: Set<string>): string {
  const workloads = new Map<string, api.RunInfo[]>();
  for (const r of runs) {
    const w = r.workload || "";
    if (!workloads.has(w)) workloads.set(w, []);
    workloads.get(w)!.push(r);
  }
  const parts = ['<div role="group">'];
  for (const [w, rs] of workloads) {
    const all = rs.every((r) => selected.has(r.id));
    const some = rs.some((r) => selected.has(r.id));
    parts.push(`<div class="workload" role="treeitem">
      <label><input type="checkbox" data-workload="${esc(experiment)}:${esc(w)}" data-under="${esc(under)}" ${all ? "checked" : ""} ${!all && some ? 'data-mixed="1"' : ""}>
      ${w ? `workload ${esc(w)}` : "<i>no workload</i>"}</label> <small>${plural(rs.length, "run")}</small><div role="group">`);
    for (const r of rs) parts.push(runItem(r, selected.has(r.id)));
    parts.push("</div></div>");
  }
  parts.push("</div>");
  return parts.join("");
}

function runItem(r: api.RunInfo, checked: boolean): string {
  const params = Object.entries(r.params)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
  const title = [
    r.command,
    params && `params: ${params}`,
    r.devices && `devices: ${r.devices}`,
    r.collocation && `collocation: ${r.collocation}`,
    r.host && `node: ${r.host}`,
    r.simulated_gpu ? "simulated GPU" : "",
  ]
    .filter(Boolean)
    .join("\n");
  return `<div class="run" role="treeitem" title="${esc(title)}">
    <label><input type="checkbox" data-run="${r.id}" ${checked ? "checked" : ""}>
    <span class="status ${r.status}" title="${r.status}" aria-label="${r.status}"></span>
    <b>${esc(r.letter || r.name)}</b> <span class="run-name">${esc(r.letter ? r.name : "")}</span></label>
    <small>${ago(r.start_ms)}, ${duration(r.duration_ms)}</small></div>`;
}

export function splitOnce(s: string, sep: string): [string, string] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, ""] : [s.slice(0, i), s.slice(i + 1)];
}
