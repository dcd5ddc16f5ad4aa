// A radT YAML sweep scheduled for real (`trainbench sweep.yaml`, each run a child process),
// then picked in a real browser: the sweep's runs sit under their parent run, whose
// checkbox selects them all, and the parent run itself is no run to chart.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { browser, scratch, serve, trainbench, repo } from "./harness.mjs";

const work = scratch("tb-sweep-");
after(() => work.remove());

test("a sweep's runs are grouped under their parent run, whose checkbox selects them all", async () => {
  mkdirSync(join(work.dir, "yaml"));
  mkdirSync(join(work.dir, "scripts"));
  writeFileSync(
    join(work.dir, "scripts", "train.py"),
    "import sys, trainbench\nwith trainbench.Run() as run:\n    run.log_metric('loss', float(sys.argv[2]))\n",
  );
  writeFileSync(
    join(work.dir, "yaml", "sweep.yaml"),
    "name: lr sweep\nexperiment: sweeps\ncollocation: '-'\ndevices: '-'\nlisteners: top\n" +
      "file: ../scripts/train.py\nmethod: grid\nparameters:\n  lr:\n    values: [0.1, 0.2, 0.3]\n",
  );
  const db = join(work.dir, "tb.db");
  execFileSync(trainbench, ["schedule", "--store", db, "sweep.yaml"], {
    cwd: join(work.dir, "yaml"),
    env: { ...process.env, PYTHONPATH: join(repo, "python"), TRAINBENCH_PYTHON: "/usr/bin/python3" },
    encoding: "utf8",
  });
  // And one run of the same experiment outside the sweep.
  execFileSync(
    trainbench,
    [
      "run",
      "--store",
      db,
      "-e",
      "sweeps",
      "--",
      "/usr/bin/python3",
      join(work.dir, "scripts", "train.py"),
      "--lr",
      "1",
    ],
    {
      env: { ...process.env, PYTHONPATH: join(repo, "python") },
      encoding: "utf8",
    },
  );
  const server = await serve(db);
  const chrome = await browser();
  try {
    const page = await (await chrome.newContext()).newPage();
    await page.goto(server.url);
    await page.waitForSelector("body[data-ready='1']");
    await page.click('button[data-exp="sweeps"]');
    const parent = page.locator(".parent");
    await parent.waitFor();
    assert.match(await parent.innerText(), /parent run lr sweep/);
    assert.match(await parent.innerText(), /3 runs/);
    // Three runs nested, one outside; the parent run is no run of its own in the tree.
    assert.equal(await parent.locator("input[data-run]").count(), 3);
    assert.equal(await page.locator("#tree input[data-run]").count(), 4);
    assert.equal(await page.locator("#tree .run-name", { hasText: /^lr sweep$/ }).count(), 0);
    await parent.locator("input[data-parent]").check();
    await page.waitForFunction(() => document.getElementById("selected-count").textContent === "3");
    const labels = await page.locator("#selected li").allInnerTexts();
    assert.equal(labels.length, 3);
    assert.ok(
      labels.every((l) => /sweeps\/00[0-2]/.test(l)),
      labels.join(" | "),
    );
    // Its workloads' checkboxes choose within the sweep.
    await parent.locator("input[data-parent]").uncheck();
    await page.waitForFunction(() => document.getElementById("selected-count").textContent === "0");
    await parent.locator('input[data-workload="sweeps:001"]').check();
    await page.waitForFunction(() => document.getElementById("selected-count").textContent === "1");
  } finally {
    await chrome.close();
    server.stop();
  }
});
