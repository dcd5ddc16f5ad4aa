#!/usr/bin/env bash
# The main job: installs what is missing, builds trainbench, and runs the example
# experiment examples/digits/experiment.csv (a real PyTorch CNN on the digits data set):
# one run alone and two runs collocated on the CPU, and on a machine with a GPU also the
# same on GPU 0, two runs sharing it through MPS, and two on MIG instances of GPU 1.
# Then it lists what was recorded, reports per workload (collocation speed-up included)
# and serves it in the browser.
# Runs land in demo/trainbench.db (override with TRAINBENCH_STORE); the experiment file is
# copied to demo/experiment.csv, where trainbench writes each row's status back. An
# interrupted demo resumes where it stopped; a finished one starts a fresh copy.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh --target trainbench web  # what the demo runs: not the tests
mkdir -p demo
export TRAINBENCH_STORE="${TRAINBENCH_STORE:-$PWD/demo/trainbench.db}"
ln -sfn ../examples/digits/train.py demo/train.py

# Rows still to run (empty or KILLED Status): resume those; otherwise a fresh copy.
if [ ! -f demo/experiment.csv ] ||
  ! awk -F, 'NR > 1 && ($3 ~ /^ *$/ || $3 ~ /KILLED/) { found = 1 } END { exit !found }' demo/experiment.csv; then
  if ./build/trainbench devices | grep -q '^0 '; then
    keep='1'  # a GPU: every workload that this machine can run
    if ! command -v nvidia-cuda-mps-control > /dev/null; then
      echo "demo: no nvidia-cuda-mps-control: skipping the MPS workload"
      keep="$keep && \$6 !~ /MPS/"
    fi
    if [ "$(id -u)" != 0 ] ||
      [ "$(nvidia-smi -i 1 --query-gpu=mig.mode.current --format=csv,noheader 2> /dev/null)" != Enabled ]; then
      echo "demo: GPU 1 is not in MIG mode (or this is not root): skipping the MIG workload"
      keep="$keep && \$6 !~ /g\\./"
    fi
  else
    echo "demo: no GPU here: running the CPU workloads (a run alone, two runs collocated)"
    keep='$5 ~ /^ *- *$/'
  fi
  awk -F, "NR == 1 || ($keep)" examples/digits/experiment.csv > demo/experiment.csv
fi
# Debian's PyTorch is installed for /usr/bin/python3, which may not be first on PATH.
./build/trainbench schedule demo/experiment.csv --python /usr/bin/python3
echo
./build/trainbench ls digits
echo
# Per workload: throughput, epoch time, steady-state figures, and what collocation gave.
./build/trainbench report digits
# The same with charts, as a PDF to read or send (A4 pages, fonts embedded).
./build/trainbench report digits -o demo/digits-report.pdf
echo
# The results in the browser (the JSON API and the web page); DEMO_NO_SERVE=1 skips it.
if [ -z "${DEMO_NO_SERVE:-}" ]; then
  echo "demo: open the address below in a browser; Ctrl-C stops the server"
  exec ./build/trainbench serve --port "${DEMO_PORT:-8080}"
fi
