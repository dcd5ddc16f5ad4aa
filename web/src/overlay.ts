// What a chart draws over its lines on uPlot's canvas: the runs' phases as translucent
// spans, and events as dashed vertical markers with their labels.
import type uPlot from "uplot";
import type { PhaseSpan } from "./lines";
import type { PlotEvent } from "./scene";
import type { XKind } from "./state";
import { toPlotX } from "./xaxis";

const PHASE_COLORS: Record<string, string> = {
  "warm-up": "rgba(128,128,128,0.15)",
  idle: "rgba(214,39,40,0.15)",
  stall: "rgba(255,127,14,0.18)",
  dip: "rgba(188,189,34,0.15)",
  "memory-climb": "rgba(148,103,189,0.15)",
};

export function drawOverlay(u: uPlot, x: XKind, phases: PhaseSpan[], events: PlotEvent[]) {
  const ctx = u.ctx;
  const px = devicePixelRatio;
  const right = u.bbox.left + u.bbox.width;
  ctx.save();
  ctx.font = `${10 * px}px sans-serif`;
  for (const p of phases) {
    const a = Math.max(u.bbox.left, u.valToPos(toPlotX(x, p.from), "x", true));
    const b = Math.min(right, u.valToPos(toPlotX(x, p.to), "x", true));
    if (b <= a) continue;
    ctx.fillStyle = PHASE_COLORS[p.kind] ?? "rgba(31,119,180,0.12)";
    ctx.fillRect(a, u.bbox.top, b - a, u.bbox.height);
    ctx.fillStyle = "#444";
    ctx.fillText(p.kind, a + 2 * px, u.bbox.top + u.bbox.height - 4 * px);
  }
  ctx.restore();
  if (!events.length) return;
  ctx.save();
  ctx.strokeStyle = "#888";
  ctx.fillStyle = "#555";
  ctx.setLineDash([3, 3]);
  ctx.lineWidth = px;
  ctx.font = `${10 * px}px sans-serif`;
  for (const e of events) {
    const at = u.valToPos(toPlotX(x, e.x), "x", true);
    if (at < u.bbox.left || at > right) continue;
    ctx.beginPath();
    ctx.moveTo(at, u.bbox.top);
    ctx.lineTo(at, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.fillText(e.label, at + 3 * px, u.bbox.top + 10 * px);
  }
  ctx.restore();
}
