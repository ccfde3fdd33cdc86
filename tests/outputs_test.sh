#!/usr/bin/env bash
# Issue #31, outputs: nothing lost, and the planner's inputs refused when they cannot be met.
# Every command refuses an output that is (or resolves to, through a link, "..", or a hard link)
# any file the run reads: the scenario, its trace, each site file and what it Includes, each
# manifest, the files of `policies:` blocks and of sweep variants. Each refusal must exit 2, name
# the option, the output and the input, and change no file under the test folder. The targets,
# `fields:` and calibrate windows that cannot be met are refused the same way, before any run.
#   Usage: outputs_test.sh HEADROOM_BINARY SOURCE_DIR
set -uo pipefail
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; src="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0

# Every file under $tmp with its size, modification time and checksum, and every folder.
snapshot() {
  find "$tmp" \( -type d -printf '%p/\n' \) -o \( -type l -printf '%p -> %l\n' \) -o -type f -printf '%p %s %T@\n' |
    sort
  find "$tmp" -type f -exec md5sum {} + | sort
}

# bad NAME EXPECTED_TEXT -- headroom arguments...: exit 2, the text in the output, nothing changed.
bad() {
  local name="$1" text="$2"; shift 3
  local got code before after
  before="$(snapshot)"
  got="$(cd "$tmp" && "$bin" "$@" 2>&1)"; code=$?
  after="$(snapshot)"
  if [ "$code" -ne 2 ]; then
    echo "FAIL $name: exit $code, expected 2"; echo "$got" | tail -5; fail=$((fail + 1)); return
  fi
  if ! grep -qF -- "$text" <<<"$got"; then
    echo "FAIL $name: output lacks: $text"; echo "$got" | grep -v '^warning' | head -5; fail=$((fail + 1)); return
  fi
  if [ "$before" != "$after" ]; then
    echo "FAIL $name: files were written or changed:"; diff <(echo "$before") <(echo "$after") | head -5
    fail=$((fail + 1)); return
  fi
  pass=$((pass + 1))
}
ok() {  # ok NAME CONDITION-DESCRIPTION STATUS
  if [ "$3" -eq 0 ]; then pass=$((pass + 1)); else echo "FAIL $1: $2"; fail=$((fail + 1)); fi
}

# The Slurm site (slurm.conf Includes slurm-nodes.conf; gres.conf beside it; QOS and sshare dumps)
# and the Kueue site (a manifest), copied so that nothing of the source tree can be touched.
cp -r "$src/tests/data/imports/slurm" "$tmp/slurm"
cp -r "$src/tests/data/imports/kueue" "$tmp/kueue"
"$bin" validate "$tmp/slurm/site.yaml" >/dev/null 2>&1 || { echo "FAIL: the slurm site is not valid"; exit 1; }

# --- 1. an output is never a file the run reads --------------------------------------------------
msg='an input of this command; writing it would destroy the input'
bad run-include "error: slurm/slurm-nodes.conf: -o: output path is the file read by slurm_conf" \
  -- run slurm/site.yaml -o slurm/slurm-nodes.conf
bad run-sshare "error: slurm/sshare.txt: -o: output path is the sshare slurm/sshare.txt, $msg" \
  -- run slurm/site.yaml -o slurm/sshare.txt
ln -s slurm/qos.txt "$tmp/qos-link.h5"
bad run-symlink-to-qos "error: qos-link.h5: -o: output path is the sacctmgr_qos slurm/qos.txt, $msg" \
  -- run slurm/site.yaml -o qos-link.h5
ln "$tmp/slurm/gres.conf" "$tmp/gres-hard.h5"
bad run-hard-link-to-gres "error: gres-hard.h5: -o: output path is the file read by slurm_conf" \
  -- run slurm/site.yaml -o gres-hard.h5
bad compare-manifest "error: kueue/../kueue/gpu-site.yaml: -o: output path is the manifest kueue/gpu-site.yaml, $msg" \
  -- compare kueue/site.yaml --policies kueue,fifo -o kueue/../kueue/gpu-site.yaml
bad calibrate-slurm-conf "error: slurm/slurm.conf: -o: output path is the slurm_conf slurm/slurm.conf, $msg" \
  -- calibrate slurm/site.yaml --fit 0:1m --test 1m:1h -o slurm/slurm.conf
# A `policies:` block's file (read when compare runs that system).
cat >"$tmp/slurm/blocks.yaml" <<'YAML'
name: blocks
cluster: {pools: [{name: p, nodes: 4, gpus_per_node: 8, gpu_type: H100}]}
policy: fifo
policies: {slurm: {sshare: sshare.txt}}
workload: {trace: may.sacct, fields: xdmod}
YAML
bad compare-policies-block "error: slurm/sshare.txt: -o: output path is the sshare slurm/sshare.txt, $msg" \
  -- compare slurm/blocks.yaml --policies fifo,slurm -o slurm/sshare.txt
# A file only a sweep variant names.
cp "$tmp/slurm/sshare.txt" "$tmp/slurm/sshare-b.txt"
cat >"$tmp/slurm/sweep.yaml" <<'YAML'
name: sweep
cluster: {slurm_conf: slurm.conf}
policy: {name: slurm, slurm_conf: slurm.conf, sshare: sshare.txt}
workload: {trace: may.sacct, fields: xdmod}
variants: {policy.sshare: [sshare.txt, sshare-b.txt]}
YAML
bad sweep-variant-file "error: slurm/sshare-b.txt: --csv: output path is the sshare slurm/sshare-b.txt, $msg" \
  -- sweep slurm/sweep.yaml --csv slurm/sshare-b.txt

# --- 2. calibrate: windows that cannot hold out anything, paths of the written scenario -----------
bad calibrate-equal-windows "error: --test: the test window 0s:1d equals the fit window 0s:1d" \
  -- calibrate slurm/site.yaml --fit 0:1d --test 0:1d -o cal.yaml
bad calibrate-overlap "error: --test: the test window 12h:2d overlaps the fit window 0s:1d" \
  -- calibrate slurm/site.yaml --fit 0:1d --test 12h:2d -o cal.yaml
bad calibrate-empty-test "error: --test: the test window 5d:6d holds no job of slurm/may.sacct (its jobs are submitted from 0s to 2m)" \
  -- calibrate slurm/site.yaml --fit 0:1d --test 5d:6d -o cal.yaml
bad calibrate-empty-fit "error: --fit: the fit window 3d:4d holds no job of slurm/may.sacct" \
  -- calibrate slurm/site.yaml --fit 3d:4d --test 4d:5d -o cal.yaml
mkdir -p "$tmp/elsewhere/deep"
(cd "$tmp" && "$bin" calibrate slurm/site.yaml --fit 0:1m --test 1m:1h -o elsewhere/deep/cal.yaml >/dev/null 2>&1)
(cd "$tmp" && "$bin" validate elsewhere/deep/cal.yaml >/dev/null 2>&1)
ok calibrate-output-elsewhere-validates "the calibrated scenario in another folder does not validate" $?
grep -qF 'sshare: ../../slurm/sshare.txt' "$tmp/elsewhere/deep/cal.yaml"
ok calibrate-output-elsewhere-paths "the sshare path was not rewritten for the output's folder" $?

# --- 3. targets that can never be met, or that name no tenant ------------------------------------
"$bin" synth --jobs 40 --tenants 3 --seed 2 -o "$tmp/t.csv" 2>/dev/null
cat >"$tmp/targets.yaml" <<'YAML'
name: targets
cluster: {pools: [{name: p, nodes: 2, gpus_per_node: 8, gpu_type: H100}]}
policy: fifo
workload: {trace: t.csv}
targets:
  - "p95_wait <= 1h"
  - "jain >= 1.5"
YAML
bad target-jain-above-1 'error: targets.yaml:7:5: targets: "jain >= 1.5": can never be met: jain is never above 1' \
  -- compare targets.yaml --policies fifo,sjf -o cmp.csv
sed -i 's/jain >= 1.5/tenant:tenant-7.mean_wait <= 1h/' "$tmp/targets.yaml"
bad target-unknown-tenant-scenario 'error: targets.yaml:7:5: targets: "tenant:tenant-7.mean_wait <= 1h": no tenant named "tenant-7" in the workload' \
  -- compare targets.yaml --policies fifo,sjf -o cmp.csv
sed -i '/tenant-7/d' "$tmp/targets.yaml"
bad target-unknown-tenant-option 'error: --target "tenant:tenatn-1.p95_wait <= 1h": no tenant named "tenatn-1" in the workload; did you mean "tenant-1"?' \
  -- compare targets.yaml --policies fifo,sjf --target "tenant:tenatn-1.p95_wait <= 1h" --keep-runs kept
bad target-utilization-above-100 'error: --target "utilization > 100%": can never be met: utilization is never above 1 (100%)' \
  -- compare targets.yaml --policies fifo,sjf --target "utilization > 100%"
bad target-negative-wait 'error: --target "p95_wait <= -1h": can never be met: p95_wait is never below 0' \
  -- plan targets.yaml --vary cluster.pools.p.nodes --range 1:4 --target "p95_wait <= -1h"

# --- 4. fields: as sacct --format reads them -----------------------------------------------------
sed 's/fields: xdmod/fields: "jobid,usr,account,partition,submit,start,end,elapsed,state,alloctres"/' \
  "$tmp/slurm/site.yaml" >"$tmp/slurm/fields.yaml"
bad fields-misspelt-scenario 'error: slurm/fields.yaml:5:38: workload.fields: unknown sacct field "usr" (sacct --format stops at it: Invalid field requested); did you mean "User"?' \
  -- validate slurm/fields.yaml
bad fields-misspelt-option 'error: --fields: unknown sacct field "sbumit" (sacct --format stops at it: Invalid field requested); did you mean "Submit"?' \
  -- trace-stats slurm/may.sacct --fields jobid,user,sbumit
full="$("$bin" trace-stats "$tmp/slurm/may.sacct" --fields xdmod 2>&1)"
short="$("$bin" trace-stats "$tmp/slurm/may.sacct" \
  --fields "JOBID,jobidr,cl,part,qos,acc,gr,gid,user,uid,sub,elig,start,end,elapsed,exit,state,nn,ncpus,reqcpus,reqmem,reqt,alloct,timelimit,nodel,jobn" 2>&1)"
[ "$full" = "$short" ]
ok fields-prefixes "sacct's abbreviated field names do not read as the full names" $?

# --- 5. an output that is a device or a pipe -----------------------------------------------------
# Outputs are renamed into place: over a device or a pipe that would put a regular file where it was
# (as root, `-o /dev/null` replaced /dev/null). Refused before any work; the node stays as it was.
special='not a regular file: headroom writes a result under a temporary name and renames it into place'
mkfifo "$tmp/pipe.h5"
bad run-fifo "error: pipe.h5: -o: output path is a pipe (FIFO), $special" -- run targets.yaml -o pipe.h5
bad sweep-csv-fifo "error: pipe.h5: --csv: output path is a pipe (FIFO), $special" -- sweep targets.yaml --csv pipe.h5
[ -p "$tmp/pipe.h5" ]
ok fifo-kept "the named pipe is no longer one" $?
if mknod "$tmp/null.h5" c 1 3 2>/dev/null; then  # root only: a copy of /dev/null's device node
  bad run-char-device "error: null.h5: -o: output path is a character device, $special" -- run targets.yaml -o null.h5
  bad compare-csv-char-device "error: null.h5: -o: output path is a character device" \
    -- compare targets.yaml --policies fifo,sjf -o null.h5
  [ -c "$tmp/null.h5" ]
  ok char-device-kept "the device node is no longer one" $?
fi

echo "outputs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
