#!/usr/bin/env bash
# The bad-input catalogue: malformed scenarios, traces and command lines, each of which must end
# with exit code 2, an error naming the file and place (file:line[:column] or the option) and what
# was expected, and no output file (neither OUT.h5 nor a leftover OUT.h5.tmp*).
# Every file under the test folder (scenarios, traces, results given as inputs) is compared before
# and after each case: a failing command changes nothing.
#   Usage: bad_input_test.sh HEADROOM_BINARY SOURCE_DIR
set -uo pipefail
bin="$1"; src="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
out="$tmp/out"; mkdir -p "$out"
pass=0; fail=0; cases=0

bad() {  # bad NAME EXPECTED_TEXT -- headroom arguments... ("OUT" stands for $out/NAME.h5)
  local name="$1" text="$2"; shift 3
  local args=() a
  for a in "$@"; do args+=("${a//OUT/$out/$name.h5}"); done
  cases=$((cases + 1))
  local got code before after
  before="$(snapshot)"
  got="$("$bin" "${args[@]}" 2>&1)"; code=$?
  after="$(snapshot)"
  [ -n "${BAD_INPUT_VERBOSE:-}" ] && printf "%-34s %s\n" "$name" "$(head -1 <<<"$got")"
  if [ "$code" -ne 2 ]; then
    echo "FAIL $name: exit $code, expected 2"; echo "$got" | head -5; fail=$((fail + 1)); return
  fi
  if ! grep -qF -- "$text" <<<"$got"; then
    echo "FAIL $name: output lacks: $text"; echo "$got" | head -5; fail=$((fail + 1)); return
  fi
  if [ -e "$out/$name.h5" ] || compgen -G "$out/$name.h5.tmp*" >/dev/null; then
    echo "FAIL $name: an output file was written"; fail=$((fail + 1)); return
  fi
  if [ "$before" != "$after" ]; then
    echo "FAIL $name: files were written or changed:"; diff <(echo "$before") <(echo "$after") | head -5
    fail=$((fail + 1)); return
  fi
  pass=$((pass + 1))
}
# Every file under $tmp with its size and modification time (to the nanosecond), and every folder.
snapshot() { find "$tmp" \( -type d -printf '%p/\n' \) -o -printf '%p %s %T@\n' | sort; }

# scen NAME [TRACE] [SED] [EXTRA]: writes $tmp/NAME.yaml, a valid scenario over TRACE with the sed
# expression SED applied and the lines EXTRA appended (under `workload:` when they are indented).
scen() {
  cat >"$tmp/$1.yaml" <<YAML
name: bad-input
seed: 3
cluster:
  pools:
    - name: p
      nodes: 4
      gpus_per_node: 8
      gpu_type: H100
policy:
  name: fifo
  placement: consolidate
workload:
  trace: ${2:-good.swf}
YAML
  [ -n "${3:-}" ] && sed -i -e "$3" "$tmp/$1.yaml"
  [ -n "${4:-}" ] && printf '%b\n' "$4" >>"$tmp/$1.yaml"
  return 0
}
# trace FILE CONTENT: writes $tmp/FILE with CONTENT (printf %b escapes), plus a scenario FILE.yaml.
trace() { printf '%b' "$2" >"$tmp/$1"; scen "$1" "$1"; }

swf_ok='1 0 0 100 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n'
csv_head='id,tenant,queue,submit,gpus,runtime\n'
printf '; MaxProcs: 32\n%b' "$swf_ok" >"$tmp/good.swf"
scen good
"$bin" validate "$tmp/good.yaml" >/dev/null || { echo "FAIL: the base scenario is not valid"; exit 1; }

# --- SWF traces -----------------------------------------------------------------------------------
gz="$src/scenarios/examples/data/ricc-2010-first-14d.swf.gz"
head -c $(($(wc -c <"$gz") / 2)) "$gz" >"$tmp/trunc.swf.gz"
head -c 10 "$gz" >"$tmp/trunc-header.swf.gz"
cp "$gz" "$tmp/corrupt.swf.gz"
printf '\377%.0s' $(seq 1 40) | dd of="$tmp/corrupt.swf.gz" bs=1 seek=200 conv=notrunc status=none
scen trunc.swf.gz trunc.swf.gz; scen trunc-header.swf.gz trunc-header.swf.gz; scen corrupt.swf.gz corrupt.swf.gz
bad swf-truncated-gzip "trunc.swf.gz: truncated or corrupt gzip data (unexpected end of file after line " \
  -- run "$tmp/trunc.swf.gz.yaml" -o OUT
bad swf-truncated-gzip-header "trunc-header.swf.gz: truncated or corrupt gzip data (unexpected end of file, before the first line)" \
  -- run "$tmp/trunc-header.swf.gz.yaml" -o OUT
bad swf-corrupt-gzip "corrupt.swf.gz: truncated or corrupt gzip data (invalid block type" -- run "$tmp/corrupt.swf.gz.yaml" -o OUT
trace neg.swf "$swf_ok"'2 -5 0 100 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n'
bad swf-negative-submit 'neg.swf:2:3: submit time (field 2): expected a time >= 0 (or -1 for unknown), got "-5"' \
  -- run "$tmp/neg.swf.yaml" -o OUT
trace alpha.swf "$swf_ok"'2 5 0 1x0 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n'
bad swf-non-numeric 'alpha.swf:2:7: run time (field 4): expected an integer, got "1x0"' -- run "$tmp/alpha.swf.yaml" -o OUT
trace frac.swf "$swf_ok"'2 5 0 10 8.5 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n'
bad swf-fraction-in-integer 'frac.swf:2:10: allocated processors (field 5): expected an integer, got "8.5"' \
  -- run "$tmp/frac.swf.yaml" -o OUT
trace short.swf "$swf_ok"'2 5 0 10 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1\n'
bad swf-too-few-fields 'short.swf:2:43: expected 18 whitespace-separated fields, got 17' -- run "$tmp/short.swf.yaml" -o OUT
trace long.swf "$swf_ok"'2 5 0 10 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1 7\n'
bad swf-too-many-fields 'long.swf:2:47: expected 18 whitespace-separated fields, got 19' -- run "$tmp/long.swf.yaml" -o OUT
trace overflow.swf "$swf_ok"'99999999999999999999 5 0 10 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n'
bad swf-integer-overflow 'overflow.swf:2:1: job id (field 1): number out of range, got "99999999999999999999"' \
  -- run "$tmp/overflow.swf.yaml" -o OUT
trace hugetime.swf "$swf_ok"'2 5 0 99999999999999 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n'
bad swf-huge-time 'hugetime.swf:2:7: run time (field 4): time out of range (at most 1000000000000 s)' \
  -- run "$tmp/hugetime.swf.yaml" -o OUT
trace hugeprocs.swf "$swf_ok"'2 5 0 10 9999999999999 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n'
bad swf-too-many-processors 'hugeprocs.swf:2:10: allocated processors (field 5): too many processors' \
  -- run "$tmp/hugeprocs.swf.yaml" -o OUT
trace empty.swf ''
bad swf-empty-file 'empty.swf: no jobs in trace' -- run "$tmp/empty.swf.yaml" -o OUT
trace comments.swf '; Version: 2.2\n; MaxProcs: 8\n\n'
bad swf-only-comments 'comments.swf: no jobs in trace' -- run "$tmp/comments.swf.yaml" -o OUT
trace skipped.swf '1 0 0 -1 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n2 5 0 -1 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n'
bad swf-every-job-skipped 'skipped.swf: no jobs in trace (all 2 rows skipped; line 1: run time unknown (-1), job skipped)' \
  -- run "$tmp/skipped.swf.yaml" -o OUT

# --- CSV traces -----------------------------------------------------------------------------------
trace nocol.csv 'id,tenant,queue,submit,gpus\n1,a,q,0,1\n'
bad csv-missing-column 'nocol.csv:1: header: missing required column "runtime"' -- run "$tmp/nocol.csv.yaml" -o OUT
trace unkcol.csv 'id,tenant,queue,submit,gpus,runtime,gpu\n1,a,q,0,1,5,1\n'
bad csv-unknown-column 'unkcol.csv:1:37: column 7: unknown column "gpu"; did you mean "gpus"?' \
  -- run "$tmp/unkcol.csv.yaml" -o OUT
trace dupcol.csv 'id,tenant,queue,submit,gpus,runtime,id\n1,a,q,0,1,5,1\n'
bad csv-duplicate-column 'dupcol.csv:1:37: column 7: column "id" appears twice (also column 1)' \
  -- run "$tmp/dupcol.csv.yaml" -o OUT
trace badnum.csv "$csv_head"'1,a,q,0,x1,5\n'
bad csv-bad-number 'badnum.csv:2:9: gpus (column 5): expected an integer, got "x1"' -- run "$tmp/badnum.csv.yaml" -o OUT
# compare: a trace that does not read is one input error (exit 2), said once, not a failed column
# per policy.
bad compare-bad-trace 'badnum.csv:2:9: gpus (column 5): expected an integer, got "x1"' \
  -- compare "$tmp/badnum.csv.yaml" --policies fifo,sjf -o OUT
n=$("$bin" compare "$tmp/badnum.csv.yaml" --policies fifo,sjf 2>&1 | grep -c 'badnum.csv:2:9') || true
[ "$n" = 1 ] || { echo "FAIL compare-bad-trace-once: the error was said $n times"; fail=$((fail + 1)); }
trace negsub.csv "$csv_head"'1,a,q,-3,1,5\n'
bad csv-negative-submit 'negsub.csv:2:7: submit (column 4): expected a non-negative number of seconds, got "-3"' \
  -- run "$tmp/negsub.csv.yaml" -o OUT
trace exp.csv "$csv_head"'1,a,q,1e99,1,5\n'
bad csv-exponent-time 'exp.csv:2:7: submit (column 4): expected a number of seconds, got "1e99"' \
  -- run "$tmp/exp.csv.yaml" -o OUT
trace hugecsv.csv "$csv_head"'1,a,q,99999999999999,1,5\n'
bad csv-huge-time 'hugecsv.csv:2:7: submit (column 4): time out of range' -- run "$tmp/hugecsv.csv.yaml" -o OUT
trace unclosed.csv "$csv_head"'1,"a,q,0,1,5\n2,b,q,0,1,5\n'
bad csv-unterminated-quote 'unclosed.csv:2: quoted cell not closed before the end of the file' \
  -- run "$tmp/unclosed.csv.yaml" -o OUT
trace stray.csv "$csv_head"'1,a"b,q,0,1,5\n'
bad csv-stray-quote 'stray.csv:2:4: column 2: quote inside an unquoted cell' -- run "$tmp/stray.csv.yaml" -o OUT
trace cells.csv "$csv_head"'1,a,q,0,1,5,7\n'
bad csv-wrong-cell-count 'cells.csv:2:13: expected 6 cells as in the header, got 7' -- run "$tmp/cells.csv.yaml" -o OUT
trace emptycell.csv "$csv_head"'1,,q,0,1,5\n'
bad csv-empty-required 'emptycell.csv:2:3: tenant (column 2): empty value in a required column' \
  -- run "$tmp/emptycell.csv.yaml" -o OUT
trace headonly.csv "$csv_head"
bad csv-header-only 'headonly.csv: no jobs in trace' -- run "$tmp/headonly.csv.yaml" -o OUT
trace empty.csv ''
bad csv-empty-file 'empty.csv: no header row (the file is empty)' -- run "$tmp/empty.csv.yaml" -o OUT
trace bigid.csv "$csv_head"'9223372036854775808,a,q,0,1,5\n'
bad csv-id-overflow 'bigid.csv:2:1: id (column 1): number out of range, got "9223372036854775808"' \
  -- run "$tmp/bigid.csv.yaml" -o OUT
trace biggpus.csv "$csv_head"'1,a,q,0,99999999999,5\n'
bad csv-gpus-overflow 'biggpus.csv:2:9: gpus (column 5): expected an integer >= 0, got "99999999999"' \
  -- run "$tmp/biggpus.csv.yaml" -o OUT
trace kind.csv 'id,tenant,queue,submit,gpus,runtime,kind\n1,a,q,0,1,5,trian\n'
bad csv-bad-kind 'kind.csv:2:13: kind (column 7): expected one of train, inference, interactive, batch, got "trian"; did you mean "train"?' \
  -- run "$tmp/kind.csv.yaml" -o OUT
trace order.csv 'id,tenant,queue,submit,gpus,runtime,trace_start,trace_end\n1,a,q,0,1,5,10,5\n'
bad csv-end-before-start 'order.csv:2:16: trace_end (column 8): trace_end "5" is before trace_start' \
  -- run "$tmp/order.csv.yaml" -o OUT
trace latin1.csv "$csv_head"'1,caf\xe9,q,0,1,5\n'
bad csv-non-utf8-name 'latin1.csv:2:3: tenant (column 2): not UTF-8 text' -- run "$tmp/latin1.csv.yaml" -o OUT

# --- one rule in every importer: negative durations, clock fields out of range, non-UTF-8 names and
# duplicate ids are errors at file:line:column (or counted skips under --skip-bad-rows) -----------
# fmt NAME FORMAT CONTENT: a trace NAME in FORMAT and its scenario NAME.yaml.
fmt() { printf '%b' "$3" >"$tmp/$1"; scen "$1" "$1" '' "  format: $2"; }
trace negrun.swf "$swf_ok"'2 5 0 -5 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n'
bad swf-negative-run-time 'negrun.swf:2:7: run time (field 4): expected a time >= 0 (or -1 for unknown), got "-5"' \
  -- run "$tmp/negrun.swf.yaml" -o OUT
trace negwait.swf "$swf_ok"'2 5 -7 10 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n'
bad swf-negative-wait 'negwait.swf:2:5: wait time (field 3): expected a time >= 0 (or -1 for unknown), got "-7"' \
  -- run "$tmp/negwait.swf.yaml" -o OUT
trace dupid.swf "$swf_ok"'2 5 0 10 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n 1 9 0 10 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n'
bad swf-duplicate-id 'dupid.swf:3:2: job id (field 1): duplicate job id 1 (first at line 1)' -- run "$tmp/dupid.swf.yaml" -o OUT
trace dupid.csv "$csv_head"'7,a,q,0,1,5\n8,a,q,0,1,5\n7,b,q,3,1,5\n'
bad csv-duplicate-id 'dupid.csv:4:1: id (column 1): duplicate job id 7 (first at line 2)' -- run "$tmp/dupid.csv.yaml" -o OUT
trace negrun.csv "$csv_head"'1,a,q,0,1,-5\n'
bad csv-negative-run-time 'negrun.csv:2:11: runtime (column 6): expected a non-negative number of seconds' \
  -- run "$tmp/negrun.csv.yaml" -o OUT
sacct_head='JobID|User|Account|Partition|Submit|Start|End|Elapsed|Timelimit|AllocTRES|State\n'
sacct_row() { printf '%s|alice|%s|gpu|2024-05-01T10:00:00|2024-05-01T10:00:30|2024-05-01T11:00:30|%s|02:00:00|cpu=8,gres/gpu=2|COMPLETED\n' "$@"; }
fmt elapsed.sacct sacct "$sacct_head$(sacct_row 1001 vision 25:99:99)\n"
bad sacct-elapsed-out-of-range 'elapsed.sacct:2:83: Elapsed (column 8): expected a Slurm duration like' \
  -- run "$tmp/elapsed.sacct.yaml" -o OUT
bad sacct-elapsed-out-of-range-message '(minutes and seconds 0-59, hours 0-23 after days), got "25:99:99"' \
  -- run "$tmp/elapsed.sacct.yaml" -o OUT
fmt hours.sacct sacct "$sacct_head$(sacct_row 1001 vision 1-24:00:00)\n"
bad sacct-hours-after-days 'hours.sacct:2:83: Elapsed (column 8): expected a Slurm duration' -- run "$tmp/hours.sacct.yaml" -o OUT
fmt negel.sacct sacct "$sacct_head$(sacct_row 1001 vision -01:00:00)\n"
bad sacct-negative-elapsed 'negel.sacct:2:83: Elapsed (column 8): expected a Slurm duration' -- run "$tmp/negel.sacct.yaml" -o OUT
fmt latin1.sacct sacct "$sacct_head$(sacct_row 1001 'vis\xe9on' 01:00:00)\n"
bad sacct-non-utf8-account 'latin1.sacct:2:12: Account (column 3): not UTF-8 text: byte 0xe9' -- run "$tmp/latin1.sacct.yaml" -o OUT
fmt dup.sacct sacct "$sacct_head$(sacct_row 1001 vision 01:00:00)\n$(sacct_row 1002 vision 01:00:00)\n$(sacct_row 1001 nlp 01:00:00)\n"
bad sacct-duplicate-id 'dup.sacct:4:1: JobID (column 1): duplicate job id "1001" (first at line 2)' -- run "$tmp/dup.sacct.yaml" -o OUT
fmt endstart.sacct sacct "$sacct_head"'1001|alice|vision|gpu|2024-05-01T10:00:00|2024-05-01T10:00:30|2024-05-01T10:00:10|01:00:00|02:00:00|cpu=8,gres/gpu=2|COMPLETED\n'
bad sacct-end-before-start 'endstart.sacct:2:63: End (column 7): End is before Start' -- run "$tmp/endstart.sacct.yaml" -o OUT
helios_head='job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration\n'
fmt dup.helios helios "$helios_head"'11,u1,vc1,8,8,1,COMPLETED,2020-04-01 00:00:10,2020-04-01 00:01:10,2020-04-01 01:01:10,3600\n11,u2,vc1,8,8,1,COMPLETED,2020-04-01 00:00:20,2020-04-01 00:01:20,2020-04-01 01:01:20,3600\n'
bad helios-duplicate-id 'dup.helios:3:1: job_id (column 1): duplicate job id 11 (first at line 2)' -- run "$tmp/dup.helios.yaml" -o OUT
fmt utf.helios helios "$helios_head"'11,\xff,vc1,8,8,1,COMPLETED,2020-04-01 00:00:10,2020-04-01 00:01:10,2020-04-01 01:01:10,3600\n'
bad helios-non-utf8-user 'utf.helios:2:4: user (column 2): not UTF-8 text: byte 0xff' -- run "$tmp/utf.helios.yaml" -o OUT
fmt neg.helios helios "$helios_head"'11,u1,vc1,8,8,1,COMPLETED,2020-04-01 00:00:10,2020-04-01 00:01:10,2020-04-01 01:01:10,-60\n'
bad helios-negative-duration 'neg.helios:2:87: duration (column 11): expected a non-negative number of seconds, got "-60"' -- run "$tmp/neg.helios.yaml" -o OUT
fmt clock.helios helios "$helios_head"'11,u1,vc1,8,8,1,COMPLETED,2020-04-01 25:00:10,2020-04-01 00:01:10,2020-04-01 01:01:10,60\n'
bad helios-clock-out-of-range 'clock.helios:2:27: submit_time (column 8): expected a date and time like' -- run "$tmp/clock.helios.yaml" -o OUT
acme_head='job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration\n'
acme_row='1,a,1,8,16,Pretrain,COMPLETED,2023-06-01 00:00:00,2023-06-01 00:00:20,2023-06-01 06:00:20,21600\n'
fmt dup.acme acme "$acme_head$acme_row$acme_row"
bad acme-duplicate-id 'dup.acme:3:1: job_id (column 1): duplicate job id "1" (first at line 2)' -- run "$tmp/dup.acme.yaml" -o OUT
fmt utf.acme acme "$acme_head"'1,\xc3,1,8,16,Pretrain,COMPLETED,2023-06-01 00:00:00,2023-06-01 00:00:20,2023-06-01 06:00:20,21600\n'
bad acme-non-utf8-user 'utf.acme:2:3: user (column 2): not UTF-8 text: byte 0xc3' -- run "$tmp/utf.acme.yaml" -o OUT
fmt clock.acme acme "$acme_head"'1,a,1,8,16,Pretrain,COMPLETED,2023-06-01 00:00:00,2023-06-01 00:61:20,2023-06-01 06:00:20,21600\n'
bad acme-clock-out-of-range 'clock.acme:2:51: start_time (column 9): expected a date and time' -- run "$tmp/clock.acme.yaml" -o OUT
openb_head='name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n'
fmt dup.openb openb "$openb_head"'pod-1,1000,1024,1,1000,,LS,Running,0,100,0\npod-1,1000,1024,1,1000,,LS,Running,5,100,5\n'
bad openb-duplicate-name 'dup.openb:3:1: name (column 1): duplicate job id "pod-1" (first at line 2)' -- run "$tmp/dup.openb.yaml" -o OUT
fmt neg.openb openb "$openb_head"'pod-1,1000,1024,1,1000,,LS,Running,50,10,50\n'
bad openb-negative-duration 'neg.openb:2:39: deletion_time (column 10): deletion_time is before scheduled_time' -- run "$tmp/neg.openb.yaml" -o OUT
dlrm_head='instance_sn,role,app_name,cpu_request,cpu_limit,gpu_request,gpu_limit,rdma_request,rdma_limit,memory_request,memory_limit,disk_request,disk_limit,max_instance_per_node,creation_time,scheduled_time,deletion_time\n'
fmt dup.dlrm dlrm "$dlrm_head"'i_1,HN,app,12,12,1,1,25,25,120,120,640,800,8,0,0,100\ni_1,HN,app,12,12,1,1,25,25,120,120,640,800,8,0,0,100\n'
bad dlrm-duplicate-instance 'dup.dlrm:3:1: instance_sn (column 1): duplicate job id "i_1" (first at line 2)' -- run "$tmp/dup.dlrm.yaml" -o OUT
fmt utf.dlrm dlrm "$dlrm_head"'i_1,HN,\xe9,12,12,1,1,25,25,120,120,640,800,8,0,0,100\n'
bad dlrm-non-utf8-app 'utf.dlrm:2:8: app_name (column 3): not UTF-8 text: byte 0xe9' -- run "$tmp/utf.dlrm.yaml" -o OUT
mkdir -p "$tmp/pai"
printf 'j1,ps,1.0,Terminated,1010.0,4990.0,600.0,29.3,100,V100\n' >"$tmp/pai/pai_task_table.csv"
printf 'j1,i1,u1,Terminated,1000.0,5000.0\nj1,i2,u2,Terminated,1000.0,5000.0\n' >"$tmp/pai/pai_job_table.csv"
scen pai-dup pai/pai_job_table.csv '' '  format: pai'
bad pai-duplicate-job 'pai_job_table.csv:2:1: job_name (column 1): duplicate job id "j1" (first at line 1)' \
  -- run "$tmp/pai-dup.yaml" -o OUT
mkdir -p "$tmp/pai2"
printf 'j1,ps,1.0,Terminated,1010.0,990.0,600.0,29.3,100,V100\n' >"$tmp/pai2/pai_task_table.csv"
scen pai-neg pai2/pai_task_table.csv '' '  format: pai'
bad pai-end-before-start 'pai_task_table.csv:1:29: end_time (column 6): end_time is before start_time' -- run "$tmp/pai-neg.yaml" -o OUT
mkdir -p "$tmp/pai3"
printf 'j1,ps,1.0,Terminated,1010.0,4990.0,600.0,29.3,100,V100\n' >"$tmp/pai3/pai_task_table.csv"
printf 'j1,i1,\xe9,Terminated,1000.0,5000.0\n' >"$tmp/pai3/pai_job_table.csv"
scen pai-utf pai3/pai_job_table.csv '' '  format: pai'
bad pai-non-utf8-user 'pai_job_table.csv:1:7: user (column 3): not UTF-8 text: byte 0xe9' -- run "$tmp/pai-utf.yaml" -o OUT
kpod() { printf '{"metadata": {"name": "%s", "namespace": "a", "creationTimestamp": "2024-05-01T10:00:00Z"}, "spec": {}}' "$1"; }
trace dup.json '{"kind": "List", "items": [\n  '"$(kpod p1)"',\n  '"$(kpod p1)"']}\n'
bad kubectl-duplicate-pod 'dup.json:3:17: items[1].metadata.name: duplicate pod "a/p1" (first at items[0])' -- run "$tmp/dup.json.yaml" -o OUT
trace utf.json '{"kind": "List", "items": [\n  '"$(kpod 'p\xe9')"']}\n'
bad kubectl-non-utf8-name 'utf.json:2:' -- run "$tmp/utf.json.yaml" -o OUT
bad kubectl-non-utf8-name-message 'invalid JSON: syntax error while parsing value - invalid string: ill-formed UTF-8 byte' \
  -- run "$tmp/utf.json.yaml" -o OUT
pjob() { printf '{"status": "Pass", "vc": "v", "jobid": "%s", "user": "u", "submitted_time": "2017-10-07 01:11:39", "attempts": [{"start_time": "2017-10-07 01:12:09", "end_time": "%s", "detail": []}]}' "$1" "$2"; }
fmt dup.philly philly '[\n  '"$(pjob application_1_2 '2017-10-07 01:13:23')"',\n  '"$(pjob application_1_2 '2017-10-07 01:13:23')"'\n]\n'
bad philly-duplicate-id 'dup.philly:3:33: [1].jobid: duplicate job id "application_1_2" (first in job [0])' -- run "$tmp/dup.philly.yaml" -o OUT
fmt neg.philly philly '[\n  '"$(pjob application_1_2 '2017-10-07 01:10:00')"'\n]\n'
bad philly-end-before-start 'neg.philly:2:166: [0].attempts[0].end_time: before start_time' -- run "$tmp/neg.philly.yaml" -o OUT
fmt clock.philly philly '[\n  '"$(pjob application_1_2 '2017-10-07 01:13:61')"'\n]\n'
bad philly-clock-out-of-range 'clock.philly:2:166: [0].attempts[0].end_time: expected a time like "2017-10-07 01:12:09", got "2017-10-07 01:13:61"' -- run "$tmp/clock.philly.yaml" -o OUT

# --- JSON traces (kubectl pod lists, Philly): numbers out of range, errors with line and column ---
pod='{"metadata": {"name": "p", "namespace": "a", "creationTimestamp": "2024-05-01T10:00:00Z"}'
trace inf.json '{"kind": "List", "items": [\n  '"$pod"',\n   "spec": {"priority": 1e999, "containers": []}}]}\n'
bad kubectl-number-beyond-double 'inf.json:3:25: items[0].spec.priority: number out of range (beyond a double): 1e999' \
  -- run "$tmp/inf.json.yaml" -o OUT
trace ninf.json '{"kind": "List", "items": [\n  '"$pod"',\n   "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": -1e400}}}]}}]}\n'
bad kubectl-quantity-beyond-double 'ninf.json:3:76: items[0].spec.containers[0].resources.requests.cpu: number out of range (beyond a double): -1e400' \
  -- run "$tmp/ninf.json.yaml" -o OUT
trace ktype.json '{"kind": "List", "items": [\n  {"metadata": {"name": 7, "namespace": "a"}}]}\n'
bad kubectl-wrong-type-line-column 'ktype.json:2:17: items[0].metadata.name: expected a string' -- run "$tmp/ktype.json.yaml" -o OUT
trace ktime.json '{"kind": "List", "items": [\n  {"metadata": {"name": "p",\n    "creationTimestamp": "yesterday"}, "spec": {}}]}\n'
trace kspec.json '{"kind": "List", "items": [\n  {"metadata": {"name": "p", "creationTimestamp": "2024-05-01T10:00:00Z"}}]}\n'
bad kubectl-missing-field-at-its-object 'kspec.json:2:3: items[0].spec: missing: a pod has a spec' -- run "$tmp/kspec.json.yaml" -o OUT
bad kubectl-bad-time-line-column 'ktime.json:3:5: items[0].metadata.creationTimestamp: expected a time like' \
  -- run "$tmp/ktime.json.yaml" -o OUT
trace ksyntax.json '{"kind": "List", "items": [\n  {"metadata": }]}\n'
bad kubectl-syntax-error 'ksyntax.json:2:16: invalid JSON: syntax error while parsing value' -- run "$tmp/ksyntax.json.yaml" -o OUT
trace kbig.json '{"kind": "List", "items": [\n  '"$pod"',\n   "spec": {"priority": 99999999999999999999999}}]}\n'
bad kubectl-integer-beyond-int64 'kbig.json:3:' -- run "$tmp/kbig.json.yaml" -o OUT
philly_job='{"status": "Pass", "vc": "v", "jobid": "application_1_1", "user": "u", "submitted_time": "2017-10-07 01:11:39", "attempts": []}'
trace pinf.philly '[\n  {"status": "Pass", "vc": "v", "jobid": "application_1_1", "user": "u",\n   "submitted_time": 1e999}\n]\n'
scen pinf pinf.philly '' '  format: philly'
bad philly-number-beyond-double 'pinf.philly:3:22: [0].submitted_time: number out of range (beyond a double): 1e999' \
  -- run "$tmp/pinf.yaml" -o OUT
trace ptype.philly '[\n  '"$philly_job"',\n  {"status": "Pass", "vc": ["v"], "user": "u"}\n]\n'
scen ptype ptype.philly '' '  format: philly'
bad philly-wrong-type-line-column 'ptype.philly:3:22: [1].vc: expected a string' -- run "$tmp/ptype.yaml" -o OUT

# --- any trace ------------------------------------------------------------------------------------
tail -c +100 "$gz" | head -c 4096 | tr -d '\n;' >"$tmp/garbage.bin"  # binary, one line, the same every run
scen garbage.bin garbage.bin
bad trace-binary-garbage 'garbage.bin:1: could not detect the trace format' -- run "$tmp/garbage.bin.yaml" -o OUT
scen garbage-swf garbage.bin '' '  format: swf'
bad trace-binary-garbage-as-swf 'garbage.bin:1:' -- run "$tmp/garbage-swf.yaml" -o OUT
mkdir -p "$tmp/adir.swf"
scen tracedir adir.swf
bad trace-is-directory 'tracedir.yaml:13:10: workload.trace: cannot read trace file' -- run "$tmp/tracedir.yaml" -o OUT
scen notrace absent.swf
bad trace-missing 'notrace.yaml:13:10: workload.trace: trace file not found' -- run "$tmp/notrace.yaml" -o OUT

# --- scenario YAML --------------------------------------------------------------------------------
printf 'name: x\ncluster: [1, 2\n' >"$tmp/syntax.yaml"
bad yaml-syntax-error 'syntax.yaml:3:1: end of sequence flow not found' -- run "$tmp/syntax.yaml" -o OUT
scen tabs '' 's/^      nodes/\t  nodes/'
bad yaml-tab-indent 'tabs.yaml:6:1: illegal tab when looking for indentation (YAML indents with spaces' \
  -- run "$tmp/tabs.yaml" -o OUT
scen latin1 '' '' '# caf\xe9'
bad yaml-non-utf8 'latin1.yaml:14:6: not UTF-8 text: byte 0xe9 is not valid UTF-8' -- run "$tmp/latin1.yaml" -o OUT
printf '\x00\x01\x02\x03binary' >"$tmp/binary.yaml"
bad yaml-binary 'binary.yaml:1:1: not a text file: control character 0x00' -- run "$tmp/binary.yaml" -o OUT
: >"$tmp/empty.yaml"
bad yaml-empty-file 'empty.yaml:1:1: the scenario is empty' -- run "$tmp/empty.yaml" -o OUT
printf 'name: %s\n' "$(printf '[%.0s' $(seq 100000))" >"$tmp/deep.yaml"
bad yaml-100000-deep 'deep.yaml:1:' -- run "$tmp/deep.yaml" -o OUT
bad yaml-100000-deep-message 'lists and maps nested more than 256 levels deep; refusing it' -- validate "$tmp/deep.yaml"
awk 'BEGIN { print "name: x"; s = ""; for (i = 0; i < 3000; i++) { print s "a:"; s = s "  " } }' >"$tmp/deepmap.yaml"
bad yaml-deep-block-maps 'deepmap.yaml:258:513: lists and maps nested more than 256 levels deep; refusing it' -- run "$tmp/deepmap.yaml" -o OUT
printf '# nothing but a comment\n\n' >"$tmp/comment.yaml"
bad yaml-comment-only 'comment.yaml:1:1: the scenario is empty' -- run "$tmp/comment.yaml" -o OUT
scen twodocs '' '' '---\nname: second'
bad yaml-two-documents 'twodocs.yaml:14:1: a scenario file holds one YAML document; a second one starts here' \
  -- run "$tmp/twodocs.yaml" -o OUT
printf -- '- name: x\n- name: y\n' >"$tmp/list.yaml"
bad yaml-top-level-list 'list.yaml:1:1: expected a map with keys name, cluster, policy and workload at the top level, got a list' \
  -- run "$tmp/list.yaml" -o OUT
scen policy '' 's/name: fifo/name: fifx/'
bad unknown-policy 'policy.yaml:10:9: policy.name: unknown policy "fifx"; did you mean "fifo"?' -- run "$tmp/policy.yaml" -o OUT
scen param '' 's/  placement:/  placment:/'
bad unknown-policy-parameter 'param.yaml:11:13: policy.placment: unknown parameter "placment" for policy fifo; did you mean "placement"?' \
  -- run "$tmp/param.yaml" -o OUT
scen placement '' 's/placement: consolidate/placement: spread/'
bad bad-policy-parameter-value 'placement.yaml:11:14: policy.placement: unknown placement "spread"; expected: consolidate' \
  -- run "$tmp/placement.yaml" -o OUT
scen key1 '' '' 'horizn: 7d'
bad unknown-key-top 'key1.yaml:14:1: horizn: unknown key "horizn"; did you mean "horizon"?' -- run "$tmp/key1.yaml" -o OUT
scen key2 '' 's/^  pools:/  pool:/'
bad unknown-key-depth-2 'key2.yaml:4:3: cluster.pool: unknown key "pool"; did you mean "pools"?' -- run "$tmp/key2.yaml" -o OUT
scen key3 '' 's/^      nodes:/      node:/'
bad unknown-key-depth-3 'key3.yaml:6:7: cluster.pools[0].node: unknown key "node"; did you mean "nodes"?' \
  -- run "$tmp/key3.yaml" -o OUT
scen key4 '' '' '  window: {start: 0s, endd: 1d}'
bad unknown-key-depth-3-flow 'key4.yaml:14:23: workload.window.endd: unknown key "endd"; did you mean "end"?' \
  -- run "$tmp/key4.yaml" -o OUT
scen key5 '' '' 'output:\n  sample_intervl: 10m'
bad unknown-key-output 'key5.yaml:15:3: output.sample_intervl: unknown key "sample_intervl"; did you mean "sample_interval"?' \
  -- run "$tmp/key5.yaml" -o OUT
scen rt1 '' '' 'runtime:\n  reference_gpu: V10'
bad runtime-unknown-gpu 'rt1.yaml:15:18: runtime.reference_gpu: unknown GPU type "V10"' -- run "$tmp/rt1.yaml" -o OUT
scen rt2 '' '' 'runtime:\n  throughput: {cnn: {H100: 0}}'
bad runtime-non-positive 'rt2.yaml:15:28: runtime.throughput.cnn.H100: expected a number > 0 and < 1e+06, got "0"' \
  -- run "$tmp/rt2.yaml" -o OUT
scen rt3 '' '' 'runtime:\n  classes: [{kind: train, class: vit}]'
bad runtime-unknown-class 'rt3.yaml:15:34: runtime.classes[0].class: unknown job class "vit"' -- run "$tmp/rt3.yaml" -o OUT
scen type1 '' 's/nodes: 4/nodes: [1, 2]/'
bad wrong-type-list-for-int 'type1.yaml:6:14: cluster.pools[0].nodes: expected an integer >= 1, got a list' \
  -- run "$tmp/type1.yaml" -o OUT
scen type2 '' 's/^name: bad-input/name: {a: 1}/'
bad wrong-type-map-for-string 'type2.yaml:1:7: name: expected a string, got a map' -- run "$tmp/type2.yaml" -o OUT
scen type3 '' '' 'output:\n  events: maybe'
bad wrong-type-bool 'type3.yaml:15:11: output.events: expected true or false, got "maybe"' -- run "$tmp/type3.yaml" -o OUT
scen type4 '' 's/gpus_per_node: 8/gpus_per_node: 8.5/'
bad wrong-type-fraction 'type4.yaml:7:22: cluster.pools[0].gpus_per_node: expected an integer >= 0, got "8.5"' \
  -- run "$tmp/type4.yaml" -o OUT
scen negnodes '' 's/nodes: 4/nodes: -3/'
bad negative-nodes 'negnodes.yaml:6:14: cluster.pools[0].nodes: expected an integer >= 1, got "-3"' \
  -- run "$tmp/negnodes.yaml" -o OUT
scen hugenodes '' 's/nodes: 4/nodes: 99999999999999999999/'
bad huge-nodes 'hugenodes.yaml:6:14: cluster.pools[0].nodes: expected an integer >= 1 and <= 1000000' \
  -- run "$tmp/hugenodes.yaml" -o OUT
scen hugemem '' 's/gpu_type: H100/gpu_type: H100\n      memory_gib: 99999999999999999999/'
bad huge-memory 'hugemem.yaml:9:19: cluster.pools[0].memory_gib: expected an integer >= 0 and <= ' \
  -- run "$tmp/hugemem.yaml" -o OUT
printf 'name: x\ncluster:\n  pools: []\npolicy: fifo\nworkload:\n  trace: good.swf\n' >"$tmp/nopools.yaml"
bad zero-pools 'nopools.yaml:3:10: cluster.pools: expected at least one pool, got an empty list' \
  -- run "$tmp/nopools.yaml" -o OUT
printf 'name: x\ncluster:\n  pools:\npolicy: fifo\nworkload:\n  trace: good.swf\n' >"$tmp/nullpools.yaml"
bad null-pools 'nullpools.yaml:3:3: cluster.pools: expected a list, got nothing' -- run "$tmp/nullpools.yaml" -o OUT
scen duppool '' 's/      gpu_type: H100/      gpu_type: H100\n    - {name: p, nodes: 1, gpus_per_node: 8, gpu_type: A100}/'
bad duplicate-pool-names 'duppool.yaml:9:14: cluster.pools[1].name: duplicate pool name "p" (first used at line 5)' \
  -- run "$tmp/duppool.yaml" -o OUT
scen dupkey '' '' 'seed: 4'
bad duplicate-key 'dupkey.yaml:14:1: seed: duplicate key "seed" (first given at line 2)' -- run "$tmp/dupkey.yaml" -o OUT
scen noname '' '/^name:/d'
bad missing-required-key 'noname.yaml:1:1: name: missing required key "name"' -- run "$tmp/noname.yaml" -o OUT
scen dur1 '' '' 'horizon: 7x'
bad bad-duration 'dur1.yaml:14:10: horizon: expected a duration like 90s, 15m, 2h or 7d, got "7x"' -- run "$tmp/dur1.yaml" -o OUT
scen dur2 '' '' 'horizon: 0'
bad zero-duration 'dur2.yaml:14:10: horizon: expected a duration > 0, got "0"' -- run "$tmp/dur2.yaml" -o OUT
scen dur3 '' '' 'horizon: 99999999999999999999d'
bad huge-duration 'dur3.yaml:14:10: horizon: expected a duration' -- run "$tmp/dur3.yaml" -o OUT
scen dur4 '' '' '  window: {start: -1d, end: 1d}'
bad negative-duration 'dur4.yaml:14:19: workload.window.start: expected a duration' -- run "$tmp/dur4.yaml" -o OUT
scen tl1 '' '' '  time_limits: enforced'
bad time-limits-mode 'tl1.yaml:14:16: workload.time_limits: expected auto, enforce or as_recorded, got "enforced"; did you mean "enforce"?' \
  -- run "$tmp/tl1.yaml" -o OUT
scen win1 '' '' '  window: {start: 2d, end: 1d}'
bad window-end-before-start 'win1.yaml:14:28: workload.window.end: expected a duration after the window start (2d), got "1d"' \
  -- run "$tmp/win1.yaml" -o OUT
scen win2 '' '' '  window: {start: 1d, end: 1d}'
bad window-end-equals-start 'win2.yaml:14:28: workload.window.end: expected a duration after the window start (1d), got "1d"' \
  -- run "$tmp/win2.yaml" -o OUT
scen scale1 '' '' '  arrival_scale: 0'
bad arrival-scale-zero 'scale1.yaml:14:18: workload.arrival_scale: expected a number > 0 and < 1000, got "0"' \
  -- run "$tmp/scale1.yaml" -o OUT
scen scale2 '' '' '  arrival_scale: -2'
bad arrival-scale-negative 'scale2.yaml:14:18: workload.arrival_scale: expected a number > 0 and < 1000, got "-2"' \
  -- run "$tmp/scale2.yaml" -o OUT
scen scale3 '' '' '  arrival_scale: .nan'
bad arrival-scale-nan 'scale3.yaml:14:18: workload.arrival_scale: expected a number > 0 and < 1000, got ".nan"' \
  -- run "$tmp/scale3.yaml" -o OUT
scen upg '' '' '  units_per_gpu: 0'
bad units-per-gpu-zero 'upg.yaml:14:18: workload.units_per_gpu: expected an integer >= 1, got "0"' -- run "$tmp/upg.yaml" -o OUT
scen fmt '' '' '  format: sfw'
bad unknown-format 'fmt.yaml:14:11: workload.format: expected one of auto, swf, csv, ' \
  -- run "$tmp/fmt.yaml" -o OUT
scen seed '' 's/^seed: 3/seed: -1/'
bad negative-seed 'seed.yaml:2:7: seed: expected a non-negative integer, got "-1"' -- run "$tmp/seed.yaml" -o OUT
scen many '' 's/nodes: 4/nodes: -3/; s/name: fifo/name: fifx/' 'horizn: 7d'
bad validate-reports-every-problem 'many.yaml:14:1: horizn: unknown key' -- validate "$tmp/many.yaml"
bad validate-reports-every-problem-2 'many.yaml:6:14: cluster.pools[0].nodes: expected an integer >= 1' -- validate "$tmp/many.yaml"
# An acceptance target (compare's scorecard) that names no KPI: validate and compare both say where.
scen badtarget good.swf "" 'targets:\n  - "p95_wait <= 1h"\n  - "p95_wiat <= 1h"'
bad target-unknown-kpi 'badtarget.yaml:16:5: targets: "p95_wiat <= 1h": unknown KPI "p95_wiat"' -- validate "$tmp/badtarget.yaml"
bad target-unknown-kpi-compare 'badtarget.yaml:16:5: targets: "p95_wiat <= 1h": unknown KPI' -- compare "$tmp/badtarget.yaml" --policies fifo -o OUT
bad scenario-missing 'absent.yaml: cannot read scenario file: No such file or directory' -- run "$tmp/absent.yaml" -o OUT
bad scenario-is-directory 'adir.swf: cannot read scenario file (a directory)' -- run "$tmp/adir.swf" -o OUT
# A device (or an endless pipe) named as the scenario: refused at 16 MiB, at once.
if [ -e /dev/zero ]; then
  bad scenario-is-a-device '/dev/zero:1: more than 16 MiB, far more than a scenario file ever holds' -- run /dev/zero -o OUT
  bad validate-a-device '/dev/zero:1: more than 16 MiB' -- validate /dev/zero
fi

# --- command line ---------------------------------------------------------------------------------
bad unknown-flag 'error: The following argument was not expected: --frobnicate' \
  -- run "$tmp/good.yaml" -o OUT --frobnicate
bad no-subcommand 'error: A subcommand is required' --
bad seed-not-a-number 'error: --seed: expected an integer in 0..18446744073709551615, got "abc"' \
  -- run "$tmp/good.yaml" -o OUT --seed abc
bad seed-negative 'error: --seed: expected an integer in 0..18446744073709551615, got "-1"' \
  -- run "$tmp/good.yaml" -o OUT --seed -1
bad threads-negative 'error: --threads: expected a number of threads in 0..65536 (0 = all cores), got "-1"' \
  -- run "$tmp/good.yaml" -o OUT --threads -1
bad threads-global-negative 'error: --threads: expected a number of threads' -- --threads -2 run "$tmp/good.yaml" -o OUT
bad output-directory-missing 'no/such/dir/x.h5: -o: output directory does not exist' -- run "$tmp/good.yaml" -o "$out/no/such/dir/x.h5"
mkdir -p "$out/isdir.h5"
cases=$((cases + 1))
msg="$("$bin" run "$tmp/good.yaml" -o "$out/isdir.h5" 2>&1)"; code=$?
if [ "$code" -eq 2 ] && grep -qF 'isdir.h5: -o: output path is a directory' <<<"$msg" &&
  [ -z "$(ls -A "$out/isdir.h5")" ] && ! compgen -G "$out/isdir.h5.tmp*" >/dev/null; then
  pass=$((pass + 1))
else
  echo "FAIL output-path-is-directory: exit $code"; echo "$msg" | head -5; fail=$((fail + 1))
fi

# --- every name a policy block refers to resolves; every size has a limit -------------------------
# pol NAME POLICY_LINES: a scenario with pools p (4 nodes) and q (2 nodes) and this `policy:` block.
pol() {
  printf 'name: refs\nseed: 1\ncluster:\n  pools:\n    - {name: p, nodes: 4, gpus_per_node: 8, gpu_type: H100}\n' >"$tmp/$1.yaml"
  printf '    - {name: q, nodes: 2, gpus_per_node: 8, gpu_type: A100}\npolicy:\n%b\nworkload:\n  trace: good.swf\n' \
    "$2" >>"$tmp/$1.yaml"
}
pol slurm-part '  name: slurm\n  partitions:\n    gpu: {Nodes: [p, nosuch]}'
bad slurm-partition-unknown-pool 'slurm-part.yaml:10:18: policy.partitions.gpu.Nodes: no pool named "nosuch" (pools: p, q)' \
  -- run "$tmp/slurm-part.yaml" -o OUT
pol slurm-part2 '  name: slurm\n  partitions:\n    gpu: {Nodes: pp, Default: YES}'
bad slurm-partition-pool-typo 'slurm-part2.yaml:10:18: policy.partitions.gpu.Nodes: no pool named "pp" (pools: p, q); did you mean "p"?' \
  -- validate "$tmp/slurm-part2.yaml"
pol slurm-cycle '  name: slurm\n  topology:\n    a: {Switches: "b"}\n    b: {Switches: "c"}\n    c: {Switches: "a"}'
bad slurm-topology-cycle 'policy.topology.c.Switches: the switches form a cycle: a -> b -> c -> a' -- run "$tmp/slurm-cycle.yaml" -o OUT
pol slurm-self '  name: slurm\n  topology:\n    a: {Switches: "a"}'
bad slurm-topology-self-loop 'slurm-self.yaml:10:19: policy.topology.a.Switches: the switches form a cycle: a -> a' \
  -- validate "$tmp/slurm-self.yaml"
pol slurm-sw '  name: slurm\n  topology:\n    leaf0: {Nodes: "p[0-3]"}\n    spine: {Switches: "leaf0,leaf1"}'
bad slurm-topology-unknown-switch 'slurm-sw.yaml:11:23: policy.topology.spine.Switches: Switches names no switch "leaf1"; did you mean "leaf0"?' \
  -- validate "$tmp/slurm-sw.yaml"
pol slurm-range '  name: slurm\n  topology:\n    leaf0: {Nodes: "p[0-99]"}'
bad slurm-topology-range-beyond-pool 'slurm-range.yaml:10:20: policy.topology.leaf0.Nodes: no node named "p99" (pool "p" has nodes p0 to p3)' \
  -- run "$tmp/slurm-range.yaml" -o OUT
pol slurm-huge-range '  name: slurm\n  topology:\n    leaf0: {Nodes: "p[0-999999999999]"}'
bad slurm-topology-huge-range 'policy.topology.leaf0.Nodes: no node named "p999999999999" (pool "p" has nodes p0 to p3)' \
  -- validate "$tmp/slurm-huge-range.yaml"
pol slurm-node-pool '  name: slurm\n  topology:\n    leaf0: {Nodes: "x[0-1],p[0-3]"}'
bad slurm-topology-unknown-node-pool 'policy.topology.leaf0.Nodes: node "x[0-1]": no pool named "x" (pools: p, q)' \
  -- validate "$tmp/slurm-node-pool.yaml"
pol slurm-qos '  name: slurm\n  qos:\n    high: {Priority: 10, Preempt: [low, nosuch]}\n    low: {Priority: 0}'
bad slurm-qos-preempt-unknown 'slurm-qos.yaml:10:35: policy.qos.high.Preempt: Preempt names no QOS "nosuch" (QOS: high, low, normal)' \
  -- run "$tmp/slurm-qos.yaml" -o OUT
pol slurm-nodes '  name: slurm\n  nodes:\n    h100: {Weight: 10}'
bad slurm-nodes-block-unknown-pool 'slurm-nodes.yaml:10:20: policy.nodes.h100.Weight: no pool named "h100" (pools: p, q)' \
  -- run "$tmp/slurm-nodes.yaml" -o OUT
pol kueue-flavor '  name: kueue\n  resourceFlavors:\n    f: {pools: [p, nosuch]}\n  clusterQueues:\n    all:\n      namespaces: ["*"]\n      resources:\n        f: {gpu: {nominalQuota: 8}}'
bad kueue-flavor-unknown-pool 'kueue-flavor.yaml:10:16: policy.resourceFlavors.f.pools: no pool named "nosuch" (pools: p, q)' \
  -- run "$tmp/kueue-flavor.yaml" -o OUT
scen node-selectors good.swf '/^  trace:/a\  node_selectors: {q1: [p, nosuch]}'
bad node-selectors-unknown-pool 'node-selectors.yaml:14:28: workload.node_selectors.q1[1]: no pool named "nosuch"' \
  -- run "$tmp/node-selectors.yaml" -o OUT
scen node-selectors-empty good.swf '/^  trace:/a\  node_selectors: {q1: []}'
bad node-selectors-empty-list 'workload.node_selectors.q1: expected at least one pool, got an empty list' \
  -- validate "$tmp/node-selectors-empty.yaml"
printf 'policies:\n  slurm:\n    partitions:\n      gpu: {Nodes: nosuch}\n' >"$tmp/override.txt"
scen override && cat "$tmp/override.txt" >>"$tmp/override.yaml"
bad policies-override-unknown-pool 'override.yaml:17:20: policy.partitions.gpu.Nodes: no pool named "nosuch" (pools: p)' \
  -- validate "$tmp/override.yaml"
scen gpn-max '' 's/gpus_per_node: 8/gpus_per_node: 2147483647/'
bad gpus-per-node-int-max 'gpn-max.yaml:7:22: cluster.pools[0].gpus_per_node: expected an integer >= 0 and <= 1024, got "2147483647"' \
  -- run "$tmp/gpn-max.yaml" -o OUT
scen gpn-big '' 's/gpus_per_node: 8/gpus_per_node: 1025/'
bad gpus-per-node-over-limit 'gpn-big.yaml:7:22: cluster.pools[0].gpus_per_node: expected an integer >= 0 and <= 1024' \
  -- validate "$tmp/gpn-big.yaml"
scen nodes-300m '' 's/nodes: 4/nodes: 300000000/'
bad nodes-hundreds-of-millions 'nodes-300m.yaml:6:14: cluster.pools[0].nodes: expected an integer >= 1 and <= 1000000, got "300000000"' \
  -- run "$tmp/nodes-300m.yaml" -o OUT
scen nodes-sum '' 's/nodes: 4/nodes: 600000/; s/      gpu_type: H100/      gpu_type: H100\n    - {name: q, nodes: 600000, gpus_per_node: 8, gpu_type: A100}/'
bad nodes-total-over-limit 'nodes-sum.yaml:9:24: cluster.pools[1].nodes: the cluster has more than 1000000 nodes with this pool' \
  -- validate "$tmp/nodes-sum.yaml"
scen weight-huge '' '' 'tenants:\n  - {name: a, weight: 1e308}'
bad tenant-weight-huge 'weight-huge.yaml:15:23: tenants[0].weight: expected a number > 0 and < 1e+06, got "1e308"' \
  -- run "$tmp/weight-huge.yaml" -o OUT
scen gpus-huge '' '' 'tenants:\n  - {name: a, gpus: 99999999999999}'
bad tenant-gpus-huge 'gpus-huge.yaml:15:21: tenants[0].gpus: expected an integer >= 0 and <= 1099511627776' \
  -- run "$tmp/gpus-huge.yaml" -o OUT
scen cpus-big '' 's/gpu_type: H100/gpu_type: H100\n      cpus_per_node: 2000000000/'
bad cpus-per-node-over-limit 'cpus-big.yaml:9:22: cluster.pools[0].cpus_per_node: expected an integer >= 0 and <= 1000000' \
  -- validate "$tmp/cpus-big.yaml"

# --- sweeps and plans: seeds, targets and keys mean what they say -----------------------------------
scen vseed2 '' '' 'variants:\n  seed: [1, 2]\nseeds: 3'
bad sweep-seed-variants-and-seeds 'vseed2.yaml:15:3: variants.seed: the seeds are given twice, here and under `seeds:` (line 16); keep one' \
  -- sweep "$tmp/vseed2.yaml" -o OUT
scen vseed3 '' '' 'variants:\n  seed: [1, x]'
bad sweep-seed-variant-not-a-number 'vseed3.yaml:15:13: variants.seed: expected a non-negative integer seed, got "x"' \
  -- sweep "$tmp/vseed3.yaml" -o OUT
bad plan-target-nan 'error: --target "utilization >= nan": expected a finite number, got "nan"' \
  -- plan "$tmp/good.yaml" --vary cluster.pools.p.nodes --range 1:8 --target "utilization >= nan"
bad plan-target-inf 'error: --target "cost <= inf": expected a finite number, got "inf"' \
  -- plan "$tmp/good.yaml" --vary cluster.pools.p.nodes --range 1:8 --target "cost <= inf"
bad plan-target-ratio-over-one 'expected a ratio from 0 to 1 (or 0% to 100%), got "150%"' \
  -- plan "$tmp/good.yaml" --vary cluster.pools.p.nodes --range 1:8 --target "utilization >= 150%"
bad plan-vary-name 'error: --vary: "name" is not a numeric key (it takes any text)' \
  -- plan "$tmp/good.yaml" --vary name --range 1:8 --target "p95_wait <= 1h"
bad plan-vary-gpu-type 'error: --vary: "cluster.pools.p.gpu_type" is not a numeric key' \
  -- plan "$tmp/good.yaml" --vary cluster.pools.p.gpu_type --range 1:8 --target "p95_wait <= 1h"

# --- outputs: never an input, never empty, in a writable folder (checked before any work) ----------
"$bin" run "$tmp/good.yaml" -o "$tmp/good.h5" >/dev/null || { echo "FAIL: the base run failed"; exit 1; }
cp "$tmp/good.yaml" "$tmp/sweep.yaml" && printf 'variants:\n  policy: [fifo, sjf]\n' >>"$tmp/sweep.yaml"
ln -s good.yaml "$tmp/link.h5"
ln "$tmp/good.yaml" "$tmp/hard.h5"
mkdir -p "$tmp/kept" && cp "$tmp/good.swf" "$tmp/kept/run-1.h5" && scen kept kept/run-1.h5
printf 'variants:\n  policy: [fifo, sjf]\n' >>"$tmp/kept.yaml"
into='an input of this command; writing it would destroy the input'
bad output-is-scenario "good.yaml: -o: output path is the scenario $tmp/good.yaml, $into" \
  -- run "$tmp/good.yaml" -o "$tmp/good.yaml"
bad output-is-trace "good.swf: -o: output path is the trace $tmp/good.swf, $into" -- run "$tmp/good.yaml" -o "$tmp/good.swf"
bad output-resolves-to-scenario "out/../good.yaml: -o: output path is the scenario" \
  -- run "$tmp/good.yaml" -o "$out/../good.yaml"
bad output-symlink-to-scenario "link.h5: -o: output path is the scenario" -- run "$tmp/good.yaml" -o "$tmp/link.h5"
bad output-hard-link-to-scenario "hard.h5: -o: output path is the scenario" -- run "$tmp/good.yaml" -o "$tmp/hard.h5"
bad output-empty "error: --output: expected a file name, got an empty path" -- run "$tmp/good.yaml" -o ''
bad output-folder-not-writable "/proc/x.h5: -o: output directory /proc is not writable" \
  -- run "$tmp/good.yaml" -o /proc/x.h5
bad output-json-run-is-trace "good.swf: -o: output path is the trace" -- run "$tmp/good.yaml" --json -o "$tmp/good.swf"
bad merge-output-is-input "good.h5: -o: output path is the shard table $tmp/good.h5, $into" \
  -- merge "$tmp/good.h5" -o "$tmp/good.h5"
bad merge-csv-is-input "good.h5: --csv: output path is the shard table" -- merge "$tmp/good.h5" --csv "$tmp/good.h5"
bad merge-two-outputs-one-file "both.out: --csv: output path is also the output of -o; give two different files" \
  -- merge "$tmp/good.h5" -o "$out/both.out" --csv "$out/both.out"
bad merge-csv-empty "error: --csv: expected a file name, got an empty path" -- merge "$tmp/good.h5" --csv ''
bad report-output-is-input "good.h5: -o: output path is the result $tmp/good.h5, $into" \
  -- report "$tmp/good.h5" -o "$tmp/good.h5"
bad report-output-is-second-input "good.yaml: -o: output path is the result" \
  -- report "$tmp/good.h5" "$tmp/good.yaml" -o "$tmp/good.yaml"
bad report-output-empty "error: --output: expected a file name, got an empty path" -- report "$tmp/good.h5" -o ''
bad sweep-output-is-scenario "sweep.yaml: -o: output path is the scenario" -- sweep "$tmp/sweep.yaml" -o "$tmp/sweep.yaml"
bad sweep-csv-is-trace "good.swf: --csv: output path is the trace" -- sweep "$tmp/sweep.yaml" --csv "$tmp/good.swf"
bad sweep-keep-runs-holds-input "kept: --keep-runs: would write $tmp/kept/run-1.h5, which is the trace" \
  -- sweep "$tmp/kept.yaml" --keep-runs "$tmp/kept" -o OUT
bad sweep-keep-runs-empty "error: --keep-runs: expected a file name, got an empty path" \
  -- sweep "$tmp/sweep.yaml" --keep-runs '' -o OUT
bad sweep-output-not-writable "/proc/s.h5: -o: output directory /proc is not writable" \
  -- sweep "$tmp/sweep.yaml" -o /proc/s.h5
bad compare-output-is-scenario "good.yaml: -o: output path is the scenario" \
  -- compare "$tmp/good.yaml" --policies fifo,sjf -o "$tmp/good.yaml"
bad calibrate-output-is-scenario "good.yaml: -o: output path is the scenario" \
  -- calibrate "$tmp/good.yaml" --fit 0:1d --test 1d:2d -o "$tmp/good.yaml"
bad calibrate-output-is-trace "good.swf: -o: output path is the trace" \
  -- calibrate "$tmp/good.yaml" --fit 0:1d --test 1d:2d -o "$tmp/good.swf"
bad compare-output-is-second-trace "good.swf: -o: output path is the trace" \
  -- compare "$tmp/good.yaml" "$tmp/kept.yaml" --policies fifo -o "$tmp/good.swf"
bad compare-keep-runs-not-writable "/proc/kept: --keep-runs: folder /proc is not writable" \
  -- compare "$tmp/good.yaml" --policies fifo --keep-runs /proc/kept
bad import-cluster-output-is-input "good.swf: -o: output path is the node list" \
  -- import-cluster "$tmp/good.swf" -o "$tmp/good.swf"
bad synth-output-not-writable "/proc/s.csv: -o: output directory /proc is not writable" -- synth --jobs 5 -o /proc/s.csv
bad fgd-csv-is-input "good.swf: --csv: output path is the node list" \
  -- fgd --nodes "$tmp/good.swf" --pods "$tmp/good.yaml" --csv "$tmp/good.swf"
if [ "$(id -u)" -ne 0 ]; then  # root writes anywhere
  mkdir -p "$tmp/ro" && chmod 555 "$tmp/ro"
  bad output-folder-read-only "ro/x.h5: -o: output directory $tmp/ro is not writable" -- run "$tmp/good.yaml" -o "$tmp/ro/x.h5"
fi

# --- not an error: under --skip-bad-rows a duplicate id is a counted skip, in every format -----------
for t in dupid.swf:2 dupid.csv:2 dup.sacct:2 dup.helios:1 dup.acme:1 dup.openb:1 dup.dlrm:1; do
  f="${t%%:*}"; jobs="${t##*:}"; cases=$((cases + 1))
  got="$("$bin" run "$tmp/$f.yaml" --skip-bad-rows --json 2>&1)"; code=$?
  if [ "$code" -eq 0 ] && grep -qF "\"jobs\": $jobs," <<<"$got" && grep -qF ": 1 malformed row(s) skipped" <<<"$got" &&
    grep -qF "duplicate job id" <<<"$got"; then
    pass=$((pass + 1))
  else
    echo "FAIL skip-bad-rows-duplicate-$f: exit $code"; echo "$got" | head -5; fail=$((fail + 1))
  fi
done

# --- not an error: `variants: {seed: [...]}` runs each seed (issue #20) ------------------------------
scen vseed '' '' 'variants:\n  seed: [4, 9]'
got="$("$bin" sweep "$tmp/vseed.yaml" --csv "$out/vseed.csv" 2>&1)"; code=$?
if [ "$code" -eq 0 ] && [ "$(cut -d, -f1-2 "$out/vseed.csv" 2>/dev/null | tr '\n' ' ')" = "run,seed 0,4 1,9 " ]; then
  pass=$((pass + 1))
else
  echo "FAIL sweep-seed-variants-run-each-seed: exit $code"; echo "$got" | head -5; head -3 "$out/vseed.csv"
  fail=$((fail + 1))
fi

# --- not an error: a job larger than the cluster is rejected with a reason, never dropped ----------
printf '%b' "$csv_head"'1,a,q,0,64,5\n2,a,q,0,1,5\n' >"$tmp/toobig.csv"
scen toobig toobig.csv
got="$("$bin" run "$tmp/toobig.yaml" -o "$tmp/toobig.h5" --json 2>&1)"; code=$?
if [ "$code" -eq 0 ] && grep -qF '"jobs": 2' <<<"$got" && grep -qF '"rejected": 1' <<<"$got" &&
  grep -qF '"completed": 1' <<<"$got"; then
  pass=$((pass + 1))
else
  echo "FAIL job-larger-than-cluster: exit $code"; echo "$got" | head -10; fail=$((fail + 1))
fi
if command -v h5dump >/dev/null; then
  if h5dump -d /meta/reasons "$tmp/toobig.h5" | grep -qF 'requests 64 GPUs; the largest eligible pool has 32'; then
    pass=$((pass + 1))
  else
    echo "FAIL job-larger-than-cluster: no reject reason in /meta/reasons"; fail=$((fail + 1))
  fi
fi

# --- failure and permission drills (docs/drills.md) ----------------------------------------------
scen drill-node "" "" 'failures:\n  events: [{at: 1d, nodes: [p-7], duration: 1h}]'
bad drill-unknown-node 'drill-node.yaml:15:29: failures.events[0].nodes[0]: no node named "p-7"' \
  -- run "$tmp/drill-node.yaml" -o OUT
scen drill-dist "" "" 'failures:\n  nodes: {mtbf: 30d, repair: 4h, distribution: weibul, shape: 0.8}'
bad drill-distribution 'drill-dist.yaml:15:48: failures.nodes.distribution: expected exponential or weibull, got "weibul"; did you mean "weibull"?' \
  -- run "$tmp/drill-dist.yaml" -o OUT
scen drill-grant "" "" 'tenants:\n  - {name: a, queues: q1}'
bad drill-tenant-queues 'drill-grant.yaml:15:23: tenants[0].queues: expected a list, got "q1"' \
  -- run "$tmp/drill-grant.yaml" -o OUT

# --- interconnect topology (docs/topology.md) ----------------------------------------------------
scen topo-node "" '/gpu_type: H100/a\  topology:\n    switches:\n      - {name: leaf0, nodes: "p-[0-4]"}' ''
bad topo-unknown-node 'topo-node.yaml:11:30: cluster.topology.switches[0].nodes: no node named "p-4" (pool "p" has nodes p-0 to p-3)' \
  -- run "$tmp/topo-node.yaml" -o OUT
scen topo-left "" '/gpu_type: H100/a\  topology:\n    switches:\n      - {name: leaf0, nodes: "p-[0-2]"}' ''
bad topo-nodes-left-out 'topo-left.yaml:10:5: cluster.topology: nodes under no switch: p-3' \
  -- run "$tmp/topo-left.yaml" -o OUT
scen topo-switch "" '/gpu_type: H100/a\  topology:\n    racks: {nodes_per_rack: 2}' 'failures:\n  events: [{at: 1d, switch: rak-1, duration: 1h}]'
bad topo-unknown-switch 'topo-switch.yaml:17:29: failures.events[0].switch: no switch named "rak-1"; did you mean "rack-1"?' \
  -- run "$tmp/topo-switch.yaml" -o OUT

echo "bad_input: $cases cases; $pass checks passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$cases" -ge 30 ]
