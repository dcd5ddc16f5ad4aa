#!/usr/bin/env bash
# Builds trainbench and its unit tests for arm64 Linux with Debian's cross toolchain
# (g++-aarch64-linux-gnu) and runs them under qemu-user, where no arm64 machine is at hand
# (DGX Spark's GB10 and Jetson Thor run NVIDIA's usual driver on arm64); then packs the
# relocatable arm64 tarball, BUILD_DIR/package/trainbench-VERSION-Linux-aarch64.tar.gz, and
# runs a run from an unpacked copy of it with nothing but the system's C and C++ runtimes.
#   scripts/arm64-test.sh [BUILD_DIR]             (default build-arm64/; as root, or with sudo)
#   scripts/arm64-test.sh --prepare [BUILD_DIR]   only installs the toolchain and unpacks the
#                                                 arm64 libraries (scripts/setup.sh does)
# CTest runs it as arm64.unit_tests (label slow).
#
# The arm64 libraries trainbench links are unpacked from Debian's arm64 packages into
# BUILD_DIR/sysroot, not installed: libpq-dev and libyaml-cpp-dev cannot be installed for two
# architectures at once, and installing them would remove the build machine's. Cairo's and
# pango's headers (only headers: the libraries are opened at run time) are the build
# machine's, which are the same on any LP64 Linux. The unit tests run with qemu-aarch64,
# those that need a PostgreSQL server left out (they are the db label natively), those that
# draw figures (cairo's and pango's arm64 libraries are not unpacked) and one qemu cannot
# emulate (below).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
prepare=""
if [ "${1:-}" = --prepare ]; then
  prepare=1
  shift
fi
build="$(realpath -m "${1:-$repo/build-arm64}")"
sysroot="$build/sysroot"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

missing=()
for p in g++-aarch64-linux-gnu qemu-user file; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The arm64 packages whose libraries and headers the build links (runtime and -dev).
packages=(libsqlite3-dev libsqlite3-0 libzstd-dev libzstd1 libyaml-cpp-dev libyaml-cpp0.7 libgtest-dev
  libdeflate-dev libdeflate0 zlib1g-dev zlib1g libcpp-httplib-dev libcpp-httplib0.11 libssl-dev libssl3
  libbrotli-dev libbrotli1 libpq-dev libpq5 libstdc++6 libgcc-s1)
if [ ! -f "$sysroot/.unpacked" ]; then
  added=""
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
    added=1
  fi
  $sudo apt-get update -qq
  mkdir -p "$build/debs" "$sysroot"
  (cd "$build/debs" && apt-get download "${packages[@]/%/:arm64}" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
  # The machine's package lists as they were: the arm64 lists only served the download.
  if [ -n "$added" ]; then
    $sudo dpkg --remove-architecture arm64
    $sudo apt-get update -qq
  fi
  for deb in "$build"/debs/*.deb; do dpkg-deb -x "$deb" "$sysroot"; done
  touch "$sysroot/.unpacked"
fi

[ -z "$prepare" ] || { echo "arm64-test: toolchain installed, arm64 libraries in $sysroot"; exit 0; }

export TRAINBENCH_ARM64_SYSROOT="$sysroot"
figure_headers="$(pkg-config --cflags-only-I pangocairo cairo-pdf cairo-png | sed 's/-I//g; s/ *$//; s/ /;/g')"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$repo/scripts/arm64-toolchain.cmake" -DPANGOCAIRO_INCLUDE_DIRS="$figure_headers" > /dev/null
cmake --build "$build" -j"$(nproc)" --target trainbench trainbench_unit_tests sim_nvml

run() {
  QEMU_LD_PREFIX=/usr/aarch64-linux-gnu LD_LIBRARY_PATH="$sysroot/usr/lib/aarch64-linux-gnu:$sysroot/lib/aarch64-linux-gnu" \
    qemu-aarch64 "$@"
}
file "$build/trainbench" | grep -q "ARM aarch64" || { echo "arm64-test: $build/trainbench is not an arm64 binary" >&2; exit 1; }
run "$build/trainbench" --version
# The simulated GPU, built for arm64 too, through the arm64 trainbench.
TRAINBENCH_SIM_SCENARIO="$repo/sim/scenarios/gb10.json" TRAINBENCH_NVML_LIBRARY="$build/sim/lib/libnvidia-ml.so.1" \
  run "$build/trainbench" devices | sed -n 1,8p
cd "$build"
# Left out: figures (they need cairo's and pango's arm64 libraries at run time, not
# unpacked), and the start of a file of no executable format, which qemu-user reports as a
# child exiting 127 rather than as a failed exec.
run "$build/tests/trainbench_unit_tests" --gtest_brief=1 \
  --gtest_filter='-*postgresql*:*Figure*:BarChart*:ReportBars*:ProcessTest.AStartThatFailsSaysWhyAndLeavesNoChild'

# The relocatable tarball: unpacked elsewhere, its bin/trainbench finds its libraries in its
# lib/ (nothing on the library path but the toolchain's libc and libstdc++, as any arm64
# Linux has them) and records a run.
cd "$build"
rm -rf package && cpack -G TGZ -B "$build/package" > "$build/cpack.log" 2>&1 || { cat "$build/cpack.log" >&2; exit 1; }
tarball="$(ls "$build"/package/trainbench-*-Linux-aarch64.tar.gz)"
unpacked="$(mktemp -d /tmp/tb-arm64-tarball-XXXXXX)"
trap 'rm -rf "$unpacked"' EXIT
tar -xzf "$tarball" -C "$unpacked" --strip-components=1
(cd "$unpacked" && TRAINBENCH_STORE="$unpacked/runs.db" qemu-aarch64 -L /usr/aarch64-linux-gnu bin/trainbench run -q -l top -- /bin/true)
echo "arm64-test: $tarball ($(du -h "$tarball" | cut -f1)) runs unpacked: $(cd "$unpacked" && TRAINBENCH_STORE="$unpacked/runs.db" qemu-aarch64 -L /usr/aarch64-linux-gnu bin/trainbench ls | tail -1)"
