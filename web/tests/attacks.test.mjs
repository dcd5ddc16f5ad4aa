// Another site's page in the user's own browser, against `trainbench serve` as the README
// starts it: the browser is the user's, so the server's peer check lets its requests in, and
// the Host and Origin checks are what must stop them. Chromium maps the attacker's names to
// 127.0.0.1 (--host-resolver-rules), as a DNS name pointed there would.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, copyFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { browser, makeStore, scratch, serve } from "./harness.mjs";

const work = scratch();
const db = join(work.dir, "attacks.db");
let ids, server, chrome, attacker, port, attackerPort;
let seenCookies = [];

before(async () => {
  ids = makeStore(db);
  server = await serve(db);
  port = new URL(server.url).port;
  // The attacker's site: a page that posts to trainbench's tracking API (a form's POST and a
  // no-cors fetch: neither needs to read the answer) and records the cookies it is sent.
  attacker = createServer((req, res) => {
    if (req.headers.cookie) seenCookies.push(req.headers.cookie);
    const run = ids.synth["1"][0];
    const target = `http://127.0.0.1:${port}/api/2.0/mlflow`;
    res.setHeader("Content-Type", "text/html");
    res.end(`<!doctype html><body>
      <form id="f" method="POST" action="${target}/runs/update" enctype="text/plain">
        <input name='{"run_id": "${run}", "run_name": "pwned", "x": "' value='"}'></form>
      <script>
        fetch("${target}/runs/delete", {method: "POST", mode: "no-cors", body: JSON.stringify({run_id: "${run}"})})
          .finally(() => { document.title = "sent"; document.getElementById("f").submit(); });
      </script></body>`);
  });
  await new Promise((r) => attacker.listen(0, "127.0.0.1", r));
  attackerPort = attacker.address().port;
  chrome = await browser(["--host-resolver-rules=MAP attacker.test 127.0.0.1, MAP rebind.test 127.0.0.1"]);
});

after(async () => {
  await chrome?.close();
  attacker?.close();
  server?.stop();
  work.remove();
});

// The run as the user's own client sees it.
async function runInfo(run) {
  const answer = await fetch(`${server.url}api/2.0/mlflow/runs/get?run_id=${run}`);
  assert.equal(answer.status, 200);
  return (await answer.json()).run.info;
}

test("another site's page deletes and renames nothing through the user's browser", async () => {
  const page = await chrome.newPage();
  await page.goto(`http://attacker.test:${attackerPort}/`);
  await page.waitForURL(`http://127.0.0.1:${port}/**`, { timeout: 10000 }); // the form went
  const refused = await page.textContent("body");
  assert.match(refused, /another site/);
  const info = await runInfo(ids.synth["1"][0]);
  assert.equal(info.lifecycle_stage, "active");
  assert.notEqual(info.run_name, "pwned");
  await page.close();
});

test("a page whose DNS name points at the server reads no run and no log", async () => {
  const page = await chrome.newPage();
  const landing = await page.goto(`http://rebind.test:${port}/`);
  assert.equal(landing.status(), 403);
  // Same origin to the browser, so a script of that page may read what it is answered.
  const read = await page.evaluate(async (run) => {
    const runs = await fetch("/api/v1/runs?experiment=synth");
    const log = await fetch(`/api/v1/runs/${run}/log`);
    return [runs.status, log.status, await runs.text()];
  }, ids.synth["1"][0]);
  assert.deepEqual(read.slice(0, 2), [403, 403]);
  assert.doesNotMatch(read[2], new RegExp(ids.synth["1"][0]));
  // The same page by the server's address is the web UI.
  const ours = await page.goto(server.url);
  assert.equal(ours.status(), 200);
  await page.close();
});

// The cookie matters where the browser is not the server's user (the owner's processes pass
// without it): here `serve` runs as `nobody`, the browser as this test's user, and a third
// user (`daemon`) runs the other web server that receives the cookie and replays it.
test("a session cookie another local web server receives opens nothing for another user", async (t) => {
  if (process.getuid() !== 0) return t.skip("other users are tried only as root");
  const home = scratch("tb-web-nobody-");
  chmodSync(home.dir, 0o755);
  const theirs = join(home.dir, "theirs.db");
  copyFileSync(db, theirs);
  chownSync(home.dir, 65534, 65534);
  chownSync(theirs, 65534, 65534);
  const tokenServer = await serve(theirs, undefined, ["--token", "s3cret"], { uid: 65534, gid: 65534 });
  const tokenPort = new URL(tokenServer.url).port;
  try {
    const page = await chrome.newPage();
    await page.goto(`${tokenServer.url}?token=s3cret`);
    const mine = await page.evaluate(async () => (await fetch("/api/v1/experiments")).status);
    assert.equal(mine, 200, "the browser that showed the token has a session");
    // The browser sends 127.0.0.1's cookies to every port: the other server gets it.
    seenCookies = [];
    await page.goto(`http://127.0.0.1:${attackerPort}/`);
    const cookie = seenCookies
      .map((c) => c.split(/;\s*/))
      .flat()
      .find((c) => c.startsWith(`trainbench_session_${tokenPort}=`));
    assert.ok(cookie, `the session cookie, named for its port: ${seenCookies}`);
    const replayed = execFileSync(
      "runuser",
      [
        "-u",
        "daemon",
        "--",
        "/usr/bin/python3",
        "-c",
        "import sys, urllib.request, urllib.error\n" +
          "req = urllib.request.Request(sys.argv[1] + 'api/v1/experiments', headers={'Cookie': sys.argv[2]})\n" +
          "try:\n    urllib.request.urlopen(req); print('answered')\n" +
          "except urllib.error.HTTPError as e:\n    print(e.code)\n",
        tokenServer.url,
        cookie,
      ],
      { encoding: "utf8" },
    ).trim();
    assert.equal(replayed, "401");
    await page.close();
  } finally {
    tokenServer.stop();
    home.remove();
  }
});
