// The chart on screen as a figure description (figure/figure_spec.h): the server draws the
// exports with the renderer `trainbench plot` uses. `workloads` in the order the page
// numbers their colours (styleLines), which the server's figure follows; `from`/`to` the
// zoomed range shown.
import type { ChartState, XKind } from "./state";

export function figureSpec(
  s: ChartState,
  x: XKind,
  workloads: string[],
  from: number | undefined,
  to: number | undefined,
  phasesOf?: string, // the run whose phases the chart shades
): Record<string, unknown> {
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
    font: s.figure.fontFamily,
    color_by: s.colorBy,
    line_width: s.width,
    legend: s.figure.legend,
    show_legend: !s.figure.noLegend,
    hidden: s.hidden,
    mono: s.mono,
    events: s.figure.events,
    phases: s.figure.phases && !!phasesOf,
    phases_of: phasesOf ?? "",
    y_min: s.yMin,
    y_max: s.yMax,
    log_y: s.logY,
    utc_offset_min: -new Date().getTimezoneOffset(),
  };
}

// An export's file name, saying what it shows: the metric, the run (its name) or how many
// runs or workloads, and the range when zoomed ("gpu.utilization.gpu_ratio_3-runs_120-300s").
export function exportName(
  s: ChartState,
  x: XKind,
  runName: (id: string) => string,
  spec: Record<string, unknown>,
): string {
  const workloads = spec.workloads as string[];
  const from = spec.from as number | null,
    to = spec.to as number | null;
  const safe = (t: string) => t.replace(/[^\w.-]+/g, "_").replace(/^_+|_+$/g, "");
  const shown =
    s.grouping === "workloads"
      ? `${workloads.length}-workload${workloads.length === 1 ? "" : "s"}`
      : s.runs.length === 1
        ? safe(runName(s.runs[0])) || s.runs[0].slice(0, 8)
        : `${s.runs.length}-runs`;
  let range = "";
  if (from != null && to != null) {
    range =
      x === "relative"
        ? `_${Math.round(from)}-${Math.round(to)}s`
        : x === "step"
          ? `_steps-${Math.round(from)}-${Math.round(to)}`
          : "_zoomed";
  }
  return `${safe(s.metric)}_${shown}${range}`;
}
