#!/usr/bin/env bash
# Issue #38: headroom's slurm against recorded runs of the real slurmctld 22.05
# (tests/data/referee/slurm/*/: workload, slurm.conf, gres.conf, real.csv, expect). Each must have
# at least `expect` jobs starting within +-2 s of Slurm and in the same order. No daemon needed.
#   referee_recorded_test.sh HEADROOM SOURCE_DIR
set -euo pipefail
headroom="$1" src="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
for d in "$src"/tests/data/referee/slurm/*/; do
  name=$(basename "$d")
  mkdir "$work/$name"
  cp "$d"/jobs.json "$d"/real.csv "$d"/slurm.conf "$d"/gres.conf "$work/$name/"
  [ -f "$d"/t0 ] && cp "$d"/t0 "$work/$name/"  # the start instant on slurmctld's clock (phase)
  if ! /usr/bin/python3 "$src/scripts/referee/slurm_referee.py" check "$work/$name" "$headroom" "$(cat "$d/expect")"; then
    echo "FAIL: $name" >&2
    fail=1
  fi
done
exit $fail
