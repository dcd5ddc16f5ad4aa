// The npm `mlflow` client (what Node users log and read with) against a real `trainbench
// serve`: experiments, runs, metrics, params, tags, search, history and the experiment
// lifecycle, as that client sends them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { scratch, serve, trainbench } from "./harness.mjs";

const require = createRequire(import.meta.url);
const MLflow = require("mlflow");

test("the npm mlflow client logs, searches, reads history and deletes and restores through trainbench serve", async () => {
  const dir = scratch("tb-mlflow-npm-");
  const server = await serve(join(dir.dir, "t.db"));
  const quiet = console.log;
  console.log = () => {}; // the client prints every request body
  try {
    const client = new MLflow({ endpoint: server.url.replace(/\/$/, "") });
    const { Experiments, Runs, Metrics } = client;

    const { experiment_id } = await Experiments.create({ name: "node-sweep" });
    const { run } = await Runs.create({
      experiment_id,
      start_time: 1700000000000,
      tags: [{ key: "lang", value: "js" }],
    });
    const run_id = run.info.run_id;
    assert.match(run.info.artifact_uri, /^mlflow-artifacts:\//);
    for (let step = 0; step < 3; step++) {
      await Runs.logMetric({ run_id, key: "loss", value: 1 / (step + 1), timestamp: 1700000000000 + step, step });
    }
    await Runs.logParameter({ run_id, key: "lr", value: "0.1" });
    await Runs.logBatch({
      run_id,
      metrics: [{ key: "acc", value: 0.9, timestamp: 1700000000100, step: 2 }],
      params: [],
      tags: [],
    });
    await Runs.setTag({ run_id, key: "stage", value: "dev" });
    await Runs.update({ run_id, status: "FINISHED", end_time: 1700000001000 });

    const got = (await Runs.get({ run_id })).run;
    assert.equal(got.info.status, "FINISHED");
    assert.deepEqual(got.data.params, [{ key: "lr", value: "0.1" }]);
    const { metrics } = await Metrics.getHistory({ run_id, metric_key: "loss" });
    assert.deepEqual(
      metrics.map((m) => m.step),
      [0, 1, 2],
    );
    assert.equal(metrics[2].value, 1 / 3);

    const found = await Runs.search({
      experiment_ids: [experiment_id],
      filter: "metrics.loss < 0.5 and params.lr = '0.1'",
    });
    assert.deepEqual(
      found.runs.map((r) => r.info.run_id),
      [run_id],
    );
    const none = await Runs.search({ experiment_ids: [experiment_id], filter: "metrics.acc > 0.95" });
    assert.equal((none.runs ?? []).length, 0);

    await Experiments.update({ experiment_id, new_name: "node-sweep-2" });
    assert.equal((await Experiments.get({ experiment_id })).experiment.name, "node-sweep-2");
    await Experiments.delete({ experiment_id });
    const active = await Experiments.list({});
    assert.deepEqual(
      active.experiments.map((e) => e.name),
      ["Default"],
    );
    const deleted = await Runs.search({ experiment_ids: [experiment_id], run_view_type: "DELETED_ONLY" });
    assert.deepEqual(
      deleted.runs.map((r) => r.info.lifecycle_stage),
      ["deleted"],
    );
    await Experiments.restore({ experiment_id });
    assert.equal((await Runs.get({ run_id })).run.info.lifecycle_stage, "active");

    await assert.rejects(Runs.get({ run_id: "0".repeat(32) }), /RESOURCE_DOES_NOT_EXIST/);
  } finally {
    console.log = quiet;
    server.stop();
    dir.remove();
  }
});

// The same client inside a script under `trainbench run`: no token and no run id to pass,
// the port knows the user's own process; its first run is the run trainbench started, in
// the experiment MLFLOW_EXPERIMENT_NAME names.
test("the npm mlflow client logs into trainbench run's port without a token", async () => {
  const dir = scratch("tb-mlflow-npm-run-");
  try {
    const script = join(dir.dir, "log.cjs");
    writeFileSync(
      script,
      `const MLflow = require(${JSON.stringify(require.resolve("mlflow"))});
console.log = () => {};
(async () => {
  const { Experiments, Runs } = new MLflow({ endpoint: process.env.MLFLOW_TRACKING_URI });
  const { experiments } = await Experiments.list({});
  const experiment = experiments.find((e) => e.name === process.env.MLFLOW_EXPERIMENT_NAME);
  const { run } = await Runs.create({ experiment_id: experiment.experiment_id, start_time: Date.now() });
  for (let step = 0; step < 3; step++) {
    await Runs.logMetric({ run_id: run.info.run_id, key: "loss", value: 1 / (step + 1), timestamp: Date.now(), step });
  }
  process.stderr.write("logged into " + run.info.run_id + "\\n");
})().catch((e) => { process.stderr.write(String(e) + "\\n"); process.exit(3); });
`,
    );
    const db = join(dir.dir, "t.db");
    const ran = spawnSync(
      trainbench,
      ["run", "--store", db, "-e", "node-bench", "-l", "top", "--", process.execPath, script],
      {
        encoding: "utf8",
      },
    );
    assert.equal(ran.status, 0, ran.stderr);
    const logged = /logged into ([0-9a-f]{32})/.exec(ran.stderr);
    assert.ok(logged, ran.stderr);
    const started = /run ([0-9a-f]{32})/.exec(ran.stderr);
    assert.equal(logged[1], started[1], "the client's run is the run trainbench started");
    const csv = spawnSync(trainbench, ["export", "--store", db, logged[1], "--metric", "loss", "--format", "csv"], {
      encoding: "utf8",
    });
    assert.equal(csv.status, 0, csv.stderr);
    assert.deepEqual(
      csv.stdout
        .trim()
        .split("\n")
        .slice(1)
        .map((line) => line.split(",")[4]),
      ["0", "1", "2"],
    );
  } finally {
    dir.remove();
  }
});
