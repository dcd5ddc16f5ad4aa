"""Runs a Python script in this process and, at exit, prints where its main thread's time
went, from the kernel's scheduler statistics (/proc/thread-self/schedstat):

    thread times: wall W on-cpu C waiting-for-cpu R blocked B other-threads O client-calls K

- wall: from this wrapper's start (the interpreter already started) to the end of the
  script's exit handlers;
- on-cpu: the main thread ran;
- waiting-for-cpu: the main thread could run but another thread or process had the CPU;
- blocked: the rest, the main thread asleep (waiting for a DataLoader batch, for the
  GIL, for I/O);
- other-threads: the CPU time of the process's other threads (the trainbench client's
  sender thread among them);
- client-calls: the main thread's CPU time inside the trainbench client's calls
  (log_metric, log_metrics, a step's record), 0 when no run is active.

TRAINBENCH_BENCH_SEND_EVERY=S sets the client's default send interval (Run's
flush_interval) to S seconds, for a benchmark side that compares intervals.

bench/tracking_overhead.sh runs the training script through it on both sides, so that
what trainbench can take from the training thread (its CPU, its data, its start and end)
is told apart from how fast the host ran the same work. After the script and its exit
handlers, the process ends without the interpreter's teardown (the same on both sides, and
about a second of the digits example's exit that moves by tenths from run to run), so that
the wall time outside this window is the interpreter's start and, tracked, trainbench's
start and end.

    python3 bench/thread_times.py SCRIPT [ARGS...]
"""
import atexit
import functools
import multiprocessing
import os
import runpy
import sys
import time


def schedstat():
    with open("/proc/thread-self/schedstat") as f:
        on_cpu, waiting, _ = f.read().split()
    return int(on_cpu) / 1e9, int(waiting) / 1e9


client_seconds = 0.0
client_depth = 0  # a step's record calls log_metric: only the outermost call is timed


def timed(method):
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        global client_seconds, client_depth
        if client_depth:
            return method(*args, **kwargs)
        client_depth += 1
        started = time.thread_time()
        try:
            return method(*args, **kwargs)
        finally:
            client_seconds += time.thread_time() - started
            client_depth -= 1

    return wrapper


def time_client_calls():
    """Wraps the client's calls on the training thread when a run is active (under
    `trainbench run`); the wrapper's own clock reads are counted in, so this errs high."""
    if "TRAINBENCH_TRACKING_URI" not in os.environ:
        return
    try:
        from trainbench import _run
    except ImportError:
        return
    for name in ("log_metric", "log_metrics", "_record_step"):
        setattr(_run.Run, name, timed(getattr(_run.Run, name)))
    every = os.environ.get("TRAINBENCH_BENCH_SEND_EVERY")
    if every:  # the client's send interval, for a side that compares another one
        original = _run.Run.__init__

        def init(self, *args, **kwargs):
            if len(args) < 3:  # (tracking_uri, run_id, flush_interval, ...)
                kwargs.setdefault("flush_interval", float(every))
            original(self, *args, **kwargs)

        _run.Run.__init__ = init


def main():
    started = time.perf_counter()
    on_cpu0, waiting0 = schedstat()
    process0 = time.process_time()
    main0 = time.thread_time()
    time_client_calls()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    atexit._run_exitfuncs()  # what the script and its libraries do at exit (the client's last send)
    on_cpu, waiting = schedstat()
    wall = time.perf_counter() - started
    on_cpu, waiting = on_cpu - on_cpu0, waiting - waiting0
    others = (time.process_time() - process0) - (time.thread_time() - main0)
    print(
        "thread times: wall %.3f on-cpu %.3f waiting-for-cpu %.3f blocked %.3f "
        "other-threads %.3f client-calls %.3f"
        % (wall, on_cpu, waiting, wall - on_cpu - waiting, max(others, 0.0), client_seconds)
    )
    sys.stdout.flush()
    sys.stderr.flush()
    # The interpreter's teardown is left out on every side: the same work whether tracked
    # or not (most of it the DataLoader worker's shutdown), and the noisiest second of a
    # round. The worker processes are ended here instead.
    for child in multiprocessing.active_children():
        child.kill()
        child.join()
    os._exit(code)


if __name__ == "__main__":
    main()
