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

one() {  # prints the training seconds and CPU seconds of one run; $1: extra trainbench options
  build/trainbench run -l top+ps --store "$store" $1 --python "$python" \
    examples/digits/train.py --epochs "$epochs" --workers 1 2>/dev/null |
    awk '/^trained/ {gsub(/\(/, ""); print $5, $7}'
}

ratios=() cpu_ratios=()
for ((i = 0; i < pairs; i++)); do
  if ((i % 2 == 0)); then
    read -r on on_cpu <<<"$(one "")"; read -r off off_cpu <<<"$(one "--no-tracking")"
  else
    read -r off off_cpu <<<"$(one "--no-tracking")"; read -r on on_cpu <<<"$(one "")"
  fi
  ratio=$(echo "$on / $off" | bc -l)
  cpu_ratio=$(echo "$on_cpu / $off_cpu" | bc -l)
  printf 'pair %2d: tracked %.2f s (%.2f s CPU), untracked %.2f s (%.2f s CPU), ratio %.4f (CPU %.4f)\n' \
    "$i" "$on" "$on_cpu" "$off" "$off_cpu" "$ratio" "$cpu_ratio"
  ratios+=("$ratio")
  cpu_ratios+=("$cpu_ratio")
done
median() { sort -n | awk '{a[NR]=$1} END {printf "%+.2f%%", (a[int((NR+1)/2)]-1)*100}'; }
echo "median slowdown over $pairs pairs: wall $(printf '%s\n' "${ratios[@]}" | median)," \
  "CPU of the training process $(printf '%s\n' "${cpu_ratios[@]}" | median) (goal: under 1%)"
rm -rf "$(dirname "$store")"
