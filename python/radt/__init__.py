"""radT's Python API for scripts written for radT, logging through trainbench.

A script that does `import radt` and `with radt.run.RADTBenchmark() as run:` runs
unchanged under `trainbench run` and `trainbench schedule` (which put this package before
any installed radT on the script's path): its metrics, params, tags and artifacts land in
the trainbench run, with the hardware metrics beside them. Outside trainbench every call
does nothing, as radT's do when the script runs without radT.
"""

from . import run
from .run import log_metric, log_metrics
from .schedule import schedule_external

# radt.run.RADTBenchmark, radt.log_metric, radt.schedule_external, as radT 0.2.29
__all__ = ["run", "log_metric", "log_metrics", "schedule_external"]

__version__ = "0.1.0"
