#!/usr/bin/env bash
# Unpacks the relocatable tarball (`cpack -G TGZ`: stripped, its libraries in lib/, found
# through $ORIGIN) into DIR, for a GPU server without build tools reached through a copy of
# the working tree (DIR is ignored by git: name it in what travels).
#
#   scripts/gpu-pack.sh [build-dir] [DIR]      (defaults: build, gpu-pack)
#
# There: DIR/bin/trainbench devices; scripts/gpu-acceptance.sh DIR/bin/trainbench.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
dir="${2:-$here/gpu-pack}"
[ -x "$build/trainbench" ] || { echo "gpu-pack: no trainbench in $build (build first: scripts/build.sh)" >&2; exit 2; }
scratch="$(mktemp -d /tmp/tb-gpu-pack-XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
(cd "$build" && cpack -G TGZ -B "$scratch" > "$scratch/cpack.log" 2>&1) || { cat "$scratch/cpack.log" >&2; exit 1; }
rm -rf "$dir" && mkdir -p "$dir"
tar -xzf "$scratch"/trainbench-*-Linux.tar.gz -C "$dir" --strip-components=1
echo "gpu-pack: $dir ($(du -sh "$dir" | cut -f1); lib/: $(ls "$dir/lib" | tr '\n' ' '))"
