// How times, durations and values read on the page.
import { DAY_STEPS, DAYS_FROM, TIME_STEPS } from "./generated/axis";

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
// label them), not rounded to the same whole second; `days`: a long span, read in days.
export function xLabel(kind: string, x: number, step = 1, days = false): string {
  if (kind === "relative" && days) return value(x / 86400);
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

// Ticks at round durations (as the exported figures: figure/axis.cc, whose steps these are):
// 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, then whole days; a span
// of four days or more steps in days only. `seconds` data in seconds.
export function timeTicks(lo: number, hi: number, count: number): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi) || hi <= lo) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  if (raw < 1) return niceTicks(lo, hi, count);
  const days = DAY_STEPS.map((d) => d * 86400);
  const step =
    (hi - lo >= DAYS_FROM ? undefined : TIME_STEPS.find((s) => s >= raw)) ??
    days.find((s) => s >= raw) ??
    days[days.length - 1];
  const out: number[] = [];
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) out.push(t === 0 ? 0 : t);
  return out;
}

// Whether a relative axis over `span` seconds reads in days (figure/axis.cc: the same rule).
export function readsInDays(span: number): boolean {
  return span >= DAYS_FROM;
}

// Ticks of a log axis, as the figures put them (figure/axis.cc LogTicks): each power of ten
// labelled, 2..9 times it unlabelled where few decades show; inside one decade its round
// values labelled. Labels "" for the unlabelled.
export function logTicks(lo: number, hi: number): { at: number; label: string }[] {
  if (!(lo > 0) || !(hi > lo)) return [];
  const a = Math.floor(Math.log10(lo));
  const b = Math.ceil(Math.log10(hi));
  const minor = b - a <= 4;
  const out: { at: number; label: string }[] = [];
  for (let e = a; e <= b; e++) {
    const decade = 10 ** e;
    for (let m = 1; m <= (minor ? 9 : 1); m++) {
      const t = +(m * decade).toPrecision(12);
      if (t >= lo * 0.999 && t <= hi * 1.001) out.push({ at: t, label: m === 1 ? value(t) : "" });
    }
  }
  if (!out.some((t) => t.label)) for (const t of out) t.label = value(t.at);
  return out;
}

// How a metric's values read (as figure/axis.cc): ratios as percent, bytes as MiB or GiB,
// hertz as MHz; `largest` is the largest absolute value shown.
export function displayUnit(unit: string, largest: number): { factor: number; unit: string } {
  const a = Math.abs(largest);
  if (unit === "ratio") return { factor: 100, unit: "%" };
  if (unit === "bytes" || unit === "bytes/s") {
    const suffix = unit === "bytes/s" ? "/s" : "";
    for (const [f, name] of [
      [2 ** 40, "TiB"],
      [2 ** 30, "GiB"],
      [2 ** 20, "MiB"],
      [2 ** 10, "KiB"],
    ] as const) {
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
