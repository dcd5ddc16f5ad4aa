#!/usr/bin/env bash
# lint.function_size: the rule clang-tidy holds src/ to (no function over 120 lines, blank
# lines and comments counted: .clang-tidy's readability-function-size) held over bench/ and
# sim/ too, with that check alone (the full set runs on src/ in lint.clang_tidy).
#   scripts/function-size-test.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
tidy="$(command -v run-clang-tidy-14 || command -v run-clang-tidy)"
config="{Checks: '-*,readability-function-size', WarningsAsErrors: '*',
  CheckOptions: [{key: readability-function-size.LineThreshold, value: 120}]}"
"$tidy" -p "$build" -quiet -config="$config" "^(?!.*_test\.cc).*/(bench|sim)/.*\.cc$" 2>&1 |
  grep -E "error:|exceeds" && exit 1
echo "function_size: no function of bench/ or sim/ over 120 lines"
