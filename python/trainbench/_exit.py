"""What ends a process also ends its runs: atexit, SIGTERM, an uncaught exception and
multiprocessing's own exit send what the runs queued before the process goes."""

import os
import signal
import sys
import threading


class _ProcessRuns:
    """The runs of this process: the first one (active_run's) and those to close at exit."""

    def __init__(self):
        self.first = None
        self.closing = []

    def close_at_exit(self, run):
        self.closing.append(run)
        if len(self.closing) == 1:
            self._install()

    def close_all(self, kind, label):
        for run in self.closing:
            run.event(label, kind=kind)
            run.close()

    def _install(self):
        if threading.current_thread() is threading.main_thread():
            try:
                if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
                    signal.signal(signal.SIGTERM, self._on_sigterm)
            except (ValueError, OSError):
                pass
        previous_hook = sys.excepthook

        def excepthook(exc_type, exc, tb):
            self.close_all("crash", "%s: %s" % (exc_type.__name__, exc))
            previous_hook(exc_type, exc, tb)

        sys.excepthook = excepthook

    def _on_sigterm(self, signum, frame):
        self.close_all("signal", "SIGTERM")
        # Die of the signal, as the script would have without trainbench.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)


process_runs = _ProcessRuns()


def close_at_process_exit(run):
    """multiprocessing's children end with os._exit, which skips atexit; its own exit hook
    runs their finalizers. Registered when a run starts sending, not at fork: a
    multiprocessing child clears its finalizers after the fork hooks ran."""
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None:
        mp_util.Finalize(None, run.close, exitpriority=100)
