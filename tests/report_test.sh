#!/usr/bin/env bash
# End-to-end checks of the planner commands: `headroom compare`, `sweep --shard` + `merge`, and
# `headroom report`, whose HTML is rendered in headless Chromium (Debian package `chromium`; the
# rendering part is skipped, exit 77, when it is not installed).
# Usage: report_test.sh HEADROOM_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

# 200 jobs of 1..8 GPUs from three tenants on 4 x 8 + 2 x 4 GPUs.
{
  echo "id,tenant,queue,submit,gpus,runtime"
  for i in $(seq 0 199); do echo "$i,t$((i % 3)),q,$((i * 7)),$((1 + i % 8)),$((50 + (i * 37) % 400))"; done
} >"$tmp/trace.csv"
cat >"$tmp/s.yaml" <<YAML
name: report-test
seed: 5
cluster:
  pools:
    - {name: a100, nodes: 4, gpus_per_node: 8, gpu_type: A100}
    - {name: t4, nodes: 2, gpus_per_node: 4, gpu_type: T4}
tenants:
  - {name: t0, weight: 2}
policy: fifo
policies:
  kubernetes: {podMaxBackoffSeconds: 20}
workload:
  trace: trace.csv
variants:
  policy: [fifo, sjf]
  cluster.pools.a100.nodes: [2, 4]
seeds: 2
YAML

# compare: a column per policy, CSV and JSON; unknown policies are bad input.
out="$("$bin" compare "$tmp/s.yaml" --policies fifo,sjf,kubernetes -o "$tmp/c.csv" 2>&1)" && ok || bad "compare: $out"
grep -q "^jain_index " <<<"$out" && ok || bad "compare table lacks jain_index: $out"
[ "$(head -1 "$tmp/c.csv")" = "metric,unit,fifo,sjf,kubernetes" ] && ok || bad "compare CSV header: $(head -1 "$tmp/c.csv")"
grep -q "^tenant:t1.wait_mean,s," "$tmp/c.csv" && ok || bad "compare CSV lacks tenant rows"
"$bin" compare "$tmp/s.yaml" --policies fifo,kubernetes --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert [r["policy"] for r in d["runs"]]==["fifo","kubernetes"]; assert any(m["metric"]=="rho_max" for m in d["metrics"])' && ok || bad "compare --json"
a="$("$bin" compare "$tmp/s.yaml" --policies fifo,sjf,kubernetes --threads 1 -o "$tmp/c1.csv")"
cmp -s "$tmp/c.csv" "$tmp/c1.csv" && ok || bad "compare differs at --threads 1"
out="$("$bin" compare "$tmp/s.yaml" --policies fifo,sfj 2>&1)"; code=$?
[ "$code" -eq 2 ] && grep -qF 'did you mean "sjf"' <<<"$out" && ok || bad "compare with a typo: exit $code: $out"

# Several scenarios: a table each, then the scorecard of their targets (the scenario's and
# --target's); --keep-runs writes every run's result file; -o one CSV with a scenario column.
sed 's/^name: report-test/name: report-test-2/' "$tmp/s.yaml" >"$tmp/s2.yaml"
printf 'targets:\n  - "p95_wait <= 30d"\n  - "worst_recovery <= 1h"\n' >>"$tmp/s2.yaml"
out="$("$bin" compare "$tmp/s.yaml" "$tmp/s2.yaml" --policies fifo,kubernetes --target "completed_fraction >= 0.5" \
  --keep-runs "$tmp/kept/runs" -o "$tmp/multi.csv" 2>&1)" && ok || bad "compare of two scenarios: $out"
grep -qE '^report-test +completed_fraction >= 0.5 +passed 100.0% +passed 100.0%$' <<<"$out" && ok || bad "scorecard row: $out"
grep -qE '^report-test-2 +p95_wait <= 30d +passed [0-9]' <<<"$out" && ok || bad "scorecard scenario target: $out"
grep -qE '^report-test-2 +worst_recovery <= 1h +not covered +not covered$' <<<"$out" && ok || bad "scorecard not modelled: $out"
grep -qE '^ +targets passed +3 of 4 +3 of 4$' <<<"$out" && ok || bad "scorecard totals: $out"
for f in report-test-fifo report-test-kubernetes report-test-2-fifo report-test-2-kubernetes; do
  [ -s "$tmp/kept/runs/$f.h5" ] && ok || bad "--keep-runs did not write $f.h5"
done
"$bin" report "$tmp/kept/runs/report-test-fifo.h5" "$tmp/kept/runs/report-test-kubernetes.h5" -o "$tmp/kept.html" \
  >/dev/null && ok || bad "report over the kept runs"
for h in "Waits side by side" "Utilization side by side" "Pending side by side" "Drills side by side"; do
  grep -qF "<h3>$h</h3>" "$tmp/kept.html" && ok || bad "report of kept runs lacks $h"
done
[ "$(head -1 "$tmp/multi.csv")" = "scenario,metric,unit,fifo,kubernetes" ] && ok || bad "multi CSV: $(head -1 "$tmp/multi.csv")"
"$bin" compare "$tmp/s.yaml" "$tmp/s2.yaml" --policies fifo --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [x["scenario"] for x in d["drills"]] == ["report-test", "report-test-2"], d.keys()
v = [(r["drill"], r["target"], r["verdicts"]["fifo"]["verdict"]) for r in d["scorecard"]]
assert v == [("report-test-2", "p95_wait <= 30d", "passed"), ("report-test-2", "worst_recovery <= 1h", "not covered")], v
' && ok || bad "compare --json of two scenarios"

# Jobs that never start: with 4 GPUs a node and the run stopped at 1 h, 132 jobs never start under
# fifo and 108 under kubernetes. The banner says so above the table, the waits count them (>=), JSON
# has both.
sed 's/nodes: 4, gpus_per_node: 8/nodes: 4, gpus_per_node: 4/; s/^workload:/horizon: 1h\nworkload:/' "$tmp/s.yaml" \
  >"$tmp/small.yaml"
out="$("$bin" compare "$tmp/small.yaml" --policies fifo,kubernetes 2>&1)" && ok || bad "compare small: $out"
grep -qF 'kubernetes: WARNING: 108 of 200 jobs (54.0%) never started; main reason: "horizon reached" (108 jobs)' <<<"$out" &&
  ok || bad "compare lacks the kubernetes banner: $out"
grep -qE '^never_started +132 +108$' <<<"$out" && ok || bad "compare lacks never_started: $out"
grep -qE '^wait_mean +>=[0-9].* +>=[0-9]' <<<"$out" && ok || bad "compare wait_mean not a lower bound: $out"
"$bin" compare "$tmp/small.yaml" --policies fifo,kubernetes --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["runs"][0]["warning"].startswith("WARNING: 132 of 200 jobs"), d["runs"]
assert d["runs"][1]["warning"].startswith("WARNING: 108 of 200 jobs"), d["runs"]
assert d["runs"][1]["never_started"] == 108
m = {x["metric"]: x["values"] for x in d["metrics"]}
assert m["never_started"] == {"fifo": 132, "kubernetes": 108}, m["never_started"]
assert sum(m["tenant:t%d.never_started" % t]["kubernetes"] for t in range(3)) == 108
' && ok || bad "compare --json with never-started jobs"
sed 's/^policy: fifo/policy: kubernetes/' "$tmp/small.yaml" >"$tmp/small-k8s.yaml"
"$bin" run "$tmp/small-k8s.yaml" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["never_started"] == 104 and d["wait_lower_bound"] is True, d
assert d["wait_s"]["n"] == 200 and d["wait_started_s"]["n"] == 96, (d["wait_s"], d["wait_started_s"])
assert d["wait_s"]["mean"] > d["wait_started_s"]["mean"]
assert "horizon reached" in d["warning"], d["warning"]
' && ok || bad "run --json with never-started jobs"
out="$("$bin" run "$tmp/small-k8s.yaml" 2>&1)"
[ "$(head -1 <<<"$out" | cut -c1-35)" = "WARNING: 104 of 200 jobs (52.0%) ne" ] && ok || bad "run summary does not open with the banner: $out"
grep -qF "(incl. 104 never started: lower bounds)" <<<"$out" && ok || bad "run summary wait row: $out"

# sweep shards merge into the table of one run.
"$bin" sweep "$tmp/s.yaml" -o "$tmp/whole.h5" --csv "$tmp/whole.csv" >/dev/null || bad "sweep"
for i in 0 1 2; do "$bin" sweep "$tmp/s.yaml" --shard "$i/3" -o "$tmp/shard$i.h5" >/dev/null || bad "sweep shard $i"; done
"$bin" merge "$tmp/shard2.h5" "$tmp/shard0.h5" "$tmp/shard1.h5" -o "$tmp/merged.h5" --csv "$tmp/merged.csv" >/dev/null &&
  cmp -s "$tmp/whole.csv" "$tmp/merged.csv" && ok || bad "merged shards differ from one run"
out="$("$bin" merge "$tmp/shard0.h5" "$tmp/shard1.h5" -o "$tmp/m2.h5" 2>&1)"; code=$?
[ "$code" -eq 2 ] && grep -qF "missing shard(s) 2 of 3" <<<"$out" && [ ! -e "$tmp/m2.h5" ] && ok || bad "merge with a missing shard: $code $out"
out="$("$bin" sweep "$tmp/s.yaml" --shard 3/3 2>&1)"; code=$?
[ "$code" -eq 2 ] && ok || bad "sweep --shard 3/3: exit $code"

# report of two runs and the merged sweep.
"$bin" run "$tmp/s.yaml" -o "$tmp/fifo.h5" >/dev/null || bad "run fifo"
"$bin" run "$tmp/s.yaml" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert "jain" in d["fairness"]' && ok || bad "run --json fairness"
"$bin" report "$tmp/fifo.h5" "$tmp/merged.h5" -o "$tmp/report.html" >/dev/null && ok || bad "report"
grep -q "<svg" "$tmp/report.html" && ! grep -q "<script" "$tmp/report.html" && ok || bad "report HTML"
out="$("$bin" report "$tmp/nope.h5" -o "$tmp/r2.html" 2>&1)"; code=$?
[ "$code" -eq 2 ] && [ ! -e "$tmp/r2.html" ] && ok || bad "report of a missing file: exit $code"

# HEADROOM_CHROMIUM overrides the browser (empty: behave as if none were installed).
chromium_bin="${HEADROOM_CHROMIUM-$(command -v chromium || command -v chromium-browser || true)}"
if [ -n "$chromium_bin" ]; then
  flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,1600)
  dom="$(timeout 120 "$chromium_bin" "${flags[@]}" --dump-dom "file://$tmp/report.html" 2>/dev/null)"
  svgs="$(grep -o "<svg" <<<"$dom" | wc -l)"
  [ "$svgs" -ge 5 ] && ok || bad "chromium DOM has $svgs svg elements"
  timeout 120 "$chromium_bin" "${flags[@]}" --screenshot="$tmp/r.png" "file://$tmp/report.html" >/dev/null 2>&1
  # Not blank: the decoded pixels take many distinct values.
  python3 - "$tmp/r.png" <<'PY' && ok || bad "the screenshot is missing or blank"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    if kind == b"IDAT":
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
assert len(set(raw)) > 50, len(set(raw))
PY
fi

echo "report_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ] || exit 1
[ -n "$chromium_bin" ] || { echo "SKIP: chromium is not installed; the HTML was not rendered"; exit 77; }
exit 0
