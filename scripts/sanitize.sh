#!/usr/bin/env bash
# The sanitizer build: trainbench's library and its unit tests built with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer (any finding fails) into build-asan/, the unit tests run there,
# then each libFuzzer target of fuzz/ runs for FUZZ_SECONDS (default 10) from its corpus in
# fuzz/corpus/ (new inputs it finds go to build-asan/fuzz-new/, not into the repository).
# A crash leaves its input in build-asan/ (crash-*), which is the test case to add.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-10}"
# -O1 with line tables only: what sanitizer builds are usually made with (readable stack
# traces, a faster build than -O2 -g).
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DTRAINBENCH_SANITIZE=ON -DTRAINBENCH_FUZZ=ON -DTRAINBENCH_BENCH=OFF -DTRAINBENCH_WERROR=ON > build-asan.log 2>&1 \
  || { cat build-asan.log; exit 1; }
targets=(trainbench_unit_tests)  # the binary itself is not run here: its library is
for f in fuzz/*_fuzz.cc; do targets+=("fuzz_$(basename "$f" _fuzz.cc)"); done
cmake --build build-asan -j "$(nproc)" --target "${targets[@]}"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
# Both phases keep every core busy: the unit tests in one shard a core, the fuzz targets a
# core each at a time. A shard's or a target's output is shown when it fails.
cores="$(nproc)"
in_background() {  # LOG COMMAND...: runs COMMAND into LOG, its exit status into LOG.rc
  local log="$1" rc=0
  shift
  "$@" > "$log" 2>&1 || rc=$?
  echo "$rc" > "$log.rc"
}
succeeded() { [ "$(cat "$1.rc" 2>/dev/null)" = 0 ]; }

rm -f build-asan/*.log.rc
echo "sanitize: unit tests in $cores shards"
for ((i = 0; i < cores; i++)); do
  GTEST_TOTAL_SHARDS="$cores" GTEST_SHARD_INDEX="$i" \
    in_background "build-asan/unit-shard-$i.log" build-asan/tests/trainbench_unit_tests --gtest_brief=1 &
done
wait
failed=0
for ((i = 0; i < cores; i++)); do
  log="build-asan/unit-shard-$i.log"
  if succeeded "$log"; then tail -n 2 "$log"; else failed=1; cat "$log"; fi
done
[ "$failed" -eq 0 ] || { echo "sanitize: the unit tests failed under the sanitizers"; exit 1; }

names=()
for f in fuzz/*_fuzz.cc; do names+=("$(basename "$f" _fuzz.cc)"); done
echo "sanitize: ${#names[@]} fuzz targets for ${seconds}s each, $cores at a time"
for name in "${names[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$cores" ]; do wait -n || true; done
  mkdir -p "build-asan/fuzz-new/$name"
  (cd build-asan && in_background "fuzz-$name.log" "./fuzz/fuzz_$name" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "fuzz-new/$name" "../fuzz/corpus/$name") &
done
wait
for name in "${names[@]}"; do
  log="build-asan/fuzz-$name.log"
  if succeeded "$log"; then
    echo "sanitize: fuzz_$name"
    grep -E "^stat::(number_of_executed_units|new_units_added)" "$log" || true
  else
    failed=1
    echo "sanitize: fuzz_$name failed"
    grep -vE "^#[0-9]+ +(NEW|REDUCE|pulse)" "$log" | tail -n 60
  fi
done
[ "$failed" -eq 0 ] || { echo "sanitize: a fuzz target failed (its input is in build-asan/crash-*)"; exit 1; }
echo "sanitize: clean"
