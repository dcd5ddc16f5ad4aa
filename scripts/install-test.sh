#!/usr/bin/env bash
# Installs trainbench as a user would, into a scratch prefix, and checks that it works away
# from its source tree: a script's `import trainbench` finds the installed client and its
# metric lands in the store, and `trainbench serve` finds the installed web UI. Then builds
# the Debian package and checks what it holds and what it depends on.
#   scripts/install-test.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: install-test.sh BUILD_DIR}" && pwd)
scratch=$(mktemp -d /tmp/tb-install-XXXXXX)
trap 'kill "${serve_pid:-0}" 2>/dev/null || true; rm -rf "$scratch"' EXIT
fail() { echo "install test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$scratch/prefix" > "$scratch/install.log"
tb="$scratch/prefix/bin/trainbench"
[ -x "$tb" ] || fail "no $tb after cmake --install"
for f in share/trainbench/python/trainbench/__init__.py share/trainbench/python/radt/run.py \
  share/trainbench/web/index.html share/trainbench/web/app.js; do
  [ -f "$scratch/prefix/$f" ] || fail "cmake --install did not put $f"
done

# A script elsewhere, with nothing of the source tree on its path.
mkdir -p "$scratch/work"
cat > "$scratch/work/train.py" <<'PY'
import trainbench
with trainbench.Run() as run:
    run.log_metric("loss", 0.25)
PY
cd "$scratch/work"
env -u TRAINBENCH_PYTHON_DIR -u PYTHONPATH TRAINBENCH_STORE="$scratch/work/tb.db" \
  "$tb" run --python /usr/bin/python3 train.py > run.out 2> run.err || { cat run.err >&2; fail "the installed trainbench could not run a script"; }
sqlite3 tb.db "SELECT metric FROM series" | grep -qx 'train.loss' || { cat run.err >&2; fail "the script's metric did not arrive: its import trainbench failed?"; }

# A script written for radT's Python API, unchanged.
cat > "$scratch/work/radt_train.py" <<'PY'
import radt
with radt.run.RADTBenchmark() as run:
    run.log_metric("Metric A", 0.5, 1)
PY
env -u TRAINBENCH_PYTHON_DIR -u PYTHONPATH TRAINBENCH_STORE="$scratch/work/tb.db" \
  "$tb" run --python /usr/bin/python3 radt_train.py > radt.out 2> radt.err || { cat radt.err >&2; fail "a radT script could not run: import radt failed?"; }
sqlite3 tb.db "SELECT metric FROM series" | grep -qx 'train.Metric A' || { cat radt.err >&2; fail "the radT script's metric did not arrive"; }

# What radT's users type: `radt script.py` and, in a virtual environment, `python -m radt script.py`.
[ -L "$scratch/prefix/bin/radt" ] || fail "cmake --install put no radt command"
runs_before=$(sqlite3 tb.db "SELECT count(*) FROM runs")
env -u TRAINBENCH_PYTHON_DIR -u PYTHONPATH TRAINBENCH_STORE="$scratch/work/tb.db" PATH="$scratch/prefix/bin:$PATH" \
  radt -l top radt_train.py > radt-cmd.out 2> radt-cmd.err || { cat radt-cmd.err >&2; fail "radt radt_train.py failed"; }
env -u TRAINBENCH_PYTHON_DIR TRAINBENCH_STORE="$scratch/work/tb.db" TRAINBENCH_BINARY="$tb" \
  PYTHONPATH="$scratch/prefix/share/trainbench/python" /usr/bin/python3 -m radt -l top radt_train.py \
  > radt-m.out 2> radt-m.err || { cat radt-m.err >&2; fail "python -m radt radt_train.py failed"; }
[ "$(sqlite3 tb.db "SELECT count(*) FROM runs WHERE status = 'FINISHED'")" -ge $((runs_before + 2)) ] \
  || fail "radt and python -m radt did not each record a finished run"

# serve finds the installed web UI.
"$tb" serve --store "$scratch/work/tb.db" --port 0 > serve.out 2> serve.err &
serve_pid=$!
for _ in $(seq 50); do grep -q 'http://' serve.out 2>/dev/null && break; sleep 0.1; done
url=$(grep -o 'http://127.0.0.1:[0-9]*' serve.out | head -1)
[ -n "$url" ] || fail "trainbench serve did not say where it listens: $(cat serve.out serve.err)"
grep -q 'API only' serve.out && fail "the installed trainbench serve found no web UI"
curl -fsS "$url/" | grep -q '<script src="app.js">' || fail "the web UI's page is not served from $url/"
kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true

# The Debian package.
(cd "$build" && cpack -G DEB -B "$scratch/package" > "$scratch/cpack.log" 2>&1) || { cat "$scratch/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$scratch"/package/trainbench_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "cpack made no .deb"
contents=$(dpkg-deb -c "$deb")
grep -q " ./usr/bin/radt -> trainbench\$" <<< "$contents" || fail "the package lacks the radt command"
for f in ./usr/bin/trainbench ./usr/share/trainbench/python/trainbench/__init__.py ./usr/share/trainbench/web/app.js; do
  grep -q " $f\$" <<< "$contents" || fail "the package lacks $f"
done
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libsqlite3 libpq5 libpangocairo-1.0-0 libzstd python3; do
  grep -q "$lib" <<< "$depends" || fail "the package does not depend on $lib: $depends"
done
echo "install test: cmake --install and $(basename "$deb") work (Depends: $depends)"
