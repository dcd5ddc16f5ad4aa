#!/usr/bin/env bash
# Makes the default figures of docs/figures/ (docs/figures/README.md says what each shows)
# from experiments run here, with nothing but the runs and the figure's kind named:
#   - collocation-bars.png: examples/collocation's tput.py alone, as a naive pair and as an
#     MPS pair on GPU 0 of the simulated GPU (sim/scenarios/two-a100.json), three repeats
#     (15 runs), `plot --bars`;
#   - workload-runs.png: the throughput of the naive pair's six runs;
#   - sweep-colour.png: eight learning rates of examples/sweep/sweep.py, `--color-by lr`.
# Needs a build (scripts/build.sh); takes about two minutes on 2 cores. Usage:
#   bash scripts/docs-figures.sh [OUT_DIR]   (default docs/figures)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/figures}"
mkdir -p "$out"
tb="$PWD/build/trainbench"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export TRAINBENCH_SIM_SCENARIO="$PWD/sim/scenarios/two-a100.json"
export TRAINBENCH_NVML_LIBRARY="$PWD/build/sim/lib/libnvidia-ml.so.1"
export PATH="$PWD/build/sim/bin:$PATH"

cp examples/collocation/tput.py "$work/"
cat > "$work/exp.csv" << 'CSV'
Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params
collocation,alone,,,0,-,tput.py,top+nvml,--seconds 6
collocation,naive,,,0,-,tput.py,top+nvml,--seconds 6
collocation,naive,,,0,-,tput.py,top+nvml,--seconds 6 --seed 1
collocation,mps,,,0,MPS,tput.py,top+nvml,--seconds 6
collocation,mps,,,0,MPS,tput.py,top+nvml,--seconds 6 --seed 1
CSV
(cd "$work" && "$tb" schedule exp.csv --store "$work/c.db" --repeat 3 --python /usr/bin/python3 > /dev/null)
"$tb" plot --store "$work/c.db" --bars collocation --width 7in -o "$out/collocation-bars.png"
naive=$("$tb" ls --store "$work/c.db" collocation | awk '/^  workload / { w = $2 } w == "naive" && $1 ~ /^[0-9a-f]+$/ && length($1) == 8 { print $1 }')
# shellcheck disable=SC2086  # one id a word
"$tb" plot --store "$work/c.db" $naive -m train.throughput_samples_per_second -o "$out/workload-runs.png"

for lr in 0.001 0.002 0.003 0.005 0.01 0.02 0.03 0.05; do
  "$tb" run --store "$work/s.db" -q -e sweep -w lr -n "lr $lr" -l top -- /usr/bin/python3 examples/sweep/sweep.py $lr
done
"$tb" plot --store "$work/s.db" "lr 0.001" "lr 0.002" "lr 0.003" "lr 0.005" "lr 0.01" "lr 0.02" "lr 0.03" "lr 0.05" \
  -m train.loss --color-by lr -o "$out/sweep-colour.png"
