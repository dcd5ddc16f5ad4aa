"""Cost of one `run.log_metric` call in a training loop (issue goal: under 10 us on
average), against the synchronous request per call that MLflow's `mlflow.log_metric`
makes, measured in the same run against the same endpoint.

    build/trainbench run -l top --store /tmp/bench-client.db --python /usr/bin/python3 \
        bench/client_log_metric.py [calls=300000] [rounds=3]

Rounds interleave the two; the figure is the median of the rounds. The client's sender
thread runs during the measurement (it competes for the interpreter), as in training.
"""
import http.client
import json
import os
import statistics
import sys
import time
import urllib.parse

import trainbench


def client_calls(run, calls):
    start = time.perf_counter()
    for i in range(calls):
        run.log_metric("loss", 0.5 + (i % 1000) / 1e4, step=i)
    elapsed = time.perf_counter() - start
    run.flush()  # sending is not part of the call; done before the next round
    return elapsed / calls


def synchronous_requests(run_id, calls):
    uri = urllib.parse.urlsplit(os.environ["MLFLOW_TRACKING_URI"])
    conn = http.client.HTTPConnection(uri.hostname, uri.port)
    start = time.perf_counter()
    for i in range(calls):
        body = json.dumps(
            {"run_id": run_id, "key": "sync_loss", "value": 0.5, "timestamp": int(time.time() * 1000), "step": i}
        )
        conn.request("POST", "/api/2.0/mlflow/runs/log-metric", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        assert response.status == 200
    return (time.perf_counter() - start) / calls


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 300000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with trainbench.Run() as run:
        if not run.active:
            sys.exit("run this under `trainbench run` (see the docstring)")
        ours, sync = [], []
        for _ in range(rounds):
            ours.append(client_calls(run, calls))
            sync.append(synchronous_requests(run.run_id, 2000))
    mean_ours, mean_sync = statistics.median(ours) * 1e6, statistics.median(sync) * 1e6
    print("log_metric cost per call, median of %d rounds" % rounds)
    print("  trainbench client (queued, sent in batches)   %8.2f us   (%d calls a round)" % (mean_ours, calls))
    print("  one log-metric request per call (MLflow way)  %8.2f us   (2000 calls a round)" % mean_sync)
    print("  ratio %.0fx; goal: under 10 us" % (mean_sync / mean_ours))


if __name__ == "__main__":
    main()
