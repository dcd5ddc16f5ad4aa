// What a chart draws, as plain data: its lines, bands and event markers. The exports are
// drawn by the server (GET /api/v1/figure) from the chart's figure description.

export interface PlotSeries {
  name: string;
  color: string;
  dash: number[];
  width: number;
  x: number[];
  y: (number | null | undefined)[];
  raw?: (number | null | undefined)[]; // when smoothed: the values before smoothing
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
