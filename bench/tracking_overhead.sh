#!/usr/bin/env bash
# Slowdown of the digits training (examples/digits) with full tracking (the trainbench
# client logging loss and per-step timing, about 140 values a second) against the same
# training with the tracking API off (--no-tracking: every client call is a no-op), as
# interleaved pairs whose order alternates. Issue goal: under 1% median.
#
#   bench/tracking_overhead.sh [pairs=7] [epochs=8]
#
# Each figure is the training time the script reports ("trained N epochs in X s": the
# epochs with their evaluations, without interpreter start and imports, which tracking
# does not touch and whose noise would hide the difference). Both sides sample with top+ps.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-7}
epochs=${2:-8}
store=$(mktemp -d)/overhead.db
python=/usr/bin/python3

one() {  # prints the training seconds of one run; $1: extra trainbench options
  build/trainbench run -l top+ps --store "$store" $1 --python "$python" \
    examples/digits/train.py --epochs "$epochs" --workers 1 2>/dev/null | awk '/^trained/ {print $(NF-1)}'
}

ratios=()
for ((i = 0; i < pairs; i++)); do
  if ((i % 2 == 0)); then
    on=$(one ""); off=$(one "--no-tracking")
  else
    off=$(one "--no-tracking"); on=$(one "")
  fi
  ratio=$(echo "$on / $off" | bc -l)
  printf 'pair %d: tracked %.2f s, untracked %.2f s, ratio %.4f\n' "$i" "$on" "$off" "$ratio"
  ratios+=("$ratio")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; printf "median slowdown %+.2f%% over %d pairs (goal: under 1%%)\n", (m-1)*100, NR}'
rm -rf "$(dirname "$store")"
