#!/usr/bin/env bash
# `headroom sweep --mpi` on 2 ranks gives the table of one unsharded run, byte for byte (CSV).
# Usage: mpi_sweep_test.sh HEADROOM_BINARY MPIEXEC
set -uo pipefail
bin="$1"; mpiexec="${2:-mpirun}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
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
"$bin" sweep "$tmp/s.yaml" --csv "$tmp/one.csv" >/dev/null || { echo "FAIL: sweep"; exit 1; }
out="$("$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$bin" --threads 1 sweep "$tmp/s.yaml" --mpi \
  --csv "$tmp/mpi.csv" -o "$tmp/mpi.h5" 2>&1)" || { echo "FAIL: mpirun: $out"; exit 1; }
grep -q "12 runs on 2 MPI ranks: 12 done" <<<"$out" || { echo "FAIL: output: $out"; exit 1; }
cmp "$tmp/one.csv" "$tmp/mpi.csv" || { echo "FAIL: the MPI table differs from one run"; exit 1; }
[ -s "$tmp/mpi.h5" ] || { echo "FAIL: no HDF5 table"; exit 1; }
echo "mpi_sweep_test: passed"
