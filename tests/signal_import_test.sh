#!/usr/bin/env bash
# Issue #31: SIGINT / SIGTERM while a large input is being imported (a trace, a JSON pod list)
# stop every command within a few seconds with exit 130 and "interrupted: no output written",
# and leave no output file nor temporary file.   Usage: signal_import_test.sh HEADROOM_BINARY SOURCE_DIR
set -uo pipefail
set -m  # background jobs in their own process group, so SIGINT is not ignored in them
bin="$1"
# The clean-up runs in this shell only: a background child signalled between its fork and its exec
# is still a copy of this shell, with this trap, and would delete the folder under the test (seen
# as "out.h5 is gone" on a loaded machine).
tmp="$(mktemp -d)"; main=$BASHPID; trap '[ "$BASHPID" = "$main" ] && rm -rf "$tmp"' EXIT
pass=0; fail=0

# About 200 MB of CSV trace (4 million jobs) and 50 MB of `kubectl get pods -o json`.
awk 'BEGIN { print "id,tenant,queue,submit,gpus,runtime,cpus";
             for (i = 1; i <= 4000000; i++) printf "%d,team%d,default,%d,%d,%d,4\n", i, i % 97, i * 7, 1 + i % 8, 600 + i % 3600 }' \
  >"$tmp/big.csv"
awk 'BEGIN { printf "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n";
             for (i = 1; i <= 120000; i++) {
               if (i > 1) printf ",\n";
               printf "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p%d\", \"namespace\": \"team%d\", ", i, i % 31;
               printf "\"creationTimestamp\": \"2024-01-01T00:00:00Z\", \"labels\": {\"app\": \"train\", \"run\": \"r%d\"}}, ", i;
               printf "\"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"nvcr.io/nvidia/pytorch:24.01-py3\", ";
               printf "\"resources\": {\"requests\": {\"nvidia.com/gpu\": 1, \"cpu\": \"4\", \"memory\": \"16Gi\"}}}]}, ";
               printf "\"status\": {\"phase\": \"Succeeded\", \"startTime\": \"2024-01-01T00:00:00Z\"}}";
             }
             print "]}" }' >"$tmp/pods.json"
cat >"$tmp/big.yaml" <<YAML
name: signal-import
cluster:
  pools:
    - {name: a, nodes: 64, gpus_per_node: 8, gpu_type: A100}
policy: fifo
workload: {trace: big.csv, format: csv}
YAML

# interrupt NAME SIGNAL OUTPUT COMMAND...: SIGNAL 0.5 s after the start; OUTPUT must not exist.
# The message expected on stderr is $message (sweep's own for sweep).
message="interrupted: no output written"
interrupt() {
  local name="$1" sig="$2" out="$3"; shift 3
  rm -f "$out" "$out".tmp*
  local t0=$SECONDS
  "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  local pid=$! code
  sleep 0.5
  local sent=0
  kill -"$sig" "$pid" 2>/dev/null && sent=1
  # Within 5 s, or it is killed and counted as a failure.
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && { kill -KILL "$pid"; echo "FAIL $name: still running 5 s after SIG$sig"; }
  wait "$pid" 2>/dev/null; code=$?
  local problems=()
  [ "$sent" -eq 1 ] || problems+=("finished before the signal (exit $code): make the input larger")
  [ "$code" -eq 130 ] || problems+=("exit $code, expected 130")
  grep -qx "$message" "$tmp/$name.err" || problems+=("no '$message'")
  [ -n "$out" ] && [ -e "$out" ] && problems+=("$out written")
  [ -n "$out" ] && compgen -G "$out.tmp*" >/dev/null && problems+=("temporary file left: $(ls "$out".tmp*)")
  if [ ${#problems[@]} -eq 0 ]; then
    pass=$((pass + 1))
  else
    echo "FAIL $name: ${problems[*]} ($((SECONDS - t0)) s)"; head -3 "$tmp/$name.err"; fail=$((fail + 1))
  fi
}

interrupt trace-stats-csv-TERM TERM "" "$bin" trace-stats "$tmp/big.csv"
interrupt trace-stats-json-INT INT "" "$bin" trace-stats "$tmp/pods.json" --format kubernetes
interrupt run-import-TERM TERM "$tmp/out.h5" "$bin" run "$tmp/big.yaml" -o "$tmp/out.h5"
interrupt run-import-INT INT "$tmp/out.h5" "$bin" run "$tmp/big.yaml" -o "$tmp/out.h5"
interrupt trace-infer-TERM TERM "" "$bin" trace-infer "$tmp/big.yaml"
interrupt compare-import-TERM TERM "$tmp/out.csv" "$bin" compare "$tmp/big.yaml" --policies fifo -o "$tmp/out.csv"
# sweep keeps the table of the runs finished before a signal (none here: each is "cancelled").
message="interrupted: the finished runs were kept"
interrupt sweep-import-TERM TERM "" "$bin" sweep "$tmp/big.yaml"
grep -q "cancelled" "$tmp/sweep-import-TERM.out" || { echo "FAIL sweep-import-TERM: its run is not cancelled"; fail=$((fail + 1)); }

echo "signal_import: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
