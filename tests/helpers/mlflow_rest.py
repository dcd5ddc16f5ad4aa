"""What MLflow's Python client sends, for test scripts run under `trainbench run` (MLflow itself
cannot be installed on these machines). Read from MLflow 3's mlflow/tracking/fluent.py
(set_experiment, start_run, _get_experiment_id_from_env) and mlflow/store/tracking/rest_store.py:
plain JSON over HTTP to MLFLOW_TRACKING_URI, an Authorization header only when the environment
gives credentials (MLFLOW_TRACKING_TOKEN as a bearer token, else MLFLOW_TRACKING_USERNAME and
_PASSWORD as Basic auth), and start_run() creating a run in the active experiment: the one
set_experiment chose, else MLFLOW_EXPERIMENT_NAME's (created when missing), else Default ("0").
"""
import base64
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request

_active = {"experiment_id": None}


def uri():
    return os.environ["MLFLOW_TRACKING_URI"]


def headers():
    h = {"Content-Type": "application/json"}
    if os.environ.get("MLFLOW_TRACKING_TOKEN"):
        h["Authorization"] = "Bearer " + os.environ["MLFLOW_TRACKING_TOKEN"]
    elif os.environ.get("MLFLOW_TRACKING_USERNAME"):
        pair = os.environ["MLFLOW_TRACKING_USERNAME"] + ":" + os.environ.get("MLFLOW_TRACKING_PASSWORD", "")
        h["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    return h


def call(method, endpoint, body=None, query=None):
    """(status, answer) of one REST call under /api/2.0/mlflow/."""
    url = uri() + "/api/2.0/mlflow/" + endpoint + ("?" + urllib.parse.urlencode(query) if query else "")
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers())
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def ok(method, endpoint, body=None, query=None):
    status, answer = call(method, endpoint, body, query)
    if status != 200:
        raise SystemExit("%s %s: %s %s" % (method, endpoint, status, answer))
    return answer


def experiment_named(name):
    status, found = call("GET", "experiments/get-by-name", query={"experiment_name": name})
    if status == 200:
        return found["experiment"]["experiment_id"]
    return ok("POST", "experiments/create", {"name": name})["experiment_id"]


def set_experiment(name=None, experiment_id=None):
    if experiment_id is not None:
        _active["experiment_id"] = ok("GET", "experiments/get", query={"experiment_id": experiment_id})["experiment"][
            "experiment_id"
        ]
    else:
        _active["experiment_id"] = experiment_named(name)
    return _active["experiment_id"]


def start_run(run_name=None, nested_in=None):
    experiment_id = _active["experiment_id"]
    if experiment_id is None and os.environ.get("MLFLOW_EXPERIMENT_NAME"):
        experiment_id = experiment_named(os.environ["MLFLOW_EXPERIMENT_NAME"])
    # As MLflow 3.6's client sent it to a logging proxy (python3 real script, 2026-11-28).
    tags = [
        {"key": "mlflow.user", "value": "tester"},
        {"key": "mlflow.source.name", "value": "script.py"},
        {"key": "mlflow.source.type", "value": "LOCAL"},
    ]
    if nested_in:
        tags.append({"key": "mlflow.parentRunId", "value": nested_in})
    body = {
        "experiment_id": experiment_id or "0",
        "user_id": "tester",
        "start_time": int(time.time() * 1000),
        "tags": tags,
    }
    if run_name:
        body["run_name"] = run_name
        tags.append({"key": "mlflow.runName", "value": run_name})
    return ok("POST", "runs/create", body)["run"]["info"]


def log_metric(run_id, key, value, step=0, timestamp=None):
    ok(
        "POST",
        "runs/log-metric",
        {"run_id": run_id, "key": key, "value": value, "step": step, "timestamp": timestamp or int(time.time() * 1000)},
    )


def end_run(run_id, status="FINISHED"):
    ok("POST", "runs/update", {"run_id": run_id, "status": status, "end_time": int(time.time() * 1000)})
