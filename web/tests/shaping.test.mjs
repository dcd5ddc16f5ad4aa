// The UI's pure data shaping (src/csv.ts, src/lines.ts, src/xaxis.ts) run in Node: bundled
// with esbuild on the fly, no browser needed.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as esbuild from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const src = join(dirname(fileURLToPath(import.meta.url)), "..", "src");

async function load(file) {
  const out = await esbuild.build({
    entryPoints: [join(src, file)],
    bundle: true,
    format: "esm",
    write: false,
    logLevel: "silent",
  });
  return import("data:text/javascript;base64," + Buffer.from(out.outputFiles[0].text).toString("base64"));
}

test("time ticks fall on round durations, units read as people read them", async () => {
  const { timeTicks, displayUnit } = await load("format.ts");
  assert.deepEqual(timeTicks(0, 600, 6), [0, 120, 240, 360, 480, 600]);
  assert.deepEqual(timeTicks(3, 31, 6), [5, 10, 15, 20, 25, 30]);
  assert.deepEqual(timeTicks(0, 4 * 3600, 4), [0, 3600, 7200, 10800, 14400]);
  assert.deepEqual(displayUnit("ratio", 0.5), { factor: 100, unit: "%" });
  assert.equal(displayUnit("bytes", 3 * 2 ** 30).unit, "GiB");
  assert.equal(displayUnit("Hz", 1.4e9).unit, "GHz");
});

test("CSV fields with commas, quotes or line breaks are quoted as spreadsheets expect", async () => {
  const { csvRows } = await load("csv.ts");
  assert.equal(
    csvRows([["a", 'say "hi"', "x,y", "two\nlines", 1.5, null, undefined]]),
    'a,"say ""hi""","x,y","two\nlines",1.5,,\n',
  );
});

test("smoothing keeps gaps and starts at the first value", async () => {
  const { ema } = await load("lines.ts");
  assert.deepEqual(ema([0, 1, 2], [1, 2, 3], 0, 1), [1, 2, 3]);
  const s = ema([0, 1, 2, 3], [10, null, 10, 20], 50, 1);
  assert.equal(s[0], 10); // debiased: no pull towards zero
  assert.equal(s[1], null);
  assert.equal(s[2], 10);
  assert.ok(s[3] > 10 && s[3] < 20);
});

test("smoothing is weighted by time: a sparse loss among dense samples does not lag its own values", async () => {
  const { ema, plotted, smoothingStep } = await load("lines.ts");
  // GPU power every 0.5 s for 100 s; a loss from 2 down to 0.03, logged every 10 s.
  const gx = Array.from({ length: 201 }, (_, i) => i / 2);
  const gpu = { key: "g", name: "gpu", x: gx, y: gx.map(() => 300) };
  const lx = Array.from({ length: 10 }, (_, i) => (i + 1) * 10);
  const loss = { key: "l", name: "loss", x: lx, y: lx.map((t) => 2 - (1.97 * t) / 100) };
  const step = smoothingStep([gpu, loss]);
  assert.ok(Math.abs(step - 0.5) < 0.01, String(step));
  const look = { smoothing: 90, width: 1, mono: false };
  const [, smooth] = plotted([gpu, loss], look).series;
  // Its last value (0.03 at 100 s) reads below the value logged before it (0.227 at 90 s),
  // not dragged back above it as a smoothing by points drags it (0.75).
  assert.ok(smooth.y[9] < 0.07, String(smooth.y[9]));
  assert.ok(ema(lx, loss.y, 90, 10)[9] > 0.5, "by points it lags");
  // Its own values stay behind it, faint.
  assert.deepEqual(smooth.raw, loss.y);
  assert.equal(plotted([gpu, loss], { ...look, smoothing: 0 }).series[1].raw, undefined);
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
  assert.deepEqual(marks, [
    { x: 10.2, label: "epoch 1" },
    { x: 20, label: "B epoch 2" },
  ]);
  // One run's two events of a kind in one second: named once, and not as if every run had it.
  const twice = eventMarks(
    [
      { letter: "A", events: [ev("eval", 30.1, "eval"), ev("eval", 30.4, "eval")] },
      { letter: "B", events: [] },
    ],
    "relative",
  );
  assert.deepEqual(twice, [{ x: 30.1, label: "A eval" }]);
  const spans = phaseSpans(
    "r",
    1000,
    [
      { kind: "warm-up", start_ms: 1000, end_ms: 6000, detail: "" },
      { kind: "steady", start_ms: 6000, end_ms: 9000, detail: "" },
    ],
    "relative",
  );
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

test("event labels of many runs stack in rows and never overprint; those with no room are left out", async () => {
  const { labelRows } = await load("lines.ts");
  // Five runs' "epoch 1" at nearly the same place, then one far away, one past the edge.
  const labels = [0, 2, 4, 6, 8]
    .map((at) => ({ at, width: 40 }))
    .concat([
      { at: 200, width: 40 },
      { at: 290, width: 40 },
    ]);
  const rows = labelRows(labels, 300, 3, 5);
  assert.deepEqual(rows, [0, 1, 2, -1, -1, 0, -1]);
  // No two labels placed in one row overlap.
  for (let i = 0; i < labels.length; i++) {
    for (let k = i + 1; k < labels.length; k++) {
      if (rows[i] < 0 || rows[i] !== rows[k]) continue;
      assert.ok(labels[i].at + labels[i].width <= labels[k].at, `labels ${i} and ${k} overlap`);
    }
  }
});

test("a live line thinned on the page again and again as it grows keeps every spike at its time", async () => {
  const { thinned } = await load("lines.ts");
  // Few points: all kept.
  assert.deepEqual(thinned([0, 1, 2], [5, null, 7], 0, 2, 8), [0, 1, 2]);
  // A run logging 10 points a second for 2,000 s, with a spike or a dip every few hundred
  // seconds; the page appends 30 points a refresh and thins at half its budget of 200.
  const budget = 200;
  const spikes = new Map();
  const value = (i) => {
    if (i % 2_345 === 1_000) return spikes.set(i / 10, i % 2 ? 1_000 + i : -1_000 - i).get(i / 10);
    return i >= 5_000 && i < 7_000 ? null : Math.sin(i / 50);
  };
  let x = [];
  let y = [];
  let appended = 0;
  let thinnings = 0;
  for (let i = 0; i < 20_000; i += 30) {
    for (let j = i; j < Math.min(i + 30, 20_000); j++) {
      x.push(j / 10);
      y.push(value(j));
    }
    appended += 30;
    if (appended * 2 > budget) {
      const keep = thinned(x, y, x[0], x[x.length - 1], budget);
      for (let k = 1; k < keep.length; k++) assert.ok(keep[k] > keep[k - 1], "in x order, each once");
      x = keep.map((k) => x[k]);
      y = keep.map((k) => y[k]);
      appended = 0;
      thinnings++;
    }
  }
  assert.ok(thinnings > 100);
  assert.ok(x.length <= budget + budget / 2, `${x.length} points`);
  assert.ok(spikes.size >= 8);
  for (const [at, v] of spikes) assert.equal(y[x.indexOf(at)], v, `the spike at ${at} s`);
  // The gap of 200 s (nulls, wider than a bucket) is still drawn as one.
  assert.ok(
    x.some((at, k) => at >= 500 && at < 700 && y[k] === null),
    "the gap stays",
  );
  assert.equal(x[0], 0);
  assert.equal(x[x.length - 1], 1999.9);
});

test("a chart's unit follows the largest finite magnitude among its lines; gaps and infinities do not count", async () => {
  const { largestOf, scaleInPlace } = await load("lines.ts");
  assert.equal(largestOf([]), 0);
  assert.equal(largestOf([[null, null], []]), 0);
  assert.equal(
    largestOf([
      [0.2, null, 0.5],
      [0.1, -0.9],
    ]),
    0.9,
  );
  assert.equal(largestOf([[-3, 2]]), 3);
  assert.equal(largestOf([[Infinity, 1, -Infinity, NaN, undefined, -2]]), 2);
  const y = [0.25, null, -0.5];
  scaleInPlace(y, 100);
  assert.deepEqual(y, [25, null, -50]);
});

test("a run keeps its colour from chart to chart, whichever runs before it have the chart's metric", async () => {
  const { styleLines, plotted } = await load("lines.ts");
  const line = (props) => ({ x: [0], y: [1], name: props.key, ...props });
  const look = { smoothing: 0, width: 1, mono: false };
  const colours = (lines) => plotted(lines, look).series.map((s) => s.color);
  const runs = ["a", "b", "c"];
  // Every run has the metric in one chart, only b and c in another.
  const all = ["a", "b", "c"].map((r) => line({ key: r + "|", run: r }));
  const some = ["b", "c"].map((r) => line({ key: r + "|", run: r }));
  styleLines(all, runs, []);
  styleLines(some, runs, []);
  assert.deepEqual(colours(some), colours(all).slice(1));
  assert.notEqual(colours(some)[0], colours(all)[0]);
  // Workloads' means first, then the runs, each by its place in the selection.
  const mixed = [line({ key: "e:w2" }), line({ key: "c|", run: "c" })];
  styleLines(mixed, runs, ["e:w1", "e:w2"]);
  assert.deepEqual(
    mixed.map((l) => l.style),
    [1, 4],
  );
  // A run with a line per GPU: every line a colour of its own.
  const gpus = [
    line({ key: "b|gpu=0", run: "b" }),
    line({ key: "b|gpu=1", run: "b" }),
    line({ key: "c|gpu=0", run: "c" }),
  ];
  styleLines(gpus, runs, []);
  assert.deepEqual(
    gpus.map((l) => l.style),
    [0, 1, 2],
  );
});

test("numbers on screen read as in the figures: no exponents, SI prefixes from a million", async () => {
  const { value } = await load("format.ts");
  assert.equal(value(36940), "36940");
  assert.equal(value(1234567), "1.23M");
  assert.equal(value(1.5e9), "1.5G");
  assert.equal(value(0.00005), "0.00005");
  assert.equal(value(0.1014), "0.1014");
  assert.equal(value(-2.5e7), "-25M");
  assert.equal(value(0), "0");
});

test("each quantity from one source: nvml's, else nvidia-smi's, else dcgmi's, per run and device", async () => {
  const { oneSourcePerQuantity } = await load("lines.ts");
  const series = [
    { run: "a", labels: "gpu=0" },
    { run: "a", labels: "gpu=0,listener=smi" },
    { run: "a", labels: "gpu=0,listener=dcgmi" },
    { run: "a", labels: "gpu=1,listener=dcgmi" },
    { run: "b", labels: "gpu=0,listener=dcgmi" },
    { run: "b", labels: "gpu=0,listener=smi" },
    { run: "c", labels: "" },
  ];
  assert.deepEqual(
    oneSourcePerQuantity(series).map((s) => `${s.run} ${s.labels}`),
    ["a gpu=0", "a gpu=1,listener=dcgmi", "b gpu=0,listener=smi", "c "],
  );
});

test("a GPU two runs shared at the same time is one line, named for the device and both runs", async () => {
  const { eachDeviceOnce, sharedName } = await load("shared_devices.ts");
  const run = (id, start, devices, letter) => ({
    id,
    name: "train.py",
    host: "gpu-server",
    devices,
    start_ms: start,
    end_ms: start + 30000,
    letter,
  });
  const runs = {
    a: run("a", 0, "GPU-4842", "0AMPS"),
    b: run("b", 2000, "GPU-4842", "0BMPS"),
    later: run("later", 60000, "GPU-4842", "1A-"),
    other: run("other", 0, "GPU-9999", "0C-"),
    nohost: { ...run("nohost", 0, "GPU-4842", "0D-"), host: "" },
  };
  const series = ["b", "a", "later", "other", "nohost"].map((id) => ({ run: id, labels: "gpu=0" }));
  const order = ["a", "b", "later", "other", "nohost"];
  const { kept, sharing } = eachDeviceOnce("gpu.power.draw_watts", series, order, (id) => runs[id]);
  assert.deepEqual(
    kept.map((s) => s.run),
    ["a", "later", "other", "nohost"],
  );
  assert.deepEqual([...sharing], [["a|gpu=0", ["b"]]]);
  assert.equal(
    sharedName(
      "gpu=0",
      ["a", "b"],
      (id) => runs[id],
      (id) => id,
    ),
    "GPU 0, shared by 0AMPS and 0BMPS",
  );
  // A run's own share of the GPU stays its own.
  assert.equal(eachDeviceOnce("proc.gpu.energy_joules", series, order, (id) => runs[id]).kept.length, 5);
});

test("the tooltip reads a sparse line's point at its own time, not at the cursor's", async () => {
  const { pointedAt, tooltipHtml } = await load("tooltip.ts");
  // A uPlot-like chart, 10 px a second and 1 px a unit of y: a dense line at y=100 sampled
  // every second, a sparse loss at y=10 logged at 0 s and 10 s only.
  const xs = Array.from({ length: 11 }, (_, i) => i);
  const dense = { key: "d", name: "GPU", run: "d", x: xs, y: xs.map(() => 100) };
  const sparse = { key: "s", name: "loss", run: "s", x: [0, 10], y: [10, 5] };
  const u = {
    cursor: { idx: 3, left: 30, top: 12 },
    data: [xs, xs.map(() => 100), xs.map((x) => (x === 0 ? 10 : x === 10 ? 5 : null))],
    series: [{}, { show: true }, { show: true }],
    valToPos: (v, axis) => (axis === "x" ? v * 10 : v),
  };
  const p = pointedAt(u, [undefined, dense, sparse]);
  assert.equal(p.line.name, "loss");
  assert.equal(p.x, 0); // its point at 0 s, 30 px away, not the cursor's 3 s
  assert.match(tooltipHtml(p, "relative", ""), /at 0:00/);
  // Beyond reach (48 px), the dense line's point under the cursor is read.
  u.cursor = { idx: 5, left: 50, top: 12 };
  assert.equal(pointedAt(u, [undefined, dense, sparse]).line.name, "GPU");
});

test("durations round before they split into minutes and hours; ticks under a second apart keep their fraction", async () => {
  const { clock, xLabel, timeTicks } = await load("format.ts");
  assert.equal(clock(59.7), "1:00");
  assert.equal(clock(119.5), "2:00");
  assert.equal(clock(3599.6), "1:00:00");
  assert.equal(clock(61), "1:01");
  assert.equal(clock(-61), "-1:01");
  assert.equal(clock(-0.2), "0:00");
  // A run of a few seconds: every tick its own label.
  const ticks = timeTicks(2.6, 5.3, 6);
  const labels = ticks.map((t) => xLabel("relative", t, ticks[1] - ticks[0]));
  assert.equal(new Set(labels).size, labels.length, labels.join(" "));
  assert.ok(labels.includes("3.5s"), labels.join(" "));
  assert.equal(xLabel("relative", 90, 30), "1:30");
});

test("runs named alike are told apart by their place among their repeats, never by a hex id", async () => {
  const { runNames } = await load("fetch_lines.ts");
  const runs = {
    ["a".repeat(32)]: { name: "train.py 0A-", workload: "pair", letter: "0A-", start_ms: 3000 },
    ["b".repeat(32)]: { name: "train.py 0A-", workload: "pair", letter: "0A-", start_ms: 1000 },
    ["c".repeat(32)]: { name: "train.py 0B-", workload: "pair", letter: "0B-", start_ms: 1000 },
  };
  const names = runNames(Object.keys(runs), (id) => runs[id]);
  assert.deepEqual([...names.values()], ["pair 0A- #2", "pair 0A- #1", "pair 0B- #1"]);
  // Names that differ stay the names.
  const two = runNames(["a".repeat(32), "c".repeat(32)], (id) => runs[id]);
  assert.deepEqual([...two.values()], ["train.py 0A-", "train.py 0B-"]);
});

test("the GPU each repeat of a pair shared is named once a repeat, told apart by the repeat", async () => {
  const { tellApart } = await load("fetch_lines.ts");
  const runs = {
    a: { start_ms: 5000, tags: { "trainbench.repeat": "2/2" } },
    b: { start_ms: 1000, tags: { "trainbench.repeat": "1/2" } },
    c: { start_ms: 1000, tags: {} },
    d: { start_ms: 9000, tags: {} },
  };
  const shared = "GPU 0, shared by 0A- and 0B-";
  const lines = [
    { name: shared, run: "a" },
    { name: shared, run: "b" },
    { name: "alone", run: "c" },
  ];
  tellApart(lines, (id) => runs[id]);
  assert.deepEqual(
    lines.map((l) => l.name),
    [`${shared} (repeat 2/2)`, `${shared} (repeat 1/2)`, "alone"],
  );
  // Without repeats: their place in start order.
  const plain = [
    { name: "x", run: "d" },
    { name: "x", run: "c" },
  ];
  tellApart(plain, (id) => runs[id]);
  assert.deepEqual(
    plain.map((l) => l.name),
    ["x #2", "x #1"],
  );
});
