"""The trainbench client: a training script's own metrics, events and step timing.

    import trainbench

    with trainbench.Run() as run:
        for epoch in range(epochs):
            run.epoch(epoch)
            for batch in run.steps(loader):
                loss = train_step(batch)
                run.log_metric("loss", loss)

Under `trainbench run` the run is found through the environment (TRAINBENCH_TRACKING_URI
and TRAINBENCH_RUN_ID, which trainbench sets) and every call lands in that run. Outside
trainbench every call does nothing, so the script runs the same without it.

Logging is asynchronous: a call queues its value (a few microseconds) and a background
thread sends batches to the tracking endpoint twice a second. What is queued is sent at
exit, on SIGTERM and when the script dies of an exception. If the endpoint goes away the
script keeps training; the loss is reported once on stderr.

Standard library only. Works from several processes of one run (fork and spawn).
"""

import atexit
import collections
import contextlib
import http.client
import json
import math
import os
import signal
import sys
import threading
import time
import urllib.parse

__all__ = ["Run", "active_run"]
__version__ = "0.1.0"

_MAX_METRICS = 1000  # per log-batch request, MLflow's limit
_MAX_PARAMS_TAGS = 100


def _now_ms():
    return int(time.time() * 1000)


def _json_value(value):
    """A float as MLflow's REST API takes it: NaN and infinities as strings."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _batch_size(batch):
    """Samples in a batch: the length of a tensor, of the first tensor of an (inputs,
    labels) pair or dict, or of a plain list; None when it cannot be told."""
    if isinstance(batch, dict):
        batch = next(iter(batch.values()), None)
    elif isinstance(batch, (list, tuple)) and batch and hasattr(batch[0], "__len__"):
        batch = batch[0]
    shape = getattr(batch, "shape", None)
    if shape is not None:
        return int(shape[0]) if len(shape) > 0 else None
    try:
        return len(batch)
    except TypeError:
        return None


class _Endpoint:
    """One keep-alive HTTP connection to the tracking API."""

    def __init__(self, uri):
        parsed = urllib.parse.urlsplit(uri)
        self.host = parsed.hostname or "127.0.0.1"
        self.port = parsed.port or (443 if parsed.scheme == "https" else 80)
        self.https = parsed.scheme == "https"
        self.prefix = parsed.path.rstrip("/")
        self.token = os.environ.get("TRAINBENCH_TOKEN")
        self.connection = None

    def request(self, method, path, body=None, content_type="application/json"):
        """Returns (status, parsed JSON or bytes); raises OSError when unreachable."""
        headers = {"Content-Type": content_type}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if body is not None and not isinstance(body, bytes):
            body = json.dumps(body).encode()
        for attempt in (0, 1):  # a kept-alive connection the server closed is reopened once
            if self.connection is None:
                cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
                self.connection = cls(self.host, self.port, timeout=30)
            try:
                self.connection.request(method, self.prefix + path, body=body, headers=headers)
                response = self.connection.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException):
                self.close()
                if attempt == 1:
                    raise
                continue
            if response.headers.get("Content-Type", "").startswith("application/json"):
                try:
                    return response.status, json.loads(data or b"{}")
                except ValueError:
                    pass
            return response.status, data
        raise OSError("unreachable")

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class Run:
    """The run this script belongs to. Use as a context manager or call close()."""

    def __init__(self, tracking_uri=None, run_id=None, flush_interval=0.5):
        env = os.environ
        uri = tracking_uri or env.get("TRAINBENCH_TRACKING_URI")
        run_id = run_id or env.get("TRAINBENCH_RUN_ID")
        if not uri and env.get("MLFLOW_TRACKING_URI", "").startswith("http") and env.get("MLFLOW_RUN_ID"):
            uri, run_id = env["MLFLOW_TRACKING_URI"], env["MLFLOW_RUN_ID"]
        self.run_id = run_id
        self.active = bool(uri and run_id)
        self.experiment_id = env.get("MLFLOW_EXPERIMENT_ID", "0")
        self.max_epochs = int(env.get("TRAINBENCH_MAX_EPOCHS", "0") or 0)
        self.step = 0
        self._epochs_started = 0
        self._uri = uri
        self._flush_interval = flush_interval
        self._metrics = collections.deque()  # (key, value, timestamp ms, step)
        self._params = collections.deque()
        self._tags = collections.deque()
        self._events = collections.deque()  # (timestamp ms, kind, label)
        self._send_lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._reported = set()  # messages already printed
        self._lost = 0
        self._endpoint = None
        self._thread = None
        self._last_step_end = None
        global _first_run
        if _first_run is None:
            _first_run = self
        if self.active:
            self._start()
            atexit.register(self.close)
            _install_exit_hooks(self)
            if hasattr(os, "register_at_fork"):
                os.register_at_fork(after_in_child=self._after_fork)

    # --- what scripts call ---
    def log_metric(self, key, value, step=None):
        """Queues one value of a metric; `step` defaults to the client's step counter.
        Logging the metric `epoch` with a value of N or more ends the script under
        `trainbench run --max-epochs N`, as in radT."""
        if not self.active:
            return
        value = self._queue_metric(key, value, step)
        if key == "epoch" and self.max_epochs and value >= self.max_epochs:
            self._end_at_max_epochs()

    def _queue_metric(self, key, value, step):
        if self._thread is None:
            self._start()
        value = float(value)
        self._metrics.append((key, value, _now_ms(), self.step if step is None else int(step)))
        if len(self._metrics) >= _MAX_METRICS:
            self._wake.set()
        return value

    def log_metrics(self, metrics, step=None):
        if not self.active:
            return
        for key, value in metrics.items():
            self.log_metric(key, value, step)

    def log_param(self, key, value):
        if self.active:
            if self._thread is None:
                self._start()
            self._params.append((str(key), str(value)))

    def log_params(self, params):
        for key, value in params.items():
            self.log_param(key, value)

    def set_tag(self, key, value):
        if self.active:
            if self._thread is None:
                self._start()
            self._tags.append((str(key), str(value)))

    def event(self, label, kind="event"):
        """Marks a point in time (a checkpoint, an evaluation, anything)."""
        if self.active:
            if self._thread is None:
                self._start()
            self._events.append((_now_ms(), str(kind), str(label)))

    def epoch(self, number=None):
        """Marks the start of an epoch: an event and the metric `epoch` (`number`, else
        the count of epochs started, from 1). With `trainbench run --max-epochs N` the
        script ends cleanly when epoch N+1 would start, after N whole epochs."""
        if not self.active:
            return
        self._epochs_started += 1
        number = self._epochs_started if number is None else number
        if self.max_epochs and self._epochs_started > self.max_epochs:
            self._end_at_max_epochs()
        self.event("epoch %s" % number, kind="epoch")
        self._queue_metric("epoch", number, None)

    @contextlib.contextmanager
    def phase(self, name):
        """`with run.phase("eval"):` marks where a phase starts and ends."""
        self.event(name, kind="phase.start")
        try:
            yield
        finally:
            self.event(name, kind="phase.end")

    def steps(self, iterable, batch_size=None):
        """Yields the items of `iterable` (a DataLoader) and records for each step the
        time spent waiting for it (step.data_wait_seconds), the time the loop body took
        (step.compute_seconds) and samples per second (throughput_samples_per_second)."""
        if not self.active:
            yield from iterable
            return
        iterator = iter(iterable)
        while True:
            asked = time.perf_counter()
            try:
                batch = next(iterator)
            except StopIteration:
                return
            got = time.perf_counter()
            self.step += 1  # metrics logged in the loop body carry this step
            yield batch
            done = time.perf_counter()
            self._record_step(got - asked, done - got, batch_size or _batch_size(batch))

    @contextlib.contextmanager
    def step_timer(self, samples=None):
        """For loops that do not iterate a loader: `with run.step_timer(samples=64):`
        around the computation of one step; the time since the previous step ended
        counts as waiting for data."""
        start = time.perf_counter()
        self.step += 1
        wait = start - self._last_step_end if self._last_step_end is not None else 0.0
        try:
            yield
        finally:
            end = time.perf_counter()
            self._last_step_end = end
            self._record_step(wait, end - start, samples)

    def log_artifact(self, path, name=None):
        """Uploads a file now (synchronously) as an artifact of the run."""
        if not self.active:
            return
        with open(path, "rb") as f:
            self._upload(name or os.path.basename(path), f.read())

    def log_text(self, text, name):
        if self.active:
            self._upload(name, text.encode())

    def flush(self):
        """Sends everything queued now."""
        if not self.active:
            return
        with self._send_lock:
            self._send_queued()
            self._endpoint.close()

    def close(self):
        if not self.active or self._closed:
            return
        self._closed = True
        self._wake.set()
        self.flush()
        if self._lost:
            self._report_once("lost", "trainbench: %d values could not be sent to the tracking endpoint" % self._lost)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and not issubclass(exc_type, (SystemExit, KeyboardInterrupt)):
            self.event("%s: %s" % (exc_type.__name__, exc), kind="crash")
        self.close()
        return False

    # --- internals ---
    def _record_step(self, wait, compute, samples):
        self.log_metric("step.data_wait_seconds", wait)
        self.log_metric("step.compute_seconds", compute)
        if samples and wait + compute > 0:
            self.log_metric("throughput_samples_per_second", samples / (wait + compute))

    def _end_at_max_epochs(self):
        self.event("--max-epochs %d reached: the script ends" % self.max_epochs, kind="max-epochs")
        self.close()
        if threading.current_thread() is threading.main_thread():
            raise SystemExit(0)

    def _start(self):
        # Registered here, not at fork: a multiprocessing child clears its finalizers
        # after the fork hooks ran.
        _close_at_process_exit(self)
        self._endpoint = _Endpoint(self._uri)
        self._thread = threading.Thread(target=self._loop, name="trainbench-sender", daemon=True)
        self._thread.start()

    def _after_fork(self):
        # The child starts empty (the parent sends what it queued). Its sender starts with
        # its first value: DataLoader workers, which never log, get no thread.
        self._send_lock = threading.Lock()
        self._wake = threading.Event()
        for queue in (self._metrics, self._params, self._tags, self._events):
            queue.clear()
        self._thread = None
        self._endpoint = _Endpoint(self._uri)

    def _loop(self):
        while not self._closed:
            self._wake.wait(self._flush_interval)
            self._wake.clear()
            with self._send_lock:
                self._send_queued()
                # One connection per round, not one kept open: the server watches an idle
                # kept-alive connection with a timer that wakes it ~180 times a second.
                self._endpoint.close()

    @staticmethod
    def _take(queue, n):
        out = []
        while queue and len(out) < n:
            out.append(queue.popleft())
        return out

    def _send_queued(self):
        while self._metrics or self._params or self._tags:
            params = self._take(self._params, _MAX_PARAMS_TAGS)
            tags = self._take(self._tags, _MAX_PARAMS_TAGS)
            metrics = self._take(self._metrics, _MAX_METRICS - len(params) - len(tags))
            body = {
                "run_id": self.run_id,
                "metrics": [{"key": k, "value": _json_value(v), "timestamp": t, "step": s} for k, v, t, s in metrics],
                "params": [{"key": k, "value": v} for k, v in params],
                "tags": [{"key": k, "value": v} for k, v in tags],
            }
            self._post("/api/2.0/mlflow/runs/log-batch", body, len(metrics) + len(params) + len(tags))
        while self._events:
            events = self._take(self._events, _MAX_METRICS)
            body = {"run_id": self.run_id, "events": [{"timestamp": t, "kind": k, "label": l} for t, k, l in events]}
            self._post("/api/2.0/trainbench/runs/log-events", body, len(events))

    def _post(self, path, body, count):
        try:
            status, answer = self._endpoint.request("POST", path, body)
        except OSError as e:
            self._lost += count
            self._report_once("unreachable", "trainbench: the tracking endpoint %s is unreachable (%s); "
                              "training goes on, its metrics are not recorded" % (self._uri, e))
            return
        if status != 200:
            self._lost += count
            message = answer.get("message", "") if isinstance(answer, dict) else str(answer[:200])
            self._report_once(message, "trainbench: the tracking endpoint refused values (HTTP %d): %s" % (status, message))

    def _upload(self, name, data):
        path = "/api/2.0/mlflow-artifacts/artifacts/%s/%s/artifacts/%s" % (
            self.experiment_id, self.run_id, urllib.parse.quote(name))
        with self._send_lock:
            try:
                status, answer = self._endpoint.request("PUT", path, data, "application/octet-stream")
            except OSError as e:
                self._report_once("unreachable", "trainbench: cannot upload %s: %s" % (name, e))
                return
        if status != 200:
            message = answer.get("message", "") if isinstance(answer, dict) else ""
            self._report_once(message, "trainbench: artifact %s refused (HTTP %d): %s" % (name, status, message))

    def _report_once(self, key, message):
        if key not in self._reported:
            self._reported.add(key)
            print(message, file=sys.stderr, flush=True)


_runs = []


_first_run = None


def active_run():
    """The Run created first in this process (a forked child shares its parent's), or a
    new one."""
    global _first_run
    if _first_run is None:
        _first_run = Run()
    return _first_run


def _close_at_process_exit(run):
    """multiprocessing's children end with os._exit, which skips atexit; its own exit
    hook runs their finalizers."""
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None:
        mp_util.Finalize(None, run.close, exitpriority=100)


def _install_exit_hooks(run):
    """SIGTERM and uncaught exceptions flush what is queued before the process ends."""
    _runs.append(run)
    if len(_runs) > 1:
        return
    if threading.current_thread() is threading.main_thread():
        try:
            if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
                signal.signal(signal.SIGTERM, _on_sigterm)
        except (ValueError, OSError):
            pass
    previous_hook = sys.excepthook

    def excepthook(exc_type, exc, tb):
        for r in _runs:
            r.event("%s: %s" % (exc_type.__name__, exc), kind="crash")
            r.close()
        previous_hook(exc_type, exc, tb)

    sys.excepthook = excepthook


def _on_sigterm(signum, frame):
    for r in _runs:
        r.event("SIGTERM", kind="signal")
        r.close()
    # Die of the signal, as the script would have without trainbench.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)
