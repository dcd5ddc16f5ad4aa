#!/usr/bin/env bash
# The relocatable tarball (`cpack -G TGZ`, cmake/cpack_project.cmake) as a user of a GPU
# server without root meets it: unpacked into a root where nothing but glibc and the C++
# runtime come from the system (a chroot holding only those), bin/trainbench starts,
# records a run of a real child process in a SQLite store, lists and exports it, and says
# what to install for figures (cairo and pango, which it does not bundle).
#   scripts/tarball-test.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: tarball-test.sh BUILD_DIR}" && pwd)
scratch=$(mktemp -d /tmp/tb-tarball-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "tarball test: $*" >&2; exit 1; }

(cd "$build" && cpack -G TGZ -B "$scratch/package" > "$scratch/cpack.log" 2>&1) || { cat "$scratch/cpack.log" >&2; fail "cpack -G TGZ failed"; }
tarball=$(ls "$scratch"/package/trainbench-*-Linux.tar.gz)
root="$scratch/root"
mkdir -p "$root"/{opt,lib64,lib/x86_64-linux-gnu,bin,tmp,proc,dev,work}
tar -xzf "$tarball" -C "$root/opt"
top=$(cd "$root/opt" && ls -d trainbench-*)
tb="/opt/$top/bin/trainbench"
for f in bin/trainbench share/trainbench/web/index.html share/trainbench/python/trainbench/__init__.py lib/libsqlite3.so.0 lib/libzstd.so.1; do
  [ -e "$root/opt/$top/$f" ] || fail "the tarball has no $f"
done
readelf -d "$root$tb" | grep -q 'R.*PATH.*\$ORIGIN/../lib' || fail "bin/trainbench does not look in \$ORIGIN/../lib"
readelf -S "$root$tb" | grep -q '\.debug_info' && fail "bin/trainbench is not stripped"
size=$(stat -c %s "$tarball")
echo "tarball: $(basename "$tarball"), $((size / 1024)) KiB; lib/: $(cd "$root/opt/$top/lib" && echo *)"

# The system gives glibc and the C++ runtime, nothing else.
for l in libc.so.6 libm.so.6 libstdc++.so.6 libgcc_s.so.1 ld-linux-x86-64.so.2; do
  cp -L "/lib/x86_64-linux-gnu/$l" "$root/lib/x86_64-linux-gnu/"
done
cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
cp /bin/true /bin/sleep "$root/bin/"
inroot() {
  unshare -m sh -c 'mount --bind /proc "$0/proc" && mount --bind /dev "$0/dev" && exec chroot "$0" "$@"' "$root" \
    /usr/bin/env -i PATH=/bin HOME=/work TRAINBENCH_STORE=/work/tb.db "$@" 2>&1
}
mkdir -p "$root/usr/bin" && cp /usr/bin/env "$root/usr/bin/env"

out=$(inroot "$tb" --version) || fail "bin/trainbench does not start in the bare root: $out"
out=$(inroot "$tb" run -q -l top -i 250ms -n unpacked -- /bin/sleep 1.5) || fail "trainbench run failed in the bare root: $out"
out=$(inroot "$tb" ls) || fail "trainbench ls failed: $out"
grep -q unpacked <<< "$out" || fail "the run is not listed: $out"
out=$(inroot "$tb" export unpacked --metric host.memory.used_bytes --format csv) || fail "export failed: $out"
[ "$(wc -l <<< "$out")" -ge 2 ] || fail "the export holds no point: $out"
if out=$(inroot "$tb" plot unpacked -m host.memory.used_bytes -o /work/cpu.pdf); then
  fail "plot made a figure without cairo and pango?"
fi
grep -q 'libpangocairo-1.0.so.0' <<< "$out" || fail "plot does not say what figures need: $out"
echo "tarball test: bin/trainbench ran from $top/ with only glibc and libstdc++ from the system"
