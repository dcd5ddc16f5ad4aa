#!/usr/bin/env bash
# The build enforces the layers (src/CMakeLists.txt): a folder's sources see the headers of
# the folders its library links (LINKS and PRIVATE_LINKS in its CMakeLists.txt, and their
# LINKS in turn) and no others; a sub-folder (store/sqlite) is a layer of its own. For every
# folder of src/ and every other folder, a probe including that folder's
# first header is preprocessed with the flags the folder's sources are compiled with: it must
# be found exactly when the declared links reach it. docs/ARCHITECTURE.md's table of folders
# must name each folder's declared public links, and no include may be relative ("../").
#   scripts/layering-test.sh BUILD_DIR
set -euo pipefail
build="$(cd "${1:?usage: layering-test.sh BUILD_DIR}" && pwd)"
here="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d /tmp/tb-layering-XXXXXX)"
trap 'rm -rf "$scratch"' EXIT

python3 - "$here" "$build" "$scratch" << 'PY'
import json, os, re, subprocess, sys

here, build, scratch = sys.argv[1:4]
src = os.path.join(here, "src")
# Every folder of src/ with a CMakeLists.txt declaring a layer, sub-folders too ("store/sqlite");
# a layer's name is its path with '_' for '/' (store_sqlite).
folders = sorted(os.path.relpath(d, src) for d, _, files in os.walk(src)
                 if d != src and "CMakeLists.txt" in files)
links, private = {}, {}
layer_of = {f: f.replace("/", "_") for f in folders}
folder_of = {v: k for k, v in layer_of.items()}
def declared(text, word):
    m = re.search(r"\b" + word + r"\b(.*?)(?=\bPRIVATE_LINKS\b|\bEXCLUDE\b|\)|$)", text, re.S)
    return sorted(folder_of[t[3:]] for t in (m.group(1).split() if m else []) if t.startswith("tb_"))
for f in folders:
    text = open(os.path.join(src, f, "CMakeLists.txt")).read()
    m = re.search(r"trainbench_layer\(\s*(\w+)([^)]*)\)", text)
    if not m or m.group(1) != layer_of[f]:
        sys.exit(f"layering: src/{f}/CMakeLists.txt declares no trainbench_layer({layer_of[f]} ...)")
    args = m.group(2)
    links[f] = declared(re.sub(r"\bPRIVATE_LINKS\b.*", "", args, flags=re.S), "LINKS")
    private[f] = declared(args, "PRIVATE_LINKS")
reach = {}
def reached(f):
    if f not in reach:
        reach[f] = set()
        for g in links[f]:
            reach[f] |= {g} | reached(g)
    return reach[f]
def seen_by(f):  # what a folder's own sources see: its links and its private links, and theirs
    seen = set(reached(f))
    for g in private[f]:
        seen |= {g} | reached(g)
    return seen - {f}

commands = {e["file"]: e["command"] for e in json.load(open(os.path.join(build, "compile_commands.json")))}
def first(folder, ext):
    names = sorted(n for n in os.listdir(os.path.join(src, folder))
                   if n.endswith(ext) and "_test" not in n and os.path.isfile(os.path.join(src, folder, n)))
    return names[0] if names else None

failures = []
probe = os.path.join(scratch, "probe.cc")
probes = 0
for f in folders:
    cc = os.path.join(src, f, first(f, ".cc"))
    cmd = commands.get(cc)
    if cmd is None:
        sys.exit(f"layering: no compile command for {cc}")
    flags = re.sub(r" -o \S+| -c \S+| -M[DTF](?: [^ -]\S*)?", " ", cmd)
    flags = re.sub(r"^\S*ccache ", "", flags)
    for g in folders:
        if g == f or first(g, ".h") is None:
            continue
        header = f"{g}/{first(g, '.h')}"
        with open(probe, "w") as out:
            out.write(f'#include "{header}"\n')
        found = subprocess.run(f"{flags} -E -o /dev/null {probe}", shell=True, cwd=build,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        probes += 1
        if found != (g in seen_by(f)):
            failures.append(f"src/{f}/ {'can' if found else 'cannot'} include {header}, "
                            f"which its declared links ({', '.join(links[f] + private[f]) or 'none'}) "
                            f"{'do not reach' if found else 'reach'}")

# docs/ARCHITECTURE.md: the table of folders names each folder's links as the build declares them.
doc = open(os.path.join(here, "docs", "ARCHITECTURE.md")).read()
for f in folders:
    row = re.search(r"^\| `" + re.escape(f) + r"/` \| ([^|]*) \|", doc, re.M)
    if not row:
        failures.append(f"docs/ARCHITECTURE.md's table has no row for {f}/ with its links")
        continue
    said = sorted(re.findall(r"`([\w/]+)`", row.group(1)))
    if said != links[f]:
        failures.append(f"docs/ARCHITECTURE.md says {f}/ links {', '.join(said) or 'nothing'}; "
                        f"its CMakeLists.txt declares {', '.join(links[f]) or 'nothing'}")
for line in failures:
    print("layering:", line)
if failures:
    sys.exit(1)
print(f"layering: {probes} probes over {len(folders)} folders reach exactly the declared links; "
      "docs/ARCHITECTURE.md names them")
PY

# A relative include ("../run/command.h" in store/) compiles whatever the layers say: none
# anywhere. The pattern is first tried on a probe, so that a pattern that matches nothing fails.
relative_include='^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./'
printf '#include "../run/command.h"\n' > "$scratch/relative.cc"
grep -qE "$relative_include" "$scratch/relative.cc" || { echo "layering: the relative-include pattern matches nothing"; exit 1; }
relative="$(grep -rnE "$relative_include" "$here/src" "$here/sim" "$here/tests" "$here/bench" --include='*.cc' --include='*.h' || true)"
if [ -n "$relative" ]; then
  echo "layering: relative includes reach past the layers; include from the source root (\"run/command.h\"):"
  printf '%s\n' "$relative"
  exit 1
fi
echo "layering: no include is relative"
