#!/usr/bin/env bash
# Issue 6: fabcoll-calibrate --quiet-fit collectives fits α, β to timed collectives where every
# rank has a core of its own (p = 2 on this 2-core machine; on a 16-core one, p = 8 over sockets
# had a worst regret of 11.6% with it where the ping-pong's fit had 44-47%), as it does with
# more ranks than cores, and records the fit in the quiet entry. A bad value is an error naming
# the option, before any rank starts. Without validation (the validation is calibrate_quick_*'s).
#   calibrate_quiet_fit.sh FABCOLL_RUN FABCOLL_CALIBRATE FABCOLL_INFO [fabcoll-run options...]
set -euo pipefail
run=$1 cal=$2 info=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "calibrate_quiet_fit: $*"; cat "$work/out" "$work/err" 2>/dev/null; exit 1; }
if "$cal" --quiet-fit sometimes >"$work/bad" 2>&1; then fail "--quiet-fit sometimes was accepted"; fi
grep -q -- "--quiet-fit" "$work/bad" || { cat "$work/bad"; fail "no error naming --quiet-fit"; }
cores=$(getconf _NPROCESSORS_ONLN)  # what std::thread::hardware_concurrency reports
((cores >= 2)) || { echo "needs 2 cores for a quiet p = 2"; exit 77; }
"$run" -n 2 "$@" -- "$cal" --quick --no-validate --quiet-fit collectives -o "$work/tuning.json" \
  --report "$work/report" >"$work/out" 2>"$work/err" || fail "calibrate failed"
grep -q "^layout quiet: alpha, beta fitted to timed collectives" "$work/out" ||
  fail "no 'layout quiet: ... fitted to timed collectives' line"
grep -q "3b/5 fit to collectives" "$work/err" || fail "no fit-to-collectives phase"
[[ -s $work/report/training.csv ]] || fail "no training.csv in the report"
"$info" --explain allreduce 65536 --p 2 --tuning "$work/tuning.json" >"$work/explain" \
  2>"$work/notice" || fail "fabcoll-info rejected the tuning file"
if [[ -s $work/notice ]]; then cat "$work/notice"; fail "unexpected notice from fabcoll-info"; fi
# The default (the ping-pong's fit) has no such line.
"$run" -n 2 "$@" -- "$cal" --quick --no-validate -o "$work/plain.json" >"$work/out" \
  2>"$work/err" || fail "calibrate (default) failed"
if grep -q "^layout quiet" "$work/out"; then fail "the default fitted to timed collectives"; fi
# Its entry is the quiet layout's, fitted to more points than the ping-pong's sizes (the
# default's): each timed collective at each size is one.
python3 -c '
import json, sys
q = json.load(open(sys.argv[1]))["links"]
d = json.load(open(sys.argv[2]))["links"]
sys.exit(0 if len(q) == 1 and q[0]["layout"] == "quiet" and d[0]["layout"] == "quiet" and
         q[0]["points"] > d[0]["points"] else 1)' "$work/tuning.json" "$work/plain.json" ||
  fail "the entry is not the quiet one fitted to more points than the default's"
echo "calibrate_quiet_fit: ok"
