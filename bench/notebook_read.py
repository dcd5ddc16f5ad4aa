"""From the store into a notebook: 10 million points of one metric into a table, side by side
in one run, from a local store (trainbench.open on the SQLite file: the binary's columnar
export), from `trainbench serve` on loopback (/api/v1/export?format=columnar), and through
MLflow's REST get-history from the same server, page after page of 25,000 as MLflow's
client reads a metric's history.

    /usr/bin/python3 bench/notebook_read.py build/trainbench [POINTS]

Prints "10M points: local N.NN s, serve N.NN s, MLflow get-history N.NN s" (the best of
three for the first two, and their first passes; one pass for get-history), and
"10,000 runs: N.NN s" for store.runs() over 10,000 runs of 30 metrics, with pandas when it
is installed.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "python"))
import trainbench  # noqa: E402

binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build", "trainbench"))
points = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
fixture = os.path.join(os.path.dirname(binary), "tests", "tb_fixture_store")
trace = os.path.join(here, "..", "testdata", "radt-dcgm-trace-1hz.json.zst")


firsts = {}


def best(name, f, times=3):
    """The best of `times` passes; the first (cold: the server's cache empty, fresh pages)
    is kept in `firsts`."""
    out = []
    for _ in range(times):
        t = time.perf_counter()
        result = f()
        out.append(time.perf_counter() - t)
    firsts[name] = out[0]
    return min(out), result


def mlflow_history(url, run_id, key):
    """As MLflow's client reads a metric's history: pages of 25,000, JSON, until no token."""
    values, token = [], None
    while True:
        query = "run_id=%s&metric_key=%s&max_results=25000" % (run_id, key)
        if token:
            query += "&page_token=" + token
        with urllib.request.urlopen(url + "/api/2.0/mlflow/metrics/get-history?" + query) as answer:
            page = json.load(answer)
        values += [(m["timestamp"], m["step"], m["value"]) for m in page.get("metrics", [])]
        token = page.get("next_page_token")
        if not token:
            return values


with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "read.db")
    t = time.perf_counter()
    ids = json.loads(
        subprocess.run([fixture, db, trace, "--big-loss", str(points)], capture_output=True, check=True).stdout
    )
    run_id = ids["bigloss"]
    print(
        "store: %s points of train.loss written in %.1f s (pandas %s)"
        % (format(points, ","), time.perf_counter() - t, "yes" if trainbench._columns.pandas is not None else "no")
    )

    local_s, table = best("local", lambda: trainbench.open(db, binary=binary).series(run_id, "train.loss"))
    assert len(table["value"]) == points, len(table["value"])

    server = subprocess.Popen(
        [binary, "serve", "--store", db, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+", server.stdout.readline()).group(0)
        serve_s, table = best("serve", lambda: trainbench.open(url).series(run_id, "train.loss"))
        assert len(table["value"]) == points
        t = time.perf_counter()
        history = mlflow_history(url, run_id, "loss")
        mlflow_s = time.perf_counter() - t
        assert len(history) == points, len(history)
    finally:
        server.terminate()
        server.wait()

    # store.runs() over 10,000 runs of 30 metrics each: a row a run, a mean, min and max a metric.
    runs_db = os.path.join(tmp, "runs.db")
    subprocess.run(
        [fixture, runs_db, trace, "--bench-runs", "10000", "--bench-points", "10", "--bench-metrics", "30"],
        capture_output=True,
        check=True,
    )
    with trainbench.open(runs_db, binary=binary) as opened:
        runs_s, runs = best("runs", lambda: opened.runs(experiment="bench"))
        assert len(runs["id"]) == 10000, len(runs["id"])

label = "%gM" % (points / 1e6) if points >= 1e6 else format(points, ",")
print(
    "%s points: local %.2f s, serve %.2f s, MLflow get-history %.2f s (%.0fx the serve read)"
    % (label, local_s, serve_s, mlflow_s, mlflow_s / serve_s)
)
print("first passes: local %.2f s, serve %.2f s" % (firsts["local"], firsts["serve"]))
print(
    "10,000 runs: %.2f s (%d columns; first pass %.2f s)"
    % (runs_s, len(runs.columns) if hasattr(runs, "columns") else len(runs), firsts["runs"])
)
