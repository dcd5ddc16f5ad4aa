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
echo "sanitize: unit tests"
build-asan/tests/trainbench_unit_tests --gtest_brief=1
failed=0
for f in fuzz/*_fuzz.cc; do
  name="$(basename "$f" _fuzz.cc)"
  mkdir -p "build-asan/fuzz-new/$name"
  echo "sanitize: fuzz_$name for ${seconds}s"
  if (cd build-asan && "./fuzz/fuzz_$name" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 "fuzz-new/$name" "../fuzz/corpus/$name" > "fuzz-$name.log" 2>&1); then
    grep -E "^stat::(number_of_executed_units|new_units_added)" "build-asan/fuzz-$name.log" || true
  else
    failed=1
    grep -vE "^#[0-9]+ +(NEW|REDUCE|pulse)" "build-asan/fuzz-$name.log" | tail -n 60
  fi
done
[ "$failed" -eq 0 ] || { echo "sanitize: a fuzz target failed (its input is in build-asan/crash-*)"; exit 1; }
echo "sanitize: clean"
