// A CPU profile of the page from a click on "Add chart" to the drawn chart of 50 runs x
// 100,000 points, in headless chromium against a real `trainbench serve` (as
// bench/ui_chart.mjs measures it), with the main thread's long tasks meanwhile. Writes
// DIR/chart-N.cpuprofile (Chrome DevTools' Performance panel loads it); build the page with
// TB_NO_MINIFY=1 (web/build.mjs) to read its functions' names.
//   node bench/ui_profile.mjs [REPEATS=3] [DIR=.]
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { browser, makeStore, pageReadyToChart, scratch, serve } from "../web/tests/harness.mjs";
const repeats = Number(process.argv[2] ?? 3);
const outDir = process.argv[3] ?? ".";
const work = scratch("tb-ui-prof-");
const db = join(work.dir, "bench.db");
makeStore(db, ["--bench-runs", "50", "--bench-points", "100000"]);
const server = await serve(db);
const chrome = await browser();
for (let rep = 0; rep < repeats; rep++) {
  const { context, page } = await pageReadyToChart(chrome, server.url, "bench", "w");
  const cdp = await context.newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await page.evaluate(() => {
    window.__bench = { longest: 0, tasks: [] };
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) { window.__bench.tasks.push([e.startTime, e.duration]); window.__bench.longest = Math.max(window.__bench.longest, e.duration); }
    }).observe({ type: "longtask" });
    document.querySelector("#add-chart").addEventListener("click", () => (window.__bench.t0 = performance.now()), { capture: true });
  });
  await cdp.send("Profiler.start");
  await page.click("#add-chart");
  await page.waitForSelector("section.chart[data-drawn]");
  await page.waitForTimeout(500);
  const { profile } = await cdp.send("Profiler.stop");
  const file = join(outDir, `chart-${rep}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  const b = await page.evaluate(() => window.__bench);
  const tasks = b.tasks.map(([at, ms]) => `${ms.toFixed(0)} ms at +${Math.max(0, at - b.t0).toFixed(0)}`).join(", ");
  console.log(`${file}: tasks over 50 ms after the click: ${tasks || "none"}`);
  await context.close();
}
await chrome.close();
server.stop();
work.remove();
