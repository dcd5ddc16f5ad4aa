// What the browser tests and the benchmark share: a fixture store, a real `trainbench
// serve` on it, and Debian's chromium driven by playwright-core (never a downloaded one).
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
export const repo = join(here, "..", "..");
export const trainbench = process.env.TRAINBENCH_BINARY ?? join(repo, "build", "trainbench");
export const fixtureStore = process.env.TB_FIXTURE_STORE ?? join(repo, "build", "tests", "tb_fixture_store");
export const recordedData = process.env.TRAINBENCH_RECORDED_DATA ?? join(repo, "testdata");

export function scratch(prefix = "tb-web-") {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

// Writes the fixture store; returns the run ids it made.
export function makeStore(db, extra = []) {
  const out = execFileSync(fixtureStore, [db, join(recordedData, "radt-dcgm-trace-1hz.json.zst"), ...extra], {
    encoding: "utf8",
    maxBuffer: 1 << 26,
  });
  return JSON.parse(out);
}

// `trainbench serve` on a free port, serving the page in `web` (with `args`); resolves with
// its address once it listens (`as`: node's spawn options uid and gid, to serve as another user).
export function serve(db, web = join(repo, "web", "dist"), args = [], as = {}) {
  const child = spawn(trainbench, ["serve", "--store", db, "--port", "0", "--web", web, ...args], {
    ...as,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) resolve({ url: `http://127.0.0.1:${m[1]}/`, stop: () => child.kill("SIGTERM"), child });
    });
    child.on("exit", (code) => reject(new Error(`trainbench serve exited ${code}: ${err}`)));
  });
}

// A fresh profile each launch (playwright makes and removes it).
export function browser(extraArgs = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [
      ...extraArgs,
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

// A new browser context on `url` (a served page), ready to add a chart of `metric` for the
// runs of `experiment`'s `workload` (the benchmarks' starting point); resolves with the
// context and its page.
export async function pageReadyToChart(chrome, url, experiment, workload, metric = "gpu.utilization.gpu_ratio") {
  const context = await chrome.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForSelector("body[data-ready='1']");
  await page.click(`button[data-exp="${experiment}"]`);
  await page.check(`input[data-workload="${experiment}:${workload}"]`);
  await page.waitForSelector(`#metric option[value="${metric}"]`, { state: "attached" });
  await page.selectOption("#metric", metric);
  return { context, page };
}
