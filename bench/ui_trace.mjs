// A Chrome trace of the page from a click on "Add chart" to the frame that shows the chart
// of 50 runs x 100,000 points, in headless chromium against a real `trainbench serve`, and
// its reading: when the series request left, when its answer reached the renderer and its
// main thread, when the chart was drawn, and each main-thread task over 15 ms with where
// its time went (style, layout and paint for frames; the JavaScript functions sampled in
// it otherwise). Writes DIR/trace-N.json (DevTools' Performance panel loads it); build the
// page with TB_NO_MINIFY=1 (web/build.mjs) to read its functions' names.
//   node bench/ui_trace.mjs [REPEATS=3] [DIR=.]
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { browser, makeStore, pageReadyToChart, scratch, serve } from "../web/tests/harness.mjs";

const repeats = Number(process.argv[2] ?? 3);
const outDir = process.argv[3] ?? ".";
const work = scratch("tb-ui-trace-");
const db = join(work.dir, "bench.db");
makeStore(db, ["--bench-runs", "50", "--bench-points", "100000"]);
const server = await serve(db);
const chrome = await browser();
const categories = [
  "devtools.timeline",
  "disabled-by-default-devtools.timeline",
  "blink.user_timing",
  "loading",
  "v8.execute",
  "disabled-by-default-v8.cpu_profiler",
];

// The CPU samples of the renderer that holds `pid`, as [time, node id], and its call tree.
function samplesOf(events, pid) {
  const profile = events.find((e) => e.name === "Profile" && e.pid === pid);
  const nodes = new Map();
  const samples = [];
  if (!profile) return { nodes, samples };
  let t = profile.args.data.startTime;
  for (const chunk of events.filter((e) => e.name === "ProfileChunk" && e.pid === pid && e.id === profile.id)) {
    const d = chunk.args.data;
    for (const n of d.cpuProfile?.nodes ?? []) nodes.set(n.id, n);
    const ids = d.cpuProfile?.samples ?? [];
    for (let i = 0; i < ids.length; i++) {
      t += d.timeDeltas[i];
      samples.push([t, ids[i]]);
    }
  }
  return { nodes, samples };
}

// A sample's function and two callers: "draw<load<(root)".
function stackOf(nodes, id) {
  const names = [];
  for (let cur = id; cur && names.length < 3; cur = nodes.get(cur)?.parent) {
    const frame = nodes.get(cur)?.callFrame;
    if (!frame) break;
    names.push(frame.functionName || "(anonymous)");
  }
  return names.join("<");
}

function report(file) {
  const events = JSON.parse(readFileSync(file, "utf8")).traceEvents;
  const click = events.find((e) => e.name === "tb-click");
  const drawn = events.find((e) => e.name === "tb-drawn");
  if (!click || !drawn) throw new Error(`${file}: the click or the drawn frame is not in the trace`);
  const at = (ts) => `+${((ts - click.ts) / 1000).toFixed(1)} ms`;
  const sent = events.find((e) => e.name === "ResourceSendRequest" && e.ts > click.ts && /\/api\/v1\/series\?/.test(e.args.data.url));
  const answered = events.find((e) => e.name === "ThrottlingURLLoader::OnReceiveResponse" && e.ph === "X" && e.ts > sent.ts);
  const read = events.find((e) => e.name === "ResourceFinish" && e.args.data.requestId === sent.args.data.requestId);
  console.log(
    `${file}: click to drawn ${((drawn.ts - click.ts) / 1000).toFixed(0)} ms; the series request left at ${at(sent.ts)}, ` +
      `its answer reached the renderer at ${answered ? at(answered.ts) : "?"} and its main thread at ${read ? at(read.ts) : "?"}`,
  );
  const main = events.filter((e) => e.pid === click.pid && e.tid === click.tid && e.ph === "X");
  const { nodes, samples } = samplesOf(events, click.pid);
  const tasks = main.filter((e) => e.name === "RunTask" && e.dur > 15000 && e.ts + e.dur > click.ts && e.ts < drawn.ts);
  for (const task of tasks.sort((a, b) => a.ts - b.ts)) {
    const inside = (e) => e.ts >= task.ts && e.ts + (e.dur ?? 0) <= task.ts + task.dur;
    const rendering = ["UpdateLayoutTree", "Layout", "PrePaint", "Paint", "Layerize", "Commit"]
      .map((name) => [name, main.filter((e) => e.name === name && inside(e)).reduce((sum, e) => sum + e.dur, 0) / 1000])
      .filter(([, ms]) => ms >= 1)
      .map(([name, ms]) => `${name} ${ms.toFixed(1)}`);
    const functions = new Map();
    let previous = null;
    for (const [ts, id] of samples) {
      if (ts < task.ts || ts > task.ts + task.dur) continue;
      if (previous !== null) functions.set(stackOf(nodes, id), (functions.get(stackOf(nodes, id)) ?? 0) + (ts - previous) / 1000);
      previous = ts;
    }
    const busiest = [...functions]
      .filter(([name, ms]) => ms >= 2 && !name.startsWith("(program)") && !name.startsWith("(idle)"))
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([name, ms]) => `${name} ${ms.toFixed(1)}`);
    console.log(`  task at ${at(task.ts)}, ${(task.dur / 1000).toFixed(1)} ms: ${[...rendering, ...busiest].join("; ")}`);
  }
}

for (let rep = 0; rep < repeats; rep++) {
  const { context, page } = await pageReadyToChart(chrome, server.url, "bench", "w");
  await page.evaluate(() => {
    window.__bench = {};
    document.querySelector("#add-chart").addEventListener("click", () => performance.mark("tb-click"), { capture: true });
    new MutationObserver(() => {
      if (document.querySelector("section.chart[data-drawn]") && !window.__bench.drawn) {
        window.__bench.drawn = true;
        requestAnimationFrame(() =>
          requestAnimationFrame(() => {
            performance.mark("tb-drawn");
            window.__bench.shown = true;
          }),
        );
      }
    }).observe(document.querySelector("#charts"), { subtree: true, attributes: true, attributeFilter: ["data-drawn"] });
  });
  const file = join(outDir, `trace-${rep}.json`);
  await chrome.startTracing(page, { path: file, categories });
  await page.click("#add-chart");
  await page.waitForFunction(() => window.__bench.shown);
  await page.waitForTimeout(300);
  await chrome.stopTracing();
  await context.close();
  report(file);
}
await chrome.close();
server.stop();
work.remove();
