#!/usr/bin/env bash
# Issue 6: where ranks share cores, fabcoll-calibrate times the first of the fit's training
# passes before the validation and the others between the validation's passes, then fits again
# to all of them; a validated size where the model fitted again runs a candidate at another
# packet count or strategy is timed once more, every candidate of it in one turn. Forced here
# for every size (FABCOLL_CALIBRATE_TEST_RETIME=1): each size's candidates then have the same
# rounds, all of one turn, and its regret is the chosen one's time over the fastest's.
#   calibrate_interleaved.sh FABCOLL_RUN FABCOLL_CALIBRATE
set -euo pipefail
run=$1 cal=$2
cores=$(getconf _NPROCESSORS_ONLN)  # what calibrate counts as the machine's cores
if ((cores > 4)); then
  echo "calibrate_interleaved: $cores cores: $((cores + 1)) ranks would be too many here (skipped)"
  exit 77
fi
n=$((cores + 1))  # more ranks than cores: the fit to timed collectives
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "calibrate_interleaved: $*"; cat "$work/out"; tr '\r' '\n' <"$work/err" | tail -20; exit 1; }
"$cal" --help | grep -q -- "--fit-first" || fail "--fit-first missing from --help"
# Where the barriers beside the batches are slow too (other tests' load), calibrate rightly
# stops with its "too busy" error: tried again, up to three launches; any other failure fails.
for try in 1 2 3; do
  if FABCOLL_CALIBRATE_TEST_RETIME=1 "$run" -n $n --transport shm -- "$cal" --quick \
    -o "$work/tuning.json" --report "$work/report" >"$work/out" 2>"$work/err"; then
    break
  fi
  if ((try == 3)) || ! grep -q "the machine is too busy to time the collectives" "$work/err"; then
    fail "calibrate failed"
  fi
  echo "calibrate_interleaved: launch $try found the machine too busy; again"
done
grep -q "^the fit's timed collectives: the first of 3 passes before the validation" "$work/out" ||
  fail "no interleaved training reported"
# The progress line: the fit's passes 2 and 3 after the validation began, then the fit again.
python3 - "$work/err" <<'PY' || fail "the phases are not in the interleaved order"
import sys
text = open(sys.argv[1]).read().replace("\r", "\n")
at = [text.find(s) for s in ("[5/5 validate]", "the fit's pass 2 of 3", "the fit's pass 3 of 3",
                            "the fit again, to every pass", "sizes timed once more")]
assert all(a >= 0 for a in at) and at == sorted(at), at
PY
python3 - "$work/tuning.json" <<'PY' || fail "the validation summary"
import json, sys
v = json.load(open(sys.argv[1]))["validation"]
v = json.loads(v) if isinstance(v, str) else v
assert v["training_interleaved"] is True, v["training_interleaved"]
assert v["training_seconds_between_passes"] > 0, v["training_seconds_between_passes"]
sizes = {}
for r in v["runs"]:
    sizes.setdefault((r["collective"], r["n"]), []).append(r)
assert v["sizes_timed_again"] == len(sizes), (v["sizes_timed_again"], len(sizes))
regrets = {(r["collective"], r["n"]): r["regret"] for r in v["regret_by_size"]}
for key, rows in sizes.items():
    # One turn: every candidate the same rounds, in one pass.
    assert len({r["rounds"] for r in rows}) == 1, (key, [r["rounds"] for r in rows])
    assert all(len(r["rounds_per_pass"]) == 1 for r in rows), key
    chosen = [r["measured"] for r in rows if r["chosen"]]
    assert len(chosen) == 1, key
    want = chosen[0] / min(r["measured"] for r in rows) - 1
    assert abs(regrets[key] - want) < 1e-9, (key, regrets[key], want)
print("calibrate_interleaved: %d sizes timed again, %.1f s of training between passes"
      % (len(sizes), v["training_seconds_between_passes"]))
PY
echo "calibrate_interleaved: ok"
