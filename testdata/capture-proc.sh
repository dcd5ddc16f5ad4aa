#!/usr/bin/env bash
# Captures the /proc files the host listeners read, for one process tree, into a fixture
# directory that tests use as a proc root: DIR/proc/stat, DIR/proc/PID/task/TID/stat, ...
#   testdata/capture-proc.sh PID DIR
set -euo pipefail
pid=$1 dir=$2
mkdir -p "$dir/proc/net" "$dir/sys/block"
for f in stat meminfo loadavg diskstats cpuinfo; do cat "/proc/$f" > "$dir/proc/$f"; done
cat /proc/net/dev > "$dir/proc/net/dev"
for b in /sys/block/*; do mkdir -p "$dir/sys/block/$(basename "$b")"; done
capture() {
  local p=$1
  [ -d "/proc/$p" ] || return 0
  mkdir -p "$dir/proc/$p"
  cat "/proc/$p/stat" > "$dir/proc/$p/stat" 2>/dev/null || return 0
  for t in /proc/$p/task/*; do
    local tid; tid=$(basename "$t")
    mkdir -p "$dir/proc/$p/task/$tid"
    for f in stat status children; do cat "$t/$f" > "$dir/proc/$p/task/$tid/$f" 2>/dev/null || true; done
    for c in $(cat "$t/children" 2>/dev/null); do capture "$c"; done
  done
}
capture "$pid"
