#!/usr/bin/env bash
# How `trainbench schedule` passes a run's output on, against `trainbench run` (which the
# issue names as the baseline): a chatty script (CHATTY_LINES short lines) under both,
# alternating, ROUNDS times, and one script printing a LONG_MB-megabyte line under schedule
# (wall time and the scheduler's peak memory). Usage: bench/schedule_output.sh [build dir]
set -euo pipefail
build="$(cd "${1:-build}" && pwd)"
tb="$build/trainbench"
rounds="${ROUNDS:-3}"
lines="${CHATTY_LINES:-2000000}"
long_mb="${LONG_MB:-100}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > chatty.py <<PY
import sys
for i in range($lines): sys.stdout.write("step %d loss 0.123\n" % i)
PY
cat > long.py <<PY
import sys
sys.stdout.write("x" * ($long_mb * 1000 * 1000) + "\n")
PY
header="Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params"
seconds() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1; e=$(date +%s.%N); awk "BEGIN {printf \"%.2f\", $e - $s}"; }
run_times=() schedule_times=()
for i in $(seq "$rounds"); do
  run_times+=("$(seconds "$tb" run --store "r$i.db" -q -l top --python /usr/bin/python3 chatty.py)")
  printf '%s\nb,1,,,-,-,chatty.py,top,\n' "$header" > "s$i.csv"
  schedule_times+=("$(seconds env TRAINBENCH_PYTHON=/usr/bin/python3 "$tb" schedule --store "s$i.db" "s$i.csv")")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "chatty script ($lines lines), median of $rounds:"
echo "  trainbench run       $(median "${run_times[@]}") s"
echo "  trainbench schedule  $(median "${schedule_times[@]}") s"
printf '%s\nb,1,,,-,-,long.py,top,\n' "$header" > long.csv
# The scheduler's own peak (VmHWM of its process, read until it exits): /usr/bin/time would
# report the script's, which holds the line itself.
start=$(date +%s.%N)
TRAINBENCH_PYTHON=/usr/bin/python3 "$tb" schedule --store long.db long.csv > /dev/null 2>&1 &
pid=$!
hwm=0
while kill -0 "$pid" 2> /dev/null; do
  v=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2> /dev/null || true)
  [ -n "$v" ] && hwm=$v
  sleep 0.05
done
wait "$pid"
end=$(date +%s.%N)
echo "one ${long_mb} MB line under schedule: $(awk "BEGIN {printf \"%.2f\", $end - $start}") s," \
  "scheduler peak RSS $((hwm / 1024)) MB"
