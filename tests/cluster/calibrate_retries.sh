#!/usr/bin/env bash
# fabcoll-calibrate --retries keeps, where every attempt was disturbed, the least disturbed: both
# attempts forced as disturbed (FABCOLL_CALIBRATE_TEST_DISTURB=2, each
# counting as changed beyond any measured change), so the first is kept and reported.
#   calibrate_retries.sh FABCOLL_RUN FABCOLL_CALIBRATE
set -euo pipefail
run=$1 cal=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
FABCOLL_CALIBRATE_TEST_DISTURB=2 "$run" -n 2 -- "$cal" --quick --retries 1 \
  -o "$work/tuning.json" --report "$work/report" >"$work/out" 2>"$work/err" || {
  cat "$work/out" "$work/err"; exit 1; }
grep -q "attempt 1: the machine changed speed during the run" "$work/err" ||
  { echo "no retry announced"; cat "$work/err"; exit 1; }
grep -q "^attempts: 2 (the machine changed speed during every one; kept attempt 1" "$work/out" ||
  { echo "attempt 1 not kept"; cat "$work/out"; exit 1; }
python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["validation"]
sys.exit(0 if v["attempts"] == 2 and v["kept_attempt"] == 1 and v["runs"] else 1)' \
  "$work/tuning.json" || { echo "attempts / kept_attempt wrong in the validation summary"; exit 1; }
grep -q "This was attempt 1 of 2" "$work/report/summary.md" ||
  { echo "report does not name the kept attempt"; exit 1; }
echo "calibrate_retries: ok"
