#!/usr/bin/env bash
# The main job on a fresh machine: set up and build, calibrate this machine with the embedded
# launcher (one rank per core by default), print the fitted α, β, γ, the chosen crossovers and
# where the report is, then run an OSU-style all-reduce sweep with the new tuning.
#   scripts/main_job.sh [ranks]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
B=${FABCOLL_BUILD_DIR:-build}
P=${1:-$(nproc)}
((P >= 2)) || P=2
TUNING=${FABCOLL_TUNING:-${XDG_CONFIG_HOME:-$HOME/.config}/fabcoll/tuning.json}
REPORT=$B/calibration-report
mkdir -p "$(dirname "$TUNING")"
echo "== calibrating with $P ranks (fabcoll-calibrate --quick); tuning file: $TUNING"
"$B/fabcoll-run" -n "$P" --bind-to core "$B/fabcoll-calibrate" --quick -o "$TUNING" --report "$REPORT"
echo "== report: $REPORT/summary.md (plots: $REPORT/*.png)"
echo "== OSU-style all-reduce sweep with the new tuning ($P ranks)"
FABCOLL_TUNING=$TUNING "$B/fabcoll-run" -n "$P" --bind-to core "$B/fabcoll-bench" allreduce -m 8:1048576 -f
