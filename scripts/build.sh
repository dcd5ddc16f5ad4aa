#!/usr/bin/env bash
# Configures and builds trainbench into build/ (Ninja, ccache when present). Extra
# arguments go to cmake's configure step, e.g. -DTRAINBENCH_WERROR=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" > build.log 2>&1 || { cat build.log; exit 1; }
cmake --build build -j "$(nproc)"
