// How times, durations and values read on the page.

export function clock(seconds: number): string {
  // Rounded to the second before it is split: 59.7 s reads 1:00, not 0:60.
  const total = Math.round(Math.abs(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = String(total % 60).padStart(2, "0");
  const body = h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
  return (seconds < 0 && total > 0 ? "-" : "") + body;
}

export function duration(ms: number): string {
  if (!ms || ms < 0) return "-";
  return clock(Math.round(ms / 1000));
}

export function ago(ms: number, now = Date.now()): string {
  const s = Math.max(0, (now - ms) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

export function wall(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

// A number as the figures write it (src/figure/axis.cc, ShortNumber): never an exponent;
// SI prefixes from a million (1.5M, 20G), whole numbers from 1000 (36940), four significant
// digits below, three written out under 0.001 (0.00005).
export function value(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "-";
  const a = Math.abs(v);
  if (a >= 1e6) {
    const prefixes = "kMGTPE";
    let x = v / 1000;
    let p = 0;
    while (Math.abs(x) >= 999.95 && p + 1 < prefixes.length) {
      x /= 1000;
      p++;
    }
    return `${+x.toPrecision(3)}${prefixes[p]}`;
  }
  if (a >= 1000) return v.toFixed(0);
  if (a >= 1e-3 || a === 0) return String(+v.toPrecision(4));
  const decimals = Math.min(15, 2 - Math.floor(Math.log10(a)));
  return v.toFixed(decimals).replace(/0+$/, "");
}

// The x axis's label for a value, by axis kind; `step`, the axis's ticks' spacing: ticks
// under a second apart read in seconds with their fraction ("3.5s", as exported figures
// label them), not rounded to the same whole second.
export function xLabel(kind: string, x: number, step = 1): string {
  if (kind === "relative") return step < 1 ? `${+x.toPrecision(3)}s` : clock(x);
  if (kind === "wall") return wall(x).slice(11);
  return String(Math.round(x));
}

// "1 run", "3 runs".
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

// Ticks at round numbers: about `count` of them between lo and hi.
export function niceTicks(lo: number, hi: number, count: number): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi) || hi <= lo) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(+t.toPrecision(12));
  return out;
}

// Ticks at round durations (as the exported figures: figure/axis.cc): 1, 2, 5, 10, 15, 30 s,
// 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, days; `seconds` data in seconds.
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];
export function timeTicks(lo: number, hi: number, count: number): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi) || hi <= lo) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  if (raw < 1) return niceTicks(lo, hi, count);
  const step = TIME_STEPS.find((s) => s >= raw) ?? TIME_STEPS[TIME_STEPS.length - 1];
  const out: number[] = [];
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) out.push(t === 0 ? 0 : t);
  return out;
}

// How a metric's values read (as figure/axis.cc): ratios as percent, bytes as MiB or GiB,
// hertz as MHz; `largest` is the largest absolute value shown.
export function displayUnit(unit: string, largest: number): { factor: number; unit: string } {
  const a = Math.abs(largest);
  if (unit === "ratio") return { factor: 100, unit: "%" };
  if (unit === "bytes" || unit === "bytes/s") {
    const suffix = unit === "bytes/s" ? "/s" : "";
    for (const [f, name] of [[2 ** 40, "TiB"], [2 ** 30, "GiB"], [2 ** 20, "MiB"], [2 ** 10, "KiB"]] as const) {
      if (a >= f) return { factor: 1 / f, unit: name + suffix };
    }
    return { factor: 1, unit: "bytes" + suffix };
  }
  if (unit === "Hz") {
    if (a >= 1e9) return { factor: 1e-9, unit: "GHz" };
    if (a >= 1e6) return { factor: 1e-6, unit: "MHz" };
    return { factor: 1, unit: "Hz" };
  }
  if (unit === "1") return { factor: 1, unit: "" };
  if (unit === "1/s") return { factor: 1, unit: "per second" };
  return { factor: 1, unit };
}
