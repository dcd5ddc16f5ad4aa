// What a chart draws over its lines on uPlot's canvas: the runs' phases as translucent
// spans, and events as dashed vertical markers with their labels. Labels of many runs are
// stacked in a few rows and left out where they find no room, so none overprints another.
import type uPlot from "uplot";
import { labelRows, type PhaseSpan } from "./lines";
import type { PlotEvent } from "./scene";
import type { XKind } from "./state";
import { toPlotX } from "./xaxis";

const LABEL_ROWS = 3;

const PHASE_COLORS: Record<string, string> = {
  // Before and after the training window (the steps the script logged): not training.
  "start-up": "rgba(128,128,128,0.10)",
  after: "rgba(128,128,128,0.10)",
  "warm-up": "rgba(128,128,128,0.15)",
  idle: "rgba(214,39,40,0.15)",
  stall: "rgba(255,127,14,0.18)",
  dip: "rgba(188,189,34,0.15)",
  "memory-climb": "rgba(148,103,189,0.15)",
};

// `note`: said at the plot's top right (what a log axis cannot draw), as the figures say it.
export function drawOverlay(u: uPlot, x: XKind, phases: PhaseSpan[], events: PlotEvent[], note = "") {
  const ctx = u.ctx;
  const px = devicePixelRatio;
  const right = u.bbox.left + u.bbox.width;
  if (u.root.dataset.note !== note) u.root.dataset.note = note;
  if (note) {
    ctx.save();
    ctx.font = `${10 * px}px sans-serif`;
    ctx.fillStyle = "#555";
    ctx.textAlign = "right";
    ctx.fillText(note, right - 4 * px, u.bbox.top + 12 * px);
    ctx.restore();
  }
  ctx.save();
  ctx.font = `${10 * px}px sans-serif`;
  const spans: { a: number; b: number; kind: string }[] = [];
  for (const p of phases) {
    const a = Math.max(u.bbox.left, u.valToPos(toPlotX(x, p.from), "x", true));
    const b = Math.min(right, u.valToPos(toPlotX(x, p.to), "x", true));
    if (b <= a) continue;
    ctx.fillStyle = PHASE_COLORS[p.kind] ?? "rgba(31,119,180,0.12)";
    ctx.fillRect(a, u.bbox.top, b - a, u.bbox.height);
    spans.push({ a, b, kind: p.kind });
  }
  // A phase's name stands inside its span (where it fits), in rows up from the bottom.
  const bottom = u.bbox.top + u.bbox.height;
  const named = spans
    .map((s) => ({ at: s.a + 2 * px, width: ctx.measureText(s.kind).width, end: s.b, kind: s.kind }))
    .filter((s) => s.at + s.width <= s.end)
    .sort((p, q) => p.at - q.at);
  const phaseRows = labelRows(named, right, LABEL_ROWS, 6 * px);
  ctx.fillStyle = "#444";
  named.forEach((s, i) => {
    if (phaseRows[i] >= 0) ctx.fillText(s.kind, s.at, bottom - 4 * px - phaseRows[i] * 12 * px);
  });
  ctx.restore();
  if (!events.length) return;
  ctx.save();
  ctx.strokeStyle = "#888";
  ctx.fillStyle = "#555";
  ctx.setLineDash([3, 3]);
  ctx.lineWidth = px;
  ctx.font = `${10 * px}px sans-serif`;
  const shown = events
    .map((e) => ({ at: u.valToPos(toPlotX(x, e.x), "x", true), label: e.label }))
    .filter((e) => e.at >= u.bbox.left && e.at <= right)
    .sort((p, q) => p.at - q.at);
  for (const e of shown) {
    ctx.beginPath();
    ctx.moveTo(e.at, u.bbox.top);
    ctx.lineTo(e.at, bottom);
    ctx.stroke();
  }
  const rows = labelRows(
    shown.map((e) => ({ at: e.at + 3 * px, width: ctx.measureText(e.label).width })),
    right,
    LABEL_ROWS,
    6 * px,
  );
  shown.forEach((e, i) => {
    if (rows[i] >= 0) ctx.fillText(e.label, e.at + 3 * px, u.bbox.top + (10 + 12 * rows[i]) * px);
  });
  ctx.restore();
}
