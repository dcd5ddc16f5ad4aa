#!/usr/bin/env bash
# The build enforces the layers (src/CMakeLists.txt): with the flags a folder's sources are
# compiled with, a header of a layer below compiles and one of a layer above does not.
#   scripts/layering-test.sh BUILD_DIR
set -euo pipefail
build="$(cd "${1:?usage: layering-test.sh BUILD_DIR}" && pwd)"
here="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d /tmp/tb-layering-XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
fail=0
# folder, a header below it (must compile), a header above it (must not)
while read -r folder below above; do
  src=""
  for f in "$here/src/$folder"/*.cc; do
    case "$f" in *_test.cc) ;; *) src="$f"; break ;; esac
  done
  cmd="$(python3 -c 'import json,sys
for e in json.load(open(sys.argv[1])):
    if e["file"] == sys.argv[2]: print(e["command"]); break' "$build/compile_commands.json" "$src")"
  [ -n "$cmd" ] || { echo "layering: no compile command for $src"; exit 1; }
  # The command's flags without its output and input.
  flags="$(printf '%s\n' "$cmd" | sed -E 's/ -o [^ ]+/ /; s/ -c [^ ]+/ /; s/ -M[DTF]( [^ -][^ ]*)?//g; s#^[^ ]*ccache ##')"
  for pair in "$below:0" "$above:1"; do
    header="${pair%%:*}"; must_fail="${pair##*:}"
    printf '#include "%s"\n' "$header" > "$scratch/probe.cc"
    if (cd "$build" && eval "$flags -fsyntax-only $scratch/probe.cc") > "$scratch/out.txt" 2>&1; then ok=0; else ok=1; fi
    if [ "$ok" != "$must_fail" ]; then
      fail=1
      if [ "$must_fail" = 1 ]; then echo "layering: src/$folder/ can include $header, a layer above it"
      else echo "layering: src/$folder/ cannot include $header, a layer below it:"; head -3 "$scratch/out.txt"; fi
    fi
  done
done <<'LAYERS'
base base/log.h store/store.h
platform base/status.h http/http_server.h
store metrics/names.h query/series_reader.h
collect platform/host_files.h run/sampler.h
query store/store.h figure/figure.h
analyze store/store.h figure/figure.h
figure analyze/phases.h report/report_document.h
track http/http_server.h run/launcher.h
run track/tracking_api.h cli/cli.h
serve report/report_document.h cli/cli.h
LAYERS
# A relative include ("../run/command.h" in store/) compiles whatever the layers say: none
# anywhere. The pattern is first tried on a probe, so that a pattern that matches nothing fails.
relative_include='^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./'
printf '#include "../run/command.h"\n' > "$scratch/relative.cc"
grep -qE "$relative_include" "$scratch/relative.cc" || { echo "layering: the relative-include pattern matches nothing"; exit 1; }
relative="$(grep -rnE "$relative_include" "$here/src" "$here/sim" "$here/tests" "$here/bench" --include='*.cc' --include='*.h' || true)"
if [ -n "$relative" ]; then
  fail=1
  echo "layering: relative includes reach past the layers; include from the source root (\"run/command.h\"):"
  printf '%s\n' "$relative"
fi
[ "$fail" = 0 ] && echo "layering: every folder reaches the layers below it and none above, and no include is relative"
exit "$fail"
