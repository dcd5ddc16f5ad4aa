#!/usr/bin/env bash
# Every test: installs what is missing, builds with warnings as errors, checks formatting,
# and runs the whole CTest suite (unit tests, end-to-end tests with real processes).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh -DTRAINBENCH_WERROR=ON
ctest --test-dir build --output-on-failure -j "$(nproc)"
