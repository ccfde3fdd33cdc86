#!/usr/bin/env bash
# No data loss on SIGINT / SIGTERM: `headroom run -o OUT.h5` interrupted at different moments
# (while loading, while simulating, while writing the result) must exit 130 and leave OUT.h5 as
# either the previous complete file, byte for byte, or a new complete file, and never a
# temporary file next to it.   Usage: signal_test.sh HEADROOM_BINARY SOURCE_DIR
set -uo pipefail
set -m  # background jobs in their own process group, so SIGINT is not ignored in them
bin="$1"; src="$(cd "$2" && pwd)"
# The clean-up runs in this shell only: a background child signalled between its fork and its exec
# is still a copy of this shell, with this trap, and would delete the folder under the test (seen
# as "out.h5 is gone" on a loaded machine).
tmp="$(mktemp -d)"; main=$BASHPID; trap '[ "$BASHPID" = "$main" ] && rm -rf "$tmp"' EXIT
pass=0; fail=0; interrupted=0
trace="$src/scenarios/examples/data/ricc-2010-first-14d.swf.gz"

scenario() {  # scenario FILE ARRIVAL_SCALE
  cat >"$1" <<YAML
name: signal-test
seed: 5
cluster:
  pools:
    - {name: ricc, nodes: 1024, gpus_per_node: 8, gpu_type: A100}
policy: fifo
workload:
  trace: $trace
  format: swf
  window: {start: 0s, end: ${3:-14d}}
  arrival_scale: $2
output:
  sample_interval: 1m
YAML
}
scenario "$tmp/small.yaml" 1 1d
scenario "$tmp/big.yaml" 20
scenario "$tmp/medium.yaml" 2

# The previous complete result: a good run of a small window.
"$bin" run "$tmp/small.yaml" -o "$tmp/previous.h5" >/dev/null || { echo "FAIL: the first run failed"; exit 1; }
complete() {  # complete FILE: a whole HDF5 file (h5ls reads it, or at least the signature is there)
  if command -v h5ls >/dev/null; then
    h5ls -r "$1" >/dev/null 2>&1 && h5ls -r "$1" | grep -q '^/jobs/state'
  else
    [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "894844460d0a1a0a" ]
  fi
}
complete "$tmp/previous.h5" || { echo "FAIL: the first result is not readable"; exit 1; }

# interrupt NAME SIGNAL WHEN: WHEN is a delay in seconds, or "write" (once the temporary file
# appears; a smaller workload then, as the run goes that far).
interrupt() {
  local name="$1" sig="$2" when="$3" out="$tmp/out.h5" workload="$tmp/big.yaml"
  rm -f "$out" "$out".tmp*
  cp "$tmp/previous.h5" "$out"
  [ "$when" = write ] && workload="$tmp/medium.yaml"
  "$bin" run "$workload" -o "$out" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  local pid=$! sent=0 code
  if [ "$when" = write ]; then
    for _ in $(seq 1 15000); do
      compgen -G "$out.tmp*" >/dev/null && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.002
    done
  else
    sleep "$when"
  fi
  kill -"$sig" "$pid" 2>/dev/null && sent=1
  wait "$pid" 2>/dev/null; code=$?
  local problems=()
  if [ "$sent" -eq 1 ]; then
    interrupted=$((interrupted + 1))
    # Two outcomes besides 130 are fine: a signal after the run's last check still ends in success
    # with a new whole file, and one before main() has set up its handlers kills the process
    # (128 + the signal number) before it has written anything.
    local killed=$((128 + $(kill -l "$sig")))
    if [ "$code" -ne 130 ] && ! { [ "$code" -eq 0 ] && ! cmp -s "$out" "$tmp/previous.h5"; } &&
      ! { [ "$code" -eq "$killed" ] && cmp -s "$out" "$tmp/previous.h5"; }; then
      problems+=("exit $code, expected 130")
    fi
    # Interrupted while writing: the write is finished (then renamed), so the file is the new one.
    [ "$when" = write ] && cmp -s "$out" "$tmp/previous.h5" && problems+=("the result being written was dropped")
    # (Earlier, 130 may also be the shell's code for a process killed by SIGINT before main().)
    # A signal that lands after the run's last check (the write done, the summary printing) ends
    # in success with the new file: only an interrupted exit has to say so.
    [ "$when" = write ] && [ "$code" -eq 130 ] && ! grep -q interrupted "$tmp/$name.err" &&
      problems+=("no 'interrupted' message")
  elif [ "$code" -ne 0 ]; then
    problems+=("finished before the signal but exit $code")
  fi
  if [ ! -f "$out" ]; then
    problems+=("$out is gone")
  elif ! cmp -s "$out" "$tmp/previous.h5" && ! complete "$out"; then
    problems+=("$out is neither the previous file nor a complete new one")
  fi
  compgen -G "$out.tmp*" >/dev/null && problems+=("temporary file left: $(ls "$out".tmp*)")
  if [ ${#problems[@]} -eq 0 ]; then
    pass=$((pass + 1))
  else
    echo "FAIL $name: ${problems[*]}"; head -5 "$tmp/$name.err"; fail=$((fail + 1))
  fi
  [ -n "${SIGNAL_TEST_VERBOSE:-}" ] &&
    echo "$name: sent=$sent exit=$code $(cmp -s "$out" "$tmp/previous.h5" && echo previous || echo new) ${SECONDS}s"
  return 0
}

for sig in INT TERM; do
  interrupt "$sig-at-start" "$sig" 0
  interrupt "$sig-loading" "$sig" 0.05
  interrupt "$sig-simulating" "$sig" 0.6
  interrupt "$sig-later" "$sig" 1.5
done
interrupt INT-while-writing INT write
interrupt TERM-while-writing TERM write

echo "signal: $pass passed, $fail failed, $interrupted runs interrupted"
[ "$fail" -eq 0 ] && [ "$interrupted" -gt 0 ]
