// The UI's pure data shaping (src/csv.ts, src/lines.ts, src/xaxis.ts) run in Node: bundled
// with esbuild on the fly, no browser needed.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as esbuild from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const src = join(dirname(fileURLToPath(import.meta.url)), "..", "src");

async function load(file) {
  const out = await esbuild.build({ entryPoints: [join(src, file)], bundle: true, format: "esm", write: false, logLevel: "silent" });
  return import("data:text/javascript;base64," + Buffer.from(out.outputFiles[0].text).toString("base64"));
}

test("CSV fields with commas, quotes or line breaks are quoted as spreadsheets expect", async () => {
  const { csvRows, plotCsv } = await load("csv.ts");
  assert.equal(csvRows([["a", 'say "hi"', "x,y", "two\nlines", 1.5, null, undefined]]), 'a,"say ""hi""","x,y","two\nlines",1.5,,\n');
  const csv = plotCsv({
    title: "t", xKind: "relative", unit: "", events: [], xRange: [0, 2], yRange: [0, 1],
    series: [{ name: 'run "A", bs=64', color: "", dash: [], width: 1, x: [0, 1, 2, 3], y: [1, null, 3, 4] }],
    bands: [{ name: "w min-max", color: "", x: [1], lo: [0.5], hi: [1.5] }],
  });
  // Only the visible range; a missing value is an empty cell.
  assert.equal(csv, 'seconds_since_start,"run ""A"", bs=64",w min-max low,w min-max high\n0,1,,\n1,,0.5,1.5\n2,3,,\n');
});

test("smoothing keeps gaps and starts at the first value", async () => {
  const { ema } = await load("lines.ts");
  assert.deepEqual(ema([1, 2, 3], 0), [1, 2, 3]);
  const s = ema([10, null, 10, 20], 50);
  assert.equal(s[0], 10); // debiased: no pull towards zero
  assert.equal(s[1], null);
  assert.equal(s[2], 10);
  assert.ok(s[3] > 10 && s[3] < 20);
});

test("the y range covers what is visible, bands included, with room around it", async () => {
  const { plotBounds } = await load("lines.ts");
  const series = [{ name: "a", color: "", dash: [], width: 1, x: [0, 1, 2, 3], y: [0, 100, 5, 7] }];
  const bands = [{ name: "b", color: "", x: [2, 3], lo: [1, 2], hi: [9, 10] }];
  const all = plotBounds(series, bands, null);
  assert.deepEqual(all.xRange, [0, 3]);
  assert.ok(all.yRange[0] < 0 && all.yRange[1] > 100);
  // Zoomed past the spike: it no longer sets the scale.
  const zoomed = plotBounds(series, bands, [2, 3]);
  assert.ok(zoomed.yRange[1] < 11 && zoomed.yRange[1] > 10);
  assert.ok(zoomed.yRange[0] < 1 && zoomed.yRange[0] > 0);
});

test("an event several runs had at the same second is one marker, named by run when not all had it", async () => {
  const { eventMarks, phaseSpans } = await load("lines.ts");
  const ev = (label, relative_s, kind = "epoch") => ({ kind, label, relative_s, time_ms: 1000 * relative_s });
  const marks = eventMarks(
    [
      { letter: "A", events: [ev("epoch 1", 10.2), ev("nvml", 0, "listener")] },
      { letter: "B", events: [ev("epoch 1", 10.4), ev("epoch 2", 20)] },
    ],
    "relative",
  );
  assert.deepEqual(marks, [{ x: 10.2, label: "epoch 1" }, { x: 20, label: "B epoch 2" }]);
  const spans = phaseSpans("r", 1000, [
    { kind: "warm-up", start_ms: 1000, end_ms: 6000, detail: "" },
    { kind: "steady", start_ms: 6000, end_ms: 9000, detail: "" },
  ], "relative");
  assert.deepEqual(spans, [{ from: 0, to: 5, kind: "warm-up", run: "r" }]);
});

test("wall-clock axes go to uPlot in seconds and come back in milliseconds", async () => {
  const { toPlotX, fromPlotX, xText } = await load("xaxis.ts");
  assert.equal(toPlotX("wall", 1763777000000), 1763777000);
  assert.equal(fromPlotX("wall", toPlotX("wall", 1763777000123)), 1763777000123);
  assert.equal(toPlotX("relative", 12.5), 12.5);
  assert.equal(xText("relative", 75), "1:15");
  assert.equal(xText("step", 7), "step 7");
});
