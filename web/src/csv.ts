// CSV as spreadsheets read it (RFC 4180): a field with a comma, quote or line break is
// quoted, its quotes doubled. Used by the table's CSV download.

export type Cell = string | number | null | undefined;

export function csvField(v: Cell): string {
  if (v === null || v === undefined) return "";
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvRows(rows: Cell[][]): string {
  return rows.map((r) => r.map(csvField).join(",")).join("\n") + "\n";
}
