"""radT's Python API for scripts written for radT, logging through trainbench.

A script that does `import radt` and `with radt.run.RADTBenchmark() as run:` runs
unchanged under `trainbench run` and `trainbench schedule` (which put this package before
any installed radT on the script's path): its metrics, params, tags and artifacts land in
the trainbench run, with the hardware metrics beside them. Outside trainbench every call
does nothing, as radT's do when the script runs without radT.
"""

from . import run

__all__ = ["run"]  # radt.run.RADTBenchmark, as radT's README shows it

__version__ = "0.1.0"
