#!/usr/bin/env bash
# Issue #32: no drill KPI reads the same under every system unless docs/drills.md says why it must.
# Runs the five bundled drills under the five systems and kubernetes+coscheduling, and checks that
# every row `headroom compare` names as "the same under every system" is named (in backquotes) in
# that drill's subsection of docs/drills.md ("### poc-NAME" under "Rows the same under every
# system"). A row that becomes the same everywhere without a reason there fails this test.
set -euo pipefail
headroom="$1"
root="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$root"
"$headroom" compare scenarios/poc/real-tasks.yaml scenarios/poc/resource-shortage.yaml \
  scenarios/poc/permission-drill.yaml scenarios/poc/failure-drill.yaml scenarios/poc/mixed-work.yaml \
  --policies kubernetes,volcano,slurm,kai,kueue,kubernetes+coscheduling --json --threads 2 >"$work/all.json" 2>"$work/err"
/usr/bin/python3 - "$work/all.json" docs/drills.md <<'PY'
import json, re, sys
data = json.load(open(sys.argv[1]))
doc = open(sys.argv[2]).read()
top = doc.find("## Rows the same under every system")
if top < 0:
    sys.exit("docs/drills.md has no section 'Rows the same under every system'")
section = doc[top:]
bad = 0
drills = data["drills"]
if len(drills) != 5:
    sys.exit(f"expected 5 drills, got {len(drills)}")
for d in drills:
    name = d["scenario"]
    same = d["same_under_every_system"]
    runs = [r for r in d["runs"] if r["status"] == "done"]
    if len(runs) != 6:
        print(f"{name}: {len(runs)} of 6 runs finished"); bad += 1
    m = re.search(r"^### " + re.escape(name) + r"\n(.*?)(?=^### |\Z)", section, re.S | re.M)
    if not m:
        print(f"{name}: no subsection '### {name}' in docs/drills.md"); bad += 1; continue
    text = m.group(1)
    named = set(re.findall(r"`([^`]+)`", text))
    for row in same:
        if row not in named:
            print(f"{name}: row {row} reads the same under every system, but docs/drills.md does not say why")
            bad += 1
    print(f"{name}: {len(same)} rows the same under every system")
if bad:
    sys.exit(1)
PY
