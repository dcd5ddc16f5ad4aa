// CSV as spreadsheets read it (RFC 4180): a field with a comma, quote or line break is
// quoted, its quotes doubled. Used by the chart's and the table's CSV downloads.
import type { Plot } from "./scene";

export type Cell = string | number | null | undefined;

export function csvField(v: Cell): string {
  if (v === null || v === undefined) return "";
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvRows(rows: Cell[][]): string {
  return rows.map((r) => r.map(csvField).join(",")).join("\n") + "\n";
}

// The plotted values: one row per x in the visible range, one column per line (and band bound).
export function plotCsv(p: Plot): string {
  const cols: { name: string; x: number[]; y: (number | null | undefined)[] }[] = [
    ...p.series.map((s) => ({ name: s.name, x: s.x, y: s.y })),
    ...p.bands.flatMap((b) => [
      { name: b.name + " low", x: b.x, y: b.lo },
      { name: b.name + " high", x: b.x, y: b.hi },
    ]),
  ];
  const xs = [...new Set(cols.flatMap((c) => c.x.filter((x) => x >= p.xRange[0] && x <= p.xRange[1])))].sort((a, b) => a - b);
  const index = cols.map((c) => new Map(c.x.map((x, i) => [x, c.y[i]])));
  const head = [p.xKind === "relative" ? "seconds_since_start" : p.xKind === "wall" ? "time_ms" : "step", ...cols.map((c) => c.name)];
  return csvRows([head, ...xs.map((x) => [x, ...index.map((m) => m.get(x))])]);
}
