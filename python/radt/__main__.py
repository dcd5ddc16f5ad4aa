"""`python -m radt ...`, radT's README form for virtual environments: the same command line
run by trainbench (radT's options, then a script or an experiment file), as the `radt`
command installed with trainbench does. The trainbench command is TRAINBENCH_BINARY, else
`trainbench` on PATH."""

import os
import shutil
import sys


def main():
    binary = os.environ.get("TRAINBENCH_BINARY") or shutil.which("trainbench")
    if not binary:
        sys.stderr.write("radt: no trainbench command found: put it on PATH or set TRAINBENCH_BINARY\n")
        return 2
    os.execv(binary, [binary] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
