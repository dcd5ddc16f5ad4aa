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
