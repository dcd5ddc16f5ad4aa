#!/usr/bin/env bash
# Configures and builds trainbench into build/ (Ninja, ccache when present). Arguments go
# to cmake's configure step, e.g. -DTRAINBENCH_WERROR=ON; those after --target name what
# to build (by default everything: the tests, the simulated GPU and the benchmarks too).
set -euo pipefail
cd "$(dirname "$0")/.."
configure=()
targets=()
while (($#)); do
  if [[ $1 == --target ]]; then
    shift
    targets=(--target "$@")
    break
  fi
  configure+=("$1")
  shift
done
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${configure[@]}" > build.log 2>&1 ||
  { cat build.log; exit 1; }
cmake --build build -j "$(nproc)" "${targets[@]}"
