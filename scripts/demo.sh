#!/usr/bin/env bash
# The main job: installs what is missing, builds trainbench, trains a real PyTorch CNN on
# the digits data set under `trainbench run`, and shows the recorded run.
# The run lands in demo/trainbench.db (override with TRAINBENCH_STORE).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
mkdir -p demo
export TRAINBENCH_STORE="${TRAINBENCH_STORE:-$PWD/demo/trainbench.db}"
# Debian's PyTorch is installed for /usr/bin/python3, which may not be first on PATH.
./build/trainbench run --experiment digits-demo --name digits-cnn --listeners top+ps+iostat+net \
  --python /usr/bin/python3 examples/digits/train.py --epochs 15 --batch-size 64
echo
./build/trainbench show digits-cnn
echo
./build/trainbench ls
