// The looks of lines on screen and in the exports, in a real browser against a real
// `trainbench serve`: the palette's colours then dashes, a sweep coloured by its param with
// a colour bar, and the exported figure's typeface.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { browser, makeStore, scratch, serve } from "./harness.mjs";

const work = scratch("tb-looks-");
const db = join(work.dir, "looks.db");
let server, chrome;

before(async () => {
  makeStore(db, ["--sweep", "10", "--long-days", "115"]);
  server = await serve(db);
  chrome = await browser();
});

after(async () => {
  await chrome?.close();
  server?.stop();
  work.remove();
});

// The first five colours of src/figure/palette.h, read from the header as the page's build does.
const palette = [
  ...readFileSync(join(import.meta.dirname, "..", "..", "src", "figure", "palette.h"), "utf8")
    .match(/kLineColors\[\] = \{([^}]*)\}/)[1]
    .matchAll(/"(#[0-9a-f]{6})"/g),
].map((m) => m[1]);

// CIELAB lightness of "#rrggbb".
function lightness(hex) {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  const y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return 116 * (y > 0.008856 ? Math.cbrt(y) : 7.787 * y + 16 / 116) - 16;
}

// The page, ready, with the errors it throws.
async function openPage() {
  const context = await chrome.newContext({ acceptDownloads: true, viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(server.url);
  await page.waitForSelector("body[data-ready='1']");
  return { context, page, errors };
}

async function sweepChart(experiment = "sweep", workload = "bs") {
  const { context, page, errors } = await openPage();
  await page.click(`button[data-exp="${experiment}"]`);
  await page.check(`input[data-workload="${experiment}:${workload}"]`);
  await page.waitForSelector('#metric option[value="gpu.utilization.gpu_ratio"]', { state: "attached" });
  await page.selectOption("#metric", "gpu.utilization.gpu_ratio");
  await page.click("#add-chart");
  const chart = page.locator("section.chart").first();
  await chart.locator("xpath=self::*[@data-drawn]").waitFor();
  return { context, page, chart, errors };
}

const drawn = (page) =>
  page.evaluate(() => {
    const u = window.trainbench.charts[0].plot;
    return u.series.slice(1).map((s) => ({ name: s.label, stroke: s.stroke(u, 1), dash: s.dash ?? [] }));
  });

async function download(page, click) {
  const [dl] = await Promise.all([page.waitForEvent("download"), click()]);
  return readFileSync(await dl.path());
}

// The data lines of an exported SVG (1 pt, the default width), in the order drawn.
function svgLines(svg) {
  return [...svg.matchAll(/stroke="(#[0-9a-f]{6})" stroke-width="1" [^>]*?(?:stroke-dasharray="([^"]*)")?\/>/g)].map(
    (m) => ({ stroke: m[1], dash: m[2] ?? "" }),
  );
}

test("ten runs take the palette's five colours, then the same colours dashed, on screen and in the SVG", async () => {
  const { context, page, chart, errors } = await sweepChart();
  const lines = await drawn(page);
  assert.equal(lines.length, 10);
  assert.deepEqual(
    lines.slice(0, 5).map((l) => l.stroke),
    palette,
  );
  assert.ok(
    lines.slice(0, 5).every((l) => l.dash.length === 0),
    "the first five solid",
  );
  assert.deepEqual(
    lines.slice(5).map((l) => l.stroke),
    palette,
    "then the same colours",
  );
  assert.ok(
    lines.slice(5).every((l) => l.dash.length > 0),
    "dashed",
  );
  const svg = (await download(page, () => chart.locator('[data-a="svg"]').click())).toString("utf8");
  const exported = svgLines(svg).slice(0, 10);
  assert.deepEqual(
    exported.map((l) => l.stroke),
    lines.map((l) => l.stroke),
    "the figure's colours are the screen's",
  );
  assert.ok(exported.slice(5).every((l) => l.dash) && exported.slice(0, 5).every((l) => !l.dash));
  assert.deepEqual(errors, []);
  await context.close();
});

test("colouring by batch size shades the lines dark to light in its order, with a colour bar, kept in the link", async () => {
  const { context, page, chart, errors } = await sweepChart();
  assert.ok(await chart.locator(".colour-bar").isHidden());
  const options = await chart.locator('[data-k="colorBy"] option').allInnerTexts();
  assert.deepEqual(options, ["each run", "batch-size"], "the numeric params that vary");
  const before = Number(await chart.getAttribute("data-drawn"));
  await chart.locator('[data-k="colorBy"]').selectOption("batch-size");
  await page.waitForFunction((d) => Number(document.querySelector("section.chart").dataset.drawn) > d, before);
  const lines = await drawn(page);
  assert.deepEqual(
    lines.map((l) => l.name),
    [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048].map((b) => `bs${b}`),
    "in the order of the values",
  );
  for (let i = 1; i < lines.length; i++)
    assert.ok(
      lightness(lines[i].stroke) > lightness(lines[i - 1].stroke),
      `${lines[i].name} lighter than ${lines[i - 1].name}`,
    );
  assert.ok(
    lines.every((l) => l.dash.length === 0),
    "a sweep's lines are solid",
  );
  // Ten lines: a colour bar stands for their names, its ticks the round values of the log scale.
  const bar = chart.locator(".colour-bar");
  assert.ok(await bar.isVisible());
  assert.equal(await bar.locator(".param").innerText(), "batch-size");
  assert.deepEqual(await bar.locator(".tick").allInnerTexts(), ["10", "100", "1000"]);
  assert.ok(await chart.locator(".u-legend").isHidden(), "the names give way to the bar");
  const ticks = await bar.locator(".tick").evaluateAll((els) => els.map((e) => e.getBoundingClientRect().left));
  assert.ok(ticks[0] < ticks[1] && ticks[1] < ticks[2], "left to right");
  // The export says the same.
  const svg = (await download(page, () => chart.locator('[data-a="svg"]').click())).toString("utf8");
  assert.ok(svg.includes(">batch-size</text>") && !svg.includes(">bs4</text>"), "a colour bar in the figure too");
  assert.deepEqual(
    svgLines(svg).map((l) => l.stroke),
    lines.map((l) => l.stroke),
  );
  // The choice is in the view that a link carries.
  const view = await page.evaluate(() => JSON.parse(JSON.stringify(window.trainbench.view)));
  assert.equal(view.charts[0].colorBy, "batch-size");
  await page.reload();
  await page.waitForSelector("section.chart[data-drawn]");
  assert.equal(await page.locator('section.chart [data-k="colorBy"]').inputValue(), "batch-size");
  assert.ok(await page.locator("section.chart .colour-bar").isVisible());
  assert.deepEqual(errors, []);
  await context.close();
});

test("the figure's typeface is the one chosen: a serif PDF embeds the serif", async () => {
  const { context, page, chart, errors } = await sweepChart();
  await chart.locator(".figure-look summary").click();
  await chart.locator('[data-f="fontFamily"]').fill("DejaVu Serif");
  await chart.locator('[data-f="fontFamily"]').dispatchEvent("change");
  const path = join(work.dir, "serif.pdf");
  writeFileSync(path, await download(page, () => chart.locator('[data-a="pdf"]').click()));
  const fonts = execFileSync("pdffonts", [path], { encoding: "utf8" });
  assert.match(fonts, /DejaVuSerif/);
  assert.doesNotMatch(fonts, /DejaVuSans/);
  // A family the server lacks is said, not drawn in another.
  await chart.locator('[data-f="fontFamily"]').fill("NoSuchFace");
  await chart.locator('[data-f="fontFamily"]').dispatchEvent("change");
  await chart.locator('[data-a="pdf"]').click();
  await page.waitForFunction(() => /not installed here/.test(document.body.innerText));
  assert.deepEqual(errors, []);
  await context.close();
});

test("the screen's axes follow the figures' rule: a long run in days, a log axis by its decades, zeros said", async () => {
  const { context, page, chart, errors } = await sweepChart("long", "w");
  const axes = () =>
    page.evaluate(() => window.trainbench.charts[0].plot.axes.map((a) => ({ label: a.label, values: a._values })));
  let [x, y] = await axes();
  // 115 days: numbers of days, not "168:00:00" a dozen times over.
  assert.equal(x.label, "Time since start (days)");
  assert.ok(x.values.length >= 2 && x.values.every((v) => /^\d+$/.test(v)), x.values.join(" "));
  assert.equal(new Set(x.values).size, x.values.length, "no label twice");
  const svg = (await download(page, () => chart.locator('[data-a="svg"]').click())).toString("utf8");
  assert.ok(svg.includes(">Time since start (days)</text>"), "the figure reads the same");
  for (const v of x.values) assert.ok(svg.includes(`>${v}</text>`), `${v} in the figure's ticks`);
  // Log y: the decades labelled, the ticks between them not; the zeros it cannot draw said.
  assert.equal(
    await page.evaluate(() => window.trainbench.charts[0].plot.root.dataset.note),
    "",
    "nothing to say on a linear axis",
  );
  const before = Number(await chart.getAttribute("data-drawn"));
  await chart.locator('[data-k="logY"]').check();
  await page.waitForFunction((d) => Number(document.querySelector("section.chart").dataset.drawn) > d, before);
  [x, y] = await axes();
  const labelled = y.values.filter((v) => v !== "");
  assert.deepEqual(labelled, ["1", "10", "100"], y.values.join("|"));
  assert.ok(y.values.length > labelled.length, "minor ticks between the decades, unlabelled");
  const note = await page.evaluate(() => window.trainbench.charts[0].plot.root.dataset.note);
  const zeros = Math.floor((115 * 24) / 50) + 1;
  assert.equal(note, `${zeros} values at or below 0 not drawn (log scale)`);
  const logSvg = (await download(page, () => chart.locator('[data-a="svg"]').click())).toString("utf8");
  assert.ok(logSvg.includes(`>${zeros} values at or below 0 not drawn (log scale)</text>`), "the figure says the same");
  assert.deepEqual(errors, []);
  await context.close();
});

test("an experiment's collocation bars open from the tree as the figure plot --bars draws, and download as PDF", async () => {
  const { context, page, errors } = await openPage();
  const link = page.locator('a.bars[href*="experiments/synth/bars"]');
  const [tab] = await Promise.all([context.waitForEvent("page"), link.click()]);
  await tab.waitForLoadState();
  const svg = await tab.evaluate(() => document.documentElement.outerHTML);
  // The synthetic workloads: 1025 and 2025 samples/s per run, two runs each, together.
  for (const text of [
    ">Throughput, all runs of a workload together</text>",
    ">2050</text>",
    ">4050</text>",
    ">runs together</text>",
  ])
    assert.ok(svg.includes(text), `${text} in the bars`);
  assert.equal((svg.match(/>runs together<\/text>/g) ?? []).length, 1, "one legend for every panel");
  assert.match(svg, /width="504pt"/, "7 in wide");
  const path = join(work.dir, "bars.pdf");
  writeFileSync(path, await download(page, () => page.locator('a.bars-pdf[href*="experiments/synth/bars"]').click()));
  const text = execFileSync("pdftotext", [path, "-"], { encoding: "utf8" });
  assert.ok(text.includes("Steady GPU utilization") && text.includes("Energy per training sample"), text);
  assert.deepEqual(errors, []);
  await context.close();
});
