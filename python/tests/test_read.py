"""trainbench.open(...).series(...) against a real store made by `trainbench run`, read
locally (through the binary) and from a real `trainbench serve` with a token, checked
against the same points exported as CSV; with pandas, with numpy only, and with neither."""

import csv
import io
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

BINARY = os.environ.get("TRAINBENCH_BINARY")
PYTHON_DIR = os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, PYTHON_DIR)
pytestmark = pytest.mark.skipif(not BINARY, reason="TRAINBENCH_BINARY (the built trainbench) not set")


def exported(db, run_id, metric):
    """The same points as `trainbench export --format csv` gives them: an independent reading."""
    out = subprocess.run(
        [BINARY, "export", "--store", db, run_id, "-m", metric], capture_output=True, text=True, check=True
    )
    return list(csv.DictReader(io.StringIO(out.stdout)))


def check_against_csv(table, rows, metric):
    """`table`: a DataFrame, or a dict of columns, of one run's `metric`."""
    values = list(table["value"])
    assert len(values) == len(rows) > 0
    assert values == [float(r["value"]) for r in rows]
    steps = [None if s is None or str(s) in ("<NA>", "nan", str(-(2**63))) else int(s) for s in table["step"]]
    assert steps == [int(r["step"]) if r["step"] else None for r in rows]
    assert set(table["metric"]) == {metric}


@pytest.fixture(params=["local", "serve"])
def source(request, store, tmp_path):
    db, run_id = store
    if request.param == "local":
        yield db
        return
    # A token for every caller (the tests run as the server's user, who would pass without one).
    server = subprocess.Popen(
        [BINARY, "serve", "--store", db, "--port", "0", "--token", "s3cret", "--allow-other-users"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = server.stdout.readline()
    url = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)
    yield url
    server.terminate()
    server.wait()


def test_series_of_a_script_metric_and_a_listener_metric_match_the_csv_export(store, source):
    import trainbench

    db, run_id = store
    opened = trainbench.open(source, token="s3cret")
    table = opened.series(run_id, ["train.loss", "proc.cpu.utilization_ratio"])
    for metric in ["train.loss", "proc.cpu.utilization_ratio"]:
        rows = exported(db, run_id, metric)
        if hasattr(table, "loc"):  # pandas
            part = table[table["metric"] == metric]
            assert str(part["time"].dtype).startswith("datetime64")
            assert list(part["time"].astype("int64") // 10**6) == [int(r["time_ms"]) for r in rows]
            assert set(table.attrs["units"]) == {"train.loss", "proc.cpu.utilization_ratio"}
        else:
            mask = [m == metric for m in table["metric"]]
            part = {k: [v for v, keep in zip(table[k], mask) if keep] for k in ("value", "step", "metric")}
        check_against_csv(part, rows, metric)
    # The loss's steps are the script's; elapsed counts from the run's start, not its first point.
    loss = exported(db, run_id, "train.loss")
    assert [int(r["step"]) for r in loss[:3]] == [0, 10, 20]


def test_mistakes_say_what_to_do(store, source):
    import trainbench

    db, run_id = store
    opened = trainbench.open(source, token="s3cret")
    with pytest.raises(trainbench.StoreError, match="metric 'train.nothing'"):
        opened.series(run_id, "train.nothing")
    with pytest.raises(trainbench.StoreError, match="trainbench.open takes"):
        trainbench.open("")
    with pytest.raises(trainbench.StoreError, match="no store at"):
        trainbench.open(db + ".missing")


def test_a_server_without_the_token_refuses(store, source):
    import trainbench

    if not source.startswith("http"):
        pytest.skip("a local store has no token")
    with pytest.raises(trainbench.StoreError, match="HTTP 401"):
        trainbench.open(source, token="wrong").series(store[1], "train.loss")


@pytest.mark.parametrize("hidden", [["pandas"], ["pandas", "numpy"]])
def test_without_pandas_or_numpy_the_columns_are_arrays_or_lists(store, hidden):
    """In a fresh interpreter where the modules cannot be imported."""
    db, run_id = store
    code = textwrap.dedent(
        """
        import json, sys
        for name in %r:
            sys.modules[name] = None
        import trainbench
        t = trainbench.open(%r, binary=%r).series(%r, "train.loss")
        print(json.dumps([type(t).__name__, type(t["value"]).__name__, len(t["value"]),
                          [int(v) for v in t["step"][:3]], t["units"]["train.loss"]]))
    """
        % (hidden, db, BINARY, run_id)
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=PYTHON_DIR), capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    kind, column, count, steps, unit = json.loads(out.stdout)
    assert kind == "dict" and count == 50
    assert column == ("list" if "numpy" in hidden else "ndarray")
    assert steps == [0, 10, 20]


def column(table, name):
    return list(table[name])


def column_names(table):
    return list(table.columns) if hasattr(table, "columns") else list(table.keys())


def test_runs_events_phases_and_the_report_as_tables(store, source):
    import trainbench

    db, run_id = store
    opened = trainbench.open(source, token="s3cret")
    runs = opened.runs(experiment="Default", workload="*", status="FINISHED")
    assert column(runs, "id") == [run_id]
    assert column(runs, "name") == ["loss"] and column(runs, "params.lr") == ["0.1"]
    # The run's mean loss, against the points exported as CSV.
    losses = [float(r["value"]) for r in exported(db, run_id, "train.loss")]
    assert column(runs, "loss.mean")[0] == pytest.approx(sum(losses) / len(losses))
    assert column(runs, "loss.max")[0] == max(losses)
    assert column(runs, "metrics.loss")[0] == losses[-1]  # MLflow's latest: the highest step
    assert len(column(opened.runs(experiment="Default", workload="bs*"), "id")) == 0
    # The steady state's spread of each key metric (the run's analysis) lies within the
    # whole run's range of the same metric.
    spread = [name[: -len(".steady_p50")] for name in runs.columns if name.endswith(".steady_p50")]
    assert spread and column(runs, "steady_seconds")[0] > 0
    # How long it trained: inside its run, in seconds as the duration is.
    assert 0 < column(runs, "training_seconds")[0] <= column(runs, "duration")[0] + 0.01
    assert runs.attrs["units"]["training_seconds"] == "s"
    for metric in spread:
        low, p50, p95, high = (
            column(runs, metric + suffix)[0] for suffix in (".min", ".steady_p50", ".steady_p95", ".max")
        )
        assert low <= p50 <= p95 <= high, metric
        assert runs.attrs["units"][metric + ".steady_p95"] == runs.attrs["units"][metric + ".mean"]
    # The same calls take the runs table, an id prefix or the run's name.
    events = opened.events(runs)
    assert [k for k in column(events, "kind") if k == "epoch"] == ["epoch", "epoch"]
    assert set(column(events, "run_id")) == {run_id}
    phases = opened.phases(run_id[:8])
    assert "steady" in column(phases, "kind")
    report = opened.report("Default")
    shown = subprocess.run(
        [BINARY, "report", "--store", db, "Default", "--format", "csv"], capture_output=True, text=True, check=True
    )
    header = shown.stdout.splitlines()[0].split(",")
    assert [str(c) for c in (report.columns if hasattr(report, "columns") else report.keys())] == header
    opened.close()


MLFLOW_SCRIPT = """
import math, sys
sys.path.insert(0, %r)
import mlflow_rest as mlflow
parent = mlflow.start_run(run_name="parent")["run_id"]
for step, value in [(-1, 1.0), (0, float("nan")), (1, 3.0)]:
    mlflow.log_metric(parent, "loss", value, step=step, timestamp=1700000000000 + step + 1)
for step, value in [(0, 1.0), (1, math.inf)]:
    mlflow.log_metric(parent, "up", value, step=step)
child = mlflow.start_run(run_name="child", nested_in=parent)["run_id"]
mlflow.log_metric(child, "loss", 0.5)
mlflow.end_run(child)
gone = mlflow.start_run(run_name="gone")["run_id"]
mlflow.ok("POST", "runs/delete", {"run_id": gone})
open(sys.argv[1], "w").write(" ".join([parent, child, gone]))
""" % os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "helpers"
)


@pytest.fixture(scope="module")
def mlflow_store(tmp_path_factory):
    """A run whose script logged through MLflow's REST calls: NaN, +inf and a negative step, a
    nested child run, and a run it deleted."""
    tmp = tmp_path_factory.mktemp("mlflow")
    db = str(tmp / "m.db")
    script = tmp / "logs.py"
    script.write_text(MLFLOW_SCRIPT)
    ids = tmp / "ids.txt"
    done = subprocess.run(
        [BINARY, "run", "--store", db, "-q", "-l", "top", "--", "/usr/bin/python3", str(script), str(ids)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return db, ids.read_text().split()


def test_a_scripts_metrics_read_by_their_logged_names_as_mlflow_keeps_them(mlflow_store):
    import trainbench

    db, (parent, child, gone) = mlflow_store
    opened = trainbench.open(db)
    runs = opened.runs()
    ids = column(runs, "id")
    assert set(ids) == {parent, child}  # the deleted run: only with lifecycle="deleted" or "all"
    row = {name: column(runs, name)[ids.index(parent)] for name in column_names(runs)}
    # What the script logged, by hand: loss 1, NaN, 3 at steps -1, 0, 1; up 1, inf.
    assert row["loss.mean"] == 2.0 and row["loss.min"] == 1.0 and row["loss.max"] == 3.0
    assert row["metrics.loss"] == 3.0
    assert row["up.mean"] == float("inf") and row["metrics.up"] == float("inf")
    assert not any(name.startswith("train.") for name in column_names(runs))
    assert column(runs, "tags.mlflow.parentRunId")[ids.index(child)] == parent
    assert set(column(runs, "lifecycle")) == {"active"}
    everything = opened.runs(lifecycle="all")
    assert dict(zip(column(everything, "id"), column(everything, "lifecycle")))[gone] == "deleted"
    # The series by the name logged, with the negative step kept.
    loss = opened.series(parent, "loss")
    assert set(column(loss, "metric")) == {"loss"}
    steps = [None if str(s) in ("<NA>", "nan") else int(s) for s in column(loss, "step")]
    assert steps == [-1, 0, 1]
    opened.close()


def test_names_that_are_not_there_get_the_closest_ones(store, source):
    import trainbench

    db, run_id = store
    opened = trainbench.open(source, token="s3cret")
    with pytest.raises(trainbench.StoreError, match="names close to it: loss"):
        opened.series("lsos", "train.loss")
    with pytest.raises(trainbench.StoreError, match="metrics close to it: train.loss"):
        opened.series("loss", "train.lost")
    opened.close()


@pytest.mark.parametrize("hidden", [[], ["pandas", "numpy"]])
def test_every_gives_an_interval_a_row_with_the_mean_of_its_points(store, hidden):
    """Checked against the CSV export's points put in the same 100 ms intervals by hand."""
    db, run_id = store
    code = textwrap.dedent(
        """
        import json, sys
        for name in %r:
            sys.modules[name] = None
        import trainbench
        with trainbench.open(%r, binary=%r) as s:
            t = s.series(%r, "train.loss", every="100ms")
            start = list(s.runs()["start"])[0]
        times = [int(v.value // 10**6) if hasattr(v, "value") else int(v) for v in t["time"]]
        start = int(start.value // 10**6) if hasattr(start, "value") else start
        print(json.dumps([start, times, [float(v) for v in t["value"]], [int(v) for v in t["step"]]]))
    """
        % (hidden, db, BINARY, run_id)
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=PYTHON_DIR), capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    start, times, values, steps = json.loads(out.stdout)
    buckets = {}
    for r in exported(db, run_id, "train.loss"):
        b = (int(r["time_ms"]) - start) // 100
        buckets.setdefault(b, []).append((float(r["value"]), int(r["step"])))
    assert times == [start + b * 100 for b in sorted(buckets)]
    assert values == pytest.approx([sum(v for v, _ in buckets[b]) / len(buckets[b]) for b in sorted(buckets)])
    assert steps == [buckets[b][-1][1] for b in sorted(buckets)]
    assert 1 < len(times) < 50


def test_a_budget_gives_the_charts_points_and_keeps_every_spike(store, source):
    """At most `budget` points a series, each one of the series' own (its time, its value,
    every digit, against the CSV export), the highest and lowest among them."""
    import trainbench

    db, run_id = store
    with trainbench.open(source, token="s3cret") as opened:
        thin = opened.series(run_id, "train.loss", budget=8)
    rows = exported(db, run_id, "train.loss")
    points = {(int(r["time_ms"]), float(r["value"])) for r in rows}
    values = list(thin["value"])
    times = [int(t.value // 10**6) if hasattr(t, "value") else int(t) for t in thin["time"]]
    assert 0 < len(values) <= 8 < len(rows) == 50
    by_time = dict(points)
    for t, v in zip(times, values):  # not the chart's 6 significant digits
        assert v == by_time[t]
    assert max(values) == max(by_time.values())
    assert min(values) == min(by_time.values())
    with pytest.raises(trainbench.StoreError, match="budget"):
        opened.series(run_id, "train.loss", budget=2)
