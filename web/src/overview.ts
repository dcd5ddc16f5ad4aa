// The overview strip under a chart: its whole range, small, where a drag zooms the chart;
// past kOverviewLines lines, their envelope.
import uPlot from "uplot";
import type { ChartState, XKind } from "./state";
import type { Line } from "./lines";
import { uplotData, uplotSeries } from "./uplot_table";
import { fromPlotX, toPlotX } from "./xaxis";

// Up to this many lines the overview strip draws each; past it, their envelope.
const kOverviewLines = 8;

// The highest and lowest value of the shown lines at each x of `data` (uPlot's table;
// `owners` says which line each of its series draws).
export function envelope(data: uPlot.AlignedData, hidden: string[], owners: (Line | undefined)[]): uPlot.AlignedData {
  const n = data[0].length;
  const hi: (number | null)[] = new Array(n).fill(null);
  const lo: (number | null)[] = new Array(n).fill(null);
  for (let s = 1; s < data.length; s++) {
    const line = owners[s];
    if (!line || hidden.includes(line.key)) continue;
    const ys = data[s] as (number | null | undefined)[];
    for (let i = 0; i < n; i++) {
      const v = ys[i];
      if (v == null || !Number.isFinite(v)) continue;
      if (hi[i] === null || v > hi[i]!) hi[i] = v;
      if (lo[i] === null || v < lo[i]!) lo[i] = v;
    }
  }
  return [data[0], hi, lo] as uPlot.AlignedData;
}

export class OverviewStrip {
  plot?: uPlot; // the strip (the page's tests read it)

  constructor(
    private el: HTMLElement,
    private onZoom: (range: [number, number]) => void,
  ) {}

  destroy() {
    this.plot?.destroy();
    this.plot = undefined;
  }

  draw(width: number, full: Line[], state: ChartState, x: XKind, lines?: uPlot.AlignedData) {
    let { series, bands } = uplotSeries(full, state, x, true);
    let data = lines ?? uplotData(full, state, x);
    // Many lines in a 70-pixel strip are a smear that costs as much to draw as the chart:
    // past a few, the strip shows their envelope (the lowest and highest shown value at each
    // x), which is what choosing a range needs.
    const many = full.length > kOverviewLines;
    if (many) {
      data = envelope(data, state.hidden, uplotSeries(full, state, x, true).owners);
      const line = { stroke: "#7a8ca3", width: 1, spanGaps: false, points: { show: false } };
      series = [{}, { ...line, label: "highest" }, { ...line, label: "lowest" }];
      bands = [{ series: [1, 2], fill: "#7a8ca340" }];
    }
    this.el.dataset.lines = many ? "envelope" : String(full.length);
    this.plot?.destroy();
    this.el.innerHTML = "";
    this.plot = new uPlot(
      {
        width,
        height: 70,
        series,
        bands,
        legend: { show: false },
        axes: [{ show: false }, { show: false }],
        scales: { x: { time: x === "wall" } },
        cursor: { drag: { x: true, y: false, setScale: false }, points: { show: false }, y: false },
        select: { show: true, left: 0, top: 0, width: 0, height: 0 },
        hooks: {
          // Scales have their range once the strip is first drawn; the zoomed range is
          // marked then.
          ready: [() => this.mark(state.zoom, x)],
          setSelect: [
            (u) => {
              if (u.select.width < 2) return;
              const a = u.posToVal(u.select.left, "x");
              const b = u.posToVal(u.select.left + u.select.width, "x");
              this.onZoom([fromPlotX(x, a), fromPlotX(x, b)]);
            },
          ],
        },
      },
      data,
      this.el,
    );
  }

  // The zoomed range as a rectangle on the overview strip.
  mark(zoom: [number, number] | null, x: XKind) {
    const o = this.plot;
    if (!o || !zoom) return;
    const left = o.valToPos(toPlotX(x, zoom[0]), "x");
    const right = o.valToPos(toPlotX(x, zoom[1]), "x");
    o.setSelect({ left, width: Math.max(2, right - left), top: 0, height: o.bbox.height / devicePixelRatio }, false);
  }
}
