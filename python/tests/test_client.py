"""The trainbench client against a small tracking endpoint in this process: what a script's
calls send, with what, and what happens outside trainbench. Run: pytest-3 python/tests."""

import os
import re
import sys


sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import trainbench  # noqa: E402
from conftest import metrics_sent  # noqa: E402

NAMES_H = os.path.join(os.path.dirname(__file__), "..", "..", "src", "metrics", "names.h")


def test_outside_trainbench_every_call_does_nothing(endpoint):
    run = trainbench.Run()
    assert not run.active
    run.log_metric("loss", 1.0)
    run.log_param("lr", 0.1)
    run.event("hello")
    with run.step_timer(samples=4):
        pass
    run.close()
    assert endpoint.requests == []


def test_values_reach_the_run_in_batches_with_the_token(endpoint, monkeypatch):
    monkeypatch.setenv("TRAINBENCH_TOKEN", "s3cret")
    run = trainbench.Run(tracking_uri=endpoint.uri, run_id="a" * 32)
    for step in range(5):
        run.log_metric("loss", 1.0 / (step + 1), step=step)
    run.log_param("batch-size", 64)
    run.set_tag("note", "first")
    run.event("warm-up done")
    run.close()
    batches = [(headers, body) for path, headers, body in endpoint.requests if path.endswith("/log-batch")]
    assert batches, endpoint.requests
    assert all(h["Authorization"] == "Bearer s3cret" and body["run_id"] == "a" * 32 for h, body in batches)
    ids = [h["X-Trainbench-Request"] for _, h, _ in endpoint.requests]
    assert len(set(ids)) == len(ids), "each request has an id of its own"
    loss = [(m["step"], m["value"]) for m in metrics_sent(endpoint) if m["key"] == "loss"]
    assert loss == [(s, 1.0 / (s + 1)) for s in range(5)]
    params = [p for _, body in batches for p in body["params"]]
    assert params == [{"key": "batch-size", "value": "64"}]
    events = [e for path, _, body in endpoint.requests if path.endswith("/log-events") for e in body["events"]]
    assert [e["label"] for e in events] == ["warm-up done"]


def test_step_timing_uses_the_names_trainbench_knows(endpoint):
    """The client's step metrics land as train.<name> (the script's prefix): each must be a
    name of the catalog (src/metrics/names.h), which the report and the charts read."""
    known = set(re.findall(r'= "([a-z0-9_.]+)";', open(NAMES_H).read()))
    run = trainbench.Run(tracking_uri=endpoint.uri, run_id="b" * 32)
    for _ in run.steps([[1, 2, 3, 4]] * 3):
        pass
    with run.step_timer(samples=8):
        pass
    run.close()
    keys = {m["key"] for m in metrics_sent(endpoint)}
    assert {"step.compute_seconds", "step.data_wait_seconds", "throughput_samples_per_second"} <= keys
    assert sorted("train." + k for k in keys if "train." + k not in known) == []
    steps = sorted(m["step"] for m in metrics_sent(endpoint) if m["key"] == "step.compute_seconds")
    assert steps == [1, 2, 3, 4]


def test_a_refused_batch_is_said_once_and_training_goes_on(endpoint, capsys):
    endpoint.status = 400
    run = trainbench.Run(tracking_uri=endpoint.uri, run_id="c" * 32, flush_interval=0.05)
    for i in range(3):
        run.log_metric("loss", i)
        run.flush()
    run.close()
    err = capsys.readouterr().err
    assert err.count("refused on purpose") == 1, err


def test_an_evaluation_between_epochs_is_not_waiting_for_data(endpoint):
    """The step timer's throughput does not dip at each epoch: the time across run.epoch()
    (an evaluation after the epoch's last step) is not counted as waiting for data."""
    import time

    run = trainbench.Run(tracking_uri=endpoint.uri, run_id="d" * 32)
    for epoch in range(2):
        run.epoch()
        for _ in range(3):
            with run.step_timer(samples=10):
                time.sleep(0.02)
        time.sleep(0.3)  # evaluation
    run.close()
    waits = [m["value"] for m in metrics_sent(endpoint) if m["key"] == "step.data_wait_seconds"]
    tput = [m["value"] for m in metrics_sent(endpoint) if m["key"] == "throughput_samples_per_second"]
    assert len(waits) == 6 and len(tput) == 6
    assert max(waits) < 0.1, waits
    assert min(tput) > 0.5 * max(tput), tput
