#!/usr/bin/env bash
# trainbench's own CPU time beside a training script, as `trainbench show` records it for
# every run (listeners, tracking server, helper tools, the rest of trainbench), for this
# build and optionally another, their runs alternating: what trainbench takes from the
# machine (issue 20, goal 5) in CPU time, which the host's noise moves far less than the
# wall time bench/tracking_overhead.sh compares.
#
#   bench/run_cost.sh [rounds=5] [epochs=8] [other trainbench binary to compare with]
#
# The run: the digits example (examples/digits, CPU, 1 DataLoader worker) under
# `trainbench run` with everything on (this machine's listeners, the tracking API, the
# Python client logging loss and step timing, the environment manifest). Prints each
# run's cost and, per binary, the medians in seconds; with a second binary, the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
epochs=${2:-8}
binaries=(build/trainbench)
[[ -n ${3:-} ]] && binaries+=("$3")
for b in "${binaries[@]}"; do
  [[ -x $b ]] || { echo "no executable $b: build it first (bash scripts/build.sh)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
parts=(total listeners server tools rest)
names=("trainbench, all" "listeners" "tracking server" "helper tools" "the rest")
declare -A costs  # "K part" -> the values, one a line

for ((i = 0; i < rounds; i++)); do
  for ((k = 0; k < ${#binaries[@]}; k++)); do
    b=${binaries[$k]}
    store=$work/cost.$k.db
    if ! "$b" run --store "$store" --python /usr/bin/python3 examples/digits/train.py --epochs "$epochs" \
      --workers 1 >"$work/out" 2>"$work/err"; then
      echo "the run under $b failed; its output:" >&2
      cat "$work/out" "$work/err" >&2
      exit 1
    fi
    id=$(sed -n 's/.*run \([0-9a-f]\{32\}\) FINISHED.*/\1/p' "$work/err")
    # "trainbench  0.131 s of CPU time, 1.7% of the command's 7.657 s: listeners 0.004 s,
    #  tracking server 0.010 s, helper tools 0.076 s, the rest 0.040 s"
    line=$("$b" show --store "$store" "$id" | grep '^trainbench ')
    read -r -a values < <(awk '{for (i = 1; i <= NF; i++) if ($i == "s" || $i == "s," || $i == "s:") printf "%s ", $(i - 1); print ""}' \
      <<<"$line")
    # values: total, the command's, listeners, tracking server, helper tools, the rest
    printf 'round %d, %s: trainbench %s s (listeners %s, tracking server %s, helper tools %s, the rest %s) beside %s s of the command\n' \
      "$i" "$b" "${values[0]}" "${values[2]}" "${values[3]}" "${values[4]}" "${values[5]}" "${values[1]}"
    for p in 0 1 2 3 4; do
      v=${values[0]}
      ((p > 0)) && v=${values[p + 1]}
      costs["$k ${parts[p]}"]+="$v"$'\n'
    done
  done
done

median() { sort -g | awk 'NF {a[++n] = $1} END {print a[int((n + 1) / 2)]}'; }
echo
printf '%-20s' "median s a run"
for b in "${binaries[@]}"; do printf ' %26s' "$b"; done
((${#binaries[@]} > 1)) && printf ' %10s' "ratio"
echo
for ((q = 0; q < ${#parts[@]}; q++)); do
  p=${parts[q]}
  printf '%-20s' "${names[q]}"
  declare -a med=()
  for ((k = 0; k < ${#binaries[@]}; k++)); do
    med[k]=$(printf '%s' "${costs["$k $p"]}" | median)
    printf ' %26s' "${med[k]}"
  done
  if ((${#binaries[@]} > 1)); then
    awk -v a="${med[0]}" -v b="${med[1]}" 'BEGIN {if (a > 0) printf " %9.2fx", b / a; else printf " %10s", "-"}'
  fi
  echo
done
echo "$rounds rounds of $epochs epochs; 'ratio' is the second binary's median over the first's"
