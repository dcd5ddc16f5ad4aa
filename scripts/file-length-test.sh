#!/usr/bin/env bash
# Every source file a person reads in one sitting: no file under src/, sim/, web/src/ or
# python/ (their tests too) over 500 lines. Lists those that are, and fails.
#
#   scripts/file-length-test.sh        (run from anywhere; reads the files git tracks)
set -euo pipefail
cd "$(dirname "$0")/.."
limit=500
long=0
while IFS= read -r f; do
  n=$(wc -l < "$f")
  if [ "$n" -gt "$limit" ]; then
    echo "file-length: $f has $n lines (at most $limit: split it by job)"
    long=$((long + 1))
  fi
done < <(git ls-files 'src/*' 'sim/*' 'web/src/*' 'python/*' | grep -E '\.(cc|h|ts|py)$')
[ "$long" -eq 0 ] && echo "file-length: every file of src/, sim/, web/src/ and python/ has at most $limit lines"
[ "$long" -eq 0 ]
