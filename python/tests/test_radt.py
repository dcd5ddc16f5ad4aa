"""radT's Python API (python/radt) against a small tracking endpoint in this process: a
script written for radT logs through trainbench unchanged. Run: pytest-3 python/tests."""

import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import radt  # noqa: E402
import trainbench  # noqa: E402
from conftest import metrics_sent  # noqa: E402


@pytest.fixture
def in_run(endpoint, monkeypatch):
    monkeypatch.setenv("TRAINBENCH_TRACKING_URI", endpoint.uri)
    monkeypatch.setenv("TRAINBENCH_RUN_ID", "c" * 32)
    monkeypatch.setattr(trainbench._run.process_runs, "first", None)
    return endpoint


def test_a_radt_script_logs_its_metrics_params_and_tags_into_the_run(in_run):
    with radt.run.RADTBenchmark() as run:
        assert run.run_id == "c" * 32
        for step in range(3):
            run.log_metric("Metric A", 0.5 * step, step)
        run.log_metrics({"loss": 0.25, "accuracy": 0.9}, step=3)
        run.log_param("lr", 0.1)
        run.set_tag("stage", "dev")
    sent = [(m["key"], m["step"], m["value"]) for m in metrics_sent(in_run)]
    assert ("Metric A", 2, 1.0) in sent and ("loss", 3, 0.25) in sent and ("accuracy", 3, 0.9) in sent
    batches = [body for path, _, body in in_run.requests if path.endswith("/log-batch")]
    assert {"key": "lr", "value": "0.1"} in [p for b in batches for p in b["params"]]
    assert {"key": "stage", "value": "dev"} in [t for b in batches for t in b["tags"]]


def test_radt_0_2_29s_epoch_keyword_and_module_functions_log_into_the_run(in_run, monkeypatch):
    # radT 0.2.29: run.log_metric(name, value, epoch=...), and radt.log_metric(...) with no
    # `with` block (radt/radt/run/benchmark.py).
    monkeypatch.setattr(radt.run, "_benchmark", None)
    radt.log_metric("val_loss", 0.25, epoch=2)
    radt.log_metrics({"val_acc": 0.9}, epoch=2)
    with radt.run.RADTBenchmark() as run:  # the same run; its end sends what is queued
        run.log_metric("loss", 0.5, epoch=1)
        run.log_metrics({"acc": 0.8}, epoch=1)
    sent = {(m["key"], m["step"], m["value"]) for m in metrics_sent(in_run)}
    assert {("loss", 1, 0.5), ("acc", 1, 0.8), ("val_loss", 2, 0.25), ("val_acc", 2, 0.9)} <= sent, sent


def test_a_step_at_the_max_epochs_ends_the_script_as_radt_did(in_run, monkeypatch):
    monkeypatch.setenv("TRAINBENCH_MAX_EPOCHS", "2")
    with pytest.raises(SystemExit) as ended:
        with radt.run.RADTBenchmark() as run:
            run.log_metric("loss", 1.0, 1)
            run.log_metric("loss", 0.5, 2)
            run.log_metric("loss", 0.1, 3)  # not reached
    assert ended.value.code == 0
    assert [m["step"] for m in metrics_sent(in_run) if m["key"] == "loss"] == [1, 2]


def test_outside_trainbench_radt_calls_do_nothing(endpoint, monkeypatch):
    monkeypatch.setattr(trainbench._run.process_runs, "first", None)
    with radt.run.RADTBenchmark() as run:
        run.log_metric("loss", 1.0)
        run.log_param("lr", 0.1)
    assert endpoint.requests == []
    assert run.autolog() is None or "mlflow" in sys.modules  # radT always has it
    assert run.active_run() is None
    with pytest.raises(AttributeError, match="MLflow"):
        run.search_runs()


def test_mlflows_calls_through_run_work_without_mlflow_and_logging_goes_on_after_the_block(in_run, tmp_path):
    # A radT script reaches MLflow's functions through `run.`; radT always has them.
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text("A")
    (tmp_path / "sub" / "b.txt").write_text("B")
    with radt.run.RADTBenchmark() as run:
        assert run.active_run().info.run_id == "c" * 32
        run.set_tags({"model": "resnet", "stage": "dev"})
        run.log_text("hello", "notes.txt")
        run.log_dict({"lr": 0.1}, "config.json")
        run.log_artifacts(str(tmp_path), artifact_path="inputs")
        run.autolog()
    run.log_metric("after", 1.0, epoch=4)  # radT logs into the same run after its block
    trainbench.active_run().flush()
    uploads = {path.rsplit("/artifacts/", 1)[-1]: body for path, _, body in in_run.requests if "/artifacts/" in path}
    assert set(uploads) >= {"notes.txt", "config.json", "inputs/a.txt", "inputs/sub/b.txt"}, list(uploads)
    tags = [t for path, _, b in in_run.requests if path.endswith("/log-batch") for t in b["tags"]]
    assert {"key": "model", "value": "resnet"} in tags
    assert ("after", 4, 1.0) in {(m["key"], m["step"], m["value"]) for m in metrics_sent(in_run)}


def test_schedule_external_runs_a_table_and_writes_its_statuses_back(tmp_path, monkeypatch):
    # radT 0.2.29's radt.schedule_external(args, df): an experiment as a DataFrame.
    binary = os.environ.get("TRAINBENCH_BINARY")
    if not binary:
        pytest.skip("TRAINBENCH_BINARY (the built trainbench) not set")
    pandas = pytest.importorskip("pandas")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRAINBENCH_STORE", str(tmp_path / "tb.db"))
    monkeypatch.setenv("TRAINBENCH_PYTHON", "/usr/bin/python3")
    (tmp_path / "work.py").write_text("import sys\nsys.exit(3 if '--fail' in sys.argv else 0)\n")
    df = pandas.DataFrame(
        [
            {
                "Experiment": "ext",
                "Workload": 1,
                "Status": "",
                "Run": "",
                "Devices": "-",
                "Collocation": "-",
                "File": "work.py",
                "Listeners": "top",
                "Params": "",
            },
            {
                "Experiment": "ext",
                "Workload": 2,
                "Status": "",
                "Run": "",
                "Devices": "-",
                "Collocation": "-",
                "File": "work.py",
                "Listeners": "top",
                "Params": "--fail",
            },
        ]
    )
    code = radt.schedule_external([], df, group_name="sweep")
    assert code != 0  # one row failed
    assert str(df.at[0, "Status"]).startswith("FINISHED") and str(df.at[1, "Status"]).startswith("FAILED"), df
    assert len(str(df.at[0, "Run"])) == 32
    assert not list(tmp_path.glob("radt-external-*.csv"))
    # group_name: both runs nested under one parent run of that name, as `ls` shows.
    listed = subprocess.run([binary, "ls"], capture_output=True, text=True).stdout
    assert "FINISHED  sweep  (2 nested runs)" in listed, listed
