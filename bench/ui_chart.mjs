// From a click on "Add chart" to the drawn chart, in headless chromium against a real
// `trainbench serve`: 50 runs of 100,000 points each, and one run of 10 million points,
// with the longest main-thread task meanwhile. Side by side: the same clicks with every
// point fetched (?budget=full resolution), as trackers that do not downsample do.
// Given a second built page (a copy of web/dist from another commit), each measurement
// alternates between the two, each page served by its own server on the same store.
//   node bench/ui_chart.mjs [REPEATS] [OTHER_WEB_DIST]   (after scripts/build.sh; see docs/PERFORMANCE.md)
import { join, resolve } from "node:path";
import { browser, makeStore, pageReadyToChart, scratch, serve } from "../web/tests/harness.mjs";

const repeats = Number(process.argv[2] ?? 5);
const otherWeb = process.argv[3] ? resolve(process.argv[3]) : null;
const work = scratch("tb-ui-bench-");
const db = join(work.dir, "bench.db");
let t = Date.now();
const ids = makeStore(db, ["--bench-runs", "50", "--bench-points", "100000", "--big", "10000000"]);
console.log(`store: 50 x 100,000 + 10,000,000 points written in ${((Date.now() - t) / 1000).toFixed(1)} s`);
const pages = [{ label: "", server: await serve(db) }];
if (otherWeb) pages.push({ label: `[${otherWeb}] `, server: await serve(db, otherWeb) });
const chrome = await browser();

// One measurement: select the experiment's runs, click Add chart, wait for the drawn frame.
async function measure(server, experiment, workload, query) {
  const { context, page } = await pageReadyToChart(chrome, server.url + query, experiment, workload);
  await page.evaluate(() => {
    window.__bench = { longest: 0 };
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__bench.longest = Math.max(window.__bench.longest, e.duration);
    }).observe({ type: "longtask" });
    document.querySelector("#add-chart").addEventListener("click", () => (window.__bench.t0 = performance.now()), { capture: true });
    new MutationObserver(() => {
      const chart = document.querySelector("section.chart[data-drawn]");
      if (chart && !window.__bench.t1) {
        requestAnimationFrame(() => requestAnimationFrame(() => (window.__bench.t1 = performance.now())));
      }
    }).observe(document.querySelector("#charts"), { subtree: true, attributes: true, attributeFilter: ["data-drawn"] });
  });
  await page.click("#add-chart");
  await page.waitForFunction(() => window.__bench.t1, null, { timeout: 300000 });
  await page.waitForTimeout(300); // long tasks are reported after they end
  const r = await page.evaluate(() => ({ ms: window.__bench.t1 - window.__bench.t0, longest: window.__bench.longest }));
  r.points = await page.locator(".chart-info").innerText();
  await context.close();
  return r;
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
async function series(label, experiment, workload, query, n) {
  const rs = pages.map(() => []);
  for (let i = 0; i < n; i++) {
    for (const [k, p] of pages.entries()) rs[k].push(await measure(p.server, experiment, workload, query));
  }
  const medians = [];
  for (const [k, p] of pages.entries()) {
    // The first repeat meets a server that has never read these runs (cold); the rest, warm.
    const r = rs[k];
    const warm = r.length > 1 ? r.slice(1).map((m) => m.ms) : r.map((m) => m.ms);
    const longest = Math.max(...r.map((m) => m.longest));
    console.log(
      `${(p.label + label).padEnd(44)} click to drawn: cold ${r[0].ms.toFixed(0)} ms, warm median ${median(warm).toFixed(0)} ms (min ${Math.min(...warm).toFixed(0)}, max ${Math.max(...warm).toFixed(0)}), longest task ${longest.toFixed(0)} ms; ${r[0].points}`,
    );
    medians.push(median(warm));
  }
  return medians[0];
}

console.log(`chromium headless, ${repeats} repeats each (first of each is with a cold server cache)${otherWeb ? `, alternating with the page in ${otherWeb}` : ""}`);
const a = await series("50 runs x 100,000 points (budgeted)", "bench", "w", "", repeats);
const b = await series("1 run x 10,000,000 points (budgeted)", "big", "", "", repeats);
const af = await series("50 runs x 100,000 points, every point", "bench", "w", "?budget=100000", 1);
console.log(`every point vs budgeted, 50 runs: ${(af / a).toFixed(1)}x slower`);
void ids;
void b;
await chrome.close();
for (const p of pages) p.server.stop();
work.remove();
