#!/usr/bin/env bash
# End-to-end checks of the `headroom` command: exit codes, error messages, and that bad input
# never leaves an output file behind.  Usage: cli_test.sh HEADROOM_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0

check() {  # check NAME EXPECTED_CODE EXPECTED_TEXT -- command...
  local name="$1" want="$2" text="$3"; shift 4
  local out code
  out="$("$@" 2>&1)"; code=$?
  if [ "$code" -ne "$want" ]; then
    echo "FAIL $name: exit $code, expected $want"; echo "$out" | head -20; fail=$((fail + 1)); return
  fi
  if [ -n "$text" ] && ! grep -qF -- "$text" <<<"$out"; then
    echo "FAIL $name: output lacks: $text"; echo "$out" | head -20; fail=$((fail + 1)); return
  fi
  pass=$((pass + 1))
}
no_file() {  # no_file NAME PATH
  if [ -e "$2" ] || compgen -G "$2.tmp*" >/dev/null; then echo "FAIL $1: $2 was written"; fail=$((fail + 1)); else pass=$((pass + 1)); fi
}

trace="$src/scenarios/examples/data/ricc-2010-first-14d.swf.gz"
scenario() {  # scenario FILE [policy] [trace] [extra line]
  cat >"$1" <<YAML
name: cli-test
seed: 3
cluster:
  pools:
    - name: p
      nodes: 4
      gpus_per_node: 8
      gpu_type: H100
policy: ${2:-fifo}
workload:
  trace: ${3:-$tmp/small.swf}
${4:-}
YAML
}
cat >"$tmp/small.swf" <<'SWF'
; MaxProcs: 32
1 0 0 100 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1
2 10 0 50 16 -1 -1 16 100 -1 1 2 2 -1 1 -1 -1 -1
3 20 0 10 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1
SWF

check version 0 "headroom 0." -- "$bin" --version
check no-args 2 "" -- "$bin"
check unknown-subcommand 2 "" -- "$bin" frobnicate

scenario "$tmp/good.yaml"
check validate-ok 0 "ok" -- "$bin" validate "$tmp/good.yaml"
check run-ok 0 "completed" -- "$bin" run "$tmp/good.yaml" -o "$tmp/good.h5"
[ -f "$tmp/good.h5" ] && pass=$((pass + 1)) || { echo "FAIL run-ok: no output"; fail=$((fail + 1)); }
if command -v h5ls >/dev/null; then
  check h5-layout 0 "jobs" -- h5ls "$tmp/good.h5"
fi
check run-json 0 '"fingerprint"' -- "$bin" run "$tmp/good.yaml" --json
if command -v python3 >/dev/null; then
  "$bin" run "$tmp/good.yaml" --json >"$tmp/s.json" && check json-parses 0 "" -- python3 -m json.tool "$tmp/s.json"
fi
a="$("$bin" run "$tmp/good.yaml" --json --threads 1 | grep -o '"fingerprint": *"[0-9a-f]*"')"
b="$("$bin" run "$tmp/good.yaml" --json --threads 2 | grep -o '"fingerprint": *"[0-9a-f]*"')"
if [ -n "$a" ] && [ "$a" = "$b" ]; then pass=$((pass + 1)); else echo "FAIL threads: '$a' vs '$b'"; fail=$((fail + 1)); fi

# Three small jobs on 32 GPUs: nobody waits under any system, and compare says why the table is flat.
check compare-little-to-decide 0 "little to decide: under every system 99% of the jobs waited under a minute" -- \
  "$bin" compare "$tmp/good.yaml" --policies fifo,kubernetes,slurm
check compare-contention-no-note 0 "" -- "$bin" compare "$src/scenarios/poc/real-tasks.yaml" --policies fifo,slurm
if "$bin" compare "$src/scenarios/poc/real-tasks.yaml" --policies fifo,slurm 2>&1 | grep -q "little to decide"; then
  echo "FAIL compare-contention: the note on a contended drill"; fail=$((fail + 1))
else pass=$((pass + 1)); fi

# The bundled KTH log without tenants: kai and kueue each queue every job in one line in submission
# order and decide alike; the table says so, and why. Kubernetes' pods bound while their job's other
# pods wait hold nearly all the GPU time, and its banner says how much.
kth="$src/bench/scenarios/kth-sp2-slurm.yaml"
check compare-same-columns 0 "kai and kueue read the same on every row, and made the very same decisions (equal" -- \
  "$bin" compare "$kth" --policies kubernetes,kai,kueue
check compare-same-columns-why 0 "scenario has no \`tenants:\` and no block for kai and kueue, so each runs" -- \
  "$bin" compare "$kth" --policies kai,kueue
check compare-held-idle-note 0 "kubernetes: NOTE: 795,457 GPU-h (99.6% of the cluster's GPU time) were held idle" -- \
  "$bin" compare "$kth" --policies kubernetes,kai
check compare-same-columns-json 0 '"same_columns": [["kai", "kueue"]]' -- "$bin" compare "$kth" --policies slurm,kai,kueue --json
if "$bin" compare "$src/scenarios/poc/real-tasks.yaml" --policies volcano,kai,kueue 2>&1 | grep -q "read the same on every row"; then
  echo "FAIL compare-same-columns-apart: the note on a drill whose tenants set the systems apart"; fail=$((fail + 1))
else pass=$((pass + 1)); fi

# Slurm partitions whose Nodes leave out a pool (CEA Curie's standard, large and hybrid) keep their
# jobs there; compare gives fifo and kubernetes the same pools as node selectors by queue and says
# so, or, with `workload.node_selectors: {}`, says that they place the same jobs on any node. The
# queue is -1 and field 16 the partition, as in Curie's log: partition1 on a, partition2 on b,
# partition3 on both (not a confinement).
cat >"$tmp/parts.swf" <<'SWF'
; MaxProcs: 32
1 0 0 100 8 -1 -1 8 200 -1 1 1 1 -1 -1 1 -1 -1
2 10 0 50 8 -1 -1 8 100 -1 1 2 2 -1 -1 1 -1 -1
3 20 0 10 4 -1 -1 4 100 -1 1 1 1 -1 -1 2 -1 -1
4 30 0 10 4 -1 -1 4 100 -1 1 1 1 -1 -1 3 -1 -1
SWF
cat >"$tmp/parts.yaml" <<YAML
name: parts
seed: 1
cluster:
  pools:
    - {name: a, nodes: 2, gpus_per_node: 8, gpu_type: H100}
    - {name: b, nodes: 2, gpus_per_node: 8, gpu_type: H100}
policy:
  name: slurm
  partitions:
    partition1: {Nodes: a, Default: YES}
    partition2: {Nodes: b}
    partition3: {Nodes: "a,b"}
workload:
  trace: $tmp/parts.swf
YAML
sed 's#^  trace: .*#&\n  node_selectors: {}#' "$tmp/parts.yaml" >"$tmp/parts-any.yaml"
check compare-node-rules 0 "slurm keeps 3 of 4 jobs (75.0%) on part of the cluster by their partitions: partition1 on a;" -- \
  "$bin" compare "$tmp/parts.yaml" --policies fifo,kubernetes,slurm
check compare-node-rules-selectors 0 "fifo and kubernetes place the same queues' jobs on the same pools, by node" -- \
  "$bin" compare "$tmp/parts.yaml" --policies fifo,kubernetes,slurm
check compare-node-rules-any-node 0 "fifo and kubernetes have no such rule here and place the same jobs on any node" -- \
  "$bin" compare "$tmp/parts-any.yaml" --policies fifo,kubernetes,slurm
check compare-node-rules-json 0 '"node_rules": [{"policy": "slurm", "confined_jobs": 3, "queues": {"partition1": ["a"], "partition2": ["b"]}}],' -- \
  "$bin" compare "$tmp/parts.yaml" --policies fifo,slurm --json
check compare-node-rules-json-selectors 0 '"node_selectors_from_rules": ["fifo"],' -- \
  "$bin" compare "$tmp/parts.yaml" --policies fifo,slurm --json
check compare-node-rules-set-ups 0 "volcano gets a Queue per partition, capability the GPUs of its pools; kueue" -- \
  "$bin" compare "$tmp/parts.yaml" --policies volcano,kueue,slurm
check compare-node-rules-json-set-ups 0 '"pools_set_up": {"volcano": "a Queue per partition, capability the GPUs of its pools"},' -- \
  "$bin" compare "$tmp/parts.yaml" --policies fifo,volcano,slurm --json
if "$bin" compare "$tmp/good.yaml" --policies fifo,slurm 2>&1 | grep -q "on part of the cluster by their queue"; then
  echo "FAIL compare-node-rules-none: the line without partitions that leave out a pool"; fail=$((fail + 1))
else pass=$((pass + 1)); fi

printf 'name: x\ncluster: [1, 2\n' >"$tmp/syntax.yaml"
check yaml-syntax 2 "syntax.yaml:" -- "$bin" run "$tmp/syntax.yaml" -o "$tmp/syntax.h5"
no_file yaml-syntax-no-output "$tmp/syntax.h5"

scenario "$tmp/typo.yaml" fifo "$tmp/small.swf" "horizn: 7d"
check unknown-key 2 'did you mean "horizon"' -- "$bin" validate "$tmp/typo.yaml"

scenario "$tmp/policy.yaml" fifx
check unknown-policy 2 'did you mean "fifo"' -- "$bin" run "$tmp/policy.yaml" -o "$tmp/policy.h5"
no_file unknown-policy-no-output "$tmp/policy.h5"

scenario "$tmp/missing.yaml" fifo "$tmp/nope.swf"
check missing-trace 2 "nope.swf" -- "$bin" run "$tmp/missing.yaml" -o "$tmp/missing.h5"
no_file missing-trace-no-output "$tmp/missing.h5"

cp "$tmp/small.swf" "$tmp/bad.swf"
echo "4 30 0 1x 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1" >>"$tmp/bad.swf"
scenario "$tmp/badtrace.yaml" fifo "$tmp/bad.swf"
check malformed-swf 2 "bad.swf:5:" -- "$bin" run "$tmp/badtrace.yaml" -o "$tmp/bad.h5"
check malformed-swf-field 2 "field 4" -- "$bin" run "$tmp/badtrace.yaml" -o "$tmp/bad.h5"
no_file malformed-swf-no-output "$tmp/bad.h5"
# --skip-bad-rows: the malformed row is counted and named, the rest runs.
check skip-bad-rows 0 "1 malformed row(s) skipped" -- "$bin" run "$tmp/badtrace.yaml" --skip-bad-rows -o "$tmp/skip.h5"
check skip-bad-rows-names-row 0 "line 5, column 8, run time (field 4)" -- "$bin" run "$tmp/badtrace.yaml" --skip-bad-rows
check trace-stats-skip-bad-rows 0 "bad rows: 1 skipped" -- "$bin" trace-stats "$tmp/bad.swf" --skip-bad-rows
check trace-stats-bad-row-stops 2 "bad.swf:5:8" -- "$bin" trace-stats "$tmp/bad.swf"

# A trace read from a pipe (a process substitution, /dev/stdin): its format is detected on the
# lines the import then reads again, and calibrate's window check and runs share one read of it.
check trace-stats-pipe 0 "rows: 13,607 read, 0 skipped" -- "$bin" trace-stats <(gzip -dc "$trace")
scenario "$tmp/stdin.yaml" fifo /dev/stdin
check calibrate-stdin 0 "wrote $tmp/stdin-cal.yaml" -- bash -c \
  "gzip -dc '$trace' | '$bin' calibrate '$tmp/stdin.yaml' --fit 0:3d --test 3d:6d -o '$tmp/stdin-cal.yaml'"
# A sample interval whose samples would pass 1 GiB over the trace is refused before the run, with
# the shortest one that keeps within (1s over the 14 days: 1.2 M samples; before, 3 GB of memory).
scenario "$tmp/samples.yaml" fifo "$trace" "output: {sample_interval: 1s}"
check sample-interval-bound 2 "samples.yaml:12:27: output.sample_interval: 1s gives about 1,207,391 samples over the 13d 23h of the trace's submissions, 908 bytes each (1 pool, 70 tenants): 1.02 GiB, more than the 1 GiB of samples a run keeps; give 2s or more" -- "$bin" run "$tmp/samples.yaml"
check no-such-dir 2 "" -- "$bin" run "$tmp/good.yaml" -o "$tmp/no/such/dir/out.h5"
check no-scenario 2 "" -- "$bin" run "$tmp/absent.yaml"

# A failed run must leave an existing result untouched.
cp "$tmp/good.h5" "$tmp/keep.h5"; before="$(md5sum <"$tmp/keep.h5")"
check failed-run-keeps-old 2 "" -- "$bin" run "$tmp/badtrace.yaml" -o "$tmp/keep.h5"
[ "$(md5sum <"$tmp/keep.h5")" = "$before" ] && pass=$((pass + 1)) || { echo "FAIL keep: file changed"; fail=$((fail + 1)); }

check example 0 "fingerprint" -- "$bin" run "$src/scenarios/examples/ricc-14d-fifo.yaml"
check sweep 0 "24 runs: 24 done, 0 failed, 0 cancelled" -- "$bin" sweep "$src/scenarios/examples/ricc-14d-sweep.yaml" --csv "$tmp/sweep.csv" -o "$tmp/sweep.h5"
[ "$(wc -l <"$tmp/sweep.csv")" -eq 25 ] && pass=$((pass + 1)) || { echo "FAIL sweep csv rows"; fail=$((fail + 1)); }
check plan 0 "answer: cluster.pools.p.nodes = " -- "$bin" plan "$tmp/good.yaml" --vary cluster.pools.p.nodes --range 1:8 --target "wait_mean <= 1h"
check plan-none 0 "answer: no value in [1, 2] meets" -- "$bin" plan "$tmp/good.yaml" --vary cluster.pools.p.nodes --range 1:2 --target "wait_max <= 1ms"
check plan-seeds-bound 2 "expected a number of seeds in 1..100000" -- "$bin" plan "$tmp/good.yaml" --vary cluster.pools.p.nodes --range 1:8 --target "wait_mean <= 1h" --seeds 100000000
check plan-bad-target 2 "unknown KPI" -- "$bin" plan "$tmp/good.yaml" --vary cluster.pools.p.nodes --range 1:8 --target "p95_wiat <= 1h"
check sweep-run-base 0 "policy fifo" -- "$bin" run "$src/scenarios/examples/ricc-14d-sweep.yaml"
# validate checks a sweep as `headroom sweep` does before its first run: its keys and every point.
check validate-sweep 0 "ok (sweep of 24 runs, scenario" -- "$bin" validate "$src/scenarios/examples/ricc-14d-sweep.yaml"
scenario "$tmp/badkey-sweep.yaml" fifo "" "variants: {cluster.pools.q.nodes: [1, 2]}"
check validate-sweep-bad-key 2 'variants.cluster.pools.q.nodes: cannot vary this key: no list element named "q"' -- \
  "$bin" validate "$tmp/badkey-sweep.yaml"
scenario "$tmp/badpoint-sweep.yaml" fifo "" "variants: {cluster.pools.p.nodes: [2, -1]}"
check validate-sweep-bad-point 2 "in run 1 (cluster.pools.p.nodes=-1, seed=3)" -- "$bin" validate "$tmp/badpoint-sweep.yaml"

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
