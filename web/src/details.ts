// The markup of a chart: its frame of controls, and a run's details under it, shown
// when the run's line is clicked (what ran, with which params and devices, for how long,
// and the phases trainbench found in it).
import type * as api from "./api";
import { clock, esc, plural } from "./format";
import type { Line } from "./lines";
import type { ChartState } from "./state";

// The label sets a metric has (one per GPU, per listener): each device from one source, or one set.
function labelOptions(labels: string[], current: string): string {
  const sets = [...new Set(labels.filter((l) => l !== "").concat(current ? [current] : []))].sort();
  if (!sets.length) return '<option value="">the series</option>';
  return (
    '<option value="" title="Every device; a quantity several listeners measured from one: nvml, else smi, else dcgmi">each device, one source</option>' +
    sets
      .map(
        (l) =>
          `<option value="${esc(l)}"${l === current ? " selected" : ""}>${esc(l.replace(/listener=/, "source "))}</option>`,
      )
      .join("")
  );
}

export function chartFrame(state: ChartState, title = "", labels: string[] = []): string {
  return `
      <header>
        <h3 title="${esc(state.metric)}">${esc(title || state.metric)}</h3>
        <label>Series <select data-k="labels" aria-label="Series of the metric">${labelOptions(labels, state.labels)}</select></label>
        <span class="chart-info"></span>
        <span class="spacer"></span>
        <label>Group <select data-k="grouping" aria-label="Grouping">
          <option value="runs">each run</option><option value="workloads">workload mean, min-max</option>
          <option value="mixed">workloads and runs</option></select></label>
        <label>X <select data-k="x" aria-label="X axis">
          <option value="relative">time since start</option><option value="wall">wall time</option>
          <option value="step">step</option></select></label>
        <label title="Exponential moving average">Smooth <input data-k="smoothing" type="range" min="0" max="99" aria-label="Smoothing"></label>
        <label>Width <select data-k="width" aria-label="Line width"><option>1</option><option>2</option><option>3</option><option>4</option></select></label>
        <label><input data-k="mono" type="checkbox"> Mono</label>
        <label><input data-k="logY" type="checkbox"> Log y</label>
        <label>y <input data-k="yMin" type="number" step="any" placeholder="min" aria-label="y axis minimum" class="narrow">
        - <input data-k="yMax" type="number" step="any" placeholder="max" aria-label="y axis maximum" class="narrow"></label>
      </header>
      <div class="chart-tools">
        <button data-a="selection" type="button" title="Show the runs selected in the sidebar">Use selection</button>
        <button data-a="reset" type="button">Reset zoom</button>
        <label title="Dashed lines at the runs' events (epochs, signals), on screen and in the exports; off by default, as in figures"><input data-f="events" type="checkbox"> Events</label>
        <label title="A sweep: colour the runs' lines by a numeric param, dark for its least value, light for its greatest">Colour by <select data-k="colorBy" aria-label="Colour by param"><option value="">each run</option></select></label>
        <label title="Shade one run's phases (start-up, warm-up, idle, stalls) on the chart">Phases of <select data-k="phasesOf" aria-label="Phases of run"><option value="">none</option></select></label>
        <span class="spacer"></span>
        <details class="figure-look"><summary>Figure</summary>
          <label>Width <input data-f="width" type="text" size="6" aria-label="Figure width" title="3.3in (one column), 7in (a page), 8.4cm, 240pt"></label>
          <label>Font <input data-f="font" type="number" min="4" max="48" step="0.5" class="narrow" aria-label="Font size in points"> pt</label>
          <label>Typeface <input data-f="fontFamily" type="text" size="11" list="font-families" aria-label="Font family" title="DejaVu Sans, DejaVu Serif (a paper's serif), serif, or any family installed where trainbench serve runs"></label>
          <datalist id="font-families"><option value="DejaVu Sans"><option value="DejaVu Serif"><option value="serif"><option value="sans-serif"></datalist>
          <label>Legend <input data-f="legend" type="text" size="14" placeholder="{batch-size}" aria-label="Legend names" title="Names from params and fields: {batch-size}, {name}, {letter}, {workload}"></label>
          <label title="The exported figure without its legend"><input data-f="noLegend" type="checkbox"> Leave the legend out</label>
          <label title="Shade the phases of the run chosen in 'Phases of' in the exported figure"><input data-f="phases" type="checkbox"> Shade phases</label>
        </details>
        <button data-a="png" type="button">PNG</button><button data-a="svg" type="button">SVG</button>
        <button data-a="pdf" type="button">PDF</button><button data-a="csv" type="button">CSV</button>
        <button data-a="remove" type="button" aria-label="Remove chart">✕</button>
      </div>
      <div class="plot" tabindex="0" aria-label="Plot: drag to zoom, + and - zoom, arrows pan, 0 resets"></div>
      <div class="colour-bar" hidden></div>
      <div class="overview" aria-label="Overview: drag to choose the range"></div>
      <div class="run-details" hidden></div>
      <div class="tooltip" hidden></div>`;
}

export function runDetails(r: api.RunInfo, phases: api.PhaseInfo[]): string {
  const params = Object.entries(r.params)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
  const ran = r.duration_ms ? `ran ${clock(Math.round(r.duration_ms / 1000))}` : "";
  const since = (ms: number) => clock((ms - r.start_ms) / 1000);
  return `<button type="button" class="close" aria-label="Close details">✕</button>
    <b>${esc(r.name)}</b> <span class="status ${r.status}" aria-hidden="true"></span>${r.status} ${esc(r.experiment)}/${esc(r.workload || "-")}
    <br><code>${esc(r.command)}</code><br>params: ${esc(params || "-")}; devices: ${esc(r.devices || "-")};
    collocation: ${esc(r.collocation || "-")}; ${esc(ran)}; id ${r.id}
    <ul class="phases">${phases
      .map((p) => `<li><b>${esc(p.kind)}</b> ${since(p.start_ms)}-${since(p.end_ms)}: ${esc(p.detail)}</li>`)
      .join("")}</ul>`;
}

// Wall time is a run's own: workload means align their runs on the time since each started
// (or the step), so the x choice is off for them, and says why.
export function syncXChoice(root: HTMLElement, s: ChartState) {
  const select = root.querySelector<HTMLSelectElement>('[data-k="x"]')!;
  const wall = select.querySelector<HTMLOptionElement>('option[value="wall"]')!;
  wall.disabled = s.grouping !== "runs";
  wall.title = wall.disabled
    ? "Workload means align runs on the time since each started: wall time is for single runs"
    : "";
  wall.textContent = wall.disabled ? "wall time (single runs only)" : "wall time";
  if (wall.disabled && s.x === "wall") {
    s.x = "relative";
    s.zoom = null;
  }
  select.value = s.x;
}

// "2 runs of exp/w (3 selected), 900 points shown": the runs drawn, which are fewer than
// those selected when some have no series of the chart's metric.
export function countCaption(lines: Line[], shared: string, selected: number): string {
  const points = lines.reduce((n, l) => n + l.x.length, 0);
  const runs = lines.flatMap((l) => (l.run !== undefined ? [l.run] : (l.members ?? "").split(",")));
  const drawn = new Set(runs.filter((r) => r !== "")).size;
  const fewer = drawn < selected ? ` (${selected} selected)` : "";
  return `${plural(drawn, "run")}${shared}${fewer}, ${points.toLocaleString()} points shown`;
}
