// A sweep on screen: the "Colour by" list (the numeric params that vary among the chart's
// runs) and, where more than six lines are shaded, the colour bar that stands for their
// names, as the exported figure has it (src/figure/figure_render.cc).
import { SEQUENTIAL_STOPS } from "./generated/palette";
import { esc, niceTicks, value } from "./format";
import { sweepParams, sweepPlace, type Line, type SweepScale } from "./lines";

export const MOST_SWEEP_NAMES = 6;

export function colourByOptions(
  select: HTMLSelectElement,
  params: (Record<string, string> | undefined)[],
  current: string,
) {
  const names = sweepParams(params);
  if (current && !names.includes(current)) names.unshift(current);
  select.innerHTML =
    `<option value="">each run</option>` +
    names.map((n) => `<option value="${esc(n)}"${n === current ? " selected" : ""}>${esc(n)}</option>`).join("");
}

// The bar's ticks: every value where there are at most eight, else round ones.
function ticks(s: SweepScale): number[] {
  if (s.values.length <= 8) return s.values;
  if (!s.log) return niceTicks(s.lo, s.hi, 5).filter((t) => t >= s.lo && t <= s.hi);
  const out: number[] = [];
  for (let e = Math.ceil(Math.log10(s.lo)); e <= Math.floor(Math.log10(s.hi)); e++) out.push(10 ** e);
  return out;
}

// Shows the bar in `el` (and marks the chart's legend compact) or hides it; says how many
// lines it stands for in data-shaded.
export function showColourBar(el: HTMLElement, chart: HTMLElement, sweep: SweepScale | undefined, lines: Line[]) {
  const shaded = lines.filter((l) => l.shade !== undefined).length;
  const shown = !!sweep && shaded > MOST_SWEEP_NAMES;
  el.hidden = !shown;
  chart.classList.toggle("compact-legend", shown);
  chart.dataset.shaded = String(shaded);
  if (!shown || !sweep) return;
  const marks = ticks(sweep)
    .map((t) => `<span class="tick" style="left:${(sweepPlace(sweep, t) * 100).toFixed(2)}%">${esc(value(t))}</span>`)
    .join("");
  el.innerHTML =
    `<span class="param">${esc(sweep.param)}</span>` +
    `<span class="scale"><span class="ramp" style="background:linear-gradient(to right,${SEQUENTIAL_STOPS.join(",")})"></span>${marks}</span>`;
}
