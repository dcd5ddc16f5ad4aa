#!/usr/bin/env bash
# examples/collocation_table.py against `trainbench report`: a run alone and two runs
# collocated (examples/collocation/, CPU work, no GPU needed) scheduled into a fresh store,
# then the report's collocation table rebuilt from DataFrames and every figure compared
# with the report's (within 2 %).
#   tests/collocation_example_test.sh path/to/trainbench
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tb="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
work="$(mktemp -d /tmp/tb-collocation-XXXXXX)"
trap 'rm -rf "$work"' EXIT
cp "$here/examples/collocation/experiment.csv" "$here/examples/collocation/tput.py" "$work/"
cd "$work"
"$tb" schedule experiment.csv --store "$work/c.db" --python /usr/bin/python3 > schedule.log 2>&1 ||
  { cat schedule.log; exit 1; }
TRAINBENCH_BINARY="$tb" /usr/bin/python3 "$here/examples/collocation_table.py" "$work/c.db" collocation --check
