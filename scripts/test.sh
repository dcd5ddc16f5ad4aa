#!/usr/bin/env bash
# Every test: installs what is missing, builds with warnings as errors, checks formatting,
# and runs the whole CTest suite (unit tests, end-to-end tests with real processes).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh -DTRAINBENCH_WERROR=ON
# One test more than the cores: much of the suite waits (on Slurm's daemons, PostgreSQL, a
# child's timer) rather than computes.
ctest --test-dir build --output-on-failure -j "$(($(nproc) + 1))"
