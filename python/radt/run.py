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
  set_tags, log_text, log_dict,     MLflow's functions radT scripts reach through `run.`,
  log_artifacts, active_run,        served by trainbench's client whether or not MLflow is
  autolog                           installed (autolog: MLflow's own where it is installed,
                                    else nothing: trainbench records the hardware itself)
  anything else of MLflow's         MLflow's own function, where MLflow is installed (under
                                    trainbench its calls reach the run's tracking API too)
The block's end sends what is queued and leaves the run open, as radT's does: what the
script logs after it goes to the same run (which ends with the process).
radT's listeners are trainbench's (its `-l` / the Listeners column): none start here.
"""

import json
import os
import types

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
        if exc_type is not None and not issubclass(exc_type, (SystemExit, KeyboardInterrupt)):
            self._run.event("%s: %s" % (exc_type.__name__, exc), kind="crash")
        self._run.flush()  # the run stays open for what follows the block; it ends with the process
        return False

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

    def set_tags(self, tags):
        for key, value in tags.items():
            self._run.set_tag(key, value)

    def log_text(self, text, artifact_file):
        self._run.log_text(text, artifact_file)

    def log_dict(self, dictionary, artifact_file):
        """As MLflow's: YAML for .yaml/.yml (where PyYAML is installed), else JSON."""
        if artifact_file.endswith((".yaml", ".yml")):
            try:
                import yaml

                self._run.log_text(yaml.safe_dump(dictionary), artifact_file)
                return
            except ImportError:
                pass
        self._run.log_text(json.dumps(dictionary, indent=2), artifact_file)

    def log_artifacts(self, local_dir, artifact_path=None):
        for root, _, files in os.walk(local_dir):
            for name in sorted(files):
                path = os.path.join(root, name)
                relative = os.path.relpath(path, local_dir).replace(os.sep, "/")
                self._run.log_artifact(path, name=artifact_path + "/" + relative if artifact_path else relative)

    def active_run(self):
        """MLflow's active run as scripts read it: .info.run_id (and .info.experiment_id)."""
        info = types.SimpleNamespace(run_id=self.run_id, experiment_id=self._run.experiment_id)
        return types.SimpleNamespace(info=info) if self._run.active else None

    def autolog(self, *args, **kwargs):
        try:
            import mlflow
        except ImportError:
            return None  # trainbench records the hardware; a framework's own metrics need MLflow
        return mlflow.autolog(*args, **kwargs)

    def __getattr__(self, name):
        try:
            import mlflow
        except ImportError:
            raise AttributeError(
                "RADTBenchmark.%s is one of MLflow's functions, and MLflow is not installed here: "
                "use trainbench's client (import trainbench) or install mlflow" % name
            ) from None
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
