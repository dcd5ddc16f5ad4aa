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

Reading a store back (`trainbench.open(...)`, _store.py) gives numpy arrays where numpy is
installed and pandas DataFrames where pandas is; neither is needed to import the client.

In distributed training only rank 0 sends (RANK, as torchrun sets it, else the node's rank
under `trainbench run --distributed`), so each metric lands once; `Run(all_ranks=True)`
sends every rank's metrics, labelled rank=N.
"""

from ._run import Run, active_run
from ._store import StoreError, open

__all__ = ["Run", "active_run", "open", "StoreError"]
__version__ = "0.1.0"
