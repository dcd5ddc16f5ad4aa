// A chart as plain drawing instructions (lines, bands, text) in pixels, drawn from the
// data a chart shows, and its three renderings: SVG and PDF (both vector) and PNG.
import { niceTicks, value, xLabel } from "./format";

export interface PlotSeries {
  name: string;
  color: string;
  dash: number[];
  width: number;
  x: number[];
  y: (number | null | undefined)[];
}

export interface PlotBand {
  name: string;
  color: string;
  x: number[];
  lo: (number | null | undefined)[];
  hi: (number | null | undefined)[];
}

export interface PlotEvent {
  x: number;
  label: string;
}

export interface Plot {
  title: string;
  xKind: string;
  unit: string;
  series: PlotSeries[];
  bands: PlotBand[];
  events: PlotEvent[];
  xRange: [number, number];
  yRange: [number, number];
}

type Pt = [number, number];
interface Path {
  segments: Pt[][];
  color: string;
  width: number;
  dash: number[];
  name: string;
}
interface Area {
  polygons: Pt[][];
  color: string;
  opacity: number;
}
interface Text {
  x: number;
  y: number;
  text: string;
  size: number;
  anchor: "start" | "middle" | "end";
  color: string;
}
export interface Scene {
  width: number;
  height: number;
  paths: Path[];
  areas: Area[];
  texts: Text[];
}

const W = 900;
const LEFT = 70;
const RIGHT = 20;
const TOP = 36;
const PLOT_H = 320;

export function buildScene(p: Plot): Scene {
  const legendRows = Math.ceil((p.series.length + p.bands.length) / 3);
  const height = TOP + PLOT_H + 40 + legendRows * 16 + 10;
  const [x0, x1] = p.xRange;
  const [y0, y1] = p.yRange;
  const px = (x: number) => LEFT + ((x - x0) / (x1 - x0 || 1)) * (W - LEFT - RIGHT);
  const py = (y: number) => TOP + PLOT_H - ((y - y0) / (y1 - y0 || 1)) * PLOT_H;
  const scene: Scene = { width: W, height, paths: [], areas: [], texts: [] };
  const text = (x: number, y: number, t: string, size = 11, anchor: Text["anchor"] = "start", color = "#222") =>
    scene.texts.push({ x, y, text: t, size, anchor, color });
  const rule = (a: Pt, b: Pt, color = "#ccc", dash: number[] = []) =>
    scene.paths.push({ segments: [[a, b]], color, width: 1, dash, name: "" });

  text(LEFT, 20, p.title + (p.unit ? ` (${p.unit})` : ""), 14);
  for (const t of niceTicks(y0, y1, 5)) {
    rule([LEFT, py(t)], [W - RIGHT, py(t)], "#e4e4e4");
    text(LEFT - 6, py(t) + 4, value(t), 10, "end", "#555");
  }
  for (const t of niceTicks(x0, x1, 6)) {
    rule([px(t), TOP], [px(t), TOP + PLOT_H], "#eee");
    text(px(t), TOP + PLOT_H + 16, xLabel(p.xKind, t), 10, "middle", "#555");
  }
  rule([LEFT, TOP + PLOT_H], [W - RIGHT, TOP + PLOT_H], "#888");
  rule([LEFT, TOP], [LEFT, TOP + PLOT_H], "#888");
  const inX = (x: number) => x >= x0 && x <= x1;
  const clampY = (y: number) => Math.min(TOP + PLOT_H, Math.max(TOP, py(y)));

  for (const b of p.bands) {
    const polygons: Pt[][] = [];
    let top: Pt[] = [];
    let bottom: Pt[] = [];
    const flush = () => {
      if (top.length > 1) polygons.push([...top, ...bottom.reverse()]);
      top = [];
      bottom = [];
    };
    b.x.forEach((x, i) => {
      const lo = b.lo[i];
      const hi = b.hi[i];
      if (!inX(x) || lo == null || hi == null) return flush();
      top.push([px(x), clampY(hi)]);
      bottom.push([px(x), clampY(lo)]);
    });
    flush();
    scene.areas.push({ polygons, color: b.color, opacity: 0.18 });
  }
  for (const s of p.series) {
    const segments: Pt[][] = [];
    let cur: Pt[] = [];
    s.x.forEach((x, i) => {
      const y = s.y[i];
      if (y === undefined || !inX(x)) return;
      if (y === null) {
        if (cur.length) segments.push(cur);
        cur = [];
        return;
      }
      cur.push([px(x), clampY(y)]);
    });
    if (cur.length) segments.push(cur);
    scene.paths.push({ segments, color: s.color, width: s.width, dash: s.dash, name: s.name });
  }
  for (const e of p.events) {
    if (!inX(e.x)) continue;
    rule([px(e.x), TOP], [px(e.x), TOP + PLOT_H], "#999", [3, 3]);
    text(px(e.x) + 3, TOP + 10, e.label, 9, "start", "#666");
  }
  const entries = [
    ...p.series.map((s) => ({ name: s.name, color: s.color, dash: s.dash })),
    ...p.bands.map((b) => ({ name: b.name, color: b.color, dash: [] as number[] })),
  ];
  entries.forEach((e, i) => {
    const x = LEFT + (i % 3) * 280;
    const y = TOP + PLOT_H + 40 + Math.floor(i / 3) * 16;
    scene.paths.push({ segments: [[[x, y - 4], [x + 24, y - 4]]], color: e.color, width: 2, dash: e.dash, name: "" });
    text(x + 30, y, e.name, 11);
  });
  return scene;
}

const xml = (s: string) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
const n = (v: number) => +v.toFixed(2);

export function toSvg(scene: Scene): string {
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${scene.width}" height="${scene.height}" viewBox="0 0 ${scene.width} ${scene.height}">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
  ];
  for (const a of scene.areas) {
    for (const poly of a.polygons) {
      out.push(
        `<path d="M${poly.map(([x, y]) => `${n(x)},${n(y)}`).join("L")}Z" fill="${a.color}" fill-opacity="${a.opacity}" stroke="none"/>`,
      );
    }
  }
  for (const p of scene.paths) {
    if (!p.segments.length) continue;
    const d = p.segments.map((seg) => "M" + seg.map(([x, y]) => `${n(x)},${n(y)}`).join("L")).join("");
    const dash = p.dash.length ? ` stroke-dasharray="${p.dash.join(" ")}"` : "";
    const name = p.name ? ` data-series="${xml(p.name)}"` : "";
    out.push(`<path d="${d}" fill="none" stroke="${p.color}" stroke-width="${p.width}"${dash}${name}/>`);
  }
  for (const t of scene.texts) {
    out.push(
      `<text x="${n(t.x)}" y="${n(t.y)}" font-family="Helvetica, Arial, sans-serif" font-size="${t.size}" fill="${t.color}" text-anchor="${t.anchor}">${xml(t.text)}</text>`,
    );
  }
  out.push("</svg>");
  return out.join("\n");
}

function rgb(color: string): [number, number, number] {
  const m = color.match(/^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i);
  if (!m) return [0, 0, 0];
  return [parseInt(m[1], 16) / 255, parseInt(m[2], 16) / 255, parseInt(m[3], 16) / 255];
}

// A one-page PDF 1.4 drawing the scene with PDF's own path and text operators (Helvetica).
export function toPdf(scene: Scene): Uint8Array {
  const H = scene.height;
  const c = (v: number) => n(v).toString();
  const ops: string[] = ["1 1 1 rg", `0 0 ${scene.width} ${H} re f`, "1 J 1 j"];
  for (const a of scene.areas) {
    const [r, g, b] = rgb(a.color);
    // Transparency needs an ExtGState; a light blend towards white reads the same on paper.
    const mix = (v: number) => c(1 - a.opacity * (1 - v));
    ops.push(`${mix(r)} ${mix(g)} ${mix(b)} rg`);
    for (const poly of a.polygons) {
      ops.push(poly.map(([x, y], i) => `${c(x)} ${c(H - y)} ${i ? "l" : "m"}`).join(" ") + " h f");
    }
  }
  for (const p of scene.paths) {
    if (!p.segments.length) continue;
    const [r, g, b] = rgb(p.color);
    ops.push(`${c(r)} ${c(g)} ${c(b)} RG ${p.width} w [${p.dash.join(" ")}] 0 d`);
    if (p.name) ops.push(`% series ${p.name.replace(/[\r\n]/g, " ")}`);
    for (const seg of p.segments) {
      ops.push(seg.map(([x, y], i) => `${c(x)} ${c(H - y)} ${i ? "l" : "m"}`).join(" ") + " S");
    }
  }
  const pdfText = (s: string) =>
    "(" + s.replace(/[^\x20-\x7e]/g, "?").replace(/([()\\])/g, "\\$1") + ")";
  for (const t of scene.texts) {
    // Helvetica's average advance is about 0.5 em: enough to centre or right-align labels.
    const w = t.text.length * t.size * 0.5;
    const x = t.anchor === "middle" ? t.x - w / 2 : t.anchor === "end" ? t.x - w : t.x;
    const [r, g, b] = rgb(t.color);
    ops.push(`BT ${c(r)} ${c(g)} ${c(b)} rg /F1 ${t.size} Tf ${c(x)} ${c(H - t.y)} Td ${pdfText(t.text)} Tj ET`);
  }
  const content = ops.join("\n");
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${scene.width} ${H}] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>`,
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
  ];
  let pdf = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(pdf.length);
    pdf += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) pdf += `${String(off).padStart(10, "0")} 00000 n \n`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(pdf);
}

export function toCanvas(scene: Scene, scale = 2): HTMLCanvasElement {
  const canvas = document.createElement("canvas");
  canvas.width = scene.width * scale;
  canvas.height = scene.height * scale;
  const ctx = canvas.getContext("2d")!;
  ctx.scale(scale, scale);
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, scene.width, scene.height);
  for (const a of scene.areas) {
    ctx.globalAlpha = a.opacity;
    ctx.fillStyle = a.color;
    for (const poly of a.polygons) {
      ctx.beginPath();
      poly.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
      ctx.closePath();
      ctx.fill();
    }
    ctx.globalAlpha = 1;
  }
  ctx.lineJoin = "round";
  for (const p of scene.paths) {
    ctx.strokeStyle = p.color;
    ctx.lineWidth = p.width;
    ctx.setLineDash(p.dash);
    ctx.beginPath();
    for (const seg of p.segments) seg.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
    ctx.stroke();
  }
  ctx.setLineDash([]);
  for (const t of scene.texts) {
    ctx.fillStyle = t.color;
    ctx.font = `${t.size}px Helvetica, Arial, sans-serif`;
    ctx.textAlign = t.anchor === "middle" ? "center" : t.anchor === "end" ? "right" : "left";
    ctx.fillText(t.text, t.x, t.y);
  }
  return canvas;
}
