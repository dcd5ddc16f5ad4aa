// The web UI in Debian's chromium against a real `trainbench serve` on a store with the
// recorded trace and synthetic runs: selecting, charts, zoom, legend, grouping, exports,
// sharing, reload and a live run. Screenshots of the main views go to TB_TEST_OUTPUT.
import { execFileSync } from "node:child_process";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { browser, makeStore, repo, scratch, serve, trainbench } from "./harness.mjs";

const out = process.env.TB_TEST_OUTPUT ?? join(repo, "web", "test-output");
mkdirSync(out, { recursive: true });
const work = scratch();
const db = join(work.dir, "ui.db");
let ids, server, chrome;

before(async () => {
  ids = makeStore(db);
  server = await serve(db);
  chrome = await browser();
});

after(async () => {
  await chrome?.close();
  server?.stop();
  work.remove();
});

async function open(url = server.url) {
  const context = await chrome.newContext({ acceptDownloads: true, viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForSelector("body[data-ready='1']");
  return { page, context, errors };
}

const view = (page) => page.evaluate(() => JSON.parse(JSON.stringify(window.trainbench.view)));

async function selectWorkload(page, experiment, workload) {
  if (!(await page.isVisible(`input[data-workload="${experiment}:${workload}"]`))) {
    await page.click(`button[data-exp="${experiment}"]`);
  }
  await page.check(`input[data-workload="${experiment}:${workload}"]`);
}

async function addChart(page, metric, series) {
  metric = metric.replace(/\|$/, "");
  await page.waitForSelector(`#metric option[value="${metric}"]`, { state: "attached" });
  await page.selectOption("#metric", metric);
  const before = await page.locator("section.chart").count();
  await page.click("#add-chart");
  const chart = page.locator("section.chart").nth(before);
  await chart.locator(`xpath=self::*[@data-series="${series}"]`).waitFor();
  return chart;
}

// A run under `trainbench run` logging 0, 1, ... values - 1, one every 0.2 s through the
// client, with `args` (experiment, workload, name); resolves with its exit code.
function liveRun(args, values) {
  const script = `
import time, trainbench
with trainbench.Run() as run:
    for i in range(${values}):
        run.log_metric("value", i, step=i)
        time.sleep(0.2)
`;
  const child = spawn(
    trainbench,
    ["run", "--store", db, ...args, "-l", "top", "--", "/usr/bin/python3", "-c", script],
    { stdio: "ignore" },
  );
  return new Promise((resolve) => child.on("exit", resolve));
}

// The page with a forced point budget per line, and the queries of its requests to one API
// resource as they are made.
async function openWatching(resource, budget) {
  const url = new URL(server.url);
  if (budget) url.searchParams.set("budget", String(budget));
  const opened = await open(url.toString());
  const asked = [];
  opened.page.on(
    "request",
    (r) => r.url().includes(`/api/v1/${resource}?`) && asked.push(new URL(r.url()).searchParams),
  );
  return { ...opened, asked };
}

// A running run's workload, selected once the tree shows its experiment.
async function selectLiveWorkload(page, experiment, workload) {
  await page.waitForSelector(`button[data-exp="${experiment}"]`, { timeout: 15000 });
  await selectWorkload(page, experiment, workload);
}

// Drags across the first chart's plot from one fraction of its width to another, and waits
// for the chart to be drawn again with the zoomed range.
async function dragZoom(page, chart, from, to) {
  const box = await chart.locator(".plot .u-over").boundingBox();
  const drawn = Number(await chart.getAttribute("data-drawn"));
  await page.mouse.move(box.x + box.width * from, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * to, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction((d) => Number(document.querySelector("section.chart").dataset.drawn) > d, drawn);
}

async function downloadOf(page, click) {
  const [dl] = await Promise.all([page.waitForEvent("download"), click()]);
  return { name: dl.suggestedFilename(), bytes: readFileSync(await dl.path()) };
}

test("a workload's checkbox selects its runs, which the table compares", async () => {
  const { page, context, errors } = await open();
  // The tab has its icon (no 404 for /favicon.ico in the console).
  const icon = await page.evaluate(async () => {
    const href = document.querySelector('link[rel="icon"]')?.getAttribute("href");
    return href ? (await fetch(href)).headers.get("content-type") : null;
  });
  assert.equal(icon, "image/svg+xml");
  const oneByOne = [];
  page.on("request", (r) => /\/api\/v1\/runs\/[0-9a-f]{32}$/.test(new URL(r.url()).pathname) && oneByOne.push(r.url()));
  await selectWorkload(page, "synth", "1");
  assert.deepEqual((await view(page)).selected.sort(), [...ids.synth["1"]].sort());
  await page.waitForSelector("#table tbody tr:nth-child(2)");
  const rows = await page.locator("#table tbody tr").count();
  assert.equal(rows, 2);
  const header = await page.locator("#table thead").innerText();
  for (const col of ["GPU util % (steady)", "SM active % (steady)", "training s", "energy J", "final loss"]) {
    assert.ok(header.includes(col), `${col} in ${header}`);
  }
  // Both runs have batch size 64: said once above the table, not a column of equal cells.
  assert.ok(!header.includes("batch-size"), header);
  assert.match(await page.locator("#table .shared").innerText(), /batch-size=64/);
  // Energy: the run's attributed share beside its GPU's whole energy, which dcgmi's second
  // reading of the same counter does not double.
  const cells = async (row) => {
    const names = await page.locator("#table thead th").allInnerTexts();
    const values = await page.locator(`#table tbody tr:nth-child(${row}) td`).allInnerTexts();
    return Object.fromEntries(names.map((n, i) => [n.trim(), values[i]]));
  };
  // GPU utilization in percent, as its chart's axis, over each run's steady state: the
  // number runs() gives (100 times its ratio) and, for the workload, the report's.
  const table = await page.evaluate(
    (ids) => fetch(`/api/v1/runs?ids=${ids.join(",")}&format=columns`).then((r) => r.json()),
    ids.synth["1"],
  );
  const shown = [];
  for (const row of [1, 2]) {
    const run = await page.locator(`#table tbody tr:nth-child(${row})`).getAttribute("data-run");
    const steady = 100 * table.columns["gpu.utilization.gpu_ratio.steady_mean"][table.columns.id.indexOf(run)];
    assert.ok(steady > 1, `a steady mean of ${steady} %`);
    shown.push(Number((await cells(row))["GPU util % (steady)"]));
    assert.equal(shown[row - 1], +steady.toPrecision(4));
  }
  const csv = await page.evaluate(() => fetch("/api/v1/experiments/synth/report?format=csv").then((r) => r.text()));
  const [head, ...lines] = csv
    .trim()
    .split("\n")
    .map((l) => l.split(","));
  const workload = lines.find((l) => l[head.indexOf("workload")] === "1");
  const reported = Number(workload[head.indexOf("GPU util %")]);
  assert.ok(
    Math.abs(reported - (shown[0] + shown[1]) / 2) < 0.01,
    `the report's ${reported} % against the table's ${shown}`,
  );
  for (const row of [1, 2]) {
    const c = await cells(row);
    const share = Number(c["energy J"].replace(/[^0-9.e+-]/g, ""));
    const device = Number(c["GPU energy J (device)"].replace(/[^0-9.e+-]/g, ""));
    assert.ok(device > 0, JSON.stringify(c));
    const ratio = share / device;
    assert.ok(Math.abs(ratio - 0.6) < 0.02 || Math.abs(ratio - 0.4) < 0.02, JSON.stringify(c));
    // The CPU's energy beside it, as the rapl listener recorded it: 599 s at 20 W (A) or 10 W (B).
    const cpu = Number(c["CPU energy J"].replace(/[^0-9.e+-]/g, ""));
    assert.ok(cpu === 599 * 20 || cpu === 599 * 10, JSON.stringify(c));
  }
  // The rows came in one request for the selected runs, not one a run.
  assert.deepEqual(oneByOne, []);
  // Sorting by run, both ways.
  await page.click('#table button[data-sort="run"]');
  await page.waitForSelector('#table th[aria-sort="ascending"] button[data-sort="run"]');
  const first = await page.locator("#table tbody tr").first().innerText();
  assert.match(first, /0A-/);
  await page.click('#table button[data-sort="run"]');
  await page.waitForSelector('#table th[aria-sort="descending"] button[data-sort="run"]');
  assert.match(await page.locator("#table tbody tr").first().innerText(), /0B-/);
  // Removed from the side list, gone from the selection.
  await page.click(`#selected button[data-remove="${ids.synth["1"][0]}"]`);
  assert.deepEqual((await view(page)).selected, [ids.synth["1"][1]]);
  await page.screenshot({ path: join(out, "selection-and-table.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});

test("two charts, zoom and reset, a series toggled, grouping by workload, all kept over a reload", async () => {
  const { page, context, errors } = await open();
  await selectWorkload(page, "synth", "1");
  const util = await addChart(page, "gpu.utilization.gpu_ratio|", "2");
  // Two runs of one workload, one GPU each: the legend names the runs, the chart says once
  // what they share.
  const named = async () =>
    (await util.locator(".u-legend .u-series th").allInnerTexts()).slice(1).map((t) => t.replace(/:$/, "").trim());
  const alone = await named();
  assert.equal(alone.length, 2);
  for (const name of alone) assert.ok(/0[AB]-/.test(name) && !/[()]|gpu=/.test(name), `the run's name alone: ${name}`);
  assert.match(await util.locator(".chart-info").innerText(), /^2 runs of synth\/1 \(gpu=0\), /);
  await addChart(page, "train.loss|", "2");
  await util.locator('.overview[data-lines="2"]').waitFor(); // a few runs: each its own line
  // Each line passes through its points: the canvas has the line's colour where a point is.
  const onLine = await page.evaluate(() => {
    const u = window.trainbench.charts[0].plot;
    const misses = [];
    for (const si of [1, 2]) {
      const ys = u.data[si];
      const colour = u.series[si].stroke();
      const want = [1, 3, 5].map((k) => parseInt(colour.slice(k, k + 2), 16));
      for (const i of [Math.floor(ys.length * 0.3), Math.floor(ys.length * 0.7)]) {
        let j = i;
        while (ys[j] == null) j++;
        const px = Math.round(u.valToPos(u.data[0][j], "x", true));
        const py = Math.round(u.valToPos(ys[j], "y", true));
        const near = u.ctx.getImageData(px - 2, py - 2, 5, 5).data;
        let hit = false;
        for (let k = 0; k < near.length; k += 4) {
          hit ||= want.every((c, n) => Math.abs(near[k + n] - c) < 60) && near[k + 3] > 100;
        }
        if (!hit) misses.push({ si, j, px, py });
      }
    }
    return misses;
  });
  assert.deepEqual(onLine, [], "the lines go through their points");
  // The page asked for x as steps between the grid's places; its lines have the x the
  // server gives as numbers (to the digits those are printed with).
  const apart = await page.evaluate(async () => {
    const c = window.trainbench.charts[0];
    const query = { runs: c.lines.map((l) => l.run).join(","), metric: c.state.metric, budget: c.budget() };
    if (c.state.labels) query.labels = c.state.labels; // as the page asks: empty means any
    const answer = await (await fetch("/api/v1/series?" + new URLSearchParams(query))).json();
    const asked = performance
      .getEntriesByType("resource")
      .some((e) => e.name.includes("/api/v1/series?") && e.name.includes("x_form=places"));
    const distances = answer.series.map((s) => {
      const line = c.lines.find((l) => l.run === s.run);
      if (!line || line.x.length !== s.x.length) return Infinity;
      return Math.max(...s.x.map((x, i) => Math.abs(x - line.x[i]) / answer.grid.place_width));
    });
    return { asked, distances };
  });
  assert.ok(apart.asked, "the page asks for places");
  assert.equal(apart.distances.length, 2);
  assert.ok(
    apart.distances.every((d) => d < 0.01),
    JSON.stringify(apart.distances),
  );
  assert.equal((await view(page)).charts.length, 2);

  // Drag to zoom: the chart keeps the range and fetches finer data for it.
  await dragZoom(page, util, 0.2, 0.5);
  const zoom = (await view(page)).charts[0].zoom;
  assert.ok(zoom && zoom[0] > 50 && zoom[1] < 400 && zoom[0] < zoom[1], JSON.stringify(zoom));
  await page.screenshot({ path: join(out, "charts-zoomed.png"), fullPage: true });
  await util.locator('[data-a="reset"]').click();
  await page.waitForFunction(() => window.trainbench.view.charts[0].zoom === null);

  // A legend entry switches its series off, and back on.
  const entry = util.locator(".u-legend .u-series").nth(1);
  await entry.click();
  assert.equal((await view(page)).charts[0].hidden.length, 1);
  await entry.click();
  assert.equal((await view(page)).charts[0].hidden.length, 0);
  await entry.click();

  // Both workloads, as means with min-max bands.
  await selectWorkload(page, "synth", "2");
  await util.locator('[data-a="selection"]').click();
  await util.locator('xpath=self::*[@data-series="4"]').waitFor();
  // Runs of two workloads named alike ("train.py 0A-" in each): each line is named by its
  // workload and letter, as the server's figures name it.
  const mixed = await named();
  assert.equal(mixed.filter((n) => /^1 0[AB]-$/.test(n)).length, 2, mixed.join(" | "));
  assert.equal(mixed.filter((n) => /^2 0[AB]-$/.test(n)).length, 2, mixed.join(" | "));
  // Phases are one run's: a chart of 4 runs shades none until one is chosen, by its legend name.
  const phaseList = util.locator('[data-k="phasesOf"]');
  await page.waitForFunction(
    () => document.querySelector("section.chart").querySelectorAll('[data-k="phasesOf"] option').length === 5,
  );
  assert.equal(await util.getAttribute("data-phases"), "0");
  const idleRun = ids.synth["2"][0];
  const idleName = await phaseList.locator(`option[value="${idleRun}"]`).innerText();
  assert.ok(mixed.includes(idleName), `${idleName} among ${mixed.join(" | ")}`);
  await phaseList.selectOption(idleRun);
  // Run 0A of workload 2 has an idle gap: shaded on the chart, found where it was planted.
  await page.waitForFunction(() => Number(document.querySelector("section.chart").dataset.phases) >= 1);
  assert.equal(await util.getAttribute("data-phases-of"), idleRun);
  assert.equal((await view(page)).charts[0].phasesOf, idleRun);
  // Events are off by default, as in figures; asked for, the runs' epochs are marked (one
  // marker where runs had one at the same second), their events asked in one request, not
  // one a run.
  const events = await page.evaluate(
    (runs) => fetch(`/api/v1/events?runs=${runs.join(",")}`).then((r) => r.json()),
    [...ids.synth["1"], ...ids.synth["2"]],
  );
  const planted = events.runs.reduce((n, r) => n + r.events.length, 0);
  assert.ok(planted >= 4, JSON.stringify(events));
  assert.equal(await util.getAttribute("data-events"), "0", "no markers until asked");
  await util.locator('[data-f="events"]').check();
  await page.waitForFunction(() => Number(document.querySelector("section.chart").dataset.events) >= 1);
  assert.equal((await view(page)).charts[0].figure.events, true);
  const marked = Number(await util.getAttribute("data-events"));
  assert.ok(marked >= 1 && marked <= planted, `${marked} markers for ${planted} events`);
  const perRun = await page.evaluate(
    () => performance.getEntriesByType("resource").filter((e) => /\/runs\/[0-9a-f]{32}\/events/.test(e.name)).length,
  );
  assert.equal(perRun, 0);
  const phases = await page.evaluate(
    (id) => fetch(`/api/v1/runs/${id}/phases`).then((r) => r.json()),
    ids.synth["2"][0],
  );
  const idle = phases.phases.find((p) => p.kind === "idle");
  assert.ok(idle, JSON.stringify(phases.phases));
  assert.ok(
    Math.abs((idle.start_ms - 1763777000000) / 1000 - 300) <= 2 &&
      Math.abs((idle.end_ms - 1763777000000) / 1000 - 330) <= 2,
  );
  await page.screenshot({ path: join(out, "phases.png"), fullPage: true });
  await util.locator('[data-k="grouping"]').selectOption("workloads");
  await page.waitForFunction(() => document.querySelector("section.chart .u-legend").textContent.includes("mean"));
  // Wall time cannot align a workload's runs: offered only for single runs, and says so.
  assert.equal(await util.locator('[data-k="x"] option[value="wall"]').isDisabled(), true);
  assert.match(await util.locator('[data-k="x"] option[value="wall"]').innerText(), /single runs only/);
  await page.waitForFunction(() => document.querySelector('section.chart [data-k="phasesOf"]').disabled);
  assert.equal(await util.getAttribute("data-series"), "2");
  const legend = await util.locator(".u-legend").innerText();
  assert.ok(legend.includes("workload 1, mean of 2 runs") && legend.includes("workload 2, mean of 2 runs"), legend);
  await page.screenshot({ path: join(out, "workload-means.png"), fullPage: true });

  // The charts survive a reload.
  const saved = await view(page);
  await page.reload();
  await page.waitForSelector("body[data-ready='1']");
  await page.waitForSelector('section.chart[data-series="2"]');
  assert.deepEqual(await view(page), saved);
  assert.equal(await page.locator("section.chart").count(), 2);
  assert.deepEqual(errors, []);
  await context.close();
});

// What a person does with the chart panel, and what each control must change: the chart's
// x scale, the export's first and last x and its name, the X list's own choice, a view
// kept over a reload.
test("the chart's controls do what they say: a drag zooms the axis and the export, the X list keeps its choice, a script's metric opens over its steps", async () => {
  const { page, context, errors } = await open();
  await selectWorkload(page, "synth", "1");
  const util = await addChart(page, "gpu.utilization.gpu_ratio|", "2");
  const scaleOf = (i) =>
    page.evaluate((n) => {
      const u = window.trainbench.charts[n].plot;
      return [u.scales.x.min, u.scales.x.max];
    }, i);
  const csvOf = async (chart) =>
    (await downloadOf(page, () => chart.locator('[data-a="csv"]').click())).bytes.toString("utf8").trim().split("\n");
  const choose = async (chart, index, value) => {
    const drawn = Number(await chart.getAttribute("data-drawn"));
    await chart.locator('select[data-k="x"]').selectOption(value);
    await page.waitForFunction(
      ([n, d]) => Number(document.querySelectorAll("section.chart")[n].dataset.drawn) > d,
      [index, drawn],
    );
  };

  // A drag zooms the axis itself, and the export shows that range, named for it.
  await dragZoom(page, util, 0.2, 0.5);
  const zoom = (await view(page)).charts[0].zoom;
  const [lo, hi] = await scaleOf(0);
  assert.ok(Math.abs(lo - zoom[0]) < 1e-6 && Math.abs(hi - zoom[1]) < 1e-6, `x scale [${lo}, ${hi}] for zoom ${zoom}`);
  const zoomed = await csvOf(util);
  const xs = zoomed.slice(1).map((l) => Number(l.split(",")[0]));
  assert.ok(
    xs[0] >= zoom[0] - 1 && xs.at(-1) <= zoom[1] + 1 && xs.at(-1) - xs[0] > 0.8 * (zoom[1] - zoom[0]),
    `export from ${xs[0]} to ${xs.at(-1)}, zoom ${zoom}`,
  );
  const png = await downloadOf(page, () => util.locator('[data-a="png"]').click());
  assert.ok(png.name.endsWith(`_${Math.round(zoom[0])}-${Math.round(zoom[1])}s.png`), png.name);
  // Reset: the whole run again.
  await util.locator('[data-a="reset"]').click();
  await page.waitForFunction(() => window.trainbench.view.charts[0].zoom === null);
  await page.waitForFunction(() => window.trainbench.charts[0].plot?.scales.x.min === 0);
  const [, whole] = await scaleOf(0);
  assert.ok(whole > 500, `the whole run: to ${whole}`);

  // The X list keeps what was chosen: wall time (Unix seconds on the axis, ms in the export).
  await choose(util, 0, "wall");
  assert.equal(await util.locator('select[data-k="x"]').inputValue(), "wall");
  assert.equal((await view(page)).charts[0].x, "wall");
  assert.ok((await scaleOf(0))[0] > 1.7e9, "the axis in wall time");
  assert.equal((await csvOf(util))[0].split(",")[0], "time_ms");

  // A script's metric opens over its steps, as `trainbench plot` draws it; its export too.
  const loss = await addChart(page, "train.loss|", "2");
  assert.equal((await view(page)).charts[1].x, "step");
  assert.equal(await loss.locator('select[data-k="x"]').inputValue(), "step");
  const steps = await csvOf(loss);
  assert.equal(steps[0].split(",")[0], "step");
  const lastStep = Number(steps.at(-1).split(",")[0]);
  assert.ok(lastStep >= 10 && Number.isInteger(lastStep), `steps to ${lastStep}`);
  // Chosen over time instead, it stays so, over a reload too.
  await choose(loss, 1, "relative");
  assert.equal(await loss.locator('select[data-k="x"]').inputValue(), "relative");
  assert.equal((await csvOf(loss))[0].split(",")[0], "seconds_since_start");
  await page.reload();
  await page.waitForSelector("body[data-ready='1']");
  await page.locator("section.chart").nth(1).locator('xpath=self::*[@data-series="2"]').waitFor();
  assert.deepEqual(
    (await view(page)).charts.map((c) => c.x),
    ["wall", "relative"],
  );
  assert.equal(await page.locator("section.chart").nth(0).locator('select[data-k="x"]').inputValue(), "wall");
  assert.deepEqual(errors, []);
  await context.close();
});

// The rest of the chart panel, each control used as a person uses it and checked by what
// it must change on the chart (uPlot's scales, series and data) and in the export.
test("smoothing, line width, mono, log y, a typed y range and the grouping change the chart and its export", async () => {
  const { page, context, errors } = await open();
  await selectWorkload(page, "synth", "2");
  const chart = await addChart(page, "gpu.utilization.gpu_ratio|", "2");
  const drawnAfter = async (act) => {
    const drawn = Number(await chart.getAttribute("data-drawn"));
    await act();
    await page.waitForFunction((d) => Number(document.querySelector("section.chart").dataset.drawn) > d, drawn);
  };
  const plotted = () =>
    page.evaluate(() => {
      const u = window.trainbench.charts[0].plot;
      // How much the line jumps from point to point: what smoothing takes away.
      const ys = u.data[1].filter((v) => v != null);
      const spread = ys.slice(1).reduce((a, v, i) => a + Math.abs(v - ys[i]), 0) / (ys.length - 1);
      return {
        spread,
        width: u.series[1].width,
        strokes: u.series.slice(1).map((sr) => (typeof sr.stroke === "function" ? sr.stroke(u, 1) : sr.stroke)),
        distr: u.scales.y.distr,
        y: [u.scales.y.min, u.scales.y.max],
        names: [...u.root.querySelectorAll(".u-legend .u-series th")].slice(1).map((t) => t.innerText.trim()),
      };
    });
  const raw = await plotted();
  const csvValues = async () => {
    const csv = (await downloadOf(page, () => chart.locator('[data-a="csv"]').click())).bytes
      .toString("utf8")
      .trim()
      .split("\n");
    return csv
      .slice(1)
      .map((l) => Number(l.split(",")[1]))
      .filter((v) => !Number.isNaN(v));
  };
  const spreadOf = (v) => v.slice(1).reduce((a, x, i) => a + Math.abs(x - v[i]), 0) / (v.length - 1);
  const rawExport = spreadOf(await csvValues());

  // Smoothing: the drawn line and the exported values vary less.
  await drawnAfter(() =>
    chart.locator('[data-k="smoothing"]').evaluate((el) => {
      el.value = "99";
      el.dispatchEvent(new Event("input"));
    }),
  );
  const smooth = await plotted();
  assert.ok(smooth.spread < raw.spread * 0.5, `smoothed jumps ${smooth.spread} vs raw ${raw.spread}`);
  const smoothExport = spreadOf(await csvValues());
  assert.ok(smoothExport < rawExport * 0.5, `the export is smoothed as the screen is: ${smoothExport} vs ${rawExport}`);
  await drawnAfter(() =>
    chart.locator('[data-k="smoothing"]').evaluate((el) => {
      el.value = "0";
      el.dispatchEvent(new Event("input"));
    }),
  );

  // Line width and mono.
  await drawnAfter(() => chart.locator('[data-k="width"]').selectOption("3"));
  assert.equal((await plotted()).width, 3);
  await drawnAfter(() => chart.locator('[data-k="mono"]').check());
  const mono = await plotted();
  assert.ok(
    mono.strokes.every((c) => /^#(000000|555555)$/.test(c)),
    mono.strokes.join(" "),
  );
  assert.notDeepEqual(mono.strokes, raw.strokes);

  // Log y, then a y range typed in.
  await drawnAfter(() => chart.locator('[data-k="logY"]').check());
  assert.equal((await plotted()).distr, 3);
  await drawnAfter(() => chart.locator('[data-k="logY"]').uncheck());
  await drawnAfter(async () => {
    await chart.locator('[data-k="yMin"]').fill("10");
    await chart.locator('[data-k="yMin"]').dispatchEvent("change");
  });
  await drawnAfter(async () => {
    await chart.locator('[data-k="yMax"]').fill("30");
    await chart.locator('[data-k="yMax"]').dispatchEvent("change");
  });
  assert.deepEqual((await plotted()).y, [10, 30]);

  // Grouping by workload: one mean line (and its band) named for the workload, not the runs.
  await drawnAfter(() => chart.locator('[data-k="grouping"]').selectOption("workloads"));
  const grouped = await plotted();
  assert.ok(grouped.names.length >= 1 && grouped.names.every((n) => !/0[AB]-/.test(n)), grouped.names.join(" | "));
  assert.ok(
    grouped.names.some((n) => /\b2\b/.test(n)),
    `the workload's name: ${grouped.names.join(" | ")}`,
  );
  assert.deepEqual(errors, []);
  await context.close();
});

test("a run keeps its colour in every chart of the same runs; a caption counts the runs drawn", async () => {
  const { page, context, errors } = await open();
  await page.check('input[data-experiment="traces"]');
  await selectWorkload(page, "synth", "1");
  await page.waitForFunction(() => window.trainbench.view.selected.length === 3);
  await addChart(page, "gpu.power.draw_watts|", "3");
  const loss = await addChart(page, "train.loss|", "2"); // the recorded trace has no loss
  const colours = (i) =>
    page.evaluate((i) => {
      const c = window.trainbench.charts[i];
      return Object.fromEntries(c.lines.map((l, k) => [l.run, c.plot.series[k + 1].stroke()]));
    }, i);
  const [util, losses] = [await colours(0), await colours(1)];
  assert.equal(Object.keys(util).length, 3);
  assert.equal(Object.keys(losses).length, 2);
  for (const [run, colour] of Object.entries(losses))
    assert.equal(colour, util[run], `run ${run}: ${JSON.stringify({ util, losses })}`);
  assert.notEqual(...Object.values(losses));
  assert.match(await loss.locator(".chart-info").innerText(), /^2 runs of synth\/1 \(3 selected\), /);
  // The exported figure draws them in the same colours, and not in the first run's.
  const svg = (await downloadOf(page, () => loss.locator('[data-a="svg"]').click())).bytes.toString("utf8");
  for (const colour of Object.values(losses)) assert.ok(svg.includes(`stroke="${colour}"`), `${colour} in the SVG`);
  const traceColour = Object.entries(util).find(([run]) => !(run in losses))[1];
  assert.ok(!svg.includes(`stroke="${traceColour}"`), `the recorded run's ${traceColour} is not in the loss figure`);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a click on a line opens its run's details: name, status in words, command, params", async () => {
  const { page, context, errors } = await open();
  await selectWorkload(page, "synth", "1");
  await addChart(page, "gpu.utilization.gpu_ratio|", "2");
  const at = await page.evaluate(() => {
    const u = window.trainbench.charts[0].plot;
    let i = Math.floor(u.data[1].length / 2);
    while (u.data[1][i] == null) i++;
    const box = u.over.getBoundingClientRect();
    return { x: box.left + u.valToPos(u.data[0][i], "x"), y: box.top + u.valToPos(u.data[1][i], "y") };
  });
  await page.mouse.move(at.x, at.y);
  await page.mouse.click(at.x, at.y);
  const details = page.locator("section.chart .run-details").first();
  await details.waitFor();
  const text = await details.innerText();
  assert.match(text, /(^|\n)train\.py 0[AB]- FINISHED synth\/1\n/, text);
  assert.match(text, /batch-size=64/, text);
  // The status dot holds no text: the word stands beside it, not printed over what follows.
  assert.equal(await details.locator(".status").innerText(), "");
  const [dot, box] = [await details.locator(".status").boundingBox(), await details.boundingBox()];
  assert.ok(dot.width < 16 && dot.x < box.x + box.width / 2, JSON.stringify(dot));
  await details.locator(".close").click();
  assert.ok(await details.isHidden());
  assert.deepEqual(errors, []);
  await context.close();
});

test("a chart asks for two points per pixel of its plot, the first one too (asked before the page is laid out with it)", async () => {
  const { page, context, errors, asked } = await openWatching("series");
  await selectWorkload(page, "synth", "1");
  const first = await addChart(page, "gpu.utilization.gpu_ratio|", "2");
  const second = await addChart(page, "train.loss|", "2");
  const wanted = async (chart) =>
    Math.max(400, Math.min(4000, 2 * (await chart.locator(".plot").evaluate((e) => e.clientWidth))));
  // The charts' requests (the table asks for 4 points of each run's loss).
  const budgets = () => asked.filter((q) => q.get("budget") !== "4").map((q) => Number(q.get("budget")));
  assert.deepEqual(budgets(), [await wanted(first), await wanted(second)]);
  // Reopened from the saved view, both charts are mounted at once.
  asked.length = 0;
  await page.reload();
  await page.waitForSelector("section.chart[data-drawn] + section.chart[data-drawn]");
  assert.deepEqual(budgets(), [await wanted(first), await wanted(second)]);
  assert.deepEqual(errors, []);
  await context.close();
});

test("exports: the server's figure renderer draws the chart on screen as PDF, SVG, PNG and CSV", async () => {
  const { page, context, errors } = await open();
  await selectWorkload(page, "synth", "2");
  const chart = await addChart(page, "gpu.utilization.gpu_ratio|", "2");
  // The y axis is titled with its unit, ratios in percent, time ticks at round minutes.
  // (uPlot draws its axes on the canvas: read what it drew them with.)
  const axes = await page.evaluate(() =>
    window.trainbench.charts.at(-1).plot.axes.map((a) => ({ label: a.label, values: a._values })),
  );
  assert.equal(axes[1].label, "GPU utilization (%)");
  assert.equal(axes[0].label, "Time since start (m:ss)", "titled in the format of its labels, as figures are");
  assert.ok(
    axes[0].values.length >= 2 && axes[0].values.every((t) => /^\d+:(00|30)$/.test(t)),
    axes[0].values.join(" "),
  );

  // Export settings: a column wide, 9-point text, legend names from the runs' letters.
  await chart.locator(".figure-look summary").click();
  await chart.locator('[data-f="width"]').fill("8.4cm");
  await chart.locator('[data-f="width"]').dispatchEvent("change");
  await chart.locator('[data-f="font"]').fill("9");
  await chart.locator('[data-f="font"]').dispatchEvent("change");
  await chart.locator('[data-f="legend"]').fill("run {letter}");
  await chart.locator('[data-f="legend"]').dispatchEvent("change");

  const pdf = await downloadOf(page, () => chart.locator('[data-a="pdf"]').click());
  // Named for what it shows: the metric and how many runs.
  assert.match(pdf.name, /^gpu\.utilization\.gpu_ratio_\d+-runs\.pdf$/);
  const pdfPath = join(work.dir, "chart.pdf");
  writeFileSync(pdfPath, pdf.bytes);
  const fonts = execFileSync("pdffonts", [pdfPath], { encoding: "utf8" }).split("\n").slice(2).filter(Boolean);
  assert.ok(fonts.length >= 1 && fonts.every((l) => / yes yes /.test(l) && !/Type 3/.test(l)), fonts.join("\n"));
  assert.match(execFileSync("pdfinfo", [pdfPath], { encoding: "utf8" }), /Page size:\s+238\.11 x/);
  const words = execFileSync("pdftotext", [pdfPath, "-"], { encoding: "utf8" });
  for (const t of ["GPU utilization (%)", "Time since start", "run 0A-", "run 0B-"])
    assert.ok(words.includes(t), `${t} in ${words}`);

  const svg = (await downloadOf(page, () => chart.locator('[data-a="svg"]').click())).bytes.toString("utf8");
  assert.ok(
    svg.includes(">GPU utilization (%)</text>") && svg.includes(">run 0A-") && svg.trimEnd().endsWith("</svg>"),
  );
  // Colours as on screen: the palette's first two.
  for (const colour of ["#08306b", "#a50f15"]) {
    const path = svg.match(new RegExp(`<path d="([^"]+)" fill="none" stroke="${colour}"`));
    assert.ok(path && path[1].split("L").length > 300, `${colour} line with its points`);
  }
  // A series switched off on screen is left out; the other keeps its colour.
  await chart.locator(".u-legend .u-series").nth(1).click();
  const fewer = (await downloadOf(page, () => chart.locator('[data-a="svg"]').click())).bytes.toString("utf8");
  assert.ok(!fewer.includes('stroke="#08306b"') && fewer.includes('stroke="#a50f15"'));
  await chart.locator(".u-legend .u-series").nth(1).click();
  // No legend: the names are left out, the lines stay.
  await chart.locator('[data-f="noLegend"]').check();
  const bare = (await downloadOf(page, () => chart.locator('[data-a="svg"]').click())).bytes.toString("utf8");
  assert.ok(!bare.includes(">run 0A-") && bare.includes('stroke="#08306b"'), "no legend names, the lines drawn");
  await chart.locator('[data-f="noLegend"]').uncheck();

  const png = await downloadOf(page, () => chart.locator('[data-a="png"]').click());
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(png.bytes.includes(Buffer.from("pHYs")), "the PNG says its resolution");

  const csv = (await downloadOf(page, () => chart.locator('[data-a="csv"]').click())).bytes
    .toString("utf8")
    .trim()
    .split("\n");
  assert.equal(csv[0].split(",")[0], "seconds_since_start");
  assert.ok(csv.length > 500);
  // Workload 2's run B sits at 21% +- 5.
  const col = csv[0].split(",").findIndex((h) => h.includes("0B-"));
  const values = csv
    .slice(1)
    .map((l) => Number(l.split(",")[col]))
    .filter((v) => !Number.isNaN(v) && v !== 0);
  assert.ok(
    values.length > 300 && values.every((v) => v > 15 && v < 27),
    "the CSV holds the plotted values in percent",
  );
  assert.deepEqual(errors, []);
  await context.close();
});

test("the overview strip: each line of a few runs, the envelope of many, and the zoomed range marked", async () => {
  const manyDb = join(work.dir, "many.db");
  makeStore(manyDb, ["--bench-runs", "12", "--bench-points", "3000"]);
  const many = await serve(manyDb);
  try {
    const { page, context, errors } = await open(many.url);
    await selectWorkload(page, "bench", "w");
    const chart = await addChart(page, "gpu.utilization.gpu_ratio|", "12");
    await chart.locator('.overview[data-lines="envelope"]').waitFor();
    // The strip's upper and lower lines are the highest and lowest of the chart's lines at
    // each x, not some of the lines.
    const check = await page.evaluate(() => {
      const panel = window.trainbench.charts[0];
      const [x, hi, lo] = panel.overview.plot.data;
      const d = panel.plot.data;
      let compared = 0;
      for (let i = 0; i < x.length; i++) {
        const ys = d
          .slice(1)
          .map((s) => s[i])
          .filter((v) => v != null);
        if (!ys.length) continue;
        if (hi[i] !== Math.max(...ys) || lo[i] !== Math.min(...ys)) return `at ${x[i]}: ${hi[i]}/${lo[i]} vs ${ys}`;
        compared++;
      }
      return { compared, series: panel.overview.plot.series.length, lines: d.length - 1 };
    });
    assert.equal(typeof check, "object", String(check));
    assert.ok(check.compared > 100, JSON.stringify(check));
    assert.equal(check.series, 3, "x, highest, lowest");
    assert.equal(check.lines, 12);
    // The legend box shows all 13 entries (x and 12 runs) whole: none cut, none scrolled away.
    const legend = await chart.evaluate((el) => {
      const box = el.querySelector(".u-legend").getBoundingClientRect();
      const entries = [...el.querySelectorAll(".u-legend tr")]
        .filter((r) => r.style.display !== "none")
        .map((r) => r.getBoundingClientRect());
      return {
        entries: entries.length,
        inside: entries.filter((e) => e.top >= box.top - 0.5 && e.bottom <= box.bottom + 0.5).length,
      };
    });
    assert.deepEqual(legend, { entries: 13, inside: 13 });
    // A drag on the chart zooms; the strip marks that range within its full width.
    await dragZoom(page, chart, 0.3, 0.6);
    await page.waitForFunction(() => window.trainbench.charts[0].overview.plot?.select.width > 0);
    const mark = await page.evaluate(() => {
      const o = window.trainbench.charts[0].overview.plot;
      return { left: o.select.left, width: o.select.width, full: o.bbox.width / devicePixelRatio };
    });
    assert.ok(mark.left > mark.full * 0.2 && mark.left < mark.full * 0.4, JSON.stringify(mark));
    assert.ok(mark.width > mark.full * 0.2 && mark.width < mark.full * 0.4, JSON.stringify(mark));
    assert.deepEqual(errors, []);
    await context.close();
  } finally {
    many.stop();
  }
});

test("the first page leads: experiments at a glance, one click to a quick comparison", async () => {
  const { page, context, errors } = await open();
  const rows = await page.locator("#overview-table tbody tr").allInnerTexts();
  assert.ok(rows.length >= 2 && rows.some((r) => r.includes("synth") && r.includes("4")), rows.join("\n"));
  // The tree counts each experiment's runs in words: "1 run", "4 runs".
  const counts = await page.locator("#tree .exp > small").allInnerTexts();
  assert.ok(counts.includes("1 run") && counts.includes("4 runs"), counts.join(" | "));
  await page.click('#overview button[data-compare="synth"]');
  // Every run of the experiment selected, and the grid of the charts every benchmark needs.
  await page.waitForFunction(() => document.querySelectorAll("section.chart").length >= 4);
  assert.equal((await view(page)).selected.length, 4);
  const metrics = (await view(page)).charts.map((c) => c.metric);
  for (const m of [
    "gpu.sm.active_ratio",
    "gpu.power.draw_watts",
    "train.throughput_samples_per_second",
    "train.loss",
  ]) {
    assert.ok(metrics.includes(m), metrics.join(", "));
  }
  assert.ok(await page.isHidden("#overview"), "the overview makes way for the charts");
  // Their x axes are one: time since start over the runs' whole 10 minutes, loss and
  // throughput (which end earlier) too.
  await page.waitForFunction(() => window.trainbench.charts.every((c) => c.plot));
  const spans = await page.evaluate(() =>
    window.trainbench.charts.map((c) => [c.state.x, c.plot.scales.x.min, c.plot.scales.x.max]),
  );
  assert.ok(
    spans.every(([x, min, max]) => x === "relative" && min === 0 && max === spans[0][2]),
    JSON.stringify(spans),
  );
  assert.ok(spans[0][2] >= 600, JSON.stringify(spans));
  // Every axis says its unit, a script's throughput too.
  const labels = await page.evaluate(() =>
    Object.fromEntries(window.trainbench.charts.map((c) => [c.state.metric, c.plot.axes[1].label])),
  );
  assert.equal(labels["train.throughput_samples_per_second"], "Throughput (samples/s)", JSON.stringify(labels));
  const boxes = await Promise.all([0, 1].map((i) => page.locator("section.chart").nth(i).boundingBox()));
  assert.ok(Math.abs(boxes[0].y - boxes[1].y) < 2 && boxes[1].x > boxes[0].x, "charts side by side");
  // The table shows what differs (batch size) and fits the screen.
  assert.match(await page.locator("#table thead").innerText(), /batch-size/);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 1366, `page width ${width}`);
  // The experiment's checkbox reflects it; clear all empties the selection.
  assert.ok(await page.isChecked('input[data-experiment="synth"]'));
  await page.click("#clear-selection");
  assert.equal((await view(page)).selected.length, 0);
  await page.check('input[data-experiment="synth"]');
  await page.waitForFunction(() => window.trainbench.view.selected.length === 4);
  await page.screenshot({ path: join(out, "first-page-comparison.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await context.close();
});

test("the metric picker: readable names with units, grouped by source, searchable, one entry per quantity", async () => {
  const { page, context, errors } = await open();
  await selectWorkload(page, "synth", "1");
  await page.waitForSelector('#metric option[value="gpu.utilization.gpu_ratio"]', { state: "attached" });
  const groups = await page.locator("#metric optgroup").evaluateAll((g) => g.map((x) => x.label));
  assert.ok(groups.includes("GPU") && groups.includes("Training script"), groups.join(", "));
  const option = await page.locator('#metric option[value="gpu.utilization.gpu_ratio"]').innerText();
  assert.equal(option.trim(), "GPU utilization (%)");
  // A sensible default, not the first metric in alphabetical order.
  assert.equal(await page.locator("#metric").inputValue(), "gpu.sm.active_ratio");
  const values = await page.locator("#metric option").evaluateAll((o) => o.map((x) => x.value));
  assert.equal(values.length, new Set(values).size, "each metric once, whatever its label sets");
  await page.fill("#metric-search", "power");
  const found = await page.locator("#metric option").evaluateAll((o) => o.map((x) => x.value));
  assert.ok(
    found.length >= 1 && found.every((v) => v.includes("power") || v.includes("energy") || v.includes("watt")),
    found.join(", "),
  );
  // The series (GPU, source) of a metric are chosen in its chart.
  await page.fill("#metric-search", "");
  const chart = await addChart(page, "gpu.utilization.gpu_ratio", "2");
  const series = await chart.locator('[data-k="labels"] option').evaluateAll((o) => o.map((x) => x.value));
  assert.ok(series.includes("") && series.includes("gpu=0"), series.join(", "));
  // Log scale and a y range apply on screen.
  await chart.locator('[data-k="logY"]').check();
  await chart.locator('[data-k="yMax"]').fill("50");
  await chart.locator('[data-k="yMax"]').dispatchEvent("change");
  const saved = (await view(page)).charts[0];
  assert.ok(saved.logY && saved.yMax === 50);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a view travels as a JSON file and as a link, and comes back the same", async () => {
  const first = await open();
  await selectWorkload(first.page, "synth", "1");
  await addChart(first.page, "gpu.power.draw_watts|", "2");
  await first.page.locator('[data-k="smoothing"]').fill("60");
  await first.page.locator('[data-k="mono"]').check();
  const saved = await view(first.page);
  const file = await downloadOf(first.page, () => first.page.click("#share-download"));
  assert.deepEqual(JSON.parse(file.bytes.toString("utf8")), saved);
  await first.page.click("#share-link");
  const link = first.page.url();
  assert.match(link, /#view=/);
  await first.context.close();

  // A fresh browser profile: nothing saved; the file restores the view.
  const second = await open();
  assert.equal(await second.page.locator("section.chart").count(), 0);
  const path = join(work.dir, "view.json");
  (await import("node:fs")).writeFileSync(path, file.bytes);
  await second.page.setInputFiles("#share-upload", path);
  await second.page.waitForSelector('section.chart[data-series="2"]');
  assert.deepEqual(await view(second.page), saved);
  await second.context.close();

  const third = await open(link);
  await third.page.waitForSelector('section.chart[data-series="2"]');
  assert.deepEqual(await view(third.page), saved);
  assert.equal(await third.page.locator('[data-k="smoothing"]').inputValue(), "60");
  await third.page.screenshot({ path: join(out, "shared-view.png"), fullPage: true });
  await third.context.close();
});

test("the chart of a running run updates by itself", async () => {
  const done = liveRun(["-e", "live", "-n", "live"], 60);
  const { page, context, asked } = await openWatching("series");
  await selectLiveWorkload(page, "live", "");
  const chart = await addChart(page, "train.value|", "1");
  const points = async () =>
    Number((await chart.locator(".chart-info").innerText()).match(/([\d,]+) points/)[1].replace(/,/g, ""));
  const start = await points();
  await page.waitForFunction(
    (n) =>
      Number(
        document
          .querySelector("section.chart .chart-info")
          .textContent.match(/([\d,]+) points/)[1]
          .replace(/,/g, ""),
      ) > n,
    start,
    { timeout: 10000 },
  );
  assert.ok((await points()) > start);
  // A refresh asks only for what came after the newest point the chart has, and appends it.
  const refresh = asked.find((q) => q.has("since"));
  assert.ok(refresh, asked.map(String).join("\n"));
  assert.ok(Number(refresh.get("since")) >= 1.7e12, refresh.toString());
  assert.ok(Number(await chart.getAttribute("data-appended")) > 0);
  const y = await page.evaluate(() => window.trainbench.charts[0].lines[0].y);
  assert.deepEqual(
    y,
    y.map((_, i) => i),
    "every value logged so far, once, in order",
  );
  await page.screenshot({ path: join(out, "live-run.png"), fullPage: true });
  // Once the run has ended, the chart is loaded whole once more: every point, none twice.
  assert.equal(await done, 0);
  await page.waitForFunction(
    () => {
      const c = document.querySelector("section.chart");
      return c.dataset.appended === "0" && /\b60 points/.test(c.querySelector(".chart-info").textContent);
    },
    null,
    { timeout: 20000 },
  );
  const whole = asked.length;
  await page.waitForTimeout(3500);
  assert.equal(asked.length, whole, "a finished run's chart is not refreshed");
  await context.close();
});

test("a live chart past its budget thins its own lines instead of loading the run whole again", async () => {
  const done = liveRun(["-e", "thin", "-n", "thin"], 100); // 20 s: several refreshes on a loaded machine
  // 16 points a line: past half of it within a refresh or two.
  const { page, context, errors, asked } = await openWatching("series", 16);
  await selectLiveWorkload(page, "thin", "");
  const chart = await addChart(page, "train.value|", "1");
  // Thinned at least once, with more values logged than the budget holds.
  await page.waitForFunction(
    () =>
      Number(document.querySelector("section.chart").dataset.thinned ?? 0) >= 1 &&
      window.trainbench.charts[0].lines[0].y.at(-1) >= 30,
    null,
    { timeout: 30000 },
  );
  const line = await page.evaluate(() => window.trainbench.charts[0].lines[0]);
  // While the run goes on, only the first load asked for the whole run.
  assert.equal(asked.filter((q) => !q.has("since")).length, 1, asked.map(String).join("\n"));
  // Thinned by the server's rule: at most the budget and what came since, the first value and the newest kept,
  // in order (the values rise, so each bucket keeps its first and last).
  assert.ok(line.y.length <= 16 + 8, JSON.stringify(line.y)); // thinned at half a budget appended
  assert.equal(line.y[0], 0);
  assert.ok(
    line.y.every((v, i) => i === 0 || v > line.y[i - 1]),
    JSON.stringify(line.y),
  );
  assert.ok(line.y.length < line.y.at(-1) + 1, "fewer points than values logged");
  assert.match(await chart.locator(".chart-info").innerText(), /\b\d+ points shown/);
  assert.equal(await done, 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test("a live chart of a workload's mean asks only for its newest buckets", async () => {
  const done = Promise.all(["a", "b"].map((name) => liveRun(["-e", "meanlive", "-w", "1", "-n", name], 60)));
  // 1,000 buckets: a refresh or two before the mean outgrows them.
  const { page, context, errors, asked } = await openWatching("aggregate", 4000);
  await selectLiveWorkload(page, "meanlive", "1");
  const chart = await addChart(page, "train.value|", "2");
  await chart.locator('[data-k="x"]').selectOption("relative"); // the mean over time, not its steps
  await chart.locator('[data-k="grouping"]').selectOption("workloads");
  await page.waitForFunction(
    () => Number(document.querySelector("section.chart").dataset.meanRefreshes ?? 0) >= 1,
    null,
    { timeout: 20000 },
  );
  const tail = asked.find((q) => q.has("from"));
  assert.ok(tail, asked.map(String).join("\n"));
  assert.equal(tail.get("workloads"), "meanlive:1");
  assert.ok(Number(tail.get("from")) > 0, "from the last bucket the chart has, not from the start");
  const mean = await page.evaluate(() => window.trainbench.charts[0].lines.find((l) => !l.run));
  assert.ok(mean.x.length > 1);
  assert.ok(
    mean.x.every((v, i) => i === 0 || v > mean.x[i - 1]),
    "buckets in order, none twice",
  );
  assert.ok(
    mean.n.every((n) => n >= 1 && n <= 2),
    JSON.stringify(mean.n),
  );
  assert.ok(
    mean.y.every((v) => v === null || (v >= 0 && v <= 59)),
    "each a mean of logged values",
  );
  assert.deepEqual(await done, [0, 0]);
  // Once the page sees both runs ended (it polls their status every 5 s), the mean is
  // loaded whole once more and no longer refreshed: the requests stop, the last one whole.
  const ended = asked.length;
  let quiet = 0;
  for (let seen = asked.length, i = 0; quiet < 4 && i < 40; i++) {
    await page.waitForTimeout(1000);
    quiet = asked.length === seen ? quiet + 1 : 0;
    seen = asked.length;
  }
  assert.equal(quiet, 4, "the refreshes stop once the runs have ended");
  assert.ok(asked.length > ended, "loaded once more after the runs ended");
  assert.ok(!asked.at(-1).has("from"), `the last request is the whole mean: ${asked.at(-1)}`);
  assert.deepEqual(errors, []);
  await context.close();
});

test("an experiment's report opens from the tree", async () => {
  const { page, context } = await open();
  const [report] = await Promise.all([
    context.waitForEvent("page"),
    page.click('.exp:has(button[data-exp="synth"]) a.report'),
  ]);
  await report.waitForLoadState();
  const text = await report.locator("body").innerText();
  assert.ok(text.includes("Experiment synth") && text.includes("samples/s per run"), text.slice(0, 300));
  assert.ok((await report.locator("svg").count()) >= 1);
  // Its charts are the figure renderer's: text as text, workload names beside their bars.
  assert.ok(await report.locator("svg text", { hasText: "Throughput per run" }).count(), "bar chart titled");
  await report.screenshot({ path: join(out, "report.png"), fullPage: true });
  // The PDF beside it downloads as a file with its font embedded.
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.click('.exp:has(button[data-exp="synth"]) a.report-pdf'),
  ]);
  const pdf = join(out, "report.pdf");
  await download.saveAs(pdf);
  assert.equal(download.suggestedFilename(), "synth-report.pdf");
  assert.match(execFileSync("pdfinfo", [pdf]).toString(), /A4/);
  assert.match(execFileSync("pdftotext", [pdf, "-"]).toString(), /Experiment synth/);
  await context.close();
});

test("the keyboard reaches the tree, the charts and the zoom", async () => {
  const { page, context } = await open();
  await selectWorkload(page, "synth", "1");
  const chart = await addChart(page, "gpu.utilization.gpu_ratio|", "2");
  await chart.locator(".plot").focus();
  await page.keyboard.press("+");
  await page.waitForFunction(() => window.trainbench.view.charts.at(-1).zoom !== null);
  await page.keyboard.press("0");
  await page.waitForFunction(() => window.trainbench.view.charts.at(-1).zoom === null);
  // Tab order reaches a run checkbox from the filter box.
  await page.focus("#filter-text");
  let reached = false;
  for (let i = 0; i < 12 && !reached; i++) {
    await page.keyboard.press("Tab");
    reached = await page.evaluate(
      () => document.activeElement?.matches("input[data-workload], input[data-run]") ?? false,
    );
  }
  assert.ok(reached);
  await context.close();
});
