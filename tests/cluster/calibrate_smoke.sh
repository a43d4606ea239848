#!/usr/bin/env bash
# fabcoll-calibrate --quick under fabcoll-run: it must write a tuning file that fabcoll-info
# --tuning accepts without a notice, and a report with the summary, CSV data and (when
# matplotlib is installed) the plots.
#   calibrate_smoke.sh FABCOLL_RUN FABCOLL_CALIBRATE FABCOLL_INFO P [fabcoll-run options...]
set -euo pipefail
run=$1 cal=$2 info=$3 p=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$run" -n "$p" "$@" -- "$cal" --quick -o "$work/tuning.json" --report "$work/report" >"$work/out" 2>"$work/err" || {
  cat "$work/out" "$work/err"; exit 1; }
grep -q "median |predicted - measured| / measured" "$work/out"
for f in tuning.json summary.md pingpong.csv validation.csv gamma.csv; do
  test -s "$work/report/$f" || { echo "missing report/$f"; exit 1; }
done
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  test -s "$work/report/pingpong.png" || { echo "missing pingpong.png"; cat "$work/err"; exit 1; }
fi
"$info" --explain allreduce 65536 --p "$p" --tuning "$work/tuning.json" >"$work/explain" 2>"$work/notice"
if [[ -s $work/notice ]]; then echo "unexpected notice:"; cat "$work/notice"; exit 1; fi
grep -q "tuning file" "$work/explain"
grep -q "CHOSEN" "$work/explain"
grep -q "exchange" "$work/explain"
echo "calibrate_smoke: ok"; grep -E "^link|^median" "$work/out"
