// The comparison table of the selected runs: params, status, duration, the steady-state
// GPU figures, training time and throughput as `trainbench report` and runs() give them,
// energy as the server computes it, and final loss; sortable, downloadable as CSV.
import * as api from "./api";
import { csvRows } from "./csv";
import { download } from "./download";
import { ago, duration, esc, value } from "./format";
import * as metric from "./generated/metric_names";

// The nodes a run ran on: its parts' (trainbench.node.N tags of a run across several
// nodes), else its host.
export function nodesOf(r: api.RunInfo | undefined): string {
  if (!r) return "";
  const parts = Object.keys(r.tags)
    .filter((k) => k.startsWith("trainbench.node."))
    .sort((a, b) => Number(a.slice(16)) - Number(b.slice(16)))
    .map((k) => r.tags[k]);
  return parts.length ? parts.join(" ") : r.host;
}

interface Column {
  key: string;
  title: string;
  get: (r: api.RunInfo) => string | number;
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

// A run's figures over its steady state, as `trainbench report` and runs() give them (the
// run table, runs?format=columns); none for a run not yet analysed (still running).
type Steady = Record<string, number | null>;
const steadyColumns = {
  gpu: `${metric.kGpuUtilizationGpuRatio}.steady_mean`,
  sm: `${metric.kGpuSmActiveRatio}.steady_mean`,
  throughput: "throughput",
  training: "training_seconds",
};
async function steadyOf(ids: string[]): Promise<Map<string, Steady>> {
  const out = new Map<string, Steady>();
  for (let i = 0; i < ids.length; i += 100) {
    const t = await api.get<{ count: number; columns: Record<string, (number | string | null)[]> }>("runs", {
      ids: ids.slice(i, i + 100).join(","),
      format: "columns",
    });
    t.columns.id.forEach((id, row) => {
      const figures: Steady = {};
      for (const [key, column] of Object.entries(steadyColumns)) {
        const v = t.columns[column]?.[row];
        figures[key] = typeof v === "number" ? v : null;
      }
      out.set(String(id), figures);
    });
  }
  return out;
}

export class TableView {
  private summaries = new Map<string, api.RunInfo>();
  private finalLoss = new Map<string, number>();
  private steady = new Map<string, Steady>();
  private common: string[] = []; // params every selected run shares
  private sortKey = "start";
  private sortDir = 1;

  constructor(
    private selected: () => string[],
    private run: (id: string) => api.RunInfo | undefined,
  ) {
    $("table-csv").addEventListener("click", () => this.downloadCsv());
  }

  private columns(): Column[] {
    const ids = this.selected();
    // Params that tell the runs apart (as MLflow's comparison shows them); the ones all share
    // are listed once above the table.
    const all = [...new Set(ids.flatMap((id) => Object.keys(this.run(id)?.params ?? {})))].sort();
    const value = (id: string, k: string) => this.run(id)?.params[k] ?? "";
    const keys = ids.length < 2 ? all : all.filter((k) => new Set(ids.map((id) => value(id, k))).size > 1);
    this.common = ids.length < 2 ? [] : all.filter((k) => !keys.includes(k)).map((k) => `${k}=${value(ids[0], k)}`);
    return [
      { key: "run", title: "run", get: (r) => `${r.experiment}/${r.workload || "-"} ${r.letter || r.name}` },
      { key: "status", title: "status", get: (r) => r.status },
      { key: "start", title: "started", get: (r) => r.start_ms },
      { key: "duration", title: "duration", get: (r) => r.duration_ms },
      // The node, where the runs ran on more than one (a Slurm cluster, several servers).
      ...(new Set(ids.map((id) => nodesOf(this.run(id)))).size > 1
        ? [{ key: "node", title: "node", get: nodesOf }]
        : []),
      ...keys.map((k) => ({ key: "param." + k, title: k, get: (r: api.RunInfo) => r.params[k] ?? "" })),
      // Ratios in percent, as the charts show them; over the steady state, as the report
      // gives them (the whole run's mean counts the start-up and the tail).
      { key: "gpu", title: "GPU util % (steady)", get: this.steadyFigure("gpu", 100) },
      { key: "sm", title: "SM active % (steady)", get: this.steadyFigure("sm", 100) },
      { key: "training", title: "training s", get: this.steadyFigure("training") },
      // Energy as the server computes it (runs/{id}): the run's attributed share where NVML
      // recorded one (runs sharing a GPU split its energy), else its GPUs' whole energy.
      { key: "energy", title: "energy J", get: (r) => r.energy?.run_joules ?? r.energy?.gpu_joules ?? "" },
      { key: "gpu_energy", title: "GPU energy J (device)", get: (r) => r.energy?.gpu_joules ?? "" },
      // The run's share of the CPUs' RAPL energy (the rapl listener), where it was recorded.
      { key: "cpu_energy", title: "CPU energy J", get: (r) => r.energy?.cpu_joules ?? "" },
      { key: "throughput", title: "samples/s (steady)", get: this.steadyFigure("throughput") },
      { key: "loss", title: "final loss", get: (r) => this.finalLoss.get(r.id) ?? "" },
    ];
  }

  private steadyFigure(key: keyof typeof steadyColumns, factor = 1) {
    return (r: api.RunInfo) => {
      const v = this.steady.get(r.id)?.[key];
      return v == null ? "" : factor * v;
    };
  }

  private rowOf(id: string): api.RunInfo | undefined {
    return this.summaries.get(id) ?? this.run(id);
  }

  async render() {
    const ids = this.selected();
    const need = ids.filter((id) => !this.summaries.has(id) || this.run(id)?.status === "RUNNING");
    const fetched = await api.runsById(need, true).catch(() => [] as api.RunInfo[]);
    for (const r of fetched) this.summaries.set(r.id, r);
    const unanalysed = ids.filter((id) => !this.steady.has(id) || this.run(id)?.status === "RUNNING");
    if (unanalysed.length) {
      const figures = await steadyOf(unanalysed).catch(() => new Map<string, Steady>());
      for (const [id, f] of figures) this.steady.set(id, f);
    }
    // The final loss: the last point of train.loss, where a run has it.
    const withLoss = ids.filter((id) => this.summaries.get(id)?.summary?.some((s) => s.metric === metric.kTrainLoss));
    if (withLoss.length) {
      const loss = await api.series(withLoss, metric.kTrainLoss, "", "relative", 4, {}).catch(() => []);
      for (const s of loss) {
        const last = s.y.filter((v) => v !== null).pop();
        if (last != null) this.finalLoss.set(s.run, last);
      }
    }
    const rows = ids.map((id) => this.rowOf(id)).filter((r): r is api.RunInfo => !!r);
    const cols = this.columns();
    const col = cols.find((c) => c.key === this.sortKey) ?? cols[0];
    rows.sort((a, b) => {
      const x = col.get(a);
      const y = col.get(b);
      return (
        (typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y))) * this.sortDir
      );
    });
    const cell = (c: Column, r: api.RunInfo) => {
      const v = c.get(r);
      if (c.key === "start") return ago(Number(v));
      if (c.key === "duration") return duration(Number(v));
      if (c.key === "status") return `<span class="status ${v}"></span>${v}`;
      return typeof v === "number" ? value(v) : esc(String(v));
    };
    const sortMark = (c: Column) => (c.key === this.sortKey ? (this.sortDir > 0 ? " ▲" : " ▼") : "");
    const ariaSort = (c: Column) => (c.key === this.sortKey ? (this.sortDir > 0 ? "ascending" : "descending") : "none");
    const shared = this.common.length ? `<p class="shared">Same for all: ${esc(this.common.join(", "))}</p>` : "";
    $("table").innerHTML = rows.length
      ? `${shared}<table><thead><tr>${cols
          .map(
            (c) =>
              `<th aria-sort="${ariaSort(c)}"><button type="button" data-sort="${esc(c.key)}">${esc(c.title)}${sortMark(c)}</button></th>`,
          )
          .join(
            "",
          )}</tr></thead><tbody>${rows.map((r) => `<tr data-run="${r.id}">${cols.map((c) => `<td>${cell(c, r)}</td>`).join("")}</tr>`).join("")}</tbody></table>`
      : '<p class="empty">Select runs in the tree to compare them.</p>';
    $("table")
      .querySelectorAll<HTMLButtonElement>("button[data-sort]")
      .forEach((b) =>
        b.addEventListener("click", () => {
          if (this.sortKey === b.dataset.sort) this.sortDir = -this.sortDir;
          else [this.sortKey, this.sortDir] = [b.dataset.sort!, 1];
          void this.render();
        }),
      );
  }

  downloadCsv() {
    const cols = this.columns();
    const rows = this.selected()
      .map((id) => this.rowOf(id))
      .filter((r): r is api.RunInfo => !!r)
      .map((r) => cols.map((c) => c.get(r)));
    download("trainbench-runs.csv", new Blob([csvRows([cols.map((c) => c.title), ...rows])], { type: "text/csv" }));
  }
}
