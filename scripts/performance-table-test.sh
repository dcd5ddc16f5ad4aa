#!/usr/bin/env bash
# lint.performance_table: every row of docs/PERFORMANCE.md's table of current figures has a
# figure, a baseline and a command, and the command runs a benchmark that exists: a
# build/bench/NAME built from bench/NAME.cc (bench/CMakeLists.txt), or a script in bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
/usr/bin/python3 - <<'PY'
import os, re, sys

doc = open("docs/PERFORMANCE.md", encoding="utf-8").read()
section = re.search(r"^## Current figures\n(.*?)(?=^## )", doc, re.S | re.M)
if not section:
    sys.exit("docs/PERFORMANCE.md has no '## Current figures' section")
built = set(re.findall(r"add_executable\((\w+)", open("bench/CMakeLists.txt").read()))
rows, failures = 0, []
for line in section.group(1).splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if not line.startswith("|") or len(cells) < 6 or cells[0] in ("goal", "") or set(cells[0]) <= set("-"):
        continue
    rows += 1
    goal, figure, baseline, _ratio, command, _machine = cells[:6]
    if not figure or not baseline:
        failures.append("%s: no figure or no baseline" % goal)
    programs = re.findall(r"build/bench/(\w+)", command)
    scripts = re.findall(r"\bbench/([\w.]+\.(?:sh|py|mjs))", command)
    if not command.startswith("`") or not (programs or scripts):
        failures.append("%s: no command that runs a benchmark (`build/bench/NAME ...` or `bench/NAME.sh ...`)" % goal)
    for p in programs:
        if p not in built or not os.path.exists("bench/%s.cc" % p):
            failures.append("%s: build/bench/%s is not a benchmark bench/CMakeLists.txt builds" % (goal, p))
    for s in scripts:
        if not os.path.exists("bench/" + s):
            failures.append("%s: bench/%s does not exist" % (goal, s))
if rows < 10:
    failures.append("the table of current figures has %d rows; it is read as '| goal | ... |' rows" % rows)
for f in failures:
    print("docs/PERFORMANCE.md:", f)
sys.exit(1 if failures else 0)
PY
