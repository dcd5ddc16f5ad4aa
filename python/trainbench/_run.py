"""The Run: what a training script calls. Every call only queues (the sender thread does
the network); outside trainbench a Run is inactive and every call does nothing."""

import atexit
import contextlib
import os
import threading
import time

from ._exit import close_at_process_exit, process_runs
from ._sender import Sender


def batch_size_of(batch):
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


def rank_of(env):
    """This process's rank in distributed training: RANK (torchrun, torch.distributed),
    else the node's rank in a run across nodes (TRAINBENCH_NODE_RANK, set by
    `trainbench run --distributed`); None outside distributed training."""
    for name in ("RANK", "TRAINBENCH_NODE_RANK"):
        value = env.get(name, "")
        if value.isdigit():
            return int(value)
    return None


class Run:
    """The run this script belongs to. Use as a context manager or call close().

    In distributed training every rank may create a Run, but only rank 0's values are
    sent, so each metric lands once. With `all_ranks=True` every rank sends its metrics
    with the label rank=N (params, tags, events and artifacts still come from rank 0)."""

    def __init__(self, tracking_uri=None, run_id=None, flush_interval=0.5, all_ranks=False):
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
        self._last_step_end = None
        self._last_wait = 0.0  # the step timer's last wait for data
        self.rank = rank_of(env)
        first = self.rank in (None, 0)
        self._sender = Sender(
            uri,
            run_id,
            self.experiment_id,
            flush_interval,
            on_start=lambda: close_at_process_exit(self),
            send_metrics=first or all_ranks,
            send_rest=first,
            labels={"rank": str(self.rank)} if all_ranks and self.rank is not None else None,
        )
        if process_runs.first is None:
            process_runs.first = self
        if self.active:
            self._sender.start()
            atexit.register(self.close)
            process_runs.close_at_exit(self)
            if hasattr(os, "register_at_fork"):
                os.register_at_fork(after_in_child=self._sender.after_fork)

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
        value = float(value)
        self._sender.metric(key, value, self.step if step is None else int(step))
        return value

    def log_metrics(self, metrics, step=None):
        if not self.active:
            return
        for key, value in metrics.items():
            self.log_metric(key, value, step)

    def log_param(self, key, value):
        if self.active:
            self._sender.param(str(key), str(value))

    def log_params(self, params):
        for key, value in params.items():
            self.log_param(key, value)

    def set_tag(self, key, value):
        if self.active:
            self._sender.tag(str(key), str(value))

    def event(self, label, kind="event"):
        """Marks a point in time (a checkpoint, an evaluation, anything). The step timer
        does not count the time across an event (an epoch's evaluation) as waiting for data."""
        if self.active:
            self._sender.event(str(kind), str(label))
            self._last_step_end = None

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
            self._record_step(got - asked, done - got, batch_size or batch_size_of(batch))

    @contextlib.contextmanager
    def step_timer(self, samples=None):
        """For loops that do not iterate a loader: `with run.step_timer(samples=64):`
        around the computation of one step; the time since the previous step ended
        counts as waiting for data, unless an epoch, a phase or an event came between
        (evaluation, a checkpoint): the step then takes the previous step's wait."""
        start = time.perf_counter()
        self.step += 1
        if self._last_step_end is not None:
            self._last_wait = start - self._last_step_end
        wait = self._last_wait
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
            self._sender.upload(name or os.path.basename(path), f.read())

    def log_text(self, text, name):
        if self.active:
            self._sender.upload(name, text.encode())

    def flush(self):
        """Sends everything queued now."""
        if self.active:
            self._sender.flush()

    def close(self):
        if self.active:
            self._sender.close()

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


def active_run():
    """The Run created first in this process (a forked child shares its parent's), or a
    new one."""
    if process_runs.first is None:
        process_runs.first = Run()
    return process_runs.first
