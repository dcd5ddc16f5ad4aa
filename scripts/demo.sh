#!/usr/bin/env bash
# The main job: installs what is missing, builds trainbench, trains a real PyTorch CNN on
# the digits data set under `trainbench run`, and shows the recorded run.
# The run lands in demo/trainbench.db (override with TRAINBENCH_STORE).
# On a machine without a GPU the GPU listeners read the simulated GPU of sim/ (a real GPU
# is used instead when NVML finds one); the run is labelled as simulated.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
mkdir -p demo
export TRAINBENCH_STORE="${TRAINBENCH_STORE:-$PWD/demo/trainbench.db}"
listeners=top+ps+iostat+net+nvml+smi+dcgmi
if ! ./build/trainbench devices | grep -q '^0 '; then
  export TRAINBENCH_SIM_SCENARIO="$PWD/sim/scenarios/two-a100.json"
  export TRAINBENCH_NVML_LIBRARY="$PWD/build/sim/lib/libnvidia-ml.so.1"
  export PATH="$PWD/build/sim/bin:$PATH"
  echo "demo: no GPU here; the GPU listeners read the simulated GPU ($TRAINBENCH_SIM_SCENARIO)"
fi
./build/trainbench devices
# Debian's PyTorch is installed for /usr/bin/python3, which may not be first on PATH.
./build/trainbench run --experiment digits-demo --name digits-cnn --listeners "$listeners" --devices 0 \
  --python /usr/bin/python3 examples/digits/train.py --epochs 15 --batch-size 64
echo
./build/trainbench show digits-cnn
echo
./build/trainbench ls
echo
# The results in the browser (the JSON API and the web page); DEMO_NO_SERVE=1 skips it.
if [ -z "${DEMO_NO_SERVE:-}" ]; then
  echo "demo: open the address below in a browser; Ctrl-C stops the server"
  exec ./build/trainbench serve --port "${DEMO_PORT:-8080}"
fi
