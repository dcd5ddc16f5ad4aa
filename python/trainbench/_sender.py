"""A run's queues and the background thread that sends them: a logging call only appends
to a queue; the thread wakes twice a second (or when a batch is full) and posts batches of
MLflow's size limits. What cannot be sent is counted and said once on stderr."""

import collections
import sys
import threading
import time
import urllib.parse

from ._transport import Endpoint, json_value

MAX_METRICS = 1000  # per log-batch request, MLflow's limit
MAX_PARAMS_TAGS = 100


def now_ms():
    return int(time.time() * 1000)


class Sender:
    def __init__(
        self, uri, run_id, experiment_id, flush_interval, on_start=None, send_metrics=True, send_rest=True, labels=None
    ):
        self.uri = uri
        # In a distributed run a rank other than 0 sends nothing (send_metrics and
        # send_rest False), or only its metrics, with the label {"rank": N}.
        self.send_metrics = send_metrics
        self.send_rest = send_rest
        self.labels = labels
        self.on_start = on_start  # called each time a sender thread starts
        self.run_id = run_id
        self.experiment_id = experiment_id
        self.flush_interval = flush_interval
        self.metrics = collections.deque()  # (key, value, timestamp ms, step)
        self.params = collections.deque()
        self.tags = collections.deque()
        self.events = collections.deque()  # (timestamp ms, kind, label)
        self.closed = False
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._reported = set()  # messages already printed
        self._lost = 0
        self._endpoint = None
        self._thread = None

    # --- queueing (called by the script's thread) ---
    def metric(self, key, value, step):
        if not self.send_metrics:
            return
        self._ensure_started()
        self.metrics.append((key, value, now_ms(), step))
        if len(self.metrics) >= MAX_METRICS:
            self._wake.set()

    def param(self, key, value):
        if not self.send_rest:
            return
        self._ensure_started()
        self.params.append((key, value))

    def tag(self, key, value):
        if not self.send_rest:
            return
        self._ensure_started()
        self.tags.append((key, value))

    def event(self, kind, label):
        if not self.send_rest:
            return
        self._ensure_started()
        self.events.append((now_ms(), kind, label))

    def start(self):
        if self.on_start is not None:
            self.on_start()
        self._endpoint = Endpoint(self.uri)
        self._thread = threading.Thread(target=self._loop, name="trainbench-sender", daemon=True)
        self._thread.start()

    def _ensure_started(self):
        if self._thread is None:
            self.start()

    def after_fork(self):
        """In a forked child: empty queues (the parent sends what it queued) and no thread
        until the first value, so DataLoader workers, which never log, get none."""
        self._lock = threading.Lock()
        self._wake = threading.Event()
        for queue in (self.metrics, self.params, self.tags, self.events):
            queue.clear()
        self._thread = None
        self._endpoint = Endpoint(self.uri)

    # --- sending ---
    def flush(self):
        with self._lock:
            self._send_queued()

    def close(self):
        if self.closed:
            return
        self.closed = True
        self._wake.set()
        with self._lock:
            self._send_queued()
            self._endpoint.close()
        if self._lost:
            self.report_once("lost", "trainbench: %d values could not be sent to the tracking endpoint" % self._lost)

    def upload(self, name, data):
        """Sends a file's bytes now as an artifact of the run."""
        if not self.send_rest:
            return
        path = "/api/2.0/mlflow-artifacts/artifacts/%s/%s/artifacts/%s" % (
            self.experiment_id,
            self.run_id,
            urllib.parse.quote(name),
        )
        with self._lock:
            try:
                status, answer = self._endpoint.request("PUT", path, data, "application/octet-stream")
            except OSError as e:
                self.report_once("unreachable", "trainbench: cannot upload %s: %s" % (name, e))
                return
        if status != 200:
            message = answer.get("message", "") if isinstance(answer, dict) else ""
            self.report_once(message, "trainbench: artifact %s refused (HTTP %d): %s" % (name, status, message))

    def report_once(self, key, message):
        if key not in self._reported:
            self._reported.add(key)
            print(message, file=sys.stderr, flush=True)

    def _loop(self):
        while not self.closed:
            self._wake.wait(self.flush_interval)
            self._wake.clear()
            with self._lock:
                # On one kept-alive connection: between rounds it waits in the server's
                # poll, holding none of its threads (a connection a round cost a connect
                # and an accept each time).
                self._send_queued()

    @staticmethod
    def _take(queue, n):
        out = []
        while queue and len(out) < n:
            out.append(queue.popleft())
        return out

    def _send_queued(self):
        while self.metrics or self.params or self.tags:
            params = self._take(self.params, MAX_PARAMS_TAGS)
            tags = self._take(self.tags, MAX_PARAMS_TAGS)
            metrics = self._take(self.metrics, MAX_METRICS - len(params) - len(tags))
            body = {
                "run_id": self.run_id,
                "metrics": [{"key": k, "value": json_value(v), "timestamp": t, "step": s} for k, v, t, s in metrics],
                "params": [{"key": k, "value": v} for k, v in params],
                "tags": [{"key": k, "value": v} for k, v in tags],
            }
            if self.labels:
                body["trainbench_labels"] = self.labels
            self._post("/api/2.0/mlflow/runs/log-batch", body, len(metrics) + len(params) + len(tags))
        while self.events:
            events = self._take(self.events, MAX_METRICS)
            body = {"run_id": self.run_id, "events": [{"timestamp": t, "kind": k, "label": l} for t, k, l in events]}
            self._post("/api/2.0/trainbench/runs/log-events", body, len(events))

    def _post(self, path, body, count):
        try:
            status, answer = self._endpoint.request("POST", path, body)
        except OSError as e:
            self._lost += count
            self.report_once(
                "unreachable",
                "trainbench: the tracking endpoint %s is unreachable (%s); "
                "training goes on, its metrics are not recorded" % (self.uri, e),
            )
            return
        if status != 200:
            self._lost += count
            message = answer.get("message", "") if isinstance(answer, dict) else str(answer[:200])
            self.report_once(
                message, "trainbench: the tracking endpoint refused values (HTTP %d): %s" % (status, message)
            )
