// AMD Instinct runs in the web UI: two runs scheduled by the real trainbench on two compute
// partitions of the simulated MI300X in CPX mode (sim/'s libamd_smi.so), served by a real
// `trainbench serve` and read in Debian's chromium. What a user sees is held to the
// scenario and to the GPU's own counter: each row's GPU utilization is its partition's
// (its process's 60 or 20 %, not the whole GPU's 64 %), each row's energy is its share of
// the GPU's counter, and the two shares add up to the counter's increase.
import { execFileSync } from "node:child_process";
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { browser, repo, scratch, serve, trainbench } from "./harness.mjs";

const burner = process.env.TB_BURNER ?? join(repo, "build", "tests", "tb_burner");
const amdsmi = process.env.TRAINBENCH_SIM_AMDSMI ?? join(repo, "build", "sim", "lib", "libamd_smi.so");
const work = scratch("tb-web-amd-");
const db = join(work.dir, "amd.db");
let server, chrome;

before(async () => {
  const other = join(work.dir, "tb_other");
  copyFileSync(burner, other);
  const gpu = {
    name: "AMD Instinct MI300X",
    uuid: "a7ff74a1-0000-1000-80d4-3c7e1b2f9a00",
    memory_total_mib: 196608,
    compute_partition: "CPX",
    memory_partition: "NPS1",
    metrics: { util_gpu_pct: 64, util_mem_pct: 35, mem_used_mib: 8192, power_w: 600, clock_sm_mhz: 2100 },
    processes: [
      { match: "tb_burner", memory_used_mib: 6144, sm_util_percent: 60 },
      { match: "tb_other", memory_used_mib: 2048, sm_util_percent: 20 },
    ],
  };
  writeFileSync(join(work.dir, "scenario.json"), JSON.stringify({ amd_gpus: [gpu] }));
  writeFileSync(
    join(work.dir, "experiment.csv"),
    "Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\n" +
      `amd,partitions,,,2,-,${burner},amdsmi,--duty 0.05 --seconds 8\n` +
      `amd,partitions,,,5,-,${other},amdsmi,--duty 0.05 --seconds 8\n`,
  );
  execFileSync(trainbench, ["schedule", join(work.dir, "experiment.csv")], {
    cwd: work.dir,
    stdio: "ignore",
    env: {
      ...process.env,
      TRAINBENCH_STORE: db,
      TRAINBENCH_AMDSMI_LIBRARY: amdsmi,
      TRAINBENCH_NVML_LIBRARY: "/nonexistent",
      TRAINBENCH_SIM_SCENARIO: join(work.dir, "scenario.json"),
    },
  });
  server = await serve(db);
  chrome = await browser();
});

after(async () => {
  await chrome?.close();
  server?.stop();
  work.remove();
});

test("two runs on two MI300X partitions: their own utilization, energies adding up to the GPU's counter", async () => {
  const context = await chrome.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(server.url);
  await page.waitForSelector("body[data-ready='1']");
  await page.click('button[data-exp="amd"]');
  await page.check('input[data-workload="amd:partitions"]');
  await page.waitForSelector("#table tbody tr:nth-child(2)");
  const names = (await page.locator("#table thead th").allInnerTexts()).map((n) => n.trim());
  const number = (text) => Number(text.replace(/[^0-9.e+-]/g, ""));
  const rows = [];
  for (const row of [1, 2]) {
    const values = await page.locator(`#table tbody tr:nth-child(${row}) td`).allInnerTexts();
    rows.push(Object.fromEntries(names.map((n, i) => [n, values[i]])));
  }
  const utilization = rows.map((r) => number(r["GPU util % (steady)"])).sort((a, b) => a - b);
  assert.ok(Math.abs(utilization[0] - 20) < 2 && Math.abs(utilization[1] - 60) < 2, JSON.stringify(rows));
  // The GPU's counter over both runs, read from the stored points, not from the table.
  const counterPoints = await page.evaluate(async () => {
    const { runs } = await fetch("/api/v1/runs?experiment=amd&summary=0").then((r) => r.json());
    const ids = runs.map((r) => r.id).join(",");
    const url = `/api/v1/export?runs=${ids}&metric=gpu.energy.consumed_joules&labels=gpu%3D0&format=json`;
    return (await fetch(url).then((r) => r.json())).series.flatMap((s) => s.points.map((p) => p[1]));
  });
  const counter = Math.max(...counterPoints) - Math.min(...counterPoints);
  const shares = rows.map((r) => number(r["energy J"]));
  assert.ok(counter > 600 * 5, `the counter grew ${counter} J`);
  assert.ok(Math.abs(shares[0] + shares[1] - counter) < 0.06 * counter, `${shares} against ${counter} J`);
  assert.deepEqual(errors, []);
  await context.close();
});
