"""radt.run.RADTBenchmark: radT's run context, on trainbench's client.

radT's calls and what they become:
  log_metric(name, value, epoch=0)  a value of the script's metric `name` at step `epoch`
                                    (radT 0.2.29's name; `step=` as older radT also works); an
                                    epoch at or past `trainbench run --max-epochs N` ends the
                                    script cleanly, as radT's DNN_MAX_EPOCH did
  log_metrics(dict, epoch=0)        each of them
  radt.log_metric, radt.log_metrics the same without a `with` block (radT 0.2.29's module
                                    functions), on one RADTBenchmark of the process
  log_param / log_params / set_tag  the run's params and tags
  log_artifact(path)                the file, kept with the run
  anything else of MLflow's         MLflow's own function, where MLflow is installed (under
                                    trainbench its calls reach the run's tracking API too)
radT's listeners are trainbench's (its `-l` / the Listeners column): none start here.
"""

import trainbench


class RADTBenchmark:
    """`with radt.run.RADTBenchmark() as run:` around the training loop."""

    def __init__(self):
        self._run = trainbench.active_run()
        self.run_id = self._run.run_id
        if self._run.active:
            print("trainbench: radT's RADTBenchmark logs into run %s" % self.run_id)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return self._run.__exit__(exc_type, exc, tb)

    def log_metric(self, name, value, epoch=0, step=None):
        step = epoch if step is None else step
        self._run.log_metric(name, value, step=step)
        self._end_at_max_epoch(step)

    def log_metrics(self, metrics, epoch=0, step=None):
        step = epoch if step is None else step
        self._run.log_metrics(metrics, step=step)
        self._end_at_max_epoch(step)

    def log_param(self, key, value):
        self._run.log_param(key, value)

    def log_params(self, params):
        self._run.log_params(params)

    def set_tag(self, key, value):
        self._run.set_tag(key, value)

    def log_artifact(self, local_path, artifact_path=None):
        name = local_path.rsplit("/", 1)[-1]
        self._run.log_artifact(local_path, name=artifact_path + "/" + name if artifact_path else None)

    def __getattr__(self, name):
        try:
            import mlflow
        except ImportError:
            raise AttributeError(
                "RADTBenchmark.%s is one of MLflow's functions, and MLflow is not installed here: "
                "use trainbench's client (import trainbench) or install mlflow" % name) from None
        return getattr(mlflow, name)

    def _end_at_max_epoch(self, step):
        run = self._run
        if run.active and run.max_epochs and step is not None and step >= run.max_epochs:
            run._end_at_max_epochs()


_benchmark = None


def start_run(*args, **kwargs):
    """radt.run.start_run: the RADTBenchmark of this run (one a process)."""
    global _benchmark
    if _benchmark is None:
        _benchmark = RADTBenchmark()
    return _benchmark


def log_metric(name, value, epoch=0):
    """radt.log_metric / radt.run.log_metric, radT 0.2.29's form without a `with` block."""
    start_run().log_metric(name, value, epoch)


def log_metrics(metrics, epoch=0):
    """radt.log_metrics / radt.run.log_metrics."""
    start_run().log_metrics(metrics, epoch)
