#!/usr/bin/env bash
# fabcoll-calibrate measures the pull fan-out φ (CostModel::pull_fanout) at p >= 3 on shm:
# forced with FABCOLL_CALIBRATE_TEST_FANOUT=1, since 3 ranks on this 2-core machine share cores
# (where it is not measured otherwise). The line, the validation summary's two runs and the
# link entry (written when φ > 0) must agree, and the file must load.
#   calibrate_fanout.sh FABCOLL_RUN FABCOLL_CALIBRATE FABCOLL_INFO
set -euo pipefail
run=$1 cal=$2 info=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
FABCOLL_CALIBRATE_TEST_FANOUT=1 "$run" -n 3 --transport shm -- "$cal" --quick --no-validate \
  -o "$work/tuning.json" >"$work/out" 2>"$work/err" || {
  cat "$work/out" "$work/err"; exit 1; }
grep -q "^pull fan-out: phi = [0-9.]* (naive broadcast of pulled messages: 65536 B" "$work/out" ||
  { echo "no pull fan-out line"; cat "$work/out" "$work/err"; exit 1; }
python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))
v = json.loads(f["validation"]) if isinstance(f["validation"], str) else f["validation"]
pf = v["pull_fanout"]
phi = pf["phi"]
assert phi >= 0, phi
assert [r["n"] for r in pf["runs"]] == [65536, 262144], pf
assert all(r["measured"] > 0 and r["flat"] > 0 for r in pf["runs"]), pf
link = f["links"][0]
assert link.get("pull_fanout", 0) == phi, (link, phi)
print("phi", phi)' "$work/tuning.json" || { echo "pull_fanout in the tuning file wrong"; exit 1; }
"$info" --explain bcast 262144 --p 3 --tuning "$work/tuning.json" >"$work/explain" 2>&1 ||
  { echo "fabcoll-info rejected the file"; cat "$work/explain"; exit 1; }
echo "calibrate_fanout: ok"
