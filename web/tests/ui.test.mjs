// The web UI in Debian's chromium against a real `trainbench serve` on a store with the
// recorded trace and synthetic runs: selecting, charts, zoom, legend, grouping, exports,
// sharing, reload and a live run. Screenshots of the main views go to TB_TEST_OUTPUT.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
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
  await page.waitForSelector(`#metric option[value="${metric}"]`, { state: "attached" });
  await page.selectOption("#metric", metric);
  const before = await page.locator("section.chart").count();
  await page.click("#add-chart");
  const chart = page.locator("section.chart").nth(before);
  await chart.locator(`xpath=self::*[@data-series="${series}"]`).waitFor();
  return chart;
}

async function downloadOf(page, click) {
  const [dl] = await Promise.all([page.waitForEvent("download"), click()]);
  return { name: dl.suggestedFilename(), bytes: readFileSync(await dl.path()) };
}

test("a workload's checkbox selects its runs, which the table compares", async () => {
  const { page, context, errors } = await open();
  await selectWorkload(page, "synth", "1");
  assert.deepEqual((await view(page)).selected.sort(), [...ids.synth["1"]].sort());
  await page.waitForSelector("#table tbody tr:nth-child(2)");
  const rows = await page.locator("#table tbody tr").count();
  assert.equal(rows, 2);
  const header = await page.locator("#table thead").innerText();
  for (const col of ["batch-size", "GPU util (mean)", "SM active (mean)", "energy J", "final loss"]) {
    assert.ok(header.includes(col), `${col} in ${header}`);
  }
  // Energy: the run's attributed share beside its GPU's whole energy, which dcgmi's second
  // reading of the same counter does not double.
  const cells = async (row) => {
    const names = await page.locator("#table thead th").allInnerTexts();
    const values = await page.locator(`#table tbody tr:nth-child(${row}) td`).allInnerTexts();
    return Object.fromEntries(names.map((n, i) => [n.trim(), values[i]]));
  };
  for (const row of [1, 2]) {
    const c = await cells(row);
    const share = Number(c["energy J"].replace(/[^0-9.e+-]/g, ""));
    const device = Number(c["GPU energy J (device)"].replace(/[^0-9.e+-]/g, ""));
    assert.ok(device > 0, JSON.stringify(c));
    const ratio = share / device;
    assert.ok(Math.abs(ratio - 0.6) < 0.02 || Math.abs(ratio - 0.4) < 0.02, JSON.stringify(c));
  }
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
  await addChart(page, "train.loss|", "2");
  assert.equal((await view(page)).charts.length, 2);

  // Drag to zoom: the chart keeps the range and fetches finer data for it.
  const over = util.locator(".plot .u-over");
  const box = await over.boundingBox();
  const drawn = Number(await util.getAttribute("data-drawn"));
  await page.mouse.move(box.x + box.width * 0.2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction((d) => Number(document.querySelector("section.chart").dataset.drawn) > d, drawn);
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
  // Run 0A of workload 2 has an idle gap: shaded on the chart, found where it was planted.
  await page.waitForFunction(() => Number(document.querySelector("section.chart").dataset.phases) >= 1);
  const phases = await page.evaluate((id) => fetch(`/api/v1/runs/${id}/phases`).then((r) => r.json()), ids.synth["2"][0]);
  const idle = phases.phases.find((p) => p.kind === "idle");
  assert.ok(idle, JSON.stringify(phases.phases));
  assert.ok(Math.abs((idle.start_ms - 1763777000000) / 1000 - 300) <= 2 && Math.abs((idle.end_ms - 1763777000000) / 1000 - 330) <= 2);
  await page.screenshot({ path: join(out, "phases.png"), fullPage: true });
  await util.locator('[data-k="grouping"]').selectOption("workloads");
  await page.waitForFunction(() => document.querySelector("section.chart .u-legend").textContent.includes("mean"));
  assert.equal(await util.getAttribute("data-series"), "2");
  const legend = await util.locator(".u-legend").innerText();
  assert.ok(legend.includes("synth/1 mean (2 runs)") && legend.includes("synth/2 mean (2 runs)"), legend);
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

test("exports: PNG, SVG and PDF hold the plotted series, CSV its values", async () => {
  const { page, context } = await open();
  await selectWorkload(page, "synth", "2");
  const chart = await addChart(page, "gpu.utilization.gpu_ratio|", "2");
  const names = await page.evaluate(() => {
    const runs = window.trainbench.view.selected.map((id) => window.trainbench.run(id));
    return runs.map((r) => `${r.name} (${r.experiment}/${r.workload}) gpu=0`);
  });

  const svg = await downloadOf(page, () => chart.locator('[data-a="svg"]').click());
  assert.match(svg.name, /\.svg$/);
  const text = svg.bytes.toString("utf8");
  assert.ok(text.startsWith("<svg") && text.trimEnd().endsWith("</svg>"));
  for (const name of names) {
    const path = text.match(new RegExp(`<path d="([^"]+)"[^>]*data-series="${name.replace(/[()/.]/g, "\\$&")}"`));
    assert.ok(path, `${name} drawn in the SVG`);
    assert.ok(path[1].split("L").length > 500, "the series' points are in the path");
  }

  const pdf = await downloadOf(page, () => chart.locator('[data-a="pdf"]').click());
  const p = pdf.bytes.toString("latin1");
  assert.ok(p.startsWith("%PDF-1.4") && p.includes("\nxref\n") && p.trimEnd().endsWith("%%EOF"));
  const xref = Number(p.match(/startxref\n(\d+)/)[1]);
  assert.equal(p.slice(xref, xref + 4), "xref", "startxref points at the table");
  for (const name of names) assert.ok(p.includes(`% series ${name}`), `${name} drawn in the PDF`);
  assert.ok((p.match(/ l /g) ?? []).length > 1000, "the lines are vector paths");

  const png = await downloadOf(page, () => chart.locator('[data-a="png"]').click());
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  // The image shows the first series' colour.
  const blue = await page.evaluate(async (b64) => {
    const img = new Image();
    img.src = "data:image/png;base64," + b64;
    await img.decode();
    const c = document.createElement("canvas");
    [c.width, c.height] = [img.width, img.height];
    const ctx = c.getContext("2d");
    ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - 0x1f) < 30 && Math.abs(d[i + 1] - 0x77) < 30 && d[i + 2] > 150) n++;
    return n;
  }, png.bytes.toString("base64"));
  assert.ok(blue > 500, `blue pixels: ${blue}`);

  const csv = (await downloadOf(page, () => chart.locator('[data-a="csv"]').click())).bytes.toString("utf8").trim().split("\n");
  assert.equal(csv[0].split(",")[0], "seconds_since_start");
  assert.ok(csv.length > 500);
  // Workload 2's run B sits at 0.21 +- 0.05.
  const col = csv[0].split(",").findIndex((h) => h.includes("0B-"));
  const values = csv.slice(1).map((l) => Number(l.split(",")[col])).filter((v) => !Number.isNaN(v) && v !== 0);
  assert.ok(values.every((v) => v > 0.15 && v < 0.27), "the CSV holds the plotted values");
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
  const script = `
import time, trainbench
with trainbench.Run() as run:
    for i in range(60):
        run.log_metric("value", i, step=i)
        time.sleep(0.2)
`;
  const child = spawn(trainbench, ["run", "--store", db, "-e", "live", "-n", "live", "-l", "top", "--", "/usr/bin/python3", "-c", script], {
    stdio: "ignore",
  });
  const done = new Promise((resolve) => child.on("exit", resolve));
  const { page, context } = await open();
  await page.waitForSelector('button[data-exp="live"]', { timeout: 15000 });
  await page.click('button[data-exp="live"]');
  await page.check('input[data-workload="live:"]');
  const chart = await addChart(page, "train.value|", "1");
  const points = async () => Number((await chart.locator(".chart-info").innerText()).match(/([\d,]+) points/)[1].replace(/,/g, ""));
  const start = await points();
  await page.waitForFunction(
    (n) => Number(document.querySelector("section.chart .chart-info").textContent.match(/([\d,]+) points/)[1].replace(/,/g, "")) > n,
    start,
    { timeout: 10000 },
  );
  assert.ok((await points()) > start);
  await page.screenshot({ path: join(out, "live-run.png"), fullPage: true });
  await context.close();
  assert.equal(await done, 0);
});

test("an experiment's report opens from the tree", async () => {
  const { page, context } = await open();
  const [report] = await Promise.all([context.waitForEvent("page"), page.click('.exp:has(button[data-exp="synth"]) a.report')]);
  await report.waitForLoadState();
  const text = await report.locator("body").innerText();
  assert.ok(text.includes("Experiment synth") && text.includes("samples/s per run"), text.slice(0, 300));
  assert.ok((await report.locator("svg").count()) >= 1);
  await report.screenshot({ path: join(out, "report.png"), fullPage: true });
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
    reached = await page.evaluate(() => document.activeElement?.matches("input[data-workload], input[data-run]") ?? false);
  }
  assert.ok(reached);
  await context.close();
});
