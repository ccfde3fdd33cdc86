#!/usr/bin/env bash
# `headroom sweep --mpi` under mpiexec (issue #37, item 4):
#  - 2 ranks x 1 thread, 1 rank x 2 threads and one plain process at 1 and 2 threads write the
#    same table: the CSV byte for byte, the HDF5 table's content (h5dump; the table file records
#    object times, so its bytes differ between any two runs, MPI or not);
#  - --keep-runs under MPI writes every run once (run-<index>.h5, as one process does);
#  - a bad scenario: exit 2, its file:line on stderr once (rank 0), no output, well before the
#    timeout (no rank left waiting); --shard with --mpi is refused the same way.
# Usage: mpi_sweep_test.sh HEADROOM_BINARY [MPIEXEC]
set -uo pipefail
bin="$1"; mpiexec="${2:-mpiexec}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fails=0
command -v h5dump >/dev/null || { echo "FAIL: h5dump (Debian: hdf5-tools) not found"; exit 1; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Open MPI refuses root (CI runs as root in a container) unless told twice, and by default
# refuses more ranks than cores; the vader transport's single-copy mode needs ptrace rights a
# container may lack. MPICH needs none of this.
launch=("$mpiexec")
if "$mpiexec" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
  launch+=(--oversubscribe)
fi
mpi() {  # mpi RANKS ARGS...: the binary under mpiexec, at most 60 s
  local n="$1"; shift
  timeout 60 "${launch[@]}" -n "$n" "$bin" "$@"
}

{
  echo "id,tenant,queue,submit,gpus,runtime"
  for i in $(seq 0 199); do echo "$i,t$((i % 3)),q,$((i * 7)),$((1 + i % 8)),$((50 + (i * 37) % 400))"; done
} >"$tmp/trace.csv"
cat >"$tmp/s.yaml" <<YAML
name: mpi-test
seed: 5
cluster:
  pools:
    - {name: a100, nodes: 4, gpus_per_node: 8, gpu_type: A100}
policy: fifo
workload:
  trace: trace.csv
  arrival_scale: 0.8
variants:
  policy: [fifo, sjf]
  cluster.pools.a100.nodes: [2, 3, 4]
seeds: 2
YAML
table() { h5dump "$1" | tail -n +2; }  # the content, without the line naming the file

"$bin" --threads 1 sweep "$tmp/s.yaml" --csv "$tmp/one.csv" -o "$tmp/one.h5" >/dev/null || bad "sweep"
"$bin" --threads 2 sweep "$tmp/s.yaml" --csv "$tmp/one-t2.csv" >/dev/null || bad "sweep --threads 2"
cmp -s "$tmp/one.csv" "$tmp/one-t2.csv" || bad "one process: 1 and 2 threads differ"
grep -c ',done,' "$tmp/one.csv" | grep -qx 12 || bad "one process: not 12 done runs: $(cat "$tmp/one.csv")"

out="$(mpi 2 --threads 1 sweep "$tmp/s.yaml" --mpi --csv "$tmp/mpi.csv" -o "$tmp/mpi.h5" 2>&1)" ||
  bad "2 ranks: exit $?: $out"
grep -qx "12 runs on 2 MPI ranks: 12 done, 0 not done" <<<"$out" || bad "2 ranks: output: $out"
cmp -s "$tmp/one.csv" "$tmp/mpi.csv" || bad "2 ranks x 1 thread: the CSV differs from one process"
[ "$(table "$tmp/one.h5")" = "$(table "$tmp/mpi.h5")" ] || bad "2 ranks: the HDF5 table differs from one process"
grep -q '"shard"' <(h5dump -A "$tmp/mpi.h5") && bad "2 ranks: the merged table still says shard"

out="$(mpi 1 --threads 2 sweep "$tmp/s.yaml" --mpi --csv "$tmp/mpi1.csv" 2>&1)" || bad "1 rank: exit $?: $out"
grep -qx "12 runs on 1 MPI ranks: 12 done, 0 not done" <<<"$out" || bad "1 rank: output: $out"
cmp -s "$tmp/mpi1.csv" "$tmp/mpi.csv" || bad "1 rank x 2 threads and 2 ranks x 1 thread differ"

# More ranks than some shards have points: 5 ranks, 12 runs (ranks 0-1 get 3, ranks 2-4 get 2).
out="$(mpi 5 --threads 1 sweep "$tmp/s.yaml" --mpi --csv "$tmp/mpi5.csv" 2>&1)" || bad "5 ranks: exit $?: $out"
cmp -s "$tmp/one.csv" "$tmp/mpi5.csv" || bad "5 ranks: the CSV differs from one process"

mkdir "$tmp/runs"
out="$(mpi 2 --threads 1 sweep "$tmp/s.yaml" --mpi --keep-runs "$tmp/runs" 2>&1)" || bad "--keep-runs: exit $?: $out"
[ "$(ls "$tmp/runs" | sort -V | tr '\n' ' ')" = "$(for i in $(seq 0 11); do printf 'run-%d.h5 ' "$i"; done)" ] ||
  bad "--keep-runs: $(ls "$tmp/runs")"

# A bad scenario: line 4 has a negative node count.
sed 's/{name: a100, nodes: 4,/{name: a100, nodes: -4,/' "$tmp/s.yaml" >"$tmp/bad.yaml"
start=$SECONDS
out="$(mpi 2 sweep "$tmp/bad.yaml" --mpi --csv "$tmp/bad.csv" 2>&1)"; code=$?
[ "$code" -eq 2 ] || bad "bad scenario: exit $code, expected 2: $out"
[ "$(grep -c "^error: .*bad.yaml:5:" <<<"$out")" -eq 1 ] || bad "bad scenario: no single error naming bad.yaml:5: $out"
grep -q "nodes" <<<"$out" || bad "bad scenario: the error does not name the key: $out"
[ -e "$tmp/bad.csv" ] && bad "bad scenario: a CSV was written"
[ $((SECONDS - start)) -lt 30 ] || bad "bad scenario: took $((SECONDS - start)) s"

out="$(mpi 2 sweep "$tmp/missing.yaml" --mpi 2>&1)"; code=$?
{ [ "$code" -eq 2 ] && [ "$(grep -c "^error: .*missing.yaml" <<<"$out")" -eq 1 ]; } || bad "missing scenario: exit $code: $out"

out="$(mpi 2 sweep "$tmp/s.yaml" --mpi --shard 0/2 2>&1)"; code=$?
{ [ "$code" -eq 2 ] && grep -q "^error: .*--shard.*not with --mpi" <<<"$out"; } || bad "--shard with --mpi: exit $code: $out"

# An output that would overwrite the trace is refused before any run, on every rank.
out="$(mpi 2 sweep "$tmp/s.yaml" --mpi --csv "$tmp/trace.csv" 2>&1)"; code=$?
{ [ "$code" -eq 2 ] && head -1 "$tmp/trace.csv" | grep -q '^id,tenant'; } || bad "--csv over the trace: exit $code: $out"

[ "$fails" -eq 0 ] || exit 1
echo "mpi_sweep_test: passed"
