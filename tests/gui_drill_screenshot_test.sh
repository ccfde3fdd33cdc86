#!/usr/bin/env bash
# The KAI failure drill in the desktop app at a 1,560 px window (issue #21): its site-wide power
# loss on day 8 takes every GPU out of service for three 10-minute samples; the pool chart thins
# its ~2,400 samples to its pixel width and must still reach 0 GPUs up there, with the outage
# marked. Runs `headroom compare --keep-runs` on scenarios/poc/failure-drill.yaml, then
# headroom-gui offscreen with --screenshot-dir, and reads charts.tsv (what each time chart drew,
# written with the screenshots) and the screenshot's size.
# Usage: gui_drill_screenshot_test.sh HEADROOM HEADROOM_GUI SOURCE_DIR
set -uo pipefail
bin="$1"; gui="$2"; src="$3"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }

cd "$src" || exit 1
if ! "$bin" compare scenarios/poc/failure-drill.yaml --policies kai --keep-runs "$tmp" >"$tmp/compare.txt" 2>&1; then
  cat "$tmp/compare.txt"; exit 1
fi
h5="$tmp/poc-failure-drill-kai.h5"
[ -s "$h5" ] || { echo "FAIL no $h5"; exit 1; }
if ! QT_QPA_PLATFORM=offscreen timeout 120 "$gui" --size 1560x960 --screenshot-dir "$tmp/shots" "$h5" >"$tmp/gui.txt" 2>&1; then
  cat "$tmp/gui.txt"; exit 1
fi
tsv="$tmp/shots/charts.tsv"
[ -s "$tsv" ] || { echo "FAIL no $tsv"; exit 1; }

# The screenshot is the window's size.
size=$(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print("%dx%d" % struct.unpack(">II", d[16:24]))' \
  "$tmp/shots/timeline.png" 2>/dev/null)
[ "$size" = "1560x960" ] || bad "timeline.png is $size, expected 1560x960"

# tab chart series points min min_at_day max plot_px marks
row=$(awk -F'\t' '$1 == "timeline" && $2 == "GPUs in use and up, by pool" && $3 == "ricc up"' "$tsv")
[ -n "$row" ] || { echo "FAIL no 'ricc up' curve in the pool chart:"; cat "$tsv"; exit 1; }
IFS=$'\t' read -r _ _ _ points low low_day high plot_px marks <<<"$row"
# Thinned to the pixel width (else the check below would hold without any min/max buckets).
[ "$plot_px" -lt 1000 ] || bad "plot area $plot_px px: not the 1,560 px window"
[ "$points" -le $((2 * plot_px + 4)) ] || bad "$points points drawn on $plot_px px: not thinned"
[ "$low" = "0" ] || bad "the pool chart's lowest GPUs up is $low, not 0 (the day-8 outage was thinned away)"
awk -v d="$low_day" 'BEGIN { exit !(d >= 7.5 && d <= 9) }' || bad "the lowest point is on day $low_day, not day 8"
[ "$high" = "8192" ] || bad "the pool chart's highest GPUs up is $high, not 8192"
[ "$marks" -gt 0 ] || bad "no outage marks on the pool chart"
# The same at the in-use curve: every running job was killed, 0 GPUs in use.
in_use=$(awk -F'\t' '$2 == "GPUs in use and up, by pool" && $3 == "ricc in use" { print $5 }' "$tsv")
[ "$in_use" = "0" ] || bad "GPUs in use never reach 0 ($in_use)"

[ $fail -eq 0 ] && echo "ok: the day-8 outage reaches 0 GPUs up at 1560 px ($points points on $plot_px px, $marks marks)"
exit $fail
