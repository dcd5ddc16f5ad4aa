import uPlot from "uplot";

// A line through a series' points on linear scales, drawn as uPlot's own linear path
// builder draws lines with fewer points than pixels, in one loop with the scale arithmetic
// inline (uPlot's calls six functions per point, which a page that has just opened runs
// in the interpreter: a chart of 50 runs is 40,000 points). A null value breaks the line
// (a gap); an undefined one (another series' x) is stepped over. Log scales and the bounds
// of bands keep uPlot's builder.
const uplotLine = uPlot.paths.linear!();
export function straightLines(u: uPlot, si: number, i0: number, i1: number): uPlot.Series.Paths | null {
  const sx = u.scales.x;
  const sy = u.scales[u.series[si].scale ?? "y"];
  if (sx.distr !== 1 || sy.distr !== 1 || sx.ori !== 0 || sx.dir !== 1 || sy.dir !== 1) return uplotLine(u, si, i0, i1);
  const xs = u.data[0];
  const ys = u.data[si];
  const x0 = sx.min!;
  const y0 = sy.min!;
  const { left, top, width, height } = u.bbox;
  const kx = width / (sx.max! - x0);
  const ky = height / (sy.max! - y0);
  const bottom = top + height;
  const stroke = new Path2D();
  let down = false;
  for (let i = i0; i <= i1; i++) {
    const v = ys[i];
    if (v === undefined) continue;
    if (v === null) {
      down = false;
      continue;
    }
    const px = left + (xs[i] - x0) * kx;
    const py = bottom - (v - y0) * ky;
    if (down) stroke.lineTo(px, py);
    else stroke.moveTo(px, py);
    down = true;
  }
  return { stroke, fill: null, clip: null, band: null, flags: 0 };
}
